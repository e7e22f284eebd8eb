"""The local sandbox and the reliability drill: the blueprint's stacks realized in moto's server,
the real handlers behind local event source mappings, and a drill that catches what it claims to."""

import json
from pathlib import Path

import pytest

from blueprint import cli
from integration_blueprint.drill.patterns import DRIVERS, IdempotentStreamDriver
from integration_blueprint.drill.report import DrillOptions
from integration_blueprint.drill.runner import run_drill
from integration_blueprint.preview.recording import record_program
from integration_blueprint.sandbox.emulator import running_emulator
from integration_blueprint.sandbox.realization import Sandbox

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_stack_is_realized_in_the_emulator_as_recorded(stack):
    recorded = record_program(REPO, stack=stack)
    with running_emulator("eu-west-1") as emulator:
        assert emulator.endpoint.startswith("http://127.0.0.1:")
        sandbox = Sandbox(recorded, emulator).realize()
        sqs = sandbox.sqs

        charges = sandbox.queue_named("billing-charges")
        attributes = sqs.get_queue_attributes(QueueUrl=charges.url, AttributeNames=["All"])["Attributes"]
        recorded_queue = recorded.named("billing-charges")
        assert attributes["FifoQueue"] == "true" and attributes["ContentBasedDeduplication"] == "false"
        assert int(attributes["VisibilityTimeout"]) == recorded_queue.inputs["visibilityTimeoutSeconds"]
        assert json.loads(attributes["RedrivePolicy"]) == json.loads(recorded_queue.inputs["redrivePolicy"])

        ddb = emulator.client("dynamodb")
        for table in recorded.of_type("aws:dynamodb/table:Table"):
            ttl = ddb.describe_time_to_live(TableName=table.outputs["name"])["TimeToLiveDescription"]
            assert ttl["TimeToLiveStatus"] == "ENABLED" and ttl["AttributeName"] == table.inputs["ttl"]["attributeName"]

        dispatcher = sandbox.function(recorded.named("billing-dispatcher").outputs["name"])
        assert dispatcher.environment["CHARGE_QUEUE_URL"] == charges.url  # recorded URL mapped
        assert dispatcher.environment["AWS_ENDPOINT_URL"] == emulator.endpoint
        mappings = recorded.of_type("aws:lambda/eventSourceMapping:EventSourceMapping")
        assert len(sandbox.sqs_mappings) + len(sandbox.kinesis_mappings) == len(mappings)
        assert set(sandbox.schedules) == {s.name for s in recorded.of_type("aws:scheduler/schedule:Schedule")}
        assert len(sandbox.state_machines) == 1


def test_every_pattern_loses_nothing_and_does_nothing_twice_under_the_default_fault_mix():
    options = DrillOptions(records=40, seed=11, poison=0.05, duplicates=0.15, crashes=2)
    report = run_drill(options)

    assert set(report.patterns) == set(DRIVERS)
    for name, pattern in report.patterns.items():
        assert pattern.passed, (name, pattern)
        assert pattern.sent == 40 and pattern.expected_unrecoverable == 2
        assert pattern.processed_once + pattern.unrecoverable == 40
        assert pattern.injected["poison"] == 2
    # Faults really happened where each pattern's contract says they are survivable.
    for name in ("fifo_billing", "idempotent_stream", "distributed_map"):
        assert report.patterns[name].injected["duplicates"] > 0, name
        assert report.patterns[name].injected["crashes"] > 0, name
    assert sum(p.injected["transient"] for p in report.patterns.values()) > 0
    assert report.patterns["non_idempotent_stream"].injected["crashes"] == 0
    assert all((Path(report.log_dir) / f"{name}.log").read_text() for name in DRIVERS)  # logs, not stdout


class BrokenIdempotentStreamDriver(IdempotentStreamDriver):
    """The idempotent stream pattern with a handler that skips its idempotency check."""

    def prepare(self):
        function = self.functions(self.sandbox)[0]
        function.handler = "tests.fixtures.broken_stream_handler.lambda_handler"
        super().prepare()

    @classmethod
    def deploys(cls, handler):
        return handler in (cls.consumer_handler, "tests.fixtures.broken_stream_handler.lambda_handler")


def test_a_handler_that_skips_its_idempotency_check_is_caught_and_the_drill_exits_1(monkeypatch, capsys):
    monkeypatch.setattr("integration_blueprint.drill.runner.DRIVERS", {"idempotent_stream": BrokenIdempotentStreamDriver})

    exit_code = cli.main(["drill", "--records", "60", "--seed", "3", "--no-progress", "--json"])

    report = json.loads(capsys.readouterr().out)
    broken = report["patterns"]["idempotent_stream"]
    assert exit_code == 1
    assert broken["duplicate_effects"] > 0
    assert set(broken) >= {"sent", "processed_once", "duplicate_effects", "unrecoverable", "expected_unrecoverable",
                           "lost", "invocations", "retries", "wall_time_s"}
    assert report["stack"] == "dev" and report["seed"] == 3 and report["compression"]


def test_drill_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as usage:
        cli.main(["drill", "--duplicates", "1.5"])
    assert usage.value.code == 2
    assert cli.main(["drill", "--records", "0"]) == 2
