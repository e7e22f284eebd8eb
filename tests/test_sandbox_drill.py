"""The local sandbox and the reliability drill: the blueprint's stacks realized in moto (in-process),
the real handlers behind local event source mappings, and a drill that catches what it claims to."""

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import boto3
import pytest

from blueprint import cli
from integration_blueprint.drill.patterns import (
    DRIVERS,
    DistributedMapDriver,
    FifoBillingDriver,
    IdempotentStreamDriver,
    NonIdempotentStreamDriver,
)
from integration_blueprint.drill.patterns.stream_ledger import hot_account_outcome
from integration_blueprint.drill.report import DrillOptions, format_table
from integration_blueprint.drill.runner import run_drill
from integration_blueprint.preview.project import load_config
from integration_blueprint.preview.recording import record_program
from integration_blueprint.redrive.parked import list_parked
from integration_blueprint.sandbox.emulator import NotEmulated, running_emulator
from integration_blueprint.sandbox.realization import Sandbox

# The end-to-end tier: `make test-slow` and `make test-all` run it, `make test` leaves it out.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]


_RECORDINGS: dict = {}


@pytest.fixture(autouse=True)
def each_stack_recorded_once(monkeypatch):
    """This file's drills record the blueprint once per stack and worker (a recording is the same
    every time: test_recording.py); each drill still realizes, drives and checks its own sandbox."""
    from integration_blueprint.drill import runner

    def recorded_once(program_dir, stack, config=None):
        if config is not None:  # a drill given its own config (DrillOptions.config)
            return record_program(program_dir, stack=stack, config=config)
        key = (Path(program_dir).resolve(), stack)
        if key not in _RECORDINGS:
            _RECORDINGS[key] = record_program(program_dir, stack=stack)
        return _RECORDINGS[key]

    monkeypatch.setattr(runner, "record_program", recorded_once)


