"""The non-idempotent pattern's Retry-DLQ lane is exactly-once (against moto): its records carry a
unique key (stream, shard, sequence number) and the reference ledger records it in the same
conditional write as the effect, so SQS redelivering a batch whose invocation died part-way, or
delivering a message twice, applies nothing twice."""

import json

import pytest

from integration_blueprint.handlers.runtime.stream_records import StreamRecord
from integration_blueprint.sandbox.lambda_context import LocalLambdaContext


class Died(BaseException):
    """The function instance died (timeout, out of memory): no `except Exception` catches it."""


def retry_lane_event(env, count):
    """`count` records of accounts acct-0.. as the stream lane inserted them, received from the
    Retry-DLQ as one SQS event."""
    for i in range(count):
        record = StreamRecord(stream_arn=env.stream_arn, shard_id="shardId-000000000000",
                              sequence_number=str(49_000_000 + i), partition_key=f"acct-{i}",
                              data=json.dumps({"eventId": f"e-{i}", "account": f"acct-{i}", "amount": 7}).encode())
        env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=record.to_inserted_message(ConnectionError("timeout")))
    mapping = env.retry_mapping(lambda event, context: None)
    messages = env.messages(env.retry_url)
    assert len(messages) == count
    return {"Records": [mapping._record(m) for m in messages]}


def die_after(env, effects):
    """The invocation dies right after its `effects`-th ledger write succeeded."""
    done = {"writes": 0, "armed": True}

    def after(**_):
        done["writes"] += 1
        if done["armed"] and done["writes"] == effects:
            raise Died(f"killed after effect {effects}")

    for write in ("UpdateItem", "TransactWriteItems"):  # the plain and the guarded effect
        env.ddb.meta.events.register(f"after-call.dynamodb.{write}", after)
    return done


def applied(env, count):
    return [env.balance(f"acct-{i}") for i in range(count)]


def test_ten_retry_messages_and_an_invocation_that_dies_after_the_fifth_effect_apply_each_effect_once(env):
    event = retry_lane_event(env, 10)
    handler = env.app_dlq_handler()
    crash = die_after(env, 5)

    with pytest.raises(Died):
        handler(event, LocalLambdaContext())
    assert sum(count for _, count in applied(env, 10)) == 5  # five effects happened before it died

    crash["armed"] = False
    response = handler(event, LocalLambdaContext())  # SQS redelivers the whole batch

    assert response == {"batchItemFailures": []}
    assert applied(env, 10) == [(7, 1)] * 10


def test_a_retry_message_delivered_twice_is_applied_once(env):
    event = retry_lane_event(env, 1)
    handler = env.app_dlq_handler()

    handler(event, LocalLambdaContext())
    handler(event, LocalLambdaContext())  # SQS's at-least-once delivery

    assert applied(env, 1) == [(7, 1)]


def test_the_stream_lane_keeps_its_plain_effect(env):
    """Only redelivered records are guarded: the stream lane applies the plain ADD, once."""
    sequence_numbers = env.put({"eventId": "e-0"}, {"eventId": "e-1"})

    env.app_dlq_handler()(env.kinesis_event(*sequence_numbers), LocalLambdaContext())

    assert env.balance() == (2, 2)
    assert [item["account"]["S"] for item in env.ddb.scan(TableName="ledger")["Items"]] == ["acct-1"]  # no guards
