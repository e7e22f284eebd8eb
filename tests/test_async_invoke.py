"""Lambda's asynchronous invocation in the sandbox (what Scheduler's start of a function does):
retries, maximum event age and the on-failure destination record, as AWS documents them."""

import json

import boto3
import pytest
from moto import mock_aws

from integration_blueprint.sandbox.async_invoke import AsyncInvocation, AsyncInvokeSettings
from integration_blueprint.sandbox.errors import FunctionCrashed

ARN = "arn:aws:lambda:eu-west-1:123456789012:function:billing-dispatcher"


@pytest.fixture
def sqs():
    with mock_aws():
        yield boto3.client("sqs")


def failing(times, error=None):
    error = error or RuntimeError("accounts store throttled")
    calls = []

    def handler(event, context):
        calls.append(event)
        if len(calls) <= times:
            raise error
        return {"done": event["month"]}
    return handler, calls


def parked(sqs, url):
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
    return [json.loads(m["Body"]) for m in messages]


def test_a_failing_function_is_retried_twice_and_then_its_event_is_parked_with_the_documented_record(sqs):
    url = sqs.create_queue(QueueName="dispatcher-failed")["QueueUrl"]
    handler, calls = failing(times=10)
    invoke = AsyncInvocation(ARN, handler, AsyncInvokeSettings(on_failure_queue_url=url), sqs=sqs)

    result = invoke({"month": "2026-10"})

    assert not result.succeeded and len(calls) == 3  # the first attempt and Lambda's two retries
    [record] = parked(sqs, url)
    assert set(record) == {"version", "timestamp", "requestContext", "requestPayload", "responseContext",
                           "responsePayload"}
    assert record["requestContext"] == {"requestId": result.request_id, "functionArn": f"{ARN}:$LATEST",
                                        "condition": "RetriesExhausted", "approximateInvokeCount": 3}
    assert record["requestPayload"] == {"month": "2026-10"}  # the original event: re-runnable as it is
    assert record["responseContext"]["functionError"] == "Unhandled"
    assert record["responsePayload"] == {"errorMessage": "accounts store throttled", "errorType": "RuntimeError"}


def test_a_retry_that_succeeds_parks_nothing_and_a_crash_is_retried_like_an_error(sqs):
    url = sqs.create_queue(QueueName="dispatcher-failed")["QueueUrl"]
    handler, calls = failing(times=1, error=FunctionCrashed("out of memory"))
    result = AsyncInvocation(ARN, handler, AsyncInvokeSettings(on_failure_queue_url=url), sqs=sqs)({"month": "2026-10"})
    assert result.succeeded and result.attempts == 2 and result.response == {"done": "2026-10"}
    assert parked(sqs, url) == []


@pytest.mark.parametrize("retries, max_age, attempts, condition", [
    (0, 3600, 1, "RetriesExhausted"),
    (2, 60, 2, "EventAgeExceeded"),     # the second retry would come 3 minutes after the event
    (2, 180, 3, "RetriesExhausted"),
])
def test_retries_stop_at_the_configured_count_or_the_maximum_event_age(sqs, retries, max_age, attempts, condition):
    url = sqs.create_queue(QueueName="dispatcher-failed")["QueueUrl"]
    handler, calls = failing(times=10)
    settings = AsyncInvokeSettings(maximum_retry_attempts=retries, maximum_event_age_seconds=max_age,
                                   on_failure_queue_url=url)
    result = AsyncInvocation(ARN, handler, settings, sqs=sqs)({"month": "2026-10"})
    assert (len(calls), result.condition) == (attempts, condition)
    assert parked(sqs, url)[0]["requestContext"]["condition"] == condition


def test_without_an_on_failure_destination_the_event_is_dropped(sqs):
    handler, calls = failing(times=10)
    result = AsyncInvocation(ARN, handler, AsyncInvokeSettings(), sqs=sqs)({"month": "2026-10"})
    assert len(calls) == 3 and result.destination_record is None