@pytest.fixture(autouse=True)
def own_log_folder(tmp_path, monkeypatch):
    """Drills log to <tmp>/blueprint-drill-<stack>-<seed>-<unique>: the temp dir is one per test, so a
    test can check what a drill left there."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_stack_is_realized_in_the_emulator_as_recorded(stack, monkeypatch):
    recorded = record_program(REPO, stack=stack)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")  # a developer's LocalStack
    with running_emulator("eu-west-1") as emulator:
        # Handlers' own clients are answered in-process; nothing else is sent anywhere.
        assert "AWS_ENDPOINT_URL" not in os.environ
        assert "Queues" not in boto3.client("sqs").list_queues()
        with pytest.raises(NotEmulated, match="no request is sent to the network"):
            boto3.client("sqs", endpoint_url="http://127.0.0.1:9").list_queues()
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
        assert dispatcher.environment["AWS_REGION"] == "eu-west-1" and "AWS_ENDPOINT_URL" not in dispatcher.environment
        mappings = recorded.of_type("aws:lambda/eventSourceMapping:EventSourceMapping")
        assert len(sandbox.sqs_mappings) + len(sandbox.kinesis_mappings) == len(mappings)
        assert set(sandbox.schedules) == {s.name for s in recorded.of_type("aws:scheduler/schedule:Schedule")}
        assert len(sandbox.state_machines) == 1


def test_the_schedule_starts_the_dispatcher_asynchronously_and_a_run_that_keeps_failing_is_parked_with_its_month():
    recorded = record_program(REPO, stack="dev")
    with running_emulator("eu-west-1") as emulator:
        sandbox = Sandbox(recorded, emulator).realize()
        dispatcher = sandbox.function(recorded.named("billing-dispatcher").outputs["name"])
        failed_runs = sandbox.queue_named("billing-dispatcher-failed")
        settings = sandbox.async_settings[dispatcher.arn]
        assert settings.on_failure_queue_url == failed_runs.url
        calls = []

        def throttled(event, context):
            calls.append(event)
            raise RuntimeError("accounts store throttled")

        sandbox.interception.wrap(dispatcher.name, throttled)
        schedule = next(name for name, s in sandbox.schedules.items() if s.target_arn == dispatcher.arn)
        result = sandbox.fire_schedule(schedule, "2026-11-01T03:00:00Z")

        assert not result.succeeded and len(calls) == 1 + settings.maximum_retry_attempts
        [parked] = list_parked(sandbox.sqs, failed_runs.url)
        assert parked.json["requestPayload"] == {"scheduled_time": "2026-11-01T03:00:00Z"}  # bills 2026-10
        assert parked.reason == f"RetriesExhausted after {len(calls)} attempts: RuntimeError: accounts store throttled"


def test_conflicting_duplicates_parked_from_several_shards_are_each_counted():
    """prod's streams have four shards, whose sequence numbers each start again: a parked conflict is
    known by its shard and sequence number (by its number alone, conflicts on different shards fell
    together and a drill that parked every one of them failed)."""
    options = DrillOptions(stack="prod", records=60, seed=23, conflicts=0.2, transient=0.0, crashes=0, poison=0.0,
                           duplicates=0.0)
    report = run_drill(options)

    stream = report.patterns["idempotent_stream"]
    assert stream.conflicts_sent == stream.conflicts_parked == 12, stream
    assert stream.passed, stream


def test_every_pattern_loses_nothing_and_does_nothing_twice_under_the_default_fault_mix():
    # 20 records per pattern (make local and benchmarks/drill_speed.py drill 1,500).
    options = DrillOptions(records=20, seed=12, poison=0.1, duplicates=0.3, crashes=2, conflicts=0.1)
    report = run_drill(options)

    assert set(report.patterns) == set(DRIVERS)
    for name, pattern in report.patterns.items():
        assert pattern.passed, (name, pattern)
        assert pattern.sent == 20 and pattern.expected_unrecoverable == 2
        assert pattern.processed_once + pattern.unrecoverable == 20
        assert pattern.parked_before_redrive >= pattern.unrecoverable and pattern.redriven >= 2
        assert pattern.injected["poison"] == 2
        # Each changed record re-sent under its id was parked (the non-idempotent pattern keeps no id).
        assert pattern.conflicts_sent == pattern.conflicts_parked == (0 if name == "non_idempotent_stream" else 2)
        # Judged as a team's code is: its final state against a reference run's (drill/outcomes.py).
        compared = next(note for note in pattern.notes if note.startswith("outcome compared with a reference run"))
        assert pattern.outcome_differences == 0 and "0 differ" in compared and pattern.reference_time_s > 0, compared
    # Faults really happened where each pattern's contract says they are survivable.
    for name in DRIVERS:  # the non-idempotent pattern: in its Retry-DLQ lane only
        assert report.patterns[name].injected["duplicates"] > 0, name
        assert report.patterns[name].injected["crashes"] > 0, name
    assert sum(p.injected["transient"] for p in report.patterns.values()) > 0
    # One key took 30% of each pattern that keeps state per key, and its state stayed within bound:
    # the stream ledger's account item and a guard per event; the billing ledger's row per charge.
    stream, billing_ledger = report.patterns["idempotent_stream"].hot_key, report.patterns["fifo_billing"].hot_key
    assert (stream.key, stream.records, stream.share, stream.items, stream.lasting_items) == ("acct-hot", 6, 0.3, 7, 1)
    assert (billing_ledger.key, billing_ledger.records, billing_ledger.items) == ("tenant-hot", 6, 6)
    for name in ("idempotent_stream", "non_idempotent_stream", "fifo_billing"):
        hot = report.patterns[name].hot_key
        assert hot.within_bound and 0 < hot.largest_item_bytes <= hot.item_bytes_bound == 1024, (name, hot)
    assert report.patterns["distributed_map"].hot_key is None  # its per-customer rows are the invoices
    # The billing dispatcher crashed mid-month and was retried; the run that met the outage was
    # parked with its month and completed from there.
    billing = report.patterns["fifo_billing"]
    assert "dispatch 2026-10: ok after 2 attempt(s), ok after 1 attempt(s)" in billing.notes  # crash, then retried
    assert "dispatch 2026-11: RetriesExhausted after 3 attempt(s)" in billing.notes
    assert any("1 run(s), months ['2026-11']; re-run failures: none" in note for note in billing.notes)
    assert all((Path(report.log_dir) / f"{name}.log").read_text() for name in DRIVERS)  # logs, not stdout
    # The pattern processes' fork server is gone with its folder; the logs stay.
    assert [path.name for path in Path(tempfile.gettempdir()).iterdir()] == [Path(report.log_dir).name]


class FixtureHandler:
    """Mixed into a pattern's driver: its consumer runs `fixture` (a handler in tests/fixtures)."""

    fixture = ""

    def prepare(self):
        self.functions(self.sandbox)[0].handler = self.fixture
        super().prepare()

    @classmethod
    def deploys(cls, handler):
        return handler in (cls.consumer_handler, cls.fixture)


