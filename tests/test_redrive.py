"""`blueprint redrive`: list what is parked and why, move it back in controlled batches, replay
Kinesis ranges while the stream holds them, re-run parked asynchronous invocations and failed
Distributed Map items; against moto (in-process), the way the CLI runs against an account."""

import ast
import json
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from integration_blueprint import cli
from integration_blueprint.redrive.dispatch import rerun_async_failures
from integration_blueprint.redrive.map_items import failed_items_from_manifest, header_of, rerun_items
from integration_blueprint.redrive.move import move_messages, start_move_task
from integration_blueprint.redrive.parked import RateLimit, list_parked
from integration_blueprint.redrive.stream import redrive_stream

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def aws():
    with mock_aws():
        yield


def queue(sqs, name, fifo=False):
    attributes = {"FifoQueue": "true"} if fifo else {}
    return sqs.create_queue(QueueName=name + (".fifo" if fifo else ""), Attributes=attributes)["QueueUrl"]


def bodies(sqs, url):
    out = []
    while True:
        batch = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"],
                                    MessageSystemAttributeNames=["All"]).get("Messages", [])
        if not batch:
            return out
        for m in batch:
            out.append((m["Body"], m.get("Attributes", {}).get("MessageGroupId"), m.get("MessageAttributes")))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])


def test_moto_has_no_start_message_move_task_so_the_sandbox_moves_by_receive_send_delete(aws):
    sqs = boto3.client("sqs")
    arn = sqs.get_queue_attributes(QueueUrl=queue(sqs, "dlq"), AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    with pytest.raises(NotImplementedError):
        start_move_task(sqs, arn, max_per_second=5)


def test_a_fifo_dlq_moves_back_in_group_order_with_its_attributes_and_a_kept_message_holds_its_group(aws):
    sqs = boto3.client("sqs")
    dlq, source = queue(sqs, "charges-dlq", fifo=True), queue(sqs, "charges", fifo=True)
    for group, n in (("t1#2026-10", 0), ("t2#2026-10", 0), ("t1#2026-10", 1), ("t2#2026-10", 1), ("t1#2026-10", 2)):
        sqs.send_message(QueueUrl=dlq, MessageBody=json.dumps({"group": group, "n": n}), MessageGroupId=group,
                         MessageDeduplicationId=f"{group}:{n}",
                         MessageAttributes={"tenant": {"DataType": "String", "StringValue": group[:2]}})

    def keep_t2_first(parked):
        body = parked.json
        return "t2's first charge stays" if body["group"] == "t2#2026-10" and body["n"] == 0 else None

    result = move_messages(sqs, dlq, source, select=keep_t2_first)

    moved = bodies(sqs, source)
    assert [(json.loads(b)["group"], json.loads(b)["n"]) for b, _, _ in moved] == [
        ("t1#2026-10", 0), ("t1#2026-10", 1), ("t1#2026-10", 2)]
    assert all(group == "t1#2026-10" and attrs["tenant"]["StringValue"] == "t1" for _, group, attrs in moved)
    # t2's later charge did not overtake the one kept: the whole group is still parked, in order.
    assert [json.loads(b)["n"] for b, _, _ in bodies(sqs, dlq)] == [0, 1]
    assert len(result.moved) == 3 and len(result.kept) >= 1


def test_dry_run_and_limit_move_only_what_they_say(aws):
    sqs = boto3.client("sqs")
    dlq, source = queue(sqs, "dlq"), queue(sqs, "source")
    for i in range(5):
        sqs.send_message(QueueUrl=dlq, MessageBody=json.dumps({"id": i}))
    dry = move_messages(sqs, dlq, source, dry_run=True)
    assert len(dry.moved) == 5 and bodies(sqs, source) == []
    batch = move_messages(sqs, dlq, source, limit=2)
    assert len(batch.moved) == 2 and len(bodies(sqs, source)) == 2
    assert len(list_parked(sqs, dlq)) == 3  # listing leaves them where they are


def test_the_rate_limit_spaces_operations():
    now, slept = [0.0], []

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    rate = RateLimit(4, sleep=sleep, clock=lambda: now[0])
    for _ in range(5):
        rate.take()
    assert now[0] == pytest.approx(1.0) and len(slept) == 4


def test_every_parked_shape_says_why_it_is_parked(aws):
    sqs = boto3.client("sqs")
    url = queue(sqs, "parked")
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps({
        "requestContext": {"condition": "RetriesExhausted", "approximateInvokeCount": 3},
        "requestPayload": {"month": "2026-10"}, "responsePayload": {"errorMessage": "throttled"}}))
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps({
        "requestContext": {"condition": "RetryAttemptsExhausted", "approximateInvokeCount": 4},
        "responseContext": {"functionError": "Unhandled"},
        "KinesisBatchInfo": {"shardId": "shardId-1", "startSequenceNumber": "5", "endSequenceNumber": "9",
                             "batchSize": 5}}))
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps({
        "kind": "blueprint.stream-record/v1", "sequenceNumber": "7", "data": "",
        "error": {"type": "InvalidEvent", "message": "amount is not a number"}}))
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"idempotency_key": "t1:e1:2026-10"}))

    reasons = {m.kind: m.reason for m in list_parked(sqs, url)}

    assert reasons["async-invocation"] == "RetriesExhausted after 3 attempts: throttled"
    assert reasons["stream-range"].startswith("RetryAttemptsExhausted after 4 invocations (Unhandled): shard shardId-1")
    assert reasons["stream-record"] == "InvalidEvent: amount is not a number"
    assert "t1:e1:2026-10" in reasons["message"] and "times without success" in reasons["message"]


