"""The blueprint program's stack-config reader: every setting is declared once, in its component's
settings table, and the stack file and the component refuse the same values; errors name the key,
the value, what is allowed and the stack file to fix; unknown sections and keys are refused."""

import json
import shutil

import pytest

from integration_blueprint.components import (
    distributed_map_definition,
    fifo_billing_queue,
    idempotent_stream_consumer,
    non_idempotent_stream_consumer,
)
from integration_blueprint.components.platform import PLATFORM_SETTINGS
from integration_blueprint.components.validation import ComponentArgumentError
from integration_blueprint.preview.recording import ProgramError, record_program
from integration_blueprint.program.stack_config import Section, StackConfigError
from tests.conftest import REGION_CONFIG, REPO

TABLES = {
    "fifoBilling": fifo_billing_queue.SETTINGS,
    "distributedMap": distributed_map_definition.SETTINGS,
    "idempotentStream": idempotent_stream_consumer.SETTINGS,
    "nonIdempotentStream": non_idempotent_stream_consumer.SETTINGS,
}
BOUNDED = [(section, row) for section, table in TABLES.items() for row in table
           if row.in_stack and row.kind is int and row.maximum is not None]


@pytest.mark.parametrize("section, row", BOUNDED, ids=[f"{s}.{r.key}" for s, r in BOUNDED])
def test_the_stack_file_and_the_component_refuse_the_same_bound(section, row):
    table = TABLES[section]
    too_big = int(row.maximum) + 1
    with pytest.raises(StackConfigError, match=rf"blueprint:{section}\.{row.key} = {too_big} is not allowed: "
                                               rf"a whole number from \d+ to {int(row.maximum)}"):
        Section(section, {row.key: too_big}, source="stacks/Pulumi.dev.yaml").setting(row, table, {})
    with pytest.raises(ComponentArgumentError, match=rf"{table.component}: {row.arg}={too_big} is not allowed"):
        table.value({row.arg: too_big}, row.arg)


@pytest.mark.slow
def test_a_key_left_out_of_the_stack_file_is_left_to_the_component_default():
    args = record_program(REPO, stack="dev", config={
        **REGION_CONFIG, "blueprint:fifoBilling": json.dumps({"enabled": True})})
    [queue] = [q for q in args.of_type("aws:sqs/queue:Queue") if q.name == "billing-charges"]
    timeout = fifo_billing_queue.SETTINGS.default("consumer_timeout_seconds")
    assert queue.inputs["visibilityTimeoutSeconds"] == 6 * timeout
    assert queue.inputs["messageRetentionSeconds"] == fifo_billing_queue.SETTINGS.default("message_retention_seconds")


def test_log_retention_choices_come_from_the_platform_table():
    row = PLATFORM_SETTINGS["log_retention_days"]
    with pytest.raises(StackConfigError, match="is not allowed: a retention CloudWatch Logs accepts: one of 1, 3, 5"):
        Section("platform", {"logRetentionDays": 10}, source="x").setting(row, PLATFORM_SETTINGS, {})


@pytest.mark.parametrize("stack", ["dev", "staging"])
def test_the_error_names_the_stack_file_in_the_projects_stack_config_dir(stack):
    config = {**REGION_CONFIG, "blueprint:fifoBilling": json.dumps({"enabled": True, "batchSize": 11})}
    with pytest.raises(ProgramError, match=rf"batchSize = 11 .* Fix it in stacks/Pulumi\.{stack}\.yaml\."):
        record_program(REPO, stack=stack, config=config)


def test_a_project_without_stack_config_dir_is_told_its_own_stack_file(tmp_path):
    shutil.copy(REPO / "__main__.py", tmp_path / "__main__.py")
    (tmp_path / "Pulumi.yaml").write_text("name: blueprint\nruntime: python\n")
    (tmp_path / "Pulumi.qa.yaml").write_text(
        "config:\n  aws:region: eu-west-1\n  blueprint:fifoBilling:\n    enabled: true\n    batchSize: 11\n")
    with pytest.raises(ProgramError, match=r"blueprint:fifoBilling\.batchSize = 11 .* Fix it in Pulumi\.qa\.yaml\.") as refused:
        record_program(tmp_path, stack="qa")
    assert "stacks/" not in str(refused.value)


def test_a_misspelled_section_is_refused_naming_the_known_sections():
    config = {**REGION_CONFIG, "blueprint:fifoBiling": json.dumps({"enabled": True})}
    with pytest.raises(ProgramError) as refused:
        record_program(REPO, stack="dev", config=config)
    message = str(refused.value)
    assert "blueprint:fifoBiling is not a section this blueprint reads (did you mean blueprint:fifoBilling?)" in message
    for section in ("platform", "fifoBilling", "distributedMap", "idempotentStream", "nonIdempotentStream"):
        assert f"blueprint:{section}" in message
    assert "Fix it in stacks/Pulumi.dev.yaml" in message


def test_an_unknown_key_within_a_section_is_still_refused():
    config = {**REGION_CONFIG, "blueprint:distributedMap": json.dumps(
        {"enabled": True, "maxConcurrency": 5, "maxConcurency": 5})}
    with pytest.raises(ProgramError, match="blueprint:distributedMap has unknown keys maxConcurency"):
        record_program(REPO, stack="dev", config=config)


def test_the_gates_suppressions_in_the_stack_file_are_not_a_section_the_program_refuses():
    suppressions = [{"resource": "billing-charges", "policy": "dlq-has-depth-alarm", "reason": "alarm lives in ops stack"}]
    recorded = record_program(REPO, stack="dev", config={**REGION_CONFIG, "blueprint:suppressions": json.dumps(suppressions)})
    assert recorded.resources == []  # nothing enabled, nothing refused


@pytest.mark.slow
def test_other_namespaces_are_not_this_readers_business():
    recorded = record_program(REPO, stack="dev", config={**REGION_CONFIG, "team:anything": "x"})
    assert recorded.resources == []  # nothing enabled, nothing refused
