"""The drill on a team's own code: it cannot read a ledger it did not write, so it judges each
record by the writes the team's handler made for it across every delivery (drill/effects.py)."""

from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from integration_blueprint.drill.effects import EffectLog, judge
from integration_blueprint.drill.patterns import DRIVERS
from integration_blueprint.drill.report import DrillOptions, format_table
from integration_blueprint.drill.runner import choose_instances, run_drill
from integration_blueprint.preview.recording import record_program
from integration_blueprint.sandbox.emulator import running_emulator
from integration_blueprint.sandbox.faults import FaultInjector
from integration_blueprint.sandbox.interception import Call, FunctionRun, Invocation, Journal, install_request_hooks

# The end-to-end tier: `make test-slow` and `make test-all` run it, `make test` leaves it out.
pytestmark = pytest.mark.slow

TEAM_PROGRAM = Path(__file__).parent / "fixtures" / "team_program"
PATTERNS = {"fifo_billing:team-billing": "team-billing", "idempotent_stream": "orders",
            "distributed_map": "invoices", "non_idempotent_stream": "payments"}
# The blueprint's consumer behind the team's own dispatcher: judged by the reference ledger and by
# what reached the queue (a charge enqueued twice is a duplicate effect of the dispatcher's).
TEAM_DISPATCHER = "fifo_billing:payroll"


def drill(stack: str):
    options = DrillOptions(stack=stack, program_dir=TEAM_PROGRAM, records=30, seed=5, duplicates=0.2,
                           crashes=2, transient=0.05)
    return run_drill(options, workers=1)


def test_a_team_consumer_that_forgets_idempotency_is_caught_by_its_duplicate_effects_and_the_fix_passes():
    forgets = drill("forgets")

    # Every instance is drilled, with the team's code (not the reference handlers), and named.
    assert {name: p.component for name, p in forgets.patterns.items()} == {**PATTERNS, TEAM_DISPATCHER: "payroll"}
    assert not forgets.not_drilled and not forgets.passed
    dispatcher = forgets.patterns.pop(TEAM_DISPATCHER)
    assert dispatcher.duplicate_effects > 0 and dispatcher.processed_once == dispatcher.sent  # charged once, sent twice
    assert any(note.startswith("charges enqueued twice: ") and not note.startswith("charges enqueued twice: 0;")
               for note in dispatcher.notes)
    assert "the dispatcher runs the team's code (dispatch.handler)" in " ".join(dispatcher.notes)
    for name, pattern in forgets.patterns.items():
        assert pattern.duplicate_effects > 0, (name, pattern.notes)
        assert pattern.processed_once + pattern.duplicate_effects == pattern.sent == 30
        named = next(note for note in pattern.notes if "with a duplicate effect" in note)
        assert "landed in" in named or "different items" in named, named
    # What landed twice is named: the record, the call and the item.
    billing = next(n for n in forgets.patterns["fifo_billing:team-billing"].notes if "duplicate effect" in n)
    assert "tenant-" in billing and "UpdateItem team-billing-ledger" in billing and "sk=balance (adds again)" in billing
    invoices = next(n for n in forgets.patterns["distributed_map"].notes if "duplicate effect" in n)
    assert "INV-" in invoices and "PutItem invoices-invoice-ledger" in invoices
    assert "FAIL" in format_table(forgets)

    fixed = drill("fixed")

    assert fixed.passed, {name: p.notes for name, p in fixed.patterns.items()}
    assert fixed.patterns.pop(TEAM_DISPATCHER).processed_once == 30
    for name, pattern in fixed.patterns.items():
        assert pattern.processed_once == pattern.sent == 30 and pattern.lost == 0, name
        assert pattern.injected["crashes"] > 0 or pattern.injected["duplicates"] > 0, name  # faults were met
        watched = next(note for note in pattern.notes if note.startswith("judged by effects"))
        assert "0 not attributable" in watched, watched
    # The stream runtime's Powertools records are bookkeeping, not effects.
    assert any("idempotency records in" in note for note in fixed.patterns["idempotent_stream"].notes)


LEDGER = "ledger"
TOPIC = "arn:aws:sns:eu-west-1:123456789012:events"


def delivery(journal: Journal, records: list[str], *calls: tuple[str, dict], error: str = "") -> None:
    """One invocation of the consumer, as the sandbox journals it: its event and successful calls."""
    journal.invocations.append(Invocation("consumer", {"records": records}, [Call(op, params, {}) for op, params in calls],
                                          error or None))


def put(item: dict) -> tuple[str, dict]:
    return "PutItem", {"TableName": LEDGER, "Item": item}


