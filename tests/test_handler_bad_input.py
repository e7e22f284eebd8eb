"""Bad input never crashes a whole invocation of the non-idempotent stream runtime (against moto): a
malformed record fails alone with a logged reason while the rest of the batch is applied once, and
a failing record too large for an SQS message still reaches the Retry-DLQ, by reference."""

import copy
import json

import pytest

from integration_blueprint.core.aws_limits import SQS_MESSAGE_SIZE_DEFAULT_BYTES
from integration_blueprint.handlers.runtime import app_dlq_stream
from integration_blueprint.handlers.runtime.stream_records import INSERTED_REFERENCE_KIND, MALFORMED_RECORD_KIND
from integration_blueprint.sandbox.lambda_context import LocalLambdaContext
from tests.stream_env import MAX_RECEIVES, fail_once_at


def corrupt(record, change):
    broken = copy.deepcopy(record)
    change(broken)
    return broken


def set_data(value):
    return lambda r: r["kinesis"].__setitem__("data", value)


@pytest.mark.parametrize("change, reason", [
    (set_data("%%% not base64 %%%"), "not valid base64"),
    (lambda r: r.pop("kinesis"), "no 'kinesis' object"),
    (lambda r: r["kinesis"].pop("sequenceNumber"), "no valid kinesis.sequenceNumber"),
])
def test_a_malformed_record_fails_alone_with_its_reason_and_the_rest_of_the_batch_is_applied(env, change, reason):
    first, middle, last = env.put({"eventId": "e-0"}, {"eventId": "e-1", "secret": "do-not-log"}, {"eventId": "e-2"})
    event = env.kinesis_event(first, middle, last)
    event["Records"][1] = corrupt(event["Records"][1], change)

    response = env.app_dlq_handler()(event, LocalLambdaContext())

    assert response == {"batchItemFailures": []}
    assert env.balance() == (2, 2)  # e-0 and e-2, each once; the broken record was never applied
    [parked] = [json.loads(m["Body"]) for m in env.messages(env.retry_url)]
    assert parked["kind"] == MALFORMED_RECORD_KIND and reason in parked["reason"]
    assert parked["eventID"] == event["Records"][1]["eventID"]
    [logged] = [json.loads(line) for line in env.log.getvalue().splitlines() if "malformed" in line]
    assert logged["level"] == "ERROR" and reason in logged["reason"]
    assert "do-not-log" not in env.log.getvalue()


def test_a_malformed_record_on_the_retry_lane_is_failed_with_its_reason_until_the_redrive_parks_it(env):
    [sequence_number] = env.put({"eventId": "e-0"})
    event = env.kinesis_event(sequence_number)
    event["Records"][0] = corrupt(event["Records"][0], set_data("%%%"))
    handler = env.app_dlq_handler()
    handler(event, LocalLambdaContext())

    env.retry_mapping(handler).drain()

    [parked] = [json.loads(m["Body"]) for m in env.messages(env.unrecoverable_url)]
    assert "not valid base64" in parked["reason"]
    errors = [json.loads(line) for line in env.log.getvalue().splitlines() if '"level":"ERROR"' in line]
    assert sum("cannot be processed" in line["message"] and "not valid base64" in line["reason"]
               for line in errors) == MAX_RECEIVES  # one per receive: the reason is in the log, not only at DEBUG


def test_a_failing_record_too_large_for_sqs_reaches_the_retry_dlq_by_reference_and_is_applied_once(env):
    big = {"eventId": "e-big", "padding": "x" * 800_000}  # 800 KB: over SQS's limit once base64-encoded
    before, [large], after = env.put({"eventId": "e-0"}), env.put(big, account="acct-2"), env.put({"eventId": "e-2"})
    handler = app_dlq_stream.make_handler(fail_once_at(env.ledger, large), retry_dlq_url=env.retry_url,
                                          logger=env.logger(), sqs=env.sqs, kinesis=env.kinesis,
                                          stream_arn=env.stream_arn)

    response = handler(env.kinesis_event(*before, large, *after), LocalLambdaContext())

    assert response == {"batchItemFailures": []}
    assert env.balance() == (2, 2)  # the batch went on past the large record
    [inserted] = env.messages(env.retry_url)
    assert len(inserted["Body"]) < SQS_MESSAGE_SIZE_DEFAULT_BYTES
    body = json.loads(inserted["Body"])
    assert body["kind"] == INSERTED_REFERENCE_KIND and body["error"]["type"] == "ConnectionError"
    assert body["KinesisBatchInfo"] == {"streamArn": env.stream_arn, "shardId": "shardId-000000000000",
                                        "startSequenceNumber": large, "endSequenceNumber": large, "batchSize": 1}
    env.sqs.change_message_visibility(QueueUrl=env.retry_url, ReceiptHandle=inserted["ReceiptHandle"],
                                      VisibilityTimeout=0)  # looked at; back on the queue

    env.retry_mapping(handler).drain()  # read back from the stream and applied

    assert env.balance("acct-2") == (1, 1)
    assert env.messages(env.retry_url) == [] and env.messages(env.unrecoverable_url) == []