def test_kinesis_unrecoverable_messages_go_back_to_the_retry_dlq_while_the_stream_holds_their_range(aws):
    sqs, kinesis = boto3.client("sqs"), boto3.client("kinesis")
    kinesis.create_stream(StreamName="ledger", ShardCount=1)
    arn = kinesis.describe_stream(StreamName="ledger")["StreamDescription"]["StreamARN"]
    put = [kinesis.put_record(StreamName="ledger", Data=json.dumps({"n": i}).encode(), PartitionKey="p")
           for i in range(3)]
    unrecoverable, retry = queue(sqs, "unrecoverable"), queue(sqs, "retry")

    def info(start, end):
        return {"KinesisBatchInfo": {"shardId": put[0]["ShardId"], "startSequenceNumber": start,
                                     "endSequenceNumber": end, "batchSize": 2, "streamArn": arn}}
    sqs.send_message(QueueUrl=unrecoverable, MessageBody=json.dumps(info(put[0]["SequenceNumber"], put[1]["SequenceNumber"])))
    sqs.send_message(QueueUrl=unrecoverable, MessageBody=json.dumps(info("0", "0")))  # trimmed by retention
    sqs.send_message(QueueUrl=unrecoverable, MessageBody=json.dumps({
        "kind": "blueprint.stream-record/v1", "sequenceNumber": "9", "data": "e30=", "error": {"type": "X"}}))

    result = redrive_stream(sqs, kinesis, unrecoverable, retry)

    assert sorted(m.kind for m in result.moved) == ["stream-range", "stream-record"]
    [(expired, why)] = result.kept
    assert why.startswith("expired: records from sequence number 0") and "retention" in why
    assert len(bodies(sqs, retry)) == 2
    assert [json.loads(b)["KinesisBatchInfo"]["startSequenceNumber"] for b, _, _ in bodies(sqs, unrecoverable)] == ["0"]


