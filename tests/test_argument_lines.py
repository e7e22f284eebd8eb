"""A refused component argument is shown at the line of its key in the program, in Python and in
TypeScript, each refusal of a call at its own key (integration_blueprint.preview.argument_lines)."""

import pytest

from integration_blueprint.preview.argument_lines import key_line, refusals_at_keys, refused_key
from integration_blueprint.preview.recording import ProgramError, record_program

PYTHON = '''from integration_blueprint.components import FifoBillingQueue

platform = {"log_retention_days": 30}
billing = FifoBillingQueue(
    "payroll",
    {
        **platform,
        "consumer_timeout_seconds": 60,
        "batch_size": 11,
        "max_receive_count": 2,
    },
)
'''
TYPESCRIPT = '''import * as blueprint from "@pulumi/blueprint";

const billing = new blueprint.FifoBillingQueue("payroll", {
    consumerTimeoutSeconds: 60,
    "batchSize": 11,
    nested: { maxReceiveCount: 5 },
    maxReceiveCount: 2,
});
const other = new blueprint.FifoBillingQueue("other", { batchSize: 3 });
'''


def test_the_refused_argument_is_read_from_the_message_in_either_languages_spelling():
    assert refused_key("FifoBillingQueue: batch_size=11 is not allowed: a whole number") == "batch_size"
    assert refused_key("blueprint:index:X 'a' could not be constructed: FifoBillingQueue: maxReceiveCount=2 is not "
                       "allowed") == "maxReceiveCount"
    assert refused_key("DistributedMapBatch: max_concurrency is required: what the downstream takes") == "max_concurrency"
    assert refused_key("FifoBillingQueue: unknown argument 'schedule_enable' (did you mean ...)") == "schedule_enable"
    assert refused_key("FifoBillingQueue: unknown input 'scheduleEnable'; FifoBillingQueue takes ...") == "scheduleEnable"
    assert refused_key("something else entirely") is None


def test_a_python_key_is_found_in_the_dict_of_the_call_that_raised():
    assert key_line(PYTHON, 4, "batch_size", python=True) == 9
    assert key_line(PYTHON, 4, "max_receive_count", python=True) == 10
    assert key_line(PYTHON, 4, "alarm_actions", python=True) is None  # not written: the call's line stands


def test_a_typescript_key_is_found_within_the_calls_brackets_not_in_a_nested_object_first_or_a_later_call():
    assert key_line(TYPESCRIPT, 3, "batchSize", python=False) == 5
    assert key_line(TYPESCRIPT, 3, "maxReceiveCount", python=False) == 7
    assert key_line(TYPESCRIPT, 9, "batchSize", python=False) == 9
    assert key_line(TYPESCRIPT, 3, "scheduleEnabled", python=False) is None


def test_every_refusal_of_a_call_is_placed_at_its_own_key_in_the_order_written(tmp_path):
    program = tmp_path / "__main__.py"
    program.write_text(PYTHON)
    message = ("FifoBillingQueue: max_receive_count=2 is not allowed: a whole number from 4 to 1000\n"
               "FifoBillingQueue: batch_size=11 is not allowed: a whole number from 1 to 10\n"
               "FifoBillingQueue: unknown argument 'schedule_enable'")
    assert [(text.split(":")[1].split("=")[0].strip(), at) for text, at in refusals_at_keys(message, str(program), 4)] == [
        ("unknown argument 'schedule_enable'", 4), ("batch_size", 9), ("max_receive_count", 10)]
    assert refusals_at_keys("FifoBillingQueue: batch_size=11 is not allowed", str(tmp_path / "gone.py"), 4) == [
        ("FifoBillingQueue: batch_size=11 is not allowed", 4)]


@pytest.mark.slow  # a Python program in its own interpreter
def test_a_python_programs_refusals_are_all_reported_each_at_its_key(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: app\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (tmp_path / "__main__.py").write_text(PYTHON)

    with pytest.raises(ProgramError) as raised:
        record_program(tmp_path, stack="dev")

    first, second = str(raised.value).splitlines()
    assert first.startswith("ComponentArgumentError: FifoBillingQueue: batch_size=11 is not allowed")
    assert first.endswith(f"(at {tmp_path}/__main__.py:9)")
    assert second.startswith("ComponentArgumentError: FifoBillingQueue: max_receive_count=2 is not allowed")
    assert second.endswith(f"(at {tmp_path}/__main__.py:10)")


def test_every_refusal_of_a_typescript_call_is_located_from_the_first_run_without_stack_frames(tmp_path):
    """A first run keeps no stack frames, so Node prints the error as `[Error: ...] {...}`, bracketed
    over every line of the refusal: each is placed at its key from the engine's record of the
    declaration, with no second run at Node's full depth (which type-checks and maps every frame again)."""
    from integration_blueprint.preview import node_host

    index = tmp_path / "index.ts"
    index.write_text('import * as blueprint from "@pulumi/blueprint";\n\n'
                     'new blueprint.FifoBillingQueue("payroll", {\n    maxReceiveCount: 2,\n    batchSize: 11,\n});\n')
    logged = (f"Running program '{index}' failed with an unhandled exception:\n<ref *1> [Error: failed to register "
              "new resource payroll [blueprint:index:FifoBillingQueue]: 3 INVALID_ARGUMENT: blueprint:index:"
              "FifoBillingQueue 'payroll' could not be constructed: FifoBillingQueue: batchSize=11 is not allowed: a "
              "whole number from 1 to 10\nFifoBillingQueue: maxReceiveCount=2 is not allowed: a whole number from 4 "
              f"to 1000 (declared at {index}:3)] {{\n  promise: Promise {{ <rejected> [Circular *1] }}\n}}")

    found = node_host._located(logged, tmp_path, tmp_path)

    assert [(failure.message, failure.file, failure.line) for failure in found] == [
        ("blueprint:index:FifoBillingQueue 'payroll' could not be constructed: FifoBillingQueue: maxReceiveCount=2 is "
         "not allowed: a whole number from 4 to 1000", str(index), 4),
        ("blueprint:index:FifoBillingQueue 'payroll' could not be constructed: FifoBillingQueue: batchSize=11 is not "
         "allowed: a whole number from 1 to 10", str(index), 5)]
