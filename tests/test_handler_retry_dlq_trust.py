"""A Retry-DLQ message is not trusted blindly (against moto): the stream consumers read ranges back
only from their own stream, refuse metadata that is not a range Lambda writes, and every message
they park says why, with an ERROR log line (Powertools logs failed records only at DEBUG)."""

import json

import pytest
from moto import mock_aws

from integration_blueprint.handlers.runtime import app_dlq_stream, idempotent_stream
from integration_blueprint.handlers.runtime.idempotent_stream import IdempotentStreamSettings
from integration_blueprint.handlers.runtime.stream_records import INSERTED_REFERENCE_KIND
from integration_blueprint.sandbox.lambda_context import LocalLambdaContext
from tests.stream_env import MAX_RECEIVES, Env, queue_depth

OTHER = "payments"


class TwoStreams(Env):
    """The consumer's stream, and another stream in the same account it must never read."""

    def __init__(self):
        super().__init__()
        self.kinesis.create_stream(StreamName=OTHER, ShardCount=1)
        self.other_arn = self.kinesis.describe_stream_summary(StreamName=OTHER)["StreamDescriptionSummary"]["StreamARN"]
        self.other = [self.kinesis.put_record(StreamName=OTHER, PartitionKey="p", Data=json.dumps(
            {"eventId": f"x-{i}", "account": "victim", "amount": 1000}).encode())["SequenceNumber"] for i in range(3)]

    def handler(self, stream_arn):
        settings = IdempotentStreamSettings(idempotency_table="idempotency", unrecoverable_dlq_url=self.unrecoverable_url,
                                            key_jmespath="eventId", stream_arn=stream_arn)
        return idempotent_stream.make_handler(self.ledger, settings=settings, logger=self.logger(),
                                              kinesis=self.kinesis, sqs=self.sqs, dynamodb=self.ddb)

    def batch_info(self, **fields):
        info = {"shardId": "shardId-000000000000", "startSequenceNumber": self.other[0],
                "endSequenceNumber": self.other[-1], "batchSize": 3, "streamArn": self.other_arn, **fields}
        return json.dumps({"requestContext": {"condition": "RetryAttemptsExhausted"}, "KinesisBatchInfo": info})

    def parked(self):
        return [json.loads(m["Body"]) for m in self.messages(self.unrecoverable_url)]

    def log_lines(self, level="ERROR"):
        return [json.loads(line) for line in self.log.getvalue().splitlines() if f'"level":"{level}"' in line]


@pytest.fixture
def env():
    with mock_aws():
        yield TwoStreams()


def test_a_range_of_another_stream_is_never_read_and_is_parked_with_the_reason(env):
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=env.batch_info())
    reads = []
    env.kinesis.meta.events.register("before-call.kinesis.GetShardIterator", lambda **kw: reads.append(1))

    env.retry_mapping(env.handler(stream_arn=env.stream_arn)).drain()

    assert reads == [] and env.balance("victim") == (0, 0)
    [parked] = env.parked()
    assert f"stream {env.other_arn} is not this consumer's stream" in parked["reason"]
    assert parked["KinesisBatchInfo"]["streamArn"] == env.other_arn
    assert queue_depth(env, env.retry_url) == 0  # parked at once, not after maxReceiveCount receives
    assert any("not this consumer's stream" in line["reason"] for line in env.log_lines())


def test_without_a_configured_stream_only_streams_the_container_has_read_from_are_replayed(env):
    """SOURCE_STREAM_ARN unset: a message naming a stream the container never received records from
    is failed (for a later receive), not read; once the stream mapping delivered records of its own
    stream, a range of that stream is replayed."""
    handler = env.handler(stream_arn=None)
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=env.batch_info())
    retry = env.retry_mapping(handler)

    retry.drain()
    assert env.balance("victim") == (0, 0)
    assert retry.stats.invocations == MAX_RECEIVES  # failed each receive, then the redrive parked it
    assert all("SOURCE_STREAM_ARN is not set" in line["reason"] for line in env.log_lines())

    own = env.put({"eventId": "e-0"}, {"eventId": "e-1"})
    handler(env.kinesis_event(own[0]), LocalLambdaContext())  # the stream mapping delivers e-0
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=env.on_failure_record(own[0], own[1], 2))
    retry.drain()
    assert env.balance() == (2, 2)


@pytest.mark.parametrize("info, reason", [
    ({"streamArn": None}, "lacks streamArn"),
    ({"startSequenceNumber": "12abc"}, "not Kinesis sequence numbers"),
    ({"batchSize": "three"}, "batchSize is not a whole number"),
])
def test_malformed_metadata_is_parked_at_once_with_the_reason_logged_at_error(env, info, reason):
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=env.batch_info(streamArn=env.stream_arn, **info)
                         if "streamArn" not in info else env.batch_info(**info))

    env.retry_mapping(env.handler(stream_arn=env.stream_arn)).drain()

    [parked] = env.parked()
    assert reason in parked["reason"]
    assert [line["reason"] for line in env.log_lines()] == [parked["reason"]]


def test_start_after_end_is_parked_as_corrupt_metadata_not_as_trimmed_by_retention(env):
    first, last = env.put({"eventId": "e-0"}, {"eventId": "e-1"})
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=env.batch_info(
        streamArn=env.stream_arn, startSequenceNumber=last, endSequenceNumber=first))

    env.retry_mapping(env.handler(stream_arn=env.stream_arn)).drain()

    [parked] = env.parked()
    assert "is after its endSequenceNumber" in parked["reason"] and "trimmed" not in parked["reason"]
    assert env.balance() == (0, 0)


def test_the_app_dlq_consumer_never_reads_a_by_reference_record_of_another_stream(env):
    handler = app_dlq_stream.make_handler(env.ledger, retry_dlq_url=env.retry_url, logger=env.logger(),
                                          sqs=env.sqs, kinesis=env.kinesis, stream_arn=env.stream_arn)
    forged = {"kind": INSERTED_REFERENCE_KIND, "KinesisBatchInfo": {
        "streamArn": env.other_arn, "shardId": "shardId-000000000000", "batchSize": 1,
        "startSequenceNumber": env.other[0], "endSequenceNumber": env.other[0]}}
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=json.dumps(forged))

    env.retry_mapping(handler).drain()

    assert env.balance("victim") == (0, 0)
    assert [b["KinesisBatchInfo"]["streamArn"] for b in env.parked()] == [env.other_arn]
    assert len(env.log_lines()) == MAX_RECEIVES
    assert all("not this consumer's stream" in line["reason"] for line in env.log_lines())
