"""Transient faults (throttling, 5xx) are ridden out inside the handlers, with backoff and full jitter
and within the invocation's time budget, against moto: a valid record or row never fails, spends a
bisect or a receive, or leaves an INPROGRESS record behind because one AWS call was throttled."""

import json
import time
import types

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from moto import mock_aws

from integration_blueprint.handlers.runtime import retry
from integration_blueprint.handlers.runtime.retry import TRANSIENT_ERROR_NAME, TransientServiceError
from integration_blueprint.sandbox.lambda_context import LocalLambdaContext
from tests.conftest import REGION
from tests.invoice_fixtures import LEDGER_TABLE, create_tables, customer_total, load_handler
from tests.stream_env import fail_once_at

ROW = {"invoice_id": "INV-1", "customer_id": "C-7", "region": "eu", "billing_date": "2026-11-01", "amount": "12.50"}


def throttle(events, operation, times, *, table=None, code="ProvisionedThroughputExceededException", status=400):
    """Answer the next `times` calls of `operation` (to `table`, if given) with a transient error
    instead of sending them, as a throttled or failing AWS endpoint would; returns the counter."""
    left = {"left": times}

    def answer(params, **_):
        if table is not None:
            body = params.get("body") or b"{}"
            if json.loads(body).get("TableName") != table:
                return None
        if left["left"] == 0:
            return None
        left["left"] -= 1
        return (AWSResponse("https://aws.local", status, {}, None),
                {"Error": {"Code": code, "Message": "injected"}, "ResponseMetadata": {"HTTPStatusCode": status}})

    events.register(f"before-call.*.{operation}", answer)
    return left


@pytest.fixture
def no_backoff(monkeypatch):
    """Backoff delays are recorded, not slept, so the tests stay fast (the budget still applies)."""
    slept = []
    monkeypatch.setattr(retry, "time", types.SimpleNamespace(sleep=slept.append, monotonic=time.monotonic))
    return slept


@pytest.fixture
def enricher(monkeypatch):
    with mock_aws():
        create_tables(REGION)
        # Every client the handler creates from now on carries the fault hooks the test registers.
        monkeypatch.setattr(boto3, "DEFAULT_SESSION", boto3.Session(region_name=REGION))
        yield load_handler(monkeypatch)


# --- invoice_enricher (Distributed Map item) ------------------------------------------------------

def test_the_enricher_rides_out_a_throttled_ledger_write(enricher, no_backoff):
    throttled = throttle(boto3.DEFAULT_SESSION.events, "PutItem", 3, table=LEDGER_TABLE)

    result = enricher.lambda_handler(dict(ROW), LocalLambdaContext(timeout_seconds=30))

    assert result["status"] == "enriched" and throttled["left"] == 0 and len(no_backoff) == 3
    assert customer_total(REGION, "C-7") == (1250, 1)


def test_the_enricher_rides_out_a_throttled_idempotency_store(enricher, no_backoff):
    throttled = throttle(boto3.DEFAULT_SESSION.events, "PutItem", 2, table="invoice-idempotency",
                         code="InternalServerError", status=500)

    assert enricher.lambda_handler(dict(ROW), LocalLambdaContext(timeout_seconds=30))["status"] == "enriched"
    assert throttled["left"] == 0 and customer_total(REGION, "C-7") == (1250, 1)


def test_a_row_still_throttled_after_the_retries_fails_with_the_retryable_error_name_and_can_run_again(
        enricher, no_backoff):
    throttled = throttle(boto3.DEFAULT_SESSION.events, "PutItem", 10_000, table=LEDGER_TABLE, code="ThrottlingException")

    with pytest.raises(TransientServiceError) as failed:
        enricher.lambda_handler(dict(ROW), LocalLambdaContext(timeout_seconds=30))

    # Step Functions matches a Lambda error by the exception's name: the Map task's Retry lists it.
    assert type(failed.value).__name__ == TRANSIENT_ERROR_NAME == "TransientServiceError"
    assert "ThrottlingException" in str(failed.value) and "INV-1|eu|2026-11-01" in str(failed.value)
    assert len(no_backoff) == retry.DEFAULT_ATTEMPTS - 1

    throttled["left"] = 0  # the throttling ends
    enricher.lambda_handler(dict(ROW), LocalLambdaContext(timeout_seconds=30))  # no INPROGRESS left
    assert customer_total(REGION, "C-7") == (1250, 1)


def test_retries_end_within_the_invocations_time_budget(enricher, monkeypatch):
    """Real backoff sleeps of 0.6 s in a 3-second function (both compressed 4x, as the sandbox
    compresses time): without the budget its 5 retries would sleep all of it and Lambda would kill
    it; with it the handler gives up in time to report the failure."""
    throttled = throttle(boto3.DEFAULT_SESSION.events, "PutItem", 0, table=LEDGER_TABLE)
    enricher.lambda_handler({**ROW, "invoice_id": "INV-0"}, LocalLambdaContext())  # a warm container
    throttled["left"] = 10_000
    monkeypatch.setattr(retry, "full_jitter_delay", lambda attempt: 0.6 / 4)
    context = LocalLambdaContext(timeout_seconds=3, time_scale=1 / 4)

    with retry.compressed_time(1 / 4), pytest.raises(TransientServiceError):
        enricher.lambda_handler(dict(ROW), context)

    assert context.get_remaining_time_in_millis() > 0


