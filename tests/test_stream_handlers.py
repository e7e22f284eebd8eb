"""The Kinesis consumers' handler runtime against moto (Kinesis, SQS, DynamoDB), driven by local
event source mappings that follow Lambda's documented semantics.

Every scenario checks the side effect that would double if a record were applied twice: the
reference handler adds each event's amount to a per-account balance."""

import base64
import json

import pytest

from integration_blueprint.handlers.runtime import idempotent_stream
from integration_blueprint.redrive.parked import describe
from integration_blueprint.sandbox.lambda_context import LocalLambdaContext
from tests.stream_env import MAX_RECEIVES, REGION, STREAM, fail_once_at, queue_depth

# --- IdempotentStreamConsumer -------------------------------------------------------------------

def test_a_batch_retried_after_a_mid_batch_failure_applies_each_record_once(env):
    sequence_numbers = env.put(*({"eventId": f"e-{i}"} for i in range(10)))
    handler = env.idempotent_handler(fail_once_at(env.ledger, sequence_numbers[5]))
    mapping = env.stream_mapping(handler, batch_size=10, bisect_batch_on_function_error=True,
                                 maximum_retry_attempts=2, on_failure_queue_url=env.retry_url)

    stats = mapping.drain()

    assert stats.invocations > 1 and stats.function_errors == 1  # the batch really was retried
    assert env.balance() == (10, 10)  # records 0-4 ran in the failed invocation and were skipped after
    assert env.messages(env.retry_url) == []


def test_a_poison_record_is_bisected_out_replayed_from_the_retry_dlq_then_parked_unrecoverable(env):
    sequence_numbers = env.put(*({"eventId": f"e-{i}", "poison": i == 3} for i in range(8)))
    handler = env.idempotent_handler()
    stream = env.stream_mapping(handler, batch_size=8, bisect_batch_on_function_error=True,
                                maximum_retry_attempts=1, on_failure_queue_url=env.retry_url)
    stream.drain()
    [on_failure] = stream.stats.on_failure_records
    assert (on_failure["startSequenceNumber"], on_failure["endSequenceNumber"]) == (sequence_numbers[3],) * 2

    retry = env.retry_mapping(handler)
    retry.drain()

    assert retry.stats.invocations == MAX_RECEIVES  # replayed, failed, until the redrive moved it
    [parked] = env.messages(env.unrecoverable_url)
    assert json.loads(parked["Body"])["KinesisBatchInfo"]["startSequenceNumber"] == sequence_numbers[3]
    assert env.balance() == (7, 7)




def test_the_on_failure_record_is_read_back_from_the_stream_across_several_get_records_pages(env):
    sequence_numbers = env.put(*({"eventId": f"e-{i}"} for i in range(25)))
    env.put({"eventId": "after-the-range"})  # must not be replayed
    pages = []
    env.kinesis.meta.events.register("before-call.kinesis.GetRecords", lambda **kw: pages.append(1))
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=env.on_failure_record(
        sequence_numbers[0], sequence_numbers[-1], 25))

    retry = env.retry_mapping(env.idempotent_handler(page_limit=10))
    retry.drain()

    assert len(pages) >= 3
    assert env.balance() == (25, 25)
    assert retry.stats.messages_deleted == 1 and env.messages(env.unrecoverable_url) == []


def test_replaying_a_range_whose_records_already_succeeded_applies_nothing_twice(env):
    sequence_numbers = env.put(*({"eventId": f"e-{i}"} for i in range(4)))
    handler = env.idempotent_handler()
    env.stream_mapping(handler, batch_size=4).drain()
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=env.on_failure_record(
        sequence_numbers[0], sequence_numbers[-1], 4))

    env.retry_mapping(handler).drain()

    assert env.balance() == (4, 4)


def test_records_trimmed_from_the_stream_go_to_the_unrecoverable_dlq_with_their_metadata(env):
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.kinesis.models import kinesis_backends

    sequence_numbers = env.put(*({"eventId": f"e-{i}"} for i in range(5)))
    # moto has no retention clock: trim the oldest three records the way retention would.
    shard = kinesis_backends[DEFAULT_ACCOUNT_ID][REGION].streams[STREAM].shards["shardId-000000000000"]
    for sequence_number in sequence_numbers[:3]:
        del shard.records[int(sequence_number)]
    on_failure = env.on_failure_record(sequence_numbers[0], sequence_numbers[-1], 5)
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=on_failure)

    env.retry_mapping(env.idempotent_handler()).drain()

    [parked] = [json.loads(m["Body"]) for m in env.messages(env.unrecoverable_url)]
    assert parked["KinesisBatchInfo"] == json.loads(on_failure)["KinesisBatchInfo"]
    assert parked["missingRecords"] == 3 and "trimmed" in parked["reason"]
    assert env.balance() == (2, 2)  # what was still readable was applied
    assert env.messages(env.retry_url) == []