def test_a_parked_run_is_re_run_with_its_original_event_and_stays_parked_if_it_fails_again(aws):
    sqs = boto3.client("sqs")
    url = queue(sqs, "dispatcher-failed")
    for month in ("2026-10", "2026-11"):
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({
            "requestContext": {"condition": "RetriesExhausted", "approximateInvokeCount": 3},
            "requestPayload": {"month": month}, "responsePayload": {"errorMessage": "throttled"}}))
    ran = []

    def invoke(event):
        ran.append(event["month"])
        if event["month"] == "2026-11":
            raise RuntimeError("still throttled")

    assert rerun_async_failures(sqs, url, invoke, dry_run=True).to_json()["would_rerun"] == 2 and ran == []
    result = rerun_async_failures(sqs, url, invoke)
    assert sorted(ran) == ["2026-10", "2026-11"]
    assert [m.json["requestPayload"] for m in result.rerun] == [{"month": "2026-10"}]
    assert [why for _, why in result.failed] == ["RuntimeError: still throttled"]
    assert [json.loads(b)["requestPayload"]["month"] for b, _, _ in bodies(sqs, url)] == ["2026-11"]


def test_failed_map_items_from_the_result_writer_are_re_run_as_a_new_execution_over_just_them(aws):
    s3, sfn = boto3.client("s3"), boto3.client("stepfunctions")
    s3.create_bucket(Bucket="invoices", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    s3.put_object(Bucket="invoices", Key="incoming/night.csv", Body=b"invoice_id,amount\nINV-1,1.00\nINV-2,x\n")
    s3.put_object(Bucket="invoices", Key="results/run/FAILED_0.json", Body=json.dumps([
        {"Input": json.dumps({"invoice_id": "INV-2", "amount": "x"}), "Error": "InvalidInvoice"}]).encode())
    s3.put_object(Bucket="invoices", Key="results/run/manifest.json", Body=json.dumps({
        "ResultFiles": {"FAILED": [{"Key": "results/run/FAILED_0.json", "Size": 1}], "SUCCEEDED": []}}).encode())
    role = boto3.client("iam").create_role(RoleName="sfn", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    machine = sfn.create_state_machine(name="batch", roleArn=role, definition=json.dumps(
        {"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}))["stateMachineArn"]

    items = failed_items_from_manifest(s3, "invoices", "results/run/manifest.json")
    rerun = rerun_items(s3, sfn, state_machine_arn=machine, bucket="invoices",
                        header=header_of(s3, "invoices", "incoming/night.csv"), items=items, name="redrive-night")

    assert items == [{"invoice_id": "INV-2", "amount": "x"}] and rerun.items == 1
    assert s3.get_object(Bucket="invoices", Key=rerun.input_key)["Body"].read() == b"invoice_id,amount\nINV-2,x\n"
    assert json.loads(sfn.describe_execution(executionArn=rerun.execution_arn)["input"]) == {"inputKey": rerun.input_key}


def test_the_command_lists_and_moves_a_batch_and_names_the_fix_on_a_bad_queue(aws, capsys):
    sqs = boto3.client("sqs")
    dlq, source = queue(sqs, "dlq"), queue(sqs, "source")
    for i in range(3):
        sqs.send_message(QueueUrl=dlq, MessageBody=json.dumps({"idempotency_key": f"k{i}"}))

    assert cli.main(["redrive", "list", dlq, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 3
    assert cli.main(["redrive", "queue", "--dlq", dlq, "--to", source, "--limit", "2", "--rate", "100", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["moved"] == 2
    assert len(bodies(sqs, source)) == 2
    assert cli.main(["redrive", "list", dlq.replace("dlq", "nope")]) == 2
    assert "check the queue URLs" in capsys.readouterr().err
    assert cli.main(["redrive", "queue", "--dlq", dlq]) == 2  # StartMessageMoveTask: not in moto
    assert "move in batches with --to" in capsys.readouterr().err


def test_the_account_side_of_redrive_imports_neither_the_sandbox_nor_the_drill():
    for path in (REPO / "blueprint" / "redrive").glob("*.py"):
        imported = {n.module for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ImportFrom) and n.module}
        assert not any(m.startswith(("integration_blueprint.sandbox", "integration_blueprint.drill")) for m in imported), path
