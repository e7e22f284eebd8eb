"""The drill's judge reads the emulator's whole world (drill/world.py): every write is judged by the
state it left, whatever API made it, and a change to the infrastructure is named."""

import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from integration_blueprint.drill import samples
from integration_blueprint.drill.outcomes import Outcome, Snapshot, compare, infrastructure_changes
from integration_blueprint.drill.report import DrillOptions
from integration_blueprint.drill.runner import run_drill
from integration_blueprint.drill.world import SET_ASIDE, infrastructure, read_world
from integration_blueprint.sandbox.emulator import running_emulator
from integration_blueprint.sandbox.interception import Journal

REGION = "eu-west-1"


def _no_program():
    """What Snapshot reads of a sandbox: no recorded tables (keys come from the emulator itself)."""
    return SimpleNamespace(recorded=SimpleNamespace(of_type=lambda _type: [], resources=[]), kinesis_mappings=[], sqs_mappings=[],
                           functions={}, state_machines={})


def test_writes_through_apis_no_extractor_knows_and_a_changed_redrive_are_differences_named_by_place():
    with running_emulator(REGION) as emulator:
        session = emulator.session()
        ddb, s3, sqs = (emulator.client(name, session) for name in ("dynamodb", "s3", "sqs"))
        ses, firehose = emulator.client("ses", session), emulator.client("firehose", session)
        ddb.create_table(TableName="payments", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                         AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                         BillingMode="PAY_PER_REQUEST")
        s3.create_bucket(Bucket="receipts", CreateBucketConfiguration={"LocationConstraint": REGION})
        orders = sqs.create_queue(QueueName="orders")["QueueUrl"]
        ses.verify_email_identity(EmailAddress="billing@example.com")
        sandbox = _no_program()
        before = Snapshot(sandbox).take(Journal())
        declared = infrastructure(read_world(sandbox))

        # A payment three ways through PartiQL, a receipt by multipart upload, a mail, a Firehose record.
        ddb.execute_statement(Statement="INSERT INTO payments VALUE {'pk': 'pay#evt-1', 'amount': 10}")
        ddb.batch_execute_statement(Statements=[{"Statement": "INSERT INTO payments VALUE {'pk': 'pay#evt-2', 'amount': 20}"}])
        ddb.execute_transaction(TransactStatements=[
            {"Statement": "INSERT INTO payments VALUE {'pk': 'pay#evt-3', 'amount': 30}"}])
        upload = s3.create_multipart_upload(Bucket="receipts", Key="receipts/evt-1.json")["UploadId"]
        part = s3.upload_part(Bucket="receipts", Key="receipts/evt-1.json", UploadId=upload, PartNumber=1,
                              Body=io.BytesIO(b'{"paid": "evt-1"}'))
        s3.complete_multipart_upload(Bucket="receipts", Key="receipts/evt-1.json", UploadId=upload,
                                     MultipartUpload={"Parts": [{"ETag": part["ETag"], "PartNumber": 1}]})
        ses.send_email(Source="billing@example.com", Destination={"ToAddresses": ["payer@example.com"]},
                       Message={"Subject": {"Data": "paid evt-1"}, "Body": {"Text": {"Data": "thanks"}}})
        firehose.create_delivery_stream(DeliveryStreamName="audit", S3DestinationConfiguration={
            "RoleARN": "arn:aws:iam::123456789012:role/firehose", "BucketARN": "arn:aws:s3:::receipts"})
        firehose.put_record(DeliveryStreamName="audit", Record={"Data": b'{"paid": "evt-2"}'})
        # Powertools' record of one of those deliveries: bookkeeping, set aside.
        ddb.put_item(TableName="payments", Item={"pk": {"S": "pay.handler#5d41402abc4b2a76b9719d911017c592"},
                                                 "status": {"S": "COMPLETED"}, "expiration": {"N": "1799999999"}})
        # The infrastructure: a queue of its own, the orders queue re-pointed there.
        elsewhere = sqs.create_queue(QueueName="elsewhere")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=elsewhere, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        sqs.set_queue_attributes(QueueUrl=orders, Attributes={"RedrivePolicy": json.dumps(
            {"deadLetterTargetArn": arn, "maxReceiveCount": 1})})

        after = Snapshot(sandbox).take(Journal())
        changed = infrastructure_changes(after, declared)

    comparison = compare(after, before, lambda text: sorted({w for w in text.replace('"', " ").split() if "evt-" in w}))
    described = {d.place + " " + d.key: d.describe() for d in comparison.differences}
    for key in ("pk=pay#evt-1", "pk=pay#evt-2", "pk=pay#evt-3"):
        assert described[f"table payments {key}"].startswith(f"table payments {key}: 1 written here, absent"), described
    assert "receipts/evt-1.json" in described["bucket receipts receipts/evt-1.json"]
    # Firehose's object: named by the time it was written, compared as its kind.
    assert 'evt-2' in described["bucket receipts <time>audit-1-<time>-<generated id>"]
    assert "paid evt-1" in json.dumps(next(d.here for d in comparison.differences if d.place == "ses sent_messages"))
    assert after.bookkeeping == {"table payments": 1} and not any("pay.handler" in place for place in described)
    assert any(place.startswith("firehose delivery_streams") for place in described)
    assert "absent from the reference run" in described["queue elsewhere (settings)"]
    assert "RedrivePolicy" in described["queue orders (settings)"]
    # Against the program's own infrastructure: the new queue and the re-pointed redrive, named.
    assert [(d.place, d.describe()) for d in changed if d.place == "queue orders"][0][1].startswith(
        "queue orders (settings): RedrivePolicy")
    assert "in the program (as the sandbox realized it" in next(d.describe() for d in changed if d.place == "queue orders")
    assert {d.place for d in changed} == {"queue orders", "queue elsewhere"}
    # What differs by delivery (receipt handles, sequence numbers) is set aside by name, with why.
    assert SET_ASIDE["ReceiptHandle"] and SET_ASIDE["sequence_number"]