def test_a_range_of_a_deleted_stream_is_parked_whole_not_dropped(env):
    sequence_numbers = env.put(*({"eventId": f"e-{i}"} for i in range(3)))
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=env.on_failure_record(
        sequence_numbers[0], sequence_numbers[-1], 3))
    env.kinesis.delete_stream(StreamName=STREAM)

    env.retry_mapping(env.idempotent_handler()).drain()

    [parked] = [json.loads(m["Body"]) for m in env.messages(env.unrecoverable_url)]
    assert parked["missingRecords"] == 3 and "ResourceNotFoundException" in parked["reason"]


def test_sequence_numbers_are_logged_before_processing_and_on_failure(env):
    ok, poison = env.put({"eventId": "e-ok"}, {"eventId": "e-bad", "poison": True})
    handler = env.idempotent_handler()

    with pytest.raises(idempotent_stream.RecordFailed, match=poison):
        handler(env.kinesis_event(ok, poison), LocalLambdaContext())

    lines = [json.loads(line) for line in env.log.getvalue().splitlines()]
    processing = [line["sequence_number"] for line in lines if line["message"] == "processing stream record"]
    failed = [line["sequence_number"] for line in lines if line["message"] == "stream record failed"]
    assert processing == [ok, poison] and failed == [poison]


def test_the_business_key_makes_a_duplicate_event_from_the_producer_a_no_op_and_says_so(env):
    first, second = env.put({"eventId": "e-1"}, {"eventId": "e-1"})  # the producer sent the same event twice

    env.stream_mapping(env.idempotent_handler(), batch_size=10).drain()

    assert env.balance() == (1, 1)
    lines = [json.loads(line) for line in env.log.getvalue().splitlines()]
    assert [(line["message"], line["sequence_number"]) for line in lines if "processed" in line["message"]] == [
        ("stream record processed", first), ("stream record already processed; skipped", second)]


def test_the_same_event_id_with_another_payload_is_parked_with_the_conflict_named_never_applied_nor_skipped(env):
    first, conflicting, after = env.put({"eventId": "e-1", "amount": 5}, {"eventId": "e-1", "amount": 7},
                                        {"eventId": "e-2", "amount": 1})
    handler = env.idempotent_handler()
    stream = env.stream_mapping(handler, batch_size=10)

    stream.drain()
    handler(env.kinesis_event(conflicting), None)  # delivered again

    assert env.balance() == (6, 2)  # e-1 once with its first payload, e-2 after it: the batch went on
    assert stream.stats.function_errors == 0  # refused at once, no bisect or retry spent on it
    [parked] = env.messages(env.unrecoverable_url)  # once, however often it is delivered
    body = json.loads(parked["Body"])
    assert body["sequenceNumber"] == conflicting and json.loads(base64.b64decode(body["data"]))["amount"] == 7
    assert body["error"]["type"] == "ConflictingDuplicate"
    assert 'idempotency key business:"e-1" was already applied with a different payload' in body["error"]["message"]
    assert describe(parked).reason.startswith("ConflictingDuplicate: conflicting duplicate")  # `blueprint redrive list`
    assert "7" not in body["error"]["message"]  # the reason names the key, never the payload's values
    assert env.messages(env.retry_url) == []


def test_a_parked_conflicting_duplicate_redriven_by_the_runbook_is_recognised_and_parked_again_with_its_reason(env):
    from integration_blueprint.redrive.stream import redrive_stream

    env.put({"eventId": "e-1", "amount": 5}, {"eventId": "e-1", "amount": 7})
    handler = env.idempotent_handler()
    env.stream_mapping(handler, batch_size=10).drain()

    moved = redrive_stream(env.sqs, env.kinesis, env.unrecoverable_url, env.retry_url)
    retry = env.retry_mapping(handler)
    retry.drain()

    assert len(moved.moved) == 1
    assert retry.stats.invocations == 1 and retry.stats.messages_failed == 0  # recognised at once, not failed
    [again] = [json.loads(m["Body"]) for m in env.messages(env.unrecoverable_url)]
    assert again["error"]["type"] == "ConflictingDuplicate"
    assert 'idempotency key business:"e-1" was already applied with a different payload' in again["error"]["message"]
    assert json.loads(base64.b64decode(again["data"]))["amount"] == 7
    assert env.balance() == (5, 1)  # neither applied nor skipped
    assert "UnrecognizedRetryMessage" not in env.log.getvalue()
    assert env.messages(env.retry_url) == []


def test_a_message_that_is_not_an_on_failure_record_is_failed_until_it_is_unrecoverable(env):
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody='{"hello": "world"}')

    retry = env.retry_mapping(env.idempotent_handler())
    retry.drain()

    assert retry.stats.invocations == MAX_RECEIVES
    assert [m["Body"] for m in env.messages(env.unrecoverable_url)] == ['{"hello": "world"}']


# --- NonIdempotentStreamConsumer (app-DLQ) --------------------------------------------------------