class BrokenIdempotentStreamDriver(FixtureHandler, IdempotentStreamDriver):
    """The idempotent stream pattern with a handler that skips its idempotency check."""

    fixture = "tests.fixtures.broken_stream_handler.lambda_handler"


class ConflictBlindStreamDriver(FixtureHandler, IdempotentStreamDriver):
    """The idempotent stream pattern with a handler that takes a changed event for a duplicate."""

    fixture = "tests.fixtures.conflict_blind_stream_handler.lambda_handler"


def test_a_handler_that_skips_a_changed_event_under_a_known_id_fails_the_drill_though_nothing_is_lost():
    options = DrillOptions(records=60, seed=4, poison=0.0, duplicates=0.1, crashes=1, conflicts=0.05)

    report = run_drill(options, drivers={"idempotent_stream": ConflictBlindStreamDriver}, workers=1)

    blind = report.patterns["idempotent_stream"]
    assert (blind.lost, blind.duplicate_effects, blind.processed_once) == (0, 0, 60)
    assert (blind.conflicts_sent, blind.conflicts_parked) == (3, 0) and not blind.passed
    assert format_table(report).splitlines()[-1] == \
        "result: FAILED: idempotent_stream: 3 of 3 conflicting duplicates applied or skipped instead of parked"


class UnguardedRetryLaneDriver(FixtureHandler, NonIdempotentStreamDriver):
    """The non-idempotent stream pattern with a Retry-DLQ lane that ignores the effect key."""

    fixture = "tests.fixtures.broken_retry_lane_handler.lambda_handler"


class GrowingLedgerDriver(FixtureHandler, IdempotentStreamDriver):
    """The idempotent stream pattern with the guarded ledger's earlier layout: each event applied once,
    but every applied event id kept in the account's item."""

    fixture = "tests.fixtures.growing_ledger_handler.lambda_handler"


def test_the_non_idempotent_patterns_retry_lane_is_drilled_with_duplicates_and_crashes():
    """The stream lane gets neither (a redelivered Kinesis record would repeat its effect by
    definition); the Retry-DLQ lane, fed here by a ledger outage, must apply each record once through
    both, and a lane that ignores its effect key is caught."""
    options = DrillOptions(records=20, seed=5, poison=0.1, duplicates=0.3, crashes=4)

    sound = run_drill(options, drivers={"non_idempotent_stream": NonIdempotentStreamDriver}, workers=1).patterns
    broken = run_drill(options, drivers={"non_idempotent_stream": UnguardedRetryLaneDriver}, workers=1).patterns

    pattern = sound["non_idempotent_stream"]
    assert pattern.passed and pattern.processed_once == 18, pattern
    assert pattern.injected["duplicates"] > 0 and pattern.injected["crashes"] > 0
    assert "ledger table down during stream read 1: 20 record(s) inserted into the Retry-DLQ" in pattern.notes
    assert pattern.injected["records_reread"] == 0  # the stream lane delivered each record once
    assert broken["non_idempotent_stream"].duplicate_effects > 0


