"""The local Kinesis event source mapping follows Lambda's documented stream semantics (the
benchmark and the local sandbox rely on it)."""

import json
import time

import boto3
import pytest
from moto import mock_aws

from integration_blueprint.sandbox.kinesis_esm import KinesisEventSourceMapping, KinesisMappingSettings


@pytest.fixture
def stream():
    with mock_aws():
        kinesis, sqs = boto3.client("kinesis"), boto3.client("sqs")
        kinesis.create_stream(StreamName="s", ShardCount=1)
        url = sqs.create_queue(QueueName="on-failure")["QueueUrl"]
        yield kinesis, sqs, url


def put(kinesis, count):
    return [kinesis.put_record(StreamName="s", PartitionKey="p", Data=json.dumps({"n": i}).encode())["SequenceNumber"]
            for i in range(count)]


def mapping(stream, handler, **settings):
    kinesis, sqs, url = stream
    return KinesisEventSourceMapping(kinesis=kinesis, sqs=sqs, stream_name="s", handler=handler,
                                     settings=KinesisMappingSettings(on_failure_queue_url=url, **settings))


def always_fails(event, context):
    raise RuntimeError("downstream unreachable")


def test_bisect_with_no_retries_reproduces_the_whitepapers_nine_invocations_for_five_failing_records(stream):
    put(stream[0], 5)
    m = mapping(stream, always_fails, batch_size=5, bisect_batch_on_function_error=True, maximum_retry_attempts=0)

    stats = m.drain()

    # 12345, 123, 12, 1, 2, 3, 45, 4, 5: the whitepaper's nine, depth first.
    assert stats.batch_sizes == [5, 3, 2, 1, 1, 1, 2, 1, 1]
    assert [info["batchSize"] for info in stats.on_failure_records] == [1, 1, 1, 1, 1]


def test_retries_apply_to_a_batch_that_cannot_be_split_and_the_on_failure_record_holds_metadata_only(stream):
    sequence_numbers = put(stream[0], 3)
    m = mapping(stream, always_fails, batch_size=3, maximum_retry_attempts=2)

    stats = m.drain()

    assert stats.batch_sizes == [3, 3, 3]
    body = json.loads(stream[1].receive_message(QueueUrl=stream[2])["Messages"][0]["Body"])
    assert body["requestContext"]["condition"] == "RetryAttemptsExhausted"
    info = body["KinesisBatchInfo"]
    assert (info["startSequenceNumber"], info["endSequenceNumber"], info["batchSize"]) == (
        sequence_numbers[0], sequence_numbers[-1], 3)
    assert set(info) == {"shardId", "startSequenceNumber", "endSequenceNumber", "approximateArrivalOfFirstRecord",
                         "approximateArrivalOfLastRecord", "batchSize", "streamArn"}  # no record data


def test_a_reported_item_failure_checkpoints_the_records_before_it_and_retries_the_rest(stream):
    sequence_numbers = put(stream[0], 4)
    calls = []

    def fail_third_once(event, context):
        calls.append([r["kinesis"]["sequenceNumber"] for r in event["Records"]])
        if len(calls) == 1:
            return {"batchItemFailures": [{"itemIdentifier": sequence_numbers[2]}]}
        return {"batchItemFailures": []}

    mapping(stream, fail_third_once, batch_size=4, maximum_retry_attempts=1, report_batch_item_failures=True).drain()

    assert calls == [sequence_numbers, sequence_numbers[2:]]


def test_records_older_than_the_maximum_record_age_are_discarded_without_an_invocation(stream):
    put(stream[0], 2)
    invoked = []
    m = mapping(stream, lambda e, c: invoked.append(e), batch_size=10, maximum_record_age_seconds=60)
    m.clock = lambda: time.time() + 3600  # an hour later

    stats = m.drain()

    assert invoked == [] and stats.records_discarded == 2
    body = json.loads(stream[1].receive_message(QueueUrl=stream[2])["Messages"][0]["Body"])
    assert body["requestContext"]["condition"] == "RecordAgeExceeded"
