"""Each component argument is declared once, as a row of its component's settings table, and nothing
passes unread: the Args TypedDicts (what type checkers see), the rows (what the component, the stack
reader, the schema and the docs use) and the stack sections hold the same names and types; the
component and the stack reader accept and refuse the same values with the same reason; an unknown
argument is refused naming the nearest known one."""

import collections.abc
import inspect
import re
import typing

import pulumi
import pytest

from integration_blueprint.components.reference import COMPONENTS
from integration_blueprint.components.settings import Setting, SettingsTable
from integration_blueprint.components.validation import ComponentArgumentError
from integration_blueprint.preview.recording import ProgramError, record_program
from integration_blueprint.program import stack_config
from integration_blueprint.program.stack_config import Section, StackConfigError
from tests.conftest import REGION_CONFIG

SECTIONS = {"fifoBilling": "FifoBillingQueue", "distributedMap": "DistributedMapBatch",
            "idempotentStream": "IdempotentStreamConsumer", "nonIdempotentStream": "NonIdempotentStreamConsumer"}
BY_NAME = {component.__name__: (component, table) for component, table in COMPONENTS.items()}


def args_class(component: type) -> type:
    return inspect.signature(component.__init__).parameters["args"].annotation


def row_kind(annotation) -> type:
    """The row kind an Args annotation stands for: Input[int] -> int, Input[Sequence[...]] -> list, ..."""
    while typing.get_origin(annotation) in (typing.Required, typing.NotRequired):
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is typing.Union:  # pulumi.Input[T] = Union[T, Awaitable[T], Output[T]]
        annotation = typing.get_args(annotation)[0]
    origin = typing.get_origin(annotation) or annotation
    if origin in (collections.abc.Sequence, list):
        return list
    if origin in (collections.abc.Mapping, dict):
        return dict
    return origin


@pytest.mark.parametrize("component", list(COMPONENTS), ids=lambda c: c.__name__)
def test_the_args_fields_are_the_rows_with_the_rows_types(component):
    table = COMPONENTS[component]
    hints = args_class(component).__annotations__  # a TypedDict's own and inherited fields
    assert set(hints) == {s.arg for s in table.arguments()}
    assert {arg: row_kind(hint) for arg, hint in hints.items()} == {s.arg: s.kind for s in table.arguments()}
    assert set(args_class(component).__required_keys__) == {s.arg for s in table.arguments() if s.required}


@pytest.mark.parametrize("component", list(COMPONENTS), ids=lambda c: c.__name__)
def test_the_args_classes_restate_no_number_of_the_rows(component):
    for cls in args_class(component).__mro__:
        if cls.__module__.startswith("integration_blueprint"):
            source = inspect.getsource(cls)
            assert not re.findall(r"\d", source), f"{cls.__name__} restates numbers; they belong in its rows"


@pytest.mark.parametrize("section", list(SECTIONS))
def test_a_stack_section_holds_exactly_the_stack_settable_rows_of_its_component(section):
    _, table = BY_NAME[SECTIONS[section]]
    assert stack_config.component_tables()[section] is table
    read = Section(section, {s.key: s.minimum for s in table if s.required}, source="x")
    read.settings(table)
    assert read.read == {s.key for s in table if s.in_stack}
    not_in_stack = {s.arg for s in table if not s.in_stack}
    # What a stack file cannot set names code, identities or permissions.
    assert all(s.kind in (pulumi.Archive, dict, list) or s.arg.endswith(("_handler", "_name")) or s.arg == "handler"
               for s in table if s.arg in not_in_stack)


def test_the_platform_section_holds_the_rows_every_component_inherits():
    from integration_blueprint.components.platform import PLATFORM_SETTINGS

    read = Section("platform", {}, source="x")
    read.settings(PLATFORM_SETTINGS)
    for table in COMPONENTS.values():
        own = {s.arg for s in table}
        assert {s.key for s in table.arguments() if s.arg not in own} == read.read


# ---- one parse for both callers ------------------------------------------------------------------

def samples(setting: Setting) -> list:
    """Values worth trying on a row: good ones, the wrong type, out of bounds, outside the choices."""
    values: list = [True, "10", 10.0, 10.5, [], {}, "", "x"]
    if setting.minimum is not None:
        values += [setting.minimum, setting.minimum - 1]
    if setting.maximum is not None:
        values += [setting.maximum, setting.maximum + 1]
    values += list(setting.choices[:2]) + ([setting.default] if setting.default is not None else [])
    return values


ROWS = [(section, setting) for section, name in SECTIONS.items() for setting in BY_NAME[name][1] if setting.in_stack]