def test_a_ledger_whose_item_grows_with_the_hot_keys_traffic_fails_the_drill_naming_the_bound():
    # 150 records: 45 for the hot account, whose item then holds 45 event ids of 24 bytes.
    options = DrillOptions(records=150, seed=3, poison=0, duplicates=0.05, crashes=1)

    report = run_drill(options, drivers={"idempotent_stream": GrowingLedgerDriver}, workers=1)

    pattern = report.patterns["idempotent_stream"]
    assert (pattern.lost, pattern.duplicate_effects, pattern.processed_once) == (0, 0, 150)  # all applied once
    assert not pattern.passed and not report.passed
    hot = pattern.hot_key
    assert (hot.key, hot.records, hot.items) == ("acct-hot", 45, 1)
    assert hot.largest_item_bytes > 1024
    assert hot.breach == f"an item of {hot.largest_item_bytes:,} bytes, over the bound of 1,024 bytes (one write unit)"
    text = format_table(report)
    assert (f"idempotent_stream: hot key acct-hot, 45 records (30%), in {hot.table}: items 1 (bound 46), items without a "
            f"TTL 1 (bound 1), largest item {hot.largest_item_bytes} bytes (bound 1024): OVER ITS BOUND: {hot.breach}"
            ) in text
    assert "a hot key's state over its bound" in text.splitlines()[-1]
    assert report.to_json()["patterns"]["idempotent_stream"]["hot_key"]["breach"] == hot.breach


def test_the_hot_accounts_events_are_judged_by_its_count_and_balance():
    """Its events share one ledger item, so a lost or doubled event shows only in the sums."""
    sent = {"e1": 5, "e2": 7, "e3": 9}

    assert hot_account_outcome(3, 21.0, sent, parked=set()) == ({"e1", "e2", "e3"}, 0, 0)
    assert hot_account_outcome(3, 21.0, sent, parked={"e3"}) == ({"e1", "e2", "e3"}, 0, 0)  # a leftover copy
    assert hot_account_outcome(2, 12.0, sent, parked={"e3"}) == (set(), 2, 0)  # e3 unrecoverable
    assert hot_account_outcome(2, 16.0, sent, parked=set()) == (set(), 2, 0)  # one lost
    assert hot_account_outcome(4, 28.0, sent, parked=set()) == (set(), 3, 1)  # one done twice
    assert hot_account_outcome(3, 23.0, sent, parked=set()) == (set(), 2, 1)  # e1 lost, e2 done twice


def test_a_handler_that_skips_its_idempotency_check_is_caught_and_the_drill_exits_1_its_logs_where_asked(
        monkeypatch, capsys, tmp_path):
    monkeypatch.setattr("integration_blueprint.drill.runner.DRIVERS", {"idempotent_stream": BrokenIdempotentStreamDriver})
    logs = tmp_path / "artifacts" / "drill"

    exit_code = cli.main(["drill", "--records", "60", "--seed", "3", "--no-progress", "--json", "--logs", str(logs)])

    report = json.loads(capsys.readouterr().out)
    broken = report["patterns"]["idempotent_stream"]
    assert exit_code == 1
    assert broken["duplicate_effects"] > 0
    assert set(broken) >= {"sent", "processed_once", "duplicate_effects", "unrecoverable", "expected_unrecoverable",
                           "lost", "invocations", "retries", "wall_time_s", "hot_key"}
    assert broken["hot_key"]["key"] == "acct-hot" and broken["hot_key"]["records"] == 18
    assert report["stack"] == "dev" and report["seed"] == 3 and report["compression"]
    assert report["log_dir"] == str(logs)
    assert {"program.log", "idempotent_stream.log"} <= {path.name for path in logs.iterdir()}


