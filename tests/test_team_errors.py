"""The drill shows why the team's code failed, as a new team meets it: the team's own exception with
its traceback in the handler log (a batch utility's wrapper unwrapped to the record's exception),
each distinct error once in the report with the team's file:line and its count, the
`--sample-records` hint on every lane running team code, and a drill whose every record fails the
same way stopped early, saying so."""

import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from integration_blueprint.cli import main
from integration_blueprint.core import conventions
from integration_blueprint.drill.report import DrillOptions
from integration_blueprint.drill.runner import run_drill
from integration_blueprint.drill.team_errors import EarlyStop, EveryRecordFails, distinct_errors, summary
from integration_blueprint.sandbox.errors import CodeError, FunctionError
from integration_blueprint.sandbox.execution_environment import FunctionCalls
from integration_blueprint.sandbox.interception import Invocation, Journal
from tests.containment_env import team_function

FIRST_WEEK = Path(__file__).parent / "fixtures" / "first_week"


# ---- what crosses back from the function's process ----------------------------------------------

@pytest.fixture
def staging():
    folder = Path(tempfile.mkdtemp(prefix="blueprint-sandbox-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def run_function(staging: Path, files: dict[str, str], handler: str, event: dict) -> FunctionError:
    """Invoke a function whose archive holds `files` (with the Powertools layer) once; its error."""
    functions, _ = team_function(staging, files, handler=handler, name="payments-consumer", timeout=10, memory_mb=256,
                                 answer=FunctionCalls("eu-west-1").answer)
    try:
        with pytest.raises(FunctionError) as raised:
            functions.invoke(event, None)
    finally:
        functions.reset()
    return raised.value


SQS_BATCH = {"Records": [{"messageId": f"m{i}", "receiptHandle": "r", "body": json.dumps({"chargeId": f"c{i}"}),
                          "attributes": {}, "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs",
                          "eventSourceARN": "arn:aws:sqs:eu-west-1:123456789012:charges", "awsRegion": "eu-west-1"}
                         for i in range(3)]}


def test_powertools_batch_error_is_unwrapped_to_the_records_own_exception_at_the_teams_line(staging, capsys):
    error = run_function(staging, {"payments/__init__.py": "", "payments/charges.py": """
        import json

        from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

        processor = BatchProcessor(event_type=EventType.SQS)


        def record_charge(record):
            charge = json.loads(record.body)
            return charge["charge_id"]


        def handler(event, context):
            return process_partial_response(event=event, record_handler=record_charge, processor=processor,
                                            context=context)
        """}, "payments.charges.handler", SQS_BATCH)

    # Lambda is told what Powertools raised; the drill reads what the team's code raised, and where.
    assert error.error_type == "BatchProcessingError"
    assert error.cause == CodeError(type="KeyError", message="'charge_id'", location="payments/charges.py:11",
                                    function="record_charge", code='return charge["charge_id"]')
    # The log has it as Lambda's runtime logs it, with the team's frame and no wrapper text.
    log = capsys.readouterr().out
    assert "[payments-consumer] [ERROR] KeyError: 'charge_id'" in log
    assert 'payments/charges.py", line 11, in record_charge' in log
    assert "(raised to Lambda as BatchProcessingError: All records failed processing." in log
    assert "lambda_bootstrap" not in log  # the sandbox's own frames are not the team's


def test_an_import_that_fails_names_the_teams_import_line_and_is_logged(staging, capsys):
    error = run_function(staging, {"refunds.py": """
        import os

        import refund_schema


        def handler(event, context):
            return refund_schema.validate(event)
        """}, "refunds.handler", {"Records": []})

    assert error.error_type == "Runtime.ImportModuleError"
    assert error.cause is not None and error.cause.location == "refunds.py:4" and error.cause.code == "import refund_schema"
    log = capsys.readouterr().out
    assert "[ERROR] Runtime.ImportModuleError: Unable to import module 'refunds': No module named 'refund_schema'" in log
    assert 'refunds.py", line 4, in <module>' in log and "ModuleNotFoundError" in log


def test_a_runtimes_wrapper_is_unwrapped_to_the_teams_error_and_the_teams_own_wrapper_is_kept(staging):
    """The blueprint's runtime ships beside the team's code and redacts: it raises its own error
    `from None` while handling the team's; the team's own error type, raised from a library's, is the
    team's to read."""
    files = {"integration_blueprint/__init__.py": "", "integration_blueprint/runtime.py": """
        class RecordFailed(Exception):
            pass


        def run(process, record):
            try:
                process(record)
            except Exception as exc:
                raise RecordFailed(f"record {record['id']} failed: {type(exc).__name__}") from None
        """, "orders.py": """
        from integration_blueprint.runtime import run


        class OrderRefused(Exception):
            pass


        def add(record):
            return record["order_id"]


        def refuse(record):
            try:
                int(record["amount"])
            except ValueError as exc:
                raise OrderRefused("amount is not a number") from exc


        def handler(event, context):
            return run(add if event["mode"] == "add" else refuse, {"id": 7, "amount": "x"})
        """}

    wrapped = run_function(staging, files, "orders.handler", {"mode": "add"})
    assert wrapped.error_type == "RecordFailed"  # what Lambda is told
    assert wrapped.cause == CodeError("KeyError", "'order_id'", "orders.py:10", "add", 'return record["order_id"]')

    (staging / "code" / "orders.py").unlink()
    shutil.rmtree(staging / "powertools")
    shutil.rmtree(staging / "runtime")
    own = run_function(staging, files, "orders.handler", {"mode": "refuse"})
    assert own.cause == CodeError("OrderRefused", "amount is not a number", "orders.py:17", "refuse",
                                  'raise OrderRefused("amount is not a number") from exc')


# ---- distinct errors and the early stop, over the journal ----------------------------------------

def failed(records: list[str], error: CodeError | None, *, text: str = "") -> Invocation:
    """A finished invocation of `consumer` that delivered `records` and raised `error` (None: returned)."""
    invocation = Invocation("consumer", {"records": records}, error=text or (f"{error.type}: {error.message}" if error else None),
                            cause=error)
    invocation.finished = True
    return invocation


def delivered(event) -> dict:
    return {record: () for record in event["records"]}


KEY_ERROR = CodeError("KeyError", "'charge_id'", "charges.py:16", "record_charge", 'charge_id = charge["charge_id"]')


def batches(count: int, size: int = 10) -> list[list[str]]:
    return [[f"r{b * size + i}" for i in range(size)] for b in range(count)]


def test_a_drill_stops_once_its_first_records_all_fail_the_same_way_and_not_before():
    journal = Journal()
    stop = EarlyStop("fifo_billing", "consumer", delivered)
    journal.invocations += [failed(batch, KEY_ERROR) for batch in batches(2)]  # 20 records, 2 invocations
    stop.check(journal)  # one batch retried once is not yet enough to be sure
    journal.invocations.append(failed(batches(1)[0], KEY_ERROR, text="SimulatedCrash: injected"))  # not the code's
    running = failed(["r20"], KEY_ERROR)
    running.finished = False  # still running: not read yet
    journal.invocations.append(running)
    stop.check(journal)
    running.finished = True

    with pytest.raises(EveryRecordFails, match=r"stopped early: the first 21 records the drill sent all failed, over 3 "
                                               r"invocations, with KeyError: 'charge_id' at charges.py:16 in record_charge"):
        stop.check(journal)
    assert conventions.EARLY_STOP_RECORDS == 20 and conventions.EARLY_STOP_INVOCATIONS == 3


@pytest.mark.parametrize("given", [False, True])
def test_the_early_stop_points_at_sample_records_only_where_the_team_gave_none(given):
    """Where the team gave its records, its code fails on them: the fix is the code, not the option."""
    journal = Journal()
    stop = EarlyStop("fifo_billing", "consumer", delivered, sample_records="" if given else "charges=FILE")
    journal.invocations += [failed(batch, KEY_ERROR) for batch in batches(3)]

    with pytest.raises(EveryRecordFails) as stopped:
        stop.check(journal)

    told = str(stopped.value)
    assert told.endswith("fix that (the handler log has the traceback)" if given else
                         "fix that (the handler log has the traceback) or, if the code is written for other records, "
                         "give the drill yours (--sample-records charges=FILE)")
    assert ("--sample-records" in told) is not given


def test_the_blueprint_runtimes_retry_lane_naming_the_same_error_is_the_same_error():
    """The stream runtime's Retry-DLQ lane raises its own error naming the team's by type and line,
    never its message (handlers/runtime/redaction.py): the same failure, met again."""
    journal = Journal()
    stop = EarlyStop("idempotent_stream", "consumer", delivered)
    journal.invocations.append(failed(batches(1)[0], KEY_ERROR))
    retried = CodeError("RecordFailed", "1 of 1 replayed records failed: record shardId-0/7 failed: KeyError at "
                                        "charges.py:16 in record_charge")
    journal.invocations += [failed(batch, retried) for batch in batches(3)[1:]]

    with pytest.raises(EveryRecordFails, match="with KeyError: 'charge_id' at charges.py:16"):
        stop.check(journal)

    other = EarlyStop("idempotent_stream", "consumer", delivered)
    elsewhere = CodeError("RecordFailed", "record shardId-0/7 failed: KeyError at charges.py:30 in refund")
    journal.invocations.insert(1, failed(["r99"], elsewhere))
    other.check(journal)
    assert not other.armed


@pytest.mark.parametrize("interruption", ["one record handled", "a second kind of error"])
def test_a_drill_whose_code_succeeds_once_or_fails_two_ways_runs_to_the_end(interruption):
    journal = Journal()
    stop = EarlyStop("fifo_billing", "consumer", delivered)
    if interruption == "one record handled":
        journal.invocations.append(failed(["r0"], None))
    else:
        journal.invocations.append(failed(["r0"], CodeError("ValueError", "bad amount", "charges.py:20")))
    journal.invocations += [failed(batch, KEY_ERROR) for batch in batches(10)]

    stop.check(journal)  # no stop: the drill goes on to tell every error and every outcome
    assert not stop.armed


def test_each_distinct_error_is_told_once_by_its_type_and_the_teams_line():
    journal = Journal()
    journal.invocations += [failed(batch, KEY_ERROR) for batch in batches(4)]
    for amount in (12, 13):  # one line, a message naming the record: one error
        journal.invocations.append(failed([f"a{amount}"], CodeError("ValueError", f"bad amount {amount}", "charges.py:20")))
    journal.invocations.append(failed(["x"], CodeError("Runtime.ImportModuleError", "No module named 'x'")))
    journal.invocations.append(Invocation("another-function", {"records": ["z"]}, error="KeyError: 'z'"))

    errors = distinct_errors(journal, "consumer", delivered)

    assert [(e.error.type, e.invocations, len(e.records)) for e in errors] == [
        ("KeyError", 4, 40), ("ValueError", 2, 2), ("Runtime.ImportModuleError", 1, 1)]
    assert summary(errors)[0] == ("the team's code raised KeyError: 'charge_id' at charges.py:16 in record_charge "
                                  '(charge_id = charge["charge_id"]): 4 invocation(s), 40 record(s)')
    assert summary(errors)[1].startswith("the team's code raised ValueError: bad amount 12 at charges.py:20: 2 invocation")


# ---- a new team's drill, end to end ---------------------------------------------------------------

def handler_log(report_text: str, pattern: str) -> str:
    logs = next(line for line in report_text.splitlines() if line.startswith("handler logs: "))
    return Path(next(path for path in logs.removeprefix("handler logs: ").split(", ")
                     if path.endswith(f"/{pattern}.log"))).read_text()


@pytest.mark.slow
def test_a_fifo_consumer_written_for_other_records_is_told_from_the_first_report_and_stops_early(capsys):
    assert main(["drill", "--program", str(FIRST_WEEK), "--stack", "charges", "--workers", "1", "--no-progress"]) == 1
    report = capsys.readouterr().out

    assert ("fifo_billing: the team's code raised KeyError: 'charge_id' at charges.py:16 in record_charge "
            '(charge_id = charge["charge_id"])') in report
    assert "give the drill some, --sample-records charges=FILE (docs/drill.md, `blueprint docs drill`" in report
    assert "FAILED: fifo_billing: stopped early: the first " in report and "none succeeded" in report
    assert "BatchProcessingError" not in report  # the wrapper is not what the team reads
    invocations = int(re.search(r"all failed, over (\d+) invocations", report).group(1))
    assert invocations < 20, report  # not 1,500 records x 5 receives
    log = handler_log(report, "fifo_billing")
    assert "[ERROR] KeyError: 'charge_id'" in log and 'charges.py", line 16, in record_charge' in log


@pytest.mark.slow
def test_a_consumer_that_cannot_import_is_told_with_its_import_line_and_logged():
    report = run_drill(DrillOptions(stack="refunds", program_dir=FIRST_WEEK), workers=1)

    pattern = report.patterns["idempotent_stream"]
    assert "stopped early" in pattern.failure
    raised = next(note for note in pattern.notes if note.startswith("the team's code raised"))
    assert raised.startswith("the team's code raised Runtime.ImportModuleError: Unable to import module 'refunds': "
                             "No module named 'refund_schema'")
    assert " at refunds.py:7 in <module> (import refund_schema)" in raised
    assert not any("--sample-records" in note for note in pattern.notes)  # not a payload error
    log = (Path(report.log_dir) / "idempotent_stream.log").read_text()
    assert "[ERROR] Runtime.ImportModuleError" in log and 'refunds.py", line 7, in <module>' in log


@pytest.mark.slow
def test_a_map_item_handler_failing_every_item_is_told_with_the_hint_for_the_map_lane():
    report = run_drill(DrillOptions(stack="statements", program_dir=FIRST_WEEK), workers=1)

    pattern = report.patterns["distributed_map"]
    notes = "\n".join(pattern.notes)
    assert ("the team's code raised KeyError: 'account' at statements.py:11 in handler "
            "(line = f\"{event['account']}#{event['period']}\")") in notes
    assert "--sample-records statements=FILE" in notes
    assert pattern.processed_once == 0 and not report.passed
    assert "[ERROR] KeyError: 'account'" in (Path(report.log_dir) / "distributed_map.log").read_text()