@pytest.mark.parametrize("section, setting", ROWS, ids=[f"{s}.{r.key}" for s, r in ROWS])
def test_the_component_and_the_stack_file_accept_and_refuse_the_same_values_for_the_same_reason(section, setting):
    table: SettingsTable = BY_NAME[SECTIONS[section]][1]
    for value in samples(setting):
        try:
            component_value, component_reason = table.value({setting.arg: value}, setting.arg), None
        except ComponentArgumentError as refused:
            component_value, component_reason = None, str(refused).split(" is not allowed: ", 1)[-1]
        try:
            stack_value, stack_reason = Section(section, {setting.key: value}, source="x").setting(setting, table, {}), None
        except StackConfigError as refused:
            stack_value, stack_reason = None, str(refused).split(" is not allowed: ", 1)[-1].split(". Fix it in x.")[0]
        if value == [] and setting.kind is list:
            continue  # an empty list in a stack file means "not set"
        assert (component_value, component_reason) == (stack_value, stack_reason), value


def test_a_whole_float_is_a_whole_number_for_both_and_a_string_of_digits_for_neither():
    _, table = BY_NAME["FifoBillingQueue"]
    row = table["batch_size"]
    assert table.value({"batch_size": 10.0}, "batch_size") == 10
    assert Section("fifoBilling", {"batchSize": 10.0}, source="x").setting(row, table, {}) == 10
    # The refusal names the type given: a team that wrote "10" sees that it wrote a string.
    with pytest.raises(ComponentArgumentError, match="batch_size='10' is not allowed: '10' is a string; a whole "
                                                     "number from 1 to 10"):
        table.value({"batch_size": "10"}, "batch_size")
    with pytest.raises(StackConfigError, match=r"batchSize = '10' is not allowed: '10' is a string; a whole number "
                                               r"from 1 to 10 .*"
                                               r"Fix it in x\. The file holds the string '10': write the value "
                                               r"unquoted, or set it with `pulumi config set --path --type int`\."):
        Section("fifoBilling", {"batchSize": "10"}, source="x").setting(row, table, {})


# ---- nothing passes unread --------------------------------------------------------------------------

def test_the_misspelled_keys_of_the_report_are_refused_naming_the_nearest_known_ones():
    from integration_blueprint.components import FifoBillingQueue

    with pytest.raises(ProgramError, match=r"FifoBillingQueue: unknown argument 'schedule_enable' \(did you mean "
                                           r"'schedule_enabled'\?\); FifoBillingQueue takes .*alarm_actions"):
        record_program(lambda: FifoBillingQueue("payroll", {"schedule_enable": False}), config=REGION_CONFIG)
    with pytest.raises(ProgramError, match=r"unknown argument 'alarm_action' \(did you mean 'alarm_actions'\?\)"):
        record_program(lambda: FifoBillingQueue("payroll", {"alarm_action": ["arn:aws:sns:eu-west-1:123456789012:x"]}),
                       config=REGION_CONFIG)


@pytest.mark.parametrize("component", list(COMPONENTS), ids=lambda c: c.__name__)
def test_every_component_refuses_an_argument_it_does_not_know_and_a_value_of_the_wrong_type(component):
    table = COMPONENTS[component]
    with pytest.raises(ComponentArgumentError, match=rf"{component.__name__}: unknown argument 'protect_dat' "
                                                     r"\(did you mean 'protect_data'\?\)") as refused:
        table.check({"protect_dat": True})
    assert refused.value.arg == "protect_dat"
    with pytest.raises(ComponentArgumentError, match=rf"{component.__name__}: protect_data='yes' is not allowed: "
                                                     "'yes' is a string; true or false"):
        table.check({"protect_data": "yes"})
    with pytest.raises(ComponentArgumentError, match="alarm_actions='arn:aws:sns:eu-west-1:123456789012:x' is not "
                                                     "allowed: 'arn:aws:sns:eu-west-1:123456789012:x' is a string; a "
                                                     "list of SNS topic ARNs"):
        table.check({"alarm_actions": "arn:aws:sns:eu-west-1:123456789012:x"})


def test_an_output_value_passes_to_be_checked_once_known():
    _, table = BY_NAME["FifoBillingQueue"]
    later = pulumi.Output.from_input(11)
    assert table.value({"batch_size": later}, "batch_size") is later


def test_the_stack_reader_asks_for_the_enabled_switch_from_its_own_row():
    assert stack_config.ENABLED.kind is bool and stack_config.ENABLED.default is False


def test_every_refusal_of_a_call_is_reported_at_once_a_line_each():
    _, table = BY_NAME["FifoBillingQueue"]
    with pytest.raises(ComponentArgumentError) as refused:
        table.check({"batch_size": 11, "max_receive_count": 2, "schedule_enable": False, "consumer_timeout_seconds": 60})
    assert [r.arg for r in refused.value.refusals] == ["schedule_enable", "batch_size", "max_receive_count"]
    lines = str(refused.value).splitlines()
    assert len(lines) == 3 and all(line.startswith("FifoBillingQueue: ") for line in lines)
    assert refused.value.arg == "schedule_enable"