def test_a_program_with_no_blueprint_component_exits_2_naming_what_the_drill_looks_for(capsys):
    program = REPO / "tests" / "fixtures" / "every_violation"  # hand-written resources only

    code = cli.main(["drill", "--program", str(program), "--stack", "ci", "--records", "2", "--workers", "1",
                     "--no-progress"])

    error = capsys.readouterr().err
    assert code == 2 and f"nothing to drill in {program} (stack ci)" in error
    for component in ("FifoBillingQueue", "IdempotentStreamConsumer", "NonIdempotentStreamConsumer",
                      "DistributedMapBatch"):
        assert f"blueprint:index:{component}" in error


def test_every_instance_of_a_component_is_drilled_in_a_sandbox_of_its_own_and_named(tmp_path):
    program = tmp_path / "team-program"
    program.mkdir()
    (program / "Pulumi.yaml").write_text("name: two-billing-queues\nruntime: python\n")
    (program / "Pulumi.test.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (program / "__main__.py").write_text(
        "from integration_blueprint.components import FifoBillingQueue\n"
        "for region in ('eu', 'us'):\n"
        "    FifoBillingQueue(f'billing-{region}', {'consumer_timeout_seconds': 60, 'batch_size': 10,\n"
        "                                           'schedule_expression': 'cron(0 3 1 * ? *)'})\n")
    options = DrillOptions(stack="test", records=6, program_dir=program)

    report = run_drill(options, drivers={"fifo_billing": FifoBillingDriver}, workers=1)

    assert {name: pattern.component for name, pattern in report.patterns.items()} == {
        "fifo_billing:billing-eu": "billing-eu", "fifo_billing:billing-us": "billing-us"}
    assert report.passed, report.patterns
    assert "fifo_billing:billing-us: component billing-us" in format_table(report)


def test_drill_usage_errors_exit_2(capsys, tmp_path):
    with pytest.raises(SystemExit) as usage:
        cli.main(["drill", "--duplicates", "1.5"])
    assert usage.value.code == 2
    assert cli.main(["drill", "--records", "0"]) == 2
    (tmp_path / "a-file").write_text("")
    assert cli.main(["drill", "--logs", str(tmp_path / "a-file")]) == 2
    assert f"error: --logs {tmp_path / 'a-file'}: the folder cannot be made (File exists)" in capsys.readouterr().err


def test_a_logger_made_in_one_pattern_writes_to_the_log_of_the_pattern_running_now(tmp_path):
    """A handler's logger keeps the stream it was made with; the next pattern in the same process
    must still get its records (they went to the first pattern's closed log file)."""
    import logging

    from integration_blueprint.drill.runner import _output_to

    logger = logging.getLogger("blueprint-tests.pattern-output")
    logger.propagate, logger.level = False, logging.INFO
    first, second = tmp_path / "first.log", tmp_path / "second.log"
    try:
        with open(first, "w") as log, _output_to(log):
            handler = logging.StreamHandler(sys.stdout)  # as Powertools makes it, once per process
            logger.addHandler(handler)
            logger.info("in the first pattern")
        with open(second, "w") as log, _output_to(log):
            logger.info("in the second pattern")
            print("printed in the second pattern")
            print("to stderr in the second pattern", file=sys.stderr)
    finally:
        logger.removeHandler(handler)

    assert first.read_text() == "in the first pattern\n"
    assert second.read_text() == ("in the second pattern\nprinted in the second pattern\n"
                                  "to stderr in the second pattern\n")


@pytest.mark.parametrize("name, driver", [("distributed_map", DistributedMapDriver),
                                          ("idempotent_stream", IdempotentStreamDriver),
                                          ("fifo_billing", FifoBillingDriver)])