def test_effects_are_judged_per_record_across_deliveries():
    journal = Journal()
    # r1: the same row written in two deliveries (a redelivered conditional put's twin): once.
    for _ in range(2):
        delivery(journal, ["r1"], put({"pk": {"S": "r1"}, "sk": {"S": "row"}, "at": {"S": "a different time each"}}))
    # r2: a fresh row per delivery (a uuid key): a duplicate effect.
    delivery(journal, ["r2"], put({"pk": {"S": "r2"}, "sk": {"S": "uuid-1"}}))
    delivery(journal, ["r2"], put({"pk": {"S": "r2"}, "sk": {"S": "uuid-2"}}), error="SimulatedCrash: injected")
    # r3: an addition in two deliveries: a duplicate effect, whatever else the deliveries wrote.
    for _ in range(2):
        delivery(journal, ["r3"], ("UpdateItem", {
            "TableName": LEDGER, "Key": {"pk": {"S": "acct"}, "sk": {"S": "total"}},
            "UpdateExpression": "SET #n = #n + :v", "ExpressionAttributeValues": {":v": {"N": "1"}}}))
    # r4: only Powertools' idempotency record and a send to the pattern's own retry queue: no effect, lost.
    delivery(journal, ["r4"],
             ("PutItem", {"TableName": "idempotency", "Item": {"id": {"S": "r4"}, "status": {"S": "INPROGRESS"},
                                                              "expiration": {"N": "1"}}}),
             ("SendMessage", {"QueueUrl": "https://sqs/retry", "MessageBody": "r4"}),
             error="ValueError: the team's code failed")
    # r5, r6: one delivery of both; a write naming r6 is r6's even though the delivery held two.
    delivery(journal, ["r5", "r6"],
             ("Publish", {"TopicArn": TOPIC, "Message": '{"event": "r6", "account": "acct-6"}'}),
             ("Publish", {"TopicArn": TOPIC, "Message": '{"event": "r5"}'}))
    # r7: Powertools' record kept in the same table as the team's row: only the row is an effect.
    record_key = {"pk": {"S": "consumer#r7-hash"}, "sk": {"S": "r7-hash"}}
    delivery(journal, ["r7"],
             put({**record_key, "status": {"S": "INPROGRESS"}, "expiration": {"N": "9"}}),
             put({"pk": {"S": "r7"}, "sk": {"S": "row"}}),
             ("UpdateItem", {"TableName": LEDGER, "Key": record_key, "UpdateExpression": "SET #s = :done"}))
    # Another function's calls (the drill's own checks never reach the journal at all) are not the consumer's.
    journal.invocations.append(Invocation("another", {"records": ["r5"]}, [Call(*put({"pk": {"S": "r5"}}), {})]))
    log = EffectLog({LEDGER: ("pk", "sk")}, plumbing={"https://sqs/retry"})

    log.read(journal, "consumer", lambda event: {r: (r,) for r in event["records"]})
    verdict = judge(log, ["r1", "r2", "r3", "r4", "r5", "r6", "r7"])

    assert verdict.once == {"r1", "r5", "r6", "r7"}
    assert [e.identity for effects in log.by_record["r7"].values() for e in effects] == ["pk=r7, sk=row"]
    assert set(verdict.duplicated) == {"r2", "r3"}
    assert "2 deliveries wrote 2 different items" in verdict.duplicated["r2"]
    assert verdict.duplicated["r3"] == "UpdateItem ledger pk=acct, sk=total (adds again) landed in 2 deliveries"
    assert verdict.without_effect == {"r4"} and log.idempotency_tables == {"idempotency", LEDGER}
    assert not log.unattributed


@pytest.mark.parametrize("expression, accumulates", [
    ("ADD balance :amount", True), ("SET total = total + :v", True), ("SET #l = list_append(#l, :v)", True),
    ("SET #s = :done, updated_at = :now", False), ("REMOVE pending", False), ("SET a = if_not_exists(a, :v)", False),
])
def test_an_update_accumulates_only_when_doing_it_again_changes_the_item_again(expression, accumulates):
    log = EffectLog({})
    [effect] = log.effects_of("UpdateItem", {"TableName": "t", "Key": {"pk": {"S": "k"}}, "UpdateExpression": expression})
    assert effect.accumulates is accumulates


def test_a_team_handler_the_sandbox_cannot_run_is_listed_as_not_drilled_with_why():
    recorded = record_program(TEAM_PROGRAM, stack="fixed")
    consumer = recorded.named("orders-consumer")
    consumer.inputs["runtime"] = "nodejs20.x"  # as a team shipping a Node.js consumer would record it

    chosen, not_drilled = choose_instances(recorded, DRIVERS)

    assert set(chosen) == {"fifo_billing:team-billing", TEAM_DISPATCHER, "distributed_map", "non_idempotent_stream"}
    assert "orders-consumer (nodejs20.x) runs code the sandbox cannot" in not_drilled["idempotent_stream"]


def test_calls_through_a_session_of_the_functions_own_are_journaled_and_faulted():
    """Powertools' idempotency layer makes its own boto3 session: its calls count as the function's."""
    with running_emulator("eu-west-1") as emulator:
        emulator.client("dynamodb").create_table(
            TableName="records", BillingMode="PAY_PER_REQUEST", KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}])
        faults = FaultInjector(enabled=True)
        install_request_hooks(faults, emulator.on_stop)
        own = boto3.session.Session().client("dynamodb", config=Config(retries={"total_max_attempts": 1}))
        journal = Journal()

        with FunctionRun("consumer", {"id": "r1"}, journal):
            own.put_item(TableName="records", Item={"id": {"S": "r1"}})
        faults.outage = True
        with pytest.raises(ClientError, match="ThrottlingException"), FunctionRun("consumer", {"id": "r2"}, journal):
            own.put_item(TableName="records", Item={"id": {"S": "r2"}})
        own.get_item(TableName="records", Key={"id": {"S": "r1"}})  # outside a run: neither faulted nor journaled

    [first, second] = journal.invocations
    assert [(c.operation, c.params["Item"]) for c in first.calls] == [("PutItem", {"id": {"S": "r1"}})]
    assert second.calls == [] and second.error.startswith("ThrottlingException: An error occurred (ThrottlingException)")
    assert faults.outage_injected == 1