def test_powertools_records_are_set_aside_whichever_run_has_them_and_however_many():
    # A whole-event key (a hash of each delivery's batch) makes one record per delivery: 48 here, 20
    # in the reference run; the items the code wrote are the same, so nothing differs.
    here, reference = Outcome(), Outcome()
    for outcome, records in ((here, 48), (reference, 20)):
        outcome.places["table orders"] = {"pk=order#1": [{"pk": "order#1", "version": "2"}]}
        outcome.bookkeeping["table idempotency"] = records

    comparison = compare(here, reference, lambda text: [])

    assert not comparison.differences
    assert any("set aside as bookkeeping" in note and "table idempotency: 48 here, 20 in the reference run" in note
               for note in comparison.notes())


WORLD_PROGRAM = Path(__file__).parent / "fixtures" / "world_program"


@pytest.mark.slow
def test_verdicts_rest_on_the_whole_world_and_hold_both_ways():
    program = WORLD_PROGRAM
    report = run_drill(DrillOptions(
        stack="drill", program_dir=program, records=20, seed=5, duplicates=0.2, crashes=2, transient=0.02,
        samples={"version-guarded": samples.load(program / "samples" / "order_changes.jsonl"),
                 "shared-idempotency-key": samples.load(program / "samples" / "customer_orders.jsonl")},
        partition_keys={"version-guarded": "order_id"}), workers=2)
    by_instance = {pattern.component: pattern for pattern in report.patterns.values()}
    notes = {name: " | ".join(pattern.notes) for name, pattern in by_instance.items()}

    # A payment row per delivery through PartiQL: no extractor knows ExecuteStatement; the world does.
    paid = by_instance["partiql-pays-twice"]
    assert not paid.passed and paid.outcome_differences > 0, notes["partiql-pays-twice"]
    assert "pk=payment#<generated id>" in notes["partiql-pays-twice"]

    # A queue of its own and its lanes re-pointed there: named against the program, though the
    # reference run does the same.
    moved = by_instance["reconfigures-its-lanes"]
    assert not moved.passed, notes["reconfigures-its-lanes"]
    assert "infrastructure changed during the run" in notes["reconfigures-its-lanes"]
    assert "queue elsewhere (settings): 1 written here, absent from the program" in notes["reconfigures-its-lanes"]
    assert "RedrivePolicy" in notes["reconfigures-its-lanes"]

    # Version-guarded upserts keyed by order as their producer keys them: v1 after v2 is a no-op.
    guarded = by_instance["version-guarded"]
    assert guarded.passed and guarded.lost == 0, notes["version-guarded"]
    assert "partition key: each record's 'order_id'" in notes["version-guarded"]
    assert guarded.injected["duplicates"] > 0 and guarded.injected["crashes"] > 0

    # A whole-event @idempotent around a conditional put: Powertools' records differ in number, set aside.
    whole = by_instance["whole-event-idempotent"]
    assert whole.passed, notes["whole-event-idempotent"]
    assert "set aside as bookkeeping, whichever run has them" in notes["whole-event-idempotent"]

    # An idempotency key shared by different events: said so, with the key, no negative counts.
    shared = by_instance["shared-idempotency-key"]
    assert not shared.passed and shared.conflicts_sent == shared.conflicts_parked == 0
    assert shared.notes[0].startswith("8 record(s) parked as conflicting duplicates"), shared.notes[0]
    assert "your idempotency key is not unique per event" in shared.notes[0]
    assert 'business:"cust-00' in shared.notes[0]
    assert "UnrecognizedRetryMessage" not in notes["shared-idempotency-key"]
    assert not any(problem.startswith("-") for problem in shared.problems())
