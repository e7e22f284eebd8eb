"""The local SQS event source mapping against moto: Lambda's documented SQS semantics."""

import json

import boto3
import pytest
from moto import mock_aws

from integration_blueprint.sandbox.sqs_esm import SqsEventSourceMapping


@pytest.fixture
def sqs():
    with mock_aws():
        yield boto3.client("sqs")


def make_queue(sqs, name, fifo=False, max_receive_count=None):
    attributes = {"FifoQueue": "true"} if fifo else {}
    dlq_arn = None
    if max_receive_count:
        dlq_url = sqs.create_queue(QueueName=f"{name}-dlq{'.fifo' if fifo else ''}", Attributes=dict(attributes))["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        attributes["RedrivePolicy"] = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": max_receive_count})
    url = sqs.create_queue(QueueName=f"{name}{'.fifo' if fifo else ''}", Attributes=attributes)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn, (dlq_url if max_receive_count else None)


def depth(sqs, url):
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    return int(attrs["ApproximateNumberOfMessages"]) + int(attrs["ApproximateNumberOfMessagesNotVisible"])


def test_batches_are_bounded_successes_are_deleted_and_listed_failures_come_back(sqs):
    url, arn, _ = make_queue(sqs, "orders")
    for i in range(7):
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"n": i}))
    seen = []

    def handler(event, context):
        seen.append([json.loads(r["body"])["n"] for r in event["Records"]])
        assert all(r["eventSource"] == "aws:sqs" and r["eventSourceARN"] == arn for r in event["Records"])
        failed = [r["messageId"] for r in event["Records"] if json.loads(r["body"])["n"] == 3 and len(seen) == 1]
        return {"batchItemFailures": [{"itemIdentifier": m} for m in failed]}

    mapping = SqsEventSourceMapping(sqs=sqs, queue_url=url, queue_arn=arn, handler=handler, batch_size=5)
    mapping.drain()

    assert [len(batch) for batch in seen] == [5, 3]  # message 3 is visible again at once (compressed)
    assert sorted(n for batch in seen for n in batch) == [0, 1, 2, 3, 3, 4, 5, 6]
    assert depth(sqs, url) == 0
    assert (mapping.stats.messages_deleted, mapping.stats.messages_failed) == (7, 1)


@pytest.mark.parametrize("response", [
    RuntimeError("boom"),                                    # a raising handler fails the batch
    {"batchItemFailures": [{"itemIdentifier": ""}]},         # empty identifier
    {"batchItemFailures": [{"itemIdentifier": "not-a-message-id"}]},  # unknown identifier
])
def test_a_raising_handler_or_a_malformed_response_fails_the_whole_batch(sqs, response):
    url, arn, _ = make_queue(sqs, "orders")
    for i in range(3):
        sqs.send_message(QueueUrl=url, MessageBody=str(i))

    def handler(event, context):
        if isinstance(response, Exception):
            raise response
        return response

    mapping = SqsEventSourceMapping(sqs=sqs, queue_url=url, queue_arn=arn, handler=handler, batch_size=10)
    assert mapping.poll_once() == 3
    assert (mapping.stats.messages_deleted, mapping.stats.messages_failed) == (0, 3)
    assert depth(sqs, url) == 3


def test_without_report_batch_item_failures_a_returned_list_is_ignored(sqs):
    url, arn, _ = make_queue(sqs, "orders")
    sqs.send_message(QueueUrl=url, MessageBody="x")
    mapping = SqsEventSourceMapping(sqs=sqs, queue_url=url, queue_arn=arn, report_batch_item_failures=False,
                                    handler=lambda e, c: {"batchItemFailures": [{"itemIdentifier": "x"}]})
    mapping.drain()
    assert mapping.stats.messages_deleted == 1 and depth(sqs, url) == 0


def test_poison_message_is_redriven_to_the_dlq_at_max_receive_count_by_the_queue(sqs):
    url, arn, dlq_url = make_queue(sqs, "orders", max_receive_count=4)
    sqs.send_message(QueueUrl=url, MessageBody="poison")
    sqs.send_message(QueueUrl=url, MessageBody="fine")
    receive_counts = []

    def handler(event, context):
        failures = []
        for record in event["Records"]:
            if record["body"] == "poison":
                receive_counts.append(record["attributes"]["ApproximateReceiveCount"])
                failures.append({"itemIdentifier": record["messageId"]})
        return {"batchItemFailures": failures}

    SqsEventSourceMapping(sqs=sqs, queue_url=url, queue_arn=arn, handler=handler).drain()

    assert receive_counts == ["1", "2", "3", "4"]
    parked = sqs.receive_message(QueueUrl=dlq_url)["Messages"]
    assert [m["Body"] for m in parked] == ["poison"]
    assert depth(sqs, url) == 0


def test_fifo_group_order_holds_while_a_failed_message_is_retried(sqs):
    url, arn, _ = make_queue(sqs, "ledger", fifo=True)
    for group in ("a", "b"):
        for i in range(3):
            sqs.send_message(QueueUrl=url, MessageBody=f"{group}{i}", MessageGroupId=group,
                             MessageDeduplicationId=f"{group}{i}")
    applied, failed_once = [], set()

    def handler(event, context):
        failures, group_failed = [], set()
        for record in event["Records"]:
            group = record["attributes"]["MessageGroupId"]
            if group in group_failed:
                failures.append({"itemIdentifier": record["messageId"]})  # nothing runs ahead
                continue
            if record["body"] == "a1" and "a1" not in failed_once:
                failed_once.add("a1")
                group_failed.add(group)
                failures.append({"itemIdentifier": record["messageId"]})
                continue
            applied.append(record["body"])
        return {"batchItemFailures": failures}

    SqsEventSourceMapping(sqs=sqs, queue_url=url, queue_arn=arn, handler=handler, batch_size=10).drain()

    assert [m for m in applied if m.startswith("a")] == ["a0", "a1", "a2"]
    assert [m for m in applied if m.startswith("b")] == ["b0", "b1", "b2"]
