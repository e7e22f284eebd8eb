"""The drill on a team's own code: it cannot read a ledger it did not write, so it judges each
record by the writes the team's handler made for it across every delivery (drill/effects.py)."""

from pathlib import Path

import pytest

from integration_blueprint.drill.effects import EffectLog, judge
from integration_blueprint.drill.report import DrillOptions, format_table
from integration_blueprint.drill.runner import run_drill

TEAM_PROGRAM = Path(__file__).parent / "fixtures" / "team_program"
PATTERNS = {"fifo_billing": "team-billing", "idempotent_stream": "orders", "distributed_map": "invoices"}


def drill(stack: str):
    options = DrillOptions(stack=stack, program_dir=TEAM_PROGRAM, records=30, seed=5, duplicates=0.2,
                           crashes=2, transient=0.05)
    return run_drill(options, workers=1)


def test_a_team_consumer_that_forgets_idempotency_is_caught_by_its_duplicate_effects_and_the_fix_passes():
    forgets = drill("forgets")

    # Every instance is drilled, with the team's code (not the reference handlers), and named.
    assert {name: p.component for name, p in forgets.patterns.items()} == PATTERNS
    assert not forgets.not_drilled and not forgets.passed
    for name, pattern in forgets.patterns.items():
        assert pattern.duplicate_effects > 0, (name, pattern.notes)
        assert pattern.processed_once + pattern.duplicate_effects == pattern.sent == 30
        named = next(note for note in pattern.notes if "with a duplicate effect" in note)
        assert "landed in" in named or "different items" in named, named
    # What landed twice is named: the record, the call and the item.
    billing = next(n for n in forgets.patterns["fifo_billing"].notes if "duplicate effect" in n)
    assert "tenant-" in billing and "UpdateItem team-billing-ledger" in billing and "sk=balance (adds again)" in billing
    invoices = next(n for n in forgets.patterns["distributed_map"].notes if "duplicate effect" in n)
    assert "INV-" in invoices and "PutItem invoices-invoice-ledger" in invoices
    assert "FAIL" in format_table(forgets)

    fixed = drill("fixed")

    assert fixed.passed, {name: p.notes for name, p in fixed.patterns.items()}
    for name, pattern in fixed.patterns.items():
        assert pattern.processed_once == pattern.sent == 30 and pattern.lost == 0, name
        assert pattern.injected["crashes"] > 0 or pattern.injected["duplicates"] > 0, name  # faults were met
        watched = next(note for note in pattern.notes if note.startswith("judged by effects"))
        assert "0 not attributable" in watched, watched
    # The stream runtime's Powertools records are bookkeeping, not effects.
    assert any("idempotency records in" in note for note in fixed.patterns["idempotent_stream"].notes)


LEDGER = "ledger"


def put(log: EffectLog, record: str, item: dict) -> None:
    log.delivering({record: (record,)})
    log("PutItem", {"TableName": LEDGER, "Item": item}, {})
    log.delivered()


def test_effects_are_judged_per_record_across_deliveries():
    log = EffectLog({LEDGER: ("pk", "sk")}, plumbing={"https://sqs/retry"})
    # r1: the same row written in two deliveries (a redelivered conditional put's twin): once.
    for _ in range(2):
        put(log, "r1", {"pk": {"S": "r1"}, "sk": {"S": "row"}, "at": {"S": "a different time each"}})
    # r2: a fresh row per delivery (a uuid key): a duplicate effect.
    put(log, "r2", {"pk": {"S": "r2"}, "sk": {"S": "uuid-1"}})
    put(log, "r2", {"pk": {"S": "r2"}, "sk": {"S": "uuid-2"}})
    # r3: an ADD in two deliveries: a duplicate effect, whatever else the deliveries wrote.
    for _ in range(2):
        log.delivering({"r3": ("r3",)})
        log("UpdateItem", {"TableName": LEDGER, "Key": {"pk": {"S": "acct"}, "sk": {"S": "total"}},
                           "UpdateExpression": "SET #n = #n + :v", "ExpressionAttributeValues": {":v": {"N": "1"}}}, {})
        log.delivered()
    # r4: only Powertools' idempotency record and a send to the pattern's own retry queue: no effect, lost.
    log.delivering({"r4": ("r4",)})
    log("PutItem", {"TableName": "idempotency", "Item": {"id": {"S": "r4"}, "status": {"S": "INPROGRESS"},
                                                         "expiration": {"N": "1"}}}, {})
    log("SendMessage", {"QueueUrl": "https://sqs/retry", "MessageBody": "r4"}, {})
    log.delivered()
    # r5, r6: one delivery of both; a write naming r6 is r6's even though the delivery held two.
    log.delivering({"r5": ("r5", "acct-5"), "r6": ("r6", "acct-6")})
    log("Publish", {"TopicArn": "arn:aws:sns:eu-west-1:1:events", "Message": '{"event": "r6", "account": "acct-6"}'}, {})
    log("Publish", {"TopicArn": "arn:aws:sns:eu-west-1:1:events", "Message": '{"event": "r5"}'}, {})
    log.delivered()
    # A call outside any delivery (the drill's own checks) is nobody's effect.
    log("PutItem", {"TableName": LEDGER, "Item": {"pk": {"S": "r5"}, "sk": {"S": "x"}}}, {})

    verdict = judge(log, ["r1", "r2", "r3", "r4", "r5", "r6"])

    assert verdict.once == {"r1", "r5", "r6"}
    assert set(verdict.duplicated) == {"r2", "r3"}
    assert "2 deliveries wrote 2 different items" in verdict.duplicated["r2"]
    assert verdict.duplicated["r3"] == "UpdateItem ledger pk=acct, sk=total (adds again) landed in 2 deliveries"
    assert verdict.without_effect == {"r4"} and log.idempotency_tables == {"idempotency"}
    assert not log.unattributed


@pytest.mark.parametrize("expression, accumulates", [
    ("ADD balance :amount", True), ("SET total = total + :v", True), ("SET #l = list_append(#l, :v)", True),
    ("SET #s = :done, updated_at = :now", False), ("REMOVE pending", False), ("SET a = if_not_exists(a, :v)", False),
])
def test_an_update_accumulates_only_when_doing_it_again_changes_the_item_again(expression, accumulates):
    log = EffectLog({})
    [effect] = log.effects_of("UpdateItem", {"TableName": "t", "Key": {"pk": {"S": "k"}}, "UpdateExpression": expression})
    assert effect.accumulates is accumulates