def test_a_failing_record_lands_in_the_retry_dlq_in_full_and_the_batch_reports_success(env):
    ok, poison = env.put({"eventId": "e-ok"}, {"eventId": "e-bad", "poison": True})
    event = env.kinesis_event(ok, poison)

    response = env.app_dlq_handler()(event, LocalLambdaContext())

    assert response == {"batchItemFailures": []}
    [inserted] = [json.loads(m["Body"]) for m in env.messages(env.retry_url)]
    original = event["Records"][1]
    assert base64.b64decode(inserted["data"]) == base64.b64decode(original["kinesis"]["data"])
    assert (inserted["sequenceNumber"], inserted["partitionKey"], inserted["shardId"], inserted["streamArn"]) == (
        poison, "acct-1", "shardId-000000000000", env.stream_arn)
    assert inserted["approximateArrivalTimestamp"] == original["kinesis"]["approximateArrivalTimestamp"]
    assert inserted["error"]["type"] == "PoisonRecord"
    assert env.balance() == (1, 1)


def test_a_record_retried_from_the_retry_dlq_succeeds_once_the_fault_clears(env):
    sequence_numbers = env.put(*({"eventId": f"e-{i}"} for i in range(3)))
    handler = env.app_dlq_handler(fail_once_at(env.ledger, sequence_numbers[1]))
    stream = env.stream_mapping(handler, batch_size=10, maximum_retry_attempts=0,
                                report_batch_item_failures=True, on_failure_queue_url=env.unrecoverable_url)

    stream.drain()
    assert env.balance() == (2, 2) and stream.stats.invocations == 1
    retry = env.retry_mapping(handler)
    retry.drain()

    assert env.balance() == (3, 3)
    assert retry.stats.messages_deleted == 1
    assert env.messages(env.retry_url) == [] and env.messages(env.unrecoverable_url) == []


def test_a_record_that_keeps_failing_reaches_the_unrecoverable_dlq_through_the_redrive(env):
    [poison] = env.put({"eventId": "e-bad", "poison": True})
    handler = env.app_dlq_handler()
    env.stream_mapping(handler, batch_size=10, maximum_retry_attempts=0, report_batch_item_failures=True,
                       on_failure_queue_url=env.unrecoverable_url).drain()

    retry = env.retry_mapping(handler)
    retry.drain()

    assert retry.stats.invocations == MAX_RECEIVES
    [parked] = env.messages(env.unrecoverable_url)
    body = json.loads(parked["Body"])
    assert body["sequenceNumber"] == poison and json.loads(base64.b64decode(body["data"]))["poison"] is True
    assert parked["Attributes"]["ApproximateReceiveCount"] == str(MAX_RECEIVES + 1)
    assert env.balance() == (0, 0)


def test_a_batch_where_every_record_fails_loses_nothing(env):
    sequence_numbers = env.put(*({"eventId": f"e-{i}", "poison": True} for i in range(5)))
    handler = env.app_dlq_handler()
    stream = env.stream_mapping(handler, batch_size=10, maximum_retry_attempts=0, report_batch_item_failures=True,
                                on_failure_queue_url=env.unrecoverable_url)

    stream.drain()
    assert stream.stats.function_errors == 0 and stream.stats.records_discarded == 0
    assert queue_depth(env, env.retry_url) == 5
    env.retry_mapping(handler).drain()  # every message of each SQS batch fails: BatchProcessor raises

    parked = sorted(json.loads(m["Body"])["sequenceNumber"] for m in env.messages(env.unrecoverable_url))
    assert parked == sequence_numbers


def test_when_the_retry_dlq_insert_fails_the_rest_of_the_batch_is_left_unprocessed_for_the_on_failure_destination(env):
    sequence_numbers = env.put({"eventId": "e-0"}, {"eventId": "e-1", "poison": True}, {"eventId": "e-2"})
    missing_queue = env.retry_url.replace("retry-dlq", "deleted-queue")
    handler = env.app_dlq_handler(retry_url=missing_queue)
    stream = env.stream_mapping(handler, batch_size=10, maximum_retry_attempts=0, report_batch_item_failures=True,
                                on_failure_queue_url=env.unrecoverable_url)

    stream.drain()

    assert env.balance() == (1, 1)  # e-2 was not applied: it is part of the range handed on
    [parked] = [json.loads(m["Body"])["KinesisBatchInfo"] for m in env.messages(env.unrecoverable_url)]
    assert (parked["startSequenceNumber"], parked["endSequenceNumber"]) == (sequence_numbers[1], sequence_numbers[2])


def test_a_partly_trimmed_range_that_keeps_failing_is_parked_once_not_on_every_receive(env):
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.kinesis.models import kinesis_backends

    sequence_numbers = env.put({"eventId": "e-0"}, {"eventId": "e-1", "poison": True})
    del kinesis_backends[DEFAULT_ACCOUNT_ID][REGION].streams[STREAM].shards["shardId-000000000000"].records[
        int(sequence_numbers[0])]
    env.sqs.send_message(QueueUrl=env.retry_url, MessageBody=env.on_failure_record(
        sequence_numbers[0], sequence_numbers[-1], 2))

    env.retry_mapping(env.idempotent_handler()).drain()

    bodies = [json.loads(m["Body"]) for m in env.messages(env.unrecoverable_url)]
    assert sorted(b.get("kind", "on-failure record") for b in bodies) == [
        "blueprint.unreplayable-stream-range/v1", "on-failure record"]  # the parked part + the redriven range
