"""The stream runtimes against input no producer should send but anyone allowed to write to the
stream or the Retry-DLQ can (against moto): one bad record fails alone, forged messages are refused
or cost a bounded number of reads, and no payload value reaches a log line or a raised error."""

import base64
import json
import sys

import pytest

from integration_blueprint.handlers.runtime.redaction import LOG_VALUE_MAX_CHARS
from integration_blueprint.handlers.runtime.stream_records import INSERTED_RECORD_KIND, StreamRecord
from integration_blueprint.sandbox.lambda_context import LocalLambdaContext
from tests.stream_env import STREAM

SECRET = "4111111111111111"  # a card number a team's process_record quotes in its error
DEEP = ("[" * 1000 + "]" * 1000).encode()  # valid JSON, deeper than Python's parser goes
# Lambda's Python runtime runs with the interpreter's default recursion limit; an in-process preview
# earlier in the same test worker raises it (the engine reads deep values), so each test here restores it.
PYTHON_DEFAULT_RECURSION_LIMIT = 1000


@pytest.fixture(autouse=True)
def lambdas_recursion_limit():
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(PYTHON_DEFAULT_RECURSION_LIMIT)
    yield
    sys.setrecursionlimit(before)


def put_raw(env, data: bytes, account="acct-1") -> str:
    return env.kinesis.put_record(StreamName=STREAM, PartitionKey=account, Data=data)["SequenceNumber"]


def good(env, event_id, account):
    [sequence_number] = env.put({"eventId": event_id}, account=account)
    return sequence_number


def test_a_record_too_deep_to_parse_fails_alone_when_its_range_is_replayed(env):
    first = good(env, "e-1", "acct-a")
    put_raw(env, DEEP)
    last = good(env, "e-3", "acct-b")
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=env.on_failure_record(first, last, 3))

    env.retry_mapping(env.idempotent_handler()).drain()

    assert env.balance("acct-a") == env.balance("acct-b") == (1, 1)  # once each, across every receive
    [parked] = env.messages(env.unrecoverable_url)  # the range, for a person, after maxReceiveCount
    assert json.loads(parked["Body"])["KinesisBatchInfo"]["endSequenceNumber"] == last


def test_a_record_too_deep_to_parse_is_a_failed_record_on_the_stream_lanes(env):
    sequence_numbers = [good(env, "e-1", "acct-a"), put_raw(env, DEEP), good(env, "e-3", "acct-b")]

    response = env.app_dlq_handler()(env.kinesis_event(*sequence_numbers), LocalLambdaContext())

    assert response == {"batchItemFailures": []}
    assert env.balance("acct-a") == env.balance("acct-b") == (1, 1)
    [inserted] = env.messages(env.retry_url)
    assert json.loads(inserted["Body"])["error"]["type"] == "NotJson"


@pytest.mark.parametrize("sequence_number", ["\u0663\u0664\u0665", "\u00b2", "9" * 4301, "12 ", "-1", "0x1f"])
def test_a_range_whose_sequence_numbers_are_not_kinesis_ones_is_parked_at_the_first_receive(env, sequence_number):
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=json.dumps({"KinesisBatchInfo": {
        "shardId": "shardId-000000000000", "startSequenceNumber": sequence_number, "endSequenceNumber": sequence_number,
        "batchSize": 1, "streamArn": env.stream_arn}}))

    retry = env.retry_mapping(env.idempotent_handler())
    retry.drain()

    assert retry.stats.invocations == 1 and retry.stats.messages_deleted == 1  # parked at once
    [parked] = env.messages(env.unrecoverable_url)
    assert "not Kinesis sequence numbers" in json.loads(parked["Body"])["reason"]


def test_a_forged_batch_size_costs_a_logarithmic_number_of_get_records_calls(env):
    sequence_numbers = env.put(*({"eventId": f"e-{i}"} for i in range(302)))
    calls = []
    env.kinesis.meta.events.register("before-call.kinesis.GetRecords", lambda **_: calls.append(1))
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=env.on_failure_record(
        sequence_numbers[0], sequence_numbers[-1], 1))  # batchSize 1 for 302 records

    env.retry_mapping(env.idempotent_handler()).drain()

    assert env.balance() == (302, 302)
    assert len(calls) <= 10  # pages of 1, 2, 4 ... 256: nine calls, not 302


def test_a_forged_full_record_naming_another_stream_is_never_applied(env):
    forged = StreamRecord(stream_arn=env.stream_arn.replace(STREAM, "payments"), shard_id="shardId-000000000000",
                          sequence_number="49000000000000000000", partition_key="victim",
                          data=json.dumps({"eventId": "x", "account": "victim", "amount": 1000}).encode())
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=forged.to_inserted_message(RuntimeError("forged")))

    env.retry_mapping(env.app_dlq_handler()).drain()

    assert env.balance("victim") == (0, 0)
    [parked] = env.messages(env.unrecoverable_url)
    assert json.loads(parked["Body"])["kind"] == INSERTED_RECORD_KIND


def leaky(record):
    """A team's process_record whose error quotes a payload value."""
    int(json.loads(record.data)["card_number"])


@pytest.mark.parametrize("runtime", ["idempotent", "app_dlq"])
def test_an_error_quoting_the_payload_reaches_neither_the_logs_nor_the_raised_error(env, runtime):
    [sequence_number] = env.put({"eventId": "e-1", "card_number": f"card {SECRET}"})
    event = env.kinesis_event(sequence_number)
    raised = ""
    if runtime == "idempotent":
        with pytest.raises(Exception) as failed:
            env.idempotent_handler(leaky)(event, LocalLambdaContext())
        raised = str(failed.value) + repr(failed.value.__cause__)
        assert "ValueError at test_handler_hostile_input.py" in raised  # the type and place are kept
    else:
        env.app_dlq_handler(leaky)(event, LocalLambdaContext())
        [inserted] = env.messages(env.retry_url)  # the Retry-DLQ keeps the record (and its data) to retry it
        env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=inserted["Body"])
        env.retry_mapping(env.app_dlq_handler(leaky)).drain()

    assert SECRET not in raised and SECRET not in env.log.getvalue()
    assert '"level":"ERROR"' in env.log.getvalue()


def test_a_huge_event_id_makes_bounded_log_lines(env):
    event_id = "e" * 300_000
    [sequence_number] = env.put({"eventId": event_id, "poison": True})
    event = env.kinesis_event(sequence_number)
    event["Records"][0]["eventID"] = "shardId-000000000000:" + "9" * 300_000  # a forged event id too

    with pytest.raises(Exception) as failed:
        env.idempotent_handler()(event, LocalLambdaContext())
    env.app_dlq_handler()(event, LocalLambdaContext())

    longest = max(len(line) for line in env.log.getvalue().splitlines())
    assert longest < 4 * LOG_VALUE_MAX_CHARS + 2_000 and len(str(failed.value)) < 2_000


def test_an_inserted_record_with_unicode_digits_for_a_sequence_number_is_refused_at_once(env):
    body = json.loads(StreamRecord(stream_arn=env.stream_arn, shard_id="shardId-000000000000", sequence_number="1",
                                   partition_key="p", data=b"{}").to_inserted_message(RuntimeError("x")))
    body["sequenceNumber"] = "\u0663\u0664"
    body["data"] = base64.b64encode(json.dumps({"eventId": "e", "account": "acct-1", "amount": 1}).encode()).decode()
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=json.dumps(body))

    env.retry_mapping(env.app_dlq_handler()).drain()

    assert env.balance() == (0, 0)
    assert "not a Kinesis sequence number" in env.log.getvalue()