def test_a_seed_reproduces_a_drill_exactly_and_recovery_completes_under_40_percent_transient_faults(name, driver):
    """The parallel Map children, the stream's retries and the billing runs under heavy faults: same
    seed, same report; the healthy charges parked by the billing outage are redriven and charged once."""
    options = DrillOptions(records=20, seed=7, poison=0.1, duplicates=0.3, transient=0.4, crashes=4)

    # In this process (the default-mix test covers the worker processes).
    reports = [run_drill(options, drivers={name: driver}, workers=1) for _ in range(2)]
    first, second = (report.to_json()["patterns"][name] for report in reports)

    first.pop("wall_time_s"), second.pop("wall_time_s")
    first.pop("reference_time_s"), second.pop("reference_time_s")  # timings, like the wall time
    # A guard item's TTL is the wall clock plus a day: its size follows the number's trailing zeros
    # (DynamoDB trims them), so the largest item may differ by a byte between two runs.
    for report in (first, second):
        if report.get("hot_key"):
            report["hot_key"].pop("largest_item_bytes")
    assert first == second
    # Two drills with one seed keep their own logs; no logger made by the first run wrote to its
    # closed log during the second.
    assert reports[0].log_dir != reports[1].log_dir
    for report in reports:
        assert "I/O operation on closed file" not in (Path(report.log_dir) / f"{name}.log").read_text()
    assert (first["lost"], first["duplicate_effects"]) == (0, 0), first
    assert first["unrecoverable"] == first["expected_unrecoverable"] == 2, first
    assert first["injected"]["transient"] > 0 and first["injected"]["crashes"] > 0, first
    if name == "fifo_billing":
        assert first["parked_before_redrive"] > first["expected_unrecoverable"]  # healthy charges were parked
        assert first["redriven"] >= first["parked_before_redrive"] - first["expected_unrecoverable"]


class HangingDriver(NonIdempotentStreamDriver):
    def drive(self, step):
        while True:
            self.check_deadline("waiting for a record that never comes")
            time.sleep(0.05)


def test_a_pattern_that_hangs_fails_at_its_deadline_naming_the_cause():
    report = run_drill(DrillOptions(records=10, deadline_seconds=1), drivers={"non_idempotent_stream": HangingDriver},
                       workers=1)
    pattern = report.patterns["non_idempotent_stream"]
    assert not report.passed
    assert pattern.failure.startswith("non_idempotent_stream: still waiting for a record that never comes when its "
                                      "deadline of 1 s passed")


def test_the_map_drill_runs_a_night_under_and_a_night_over_its_tolerated_failures_and_reports_both():
    """Under the threshold the run succeeds with its failed items parked and redriven once; over it
    (an outage of the invoice tables) the run fails, the ops queue gets the alert, and the runbook's
    redrive completes it: every invoice once, only the poison left."""
    config = dict(load_config(REPO, "dev").values)
    section = json.loads(config["blueprint:distributedMap"])
    config["blueprint:distributedMap"] = json.dumps({**section, "maxItemsPerBatch": 5})  # 10% of ~60 rows: one batch
    report = run_drill(DrillOptions(records=60, seed=4, poison=0.05, config=config),
                       drivers={DistributedMapDriver.name: DistributedMapDriver}, workers=1)
    pattern = report.patterns[DistributedMapDriver.name]

    assert pattern.passed, (pattern.notes, pattern.failure)
    assert pattern.lost == 0 and pattern.duplicate_effects == 0 and pattern.unrecoverable == 3
    assert pattern.injected["poison_under_threshold"] == 1 and pattern.injected["dynamodb_outage_runs"] == 1
    under, over = (n for n in pattern.notes if n.startswith("night "))
    assert "injected 1 poison rows" in under and "execution SUCCEEDED, 0 ops alert(s), 1 items parked, 1 redrive(s)" in under
    assert "injected every DynamoDB call throttled" in over
    assert "execution FAILED with InvoiceBatch.ToleratedFailuresExceeded, 1 ops alert(s) " \
           "(States.ExceedToleratedFailureThreshold)" in over