def test_call_with_retries_stops_before_a_backoff_would_pass_the_deadline(monkeypatch):
    clock = {"now": 100.0}
    monkeypatch.setattr(retry, "time", types.SimpleNamespace(
        monotonic=lambda: clock["now"], sleep=lambda s: clock.__setitem__("now", clock["now"] + s)))
    monkeypatch.setattr(retry, "full_jitter_delay", lambda attempt: 0.5)
    calls = []

    def throttled():
        calls.append(clock["now"])
        raise retry.ClientError({"Error": {"Code": "ThrottlingException"}}, "PutItem")

    with retry.time_budget(LocalLambdaContext(timeout_seconds=1, started=time.monotonic())):
        with pytest.raises(retry.ClientError):  # the original error, once no retry fits
            retry.call_with_retries(throttled, attempts=100)

    # 1 s budget - 0.1 s reserve: a first 0.5 s backoff fits, a second would end past the deadline.
    assert calls == [100.0, 100.5]


# --- IdempotentStreamConsumer ----------------------------------------------------------------------

def test_a_throttled_ledger_write_does_not_fail_the_record_or_spend_a_bisect(env, no_backoff):
    sequence_numbers = env.put(*({"eventId": f"e-{i}"} for i in range(3)))
    throttled = throttle(env.ddb.meta.events, "UpdateItem", 3, table="ledger")

    response = env.idempotent_handler()(env.kinesis_event(*sequence_numbers), LocalLambdaContext())

    assert response == {} and throttled["left"] == 0
    assert env.balance() == (3, 3)


def test_a_throttled_idempotency_delete_leaves_no_inprogress_record_behind(env, no_backoff):
    """The record fails once (a downstream timeout); Powertools deletes its INPROGRESS record, and
    that delete is throttled twice. The retry of the record must run it, not find it in progress."""
    [sequence_number] = env.put({"eventId": "e-0"})
    handler = env.idempotent_handler(fail_once_at(env.ledger, sequence_number))
    throttled = throttle(env.ddb.meta.events, "DeleteItem", 2, table="idempotency")
    event = env.kinesis_event(sequence_number)

    with pytest.raises(Exception, match="ConnectionError"):  # its type, never its message
        handler(event, LocalLambdaContext())
    handler(event, LocalLambdaContext())  # Lambda's retry of the batch

    assert throttled["left"] == 0
    assert env.balance() == (1, 1)
    assert env.ddb.scan(TableName="idempotency")["Items"][0]["status"]["S"] == "COMPLETED"


# --- NonIdempotentStreamConsumer -------------------------------------------------------------------

def test_a_throttled_ledger_write_is_retried_in_the_handler_not_parked_in_the_retry_dlq(env, no_backoff):
    sequence_numbers = env.put({"eventId": "e-0"}, {"eventId": "e-1"})
    throttled = throttle(env.ddb.meta.events, "UpdateItem", 2, table="ledger", code="InternalServerError", status=500)

    response = env.app_dlq_handler()(env.kinesis_event(*sequence_numbers), LocalLambdaContext())

    assert response == {"batchItemFailures": []} and throttled["left"] == 0
    assert env.balance() == (2, 2) and env.messages(env.retry_url) == []


def test_a_throttled_retry_dlq_insert_is_retried_and_the_batch_goes_on(env, no_backoff):
    sequence_numbers = env.put({"eventId": "e-0"}, {"eventId": "e-1", "poison": True}, {"eventId": "e-2"})
    throttled = throttle(env.sqs.meta.events, "SendMessage", 6, code="ServiceUnavailable", status=503)

    response = env.app_dlq_handler()(env.kinesis_event(*sequence_numbers), LocalLambdaContext())

    assert response == {"batchItemFailures": []} and throttled["left"] == 0
    assert env.balance() == (2, 2)  # e-2 was applied, not handed to the on-failure destination
    [inserted] = [json.loads(m["Body"]) for m in env.messages(env.retry_url)]
    assert inserted["sequenceNumber"] == sequence_numbers[1]


def test_the_sandboxs_compressed_context_is_budgeted_on_uncompressed_time():
    """The local sandbox reports 1/100 of the remaining time (for Powertools' INPROGRESS expiry) while
    handlers work at real speed: the retry budget is the function's real timeout minus the reserve."""
    with retry.compressed_time(0.01), retry.time_budget(LocalLambdaContext(timeout_seconds=30, time_scale=0.01)):
        left = retry.seconds_left()
    assert left is not None and 28 < left <= 30 - retry.TIME_RESERVE_SECONDS


def test_the_sandboxs_compressed_context_compresses_a_handlers_backoff_waits_too(no_backoff, monkeypatch):
    """Like botocore's backoff in the sandbox, a handler's own waits last the runner's compression of
    their length (retry.compressed_time, which the sandbox declares); on AWS they are waited in full."""
    monkeypatch.setattr(retry, "full_jitter_delay", lambda attempt: 0.5)
    calls = []

    def throttled():
        calls.append(1)
        if len(calls) < 3:
            raise TransientServiceError("throttled")
        return "done"

    with retry.compressed_time(0.01), retry.time_budget(LocalLambdaContext(timeout_seconds=30, time_scale=0.01)):
        assert retry.call_with_retries(throttled) == "done"
    with retry.time_budget(LocalLambdaContext(timeout_seconds=30)):
        calls.clear()
        assert retry.call_with_retries(throttled) == "done"
    assert no_backoff == [0.005, 0.005, 0.5, 0.5]
