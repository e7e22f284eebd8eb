"""Property-based hostile input for every handler entry point (hypothesis): whatever a record, a
Retry-DLQ message, a charge, an account row or an invoice row holds, the entry point answers with
its value or with its own named error (never a crash of another kind), and what it accepts is
canonical and within AWS's bounds. The stream runtimes are also driven end to end against moto:
whatever sits between two good records, both are applied exactly once, and an error message a
team's code writes never reaches a log line."""

import base64
import itertools
import json
from datetime import date, timedelta
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws

from integration_blueprint.handlers.reference import billing_dispatcher
from integration_blueprint.handlers.reference.invoice_enricher import (
    FIELD_MAX_BYTES,
    InvalidInvoiceError,
    parse_invoice,
)
from integration_blueprint.handlers.runtime.billing import Charge, InvalidCharge
from integration_blueprint.handlers.runtime.stream_records import (
    MalformedStreamRecord,
    StreamRecord,
    batch_info,
    sqs_body,
)
from integration_blueprint.handlers.runtime.stream_refetch import range_problem
from integration_blueprint.sandbox.lambda_context import LocalLambdaContext
from tests.stream_env import STREAM, Env

# Values a hostile producer writes: every JSON type, numbers beyond any range, digits of other
# scripts, long and deep values. `json_values` can be written as JSON text (Python writes integers
# of at most 4,300 digits); `values` adds larger integers, for entry points that take objects.
scalar_texts = st.one_of(st.text(), st.text(alphabet="0123456789\u0663\u00b2\u0969\uff11", min_size=1, max_size=8),
                         st.sampled_from(["", " ", "0", "-1", "1e400", "NaN", "false", "true", "9" * 4301,
                                          "20261101", "2026-W44-7"]))
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=10**300, max_value=10**4000),
                    st.floats(allow_nan=True, allow_infinity=True), scalar_texts)


def trees(leaves):
    return st.recursive(leaves, lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=8), children, max_size=4)), max_leaves=12)


json_values = trees(scalars)
values = trees(st.one_of(scalars, st.integers(min_value=10**4300, max_value=10**5000)))
depths = st.integers(min_value=900, max_value=3000)
deep_json_texts = depths.map(lambda n: "[" * n + "]" * n)


def nested(depth: int):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def deep_or_plain():
    return st.one_of(values, depths.map(nested))


def as_json(value) -> str:
    return json.dumps(value, default=str)


def named_errors_only(call, *allowed):
    try:
        return call()
    except allowed:
        return None


FAST = settings(max_examples=100, deadline=None)


# --- stream records and Retry-DLQ messages ----------------------------------------------------

@FAST
@given(st.one_of(deep_or_plain(), st.fixed_dictionaries({"kinesis": st.dictionaries(
    st.sampled_from(["sequenceNumber", "data", "partitionKey", "approximateArrivalTimestamp"]), values)},
    optional={"eventID": values, "eventSourceARN": values})))
def test_a_kinesis_event_record_is_a_record_or_malformed(raw):
    record = named_errors_only(lambda: StreamRecord.from_kinesis_event(raw), MalformedStreamRecord)

    if record is not None:
        assert record.sequence_number.isascii() and record.sequence_number.isdigit()
        assert len(record.sequence_number) <= 129 and isinstance(record.data, bytes)


@FAST
@given(st.dictionaries(st.sampled_from(["streamArn", "shardId", "startSequenceNumber", "endSequenceNumber",
                                        "batchSize"]), values))
def test_range_metadata_is_a_readable_range_or_has_a_stated_problem(info):
    problem = range_problem(info)

    if problem is None:
        assert 0 <= int(info["startSequenceNumber"]) <= int(info["endSequenceNumber"]) < 10**129
        assert isinstance(info.get("batchSize", 0), int)
    else:
        assert isinstance(problem, str) and problem


@FAST
@given(st.one_of(st.text(), json_values.map(as_json), deep_json_texts,
                 deep_json_texts.map(lambda text: '{"KinesisBatchInfo":' + text + "}")))
def test_a_retry_dlq_body_is_an_object_or_nothing(body):
    parsed = sqs_body(body)

    assert parsed is None or isinstance(parsed, dict)
    info = batch_info(parsed)
    assert info is None or isinstance(info, dict)


# --- billing -----------------------------------------------------------------------------------

charge_fields = st.fixed_dictionaries({}, optional={
    "tenant": json_values, "employee": json_values, "month": st.one_of(json_values, st.just("2026-10")),
    "amount": st.one_of(json_values, st.integers(min_value=1, max_value=2**60)), "currency": st.one_of(
        json_values, st.just("EUR")), "idempotency_key": json_values})


@FAST
@given(st.one_of(st.text(), charge_fields.map(as_json), json_values.map(as_json), deep_json_texts,
                 deep_json_texts.map(lambda text: '{"tenant":' + text + "}")))
def test_a_charge_message_is_a_valid_charge_or_invalid_charge(body):
    charge = named_errors_only(lambda: Charge.from_message(body), InvalidCharge)

    if charge is not None:
        assert 0 < charge.amount <= 2**53 - 1 and isinstance(charge.amount, int)
        assert Charge.from_message(charge.to_message()) == charge


row_values = st.one_of(values, st.decimals(allow_nan=False, allow_infinity=False, places=3))


@FAST
@given(row_values)
def test_a_monthly_amount_is_billed_exactly_as_stored_or_refused(value):
    amount = named_errors_only(lambda: billing_dispatcher.monthly_amount({"monthly_amount": value}),
                               billing_dispatcher.InvalidAccountRow)

    if amount is not None:
        assert not isinstance(value, (bool, str)) and Decimal(amount) == Decimal(value)


@FAST
@given(row_values)
def test_only_a_boolean_switches_billing_on_or_off(value):
    billable = named_errors_only(lambda: billing_dispatcher.is_billable({"billable": value}),
                                 billing_dispatcher.InvalidAccountRow)

    assert billable is (value if isinstance(value, bool) else None)


# --- invoices ----------------------------------------------------------------------------------

INVOICE_FIELDS = ("invoice_id", "customer_id", "region", "billing_date", "amount")


@FAST
@given(st.dictionaries(st.sampled_from(INVOICE_FIELDS), st.one_of(deep_or_plain(), st.text(min_size=200, max_size=400))))
def test_an_invoice_row_is_a_bounded_canonical_invoice_or_invalid(row):
    invoice = named_errors_only(lambda: parse_invoice(row), InvalidInvoiceError)

    if invoice is not None:
        assert date.fromisoformat(invoice["billing_date"]).isoformat() == invoice["billing_date"]
        assert len(invoice["idempotency_key"].encode("utf-8", "surrogatepass")) <= 3 * FIELD_MAX_BYTES + 12
        assert 0 <= invoice["amount_cents"] <= 2**53 - 1


@FAST
@given(st.dates(min_value=date(1900, 1, 1), max_value=date(2999, 12, 31)),
       st.decimals(min_value=0, max_value=10**9, places=2), st.text(alphabet=" \t", max_size=2))
def test_every_iso_form_of_a_date_and_amount_gives_the_same_invoice_key(when, amount, padding):
    iso_year, iso_week, iso_day = when.isocalendar()
    forms = [when.isoformat(), when.strftime("%Y%m%d"), f"{iso_year:04d}-W{iso_week:02d}-{iso_day}"]
    amounts = [str(amount), f"{amount:.2f}", f"{padding}{amount}{padding}"]

    invoices = [parse_invoice({"invoice_id": "INV-1", "customer_id": "C-7", "region": "eu",
                               "billing_date": form, "amount": written}) for form in forms for written in amounts]

    assert {(i["idempotency_key"], i["amount_cents"]) for i in invoices} == {
        (f"INV-1|eu|{when.isoformat()}", int(amount * 100))}
    assert when + timedelta(0) == date.fromisoformat(invoices[0]["billing_date"])


# --- the stream runtimes end to end --------------------------------------------------------------

@pytest.fixture(scope="module")
def stream_env():
    with pytest.MonkeyPatch.context() as patch, mock_aws():
        patch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
        yield Env()


_accounts = itertools.count()
END_TO_END = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
hostile_data = st.one_of(st.binary(max_size=300), deep_json_texts.map(str.encode), json_values.map(
    lambda v: as_json({"eventId": v, "account": v, "amount": v}).encode()))


def surrounded(env, data: bytes):
    """Two good records of fresh accounts with `data` between them; their sequence numbers and accounts."""
    first, last = f"acct-{next(_accounts)}", f"acct-{next(_accounts)}"
    numbers = [env.kinesis.put_record(StreamName=STREAM, PartitionKey=key, Data=value)["SequenceNumber"] for key, value in (
        (first, json.dumps({"eventId": first, "account": first, "amount": 1}).encode()), ("hostile", data),
        (last, json.dumps({"eventId": last, "account": last, "amount": 1}).encode()))]
    return numbers, (first, last)


@END_TO_END
@given(hostile_data)
def test_whatever_sits_between_two_good_records_they_are_applied_once_on_the_non_idempotent_stream(stream_env, data):
    numbers, accounts = surrounded(stream_env, data)

    response = stream_env.app_dlq_handler()(stream_env.kinesis_event(*numbers), LocalLambdaContext())

    assert response == {"batchItemFailures": []}
    assert [stream_env.balance(a) for a in accounts] == [(1, 1), (1, 1)]


@END_TO_END
@given(hostile_data)
def test_whatever_sits_between_two_good_records_a_replayed_range_applies_them_once(stream_env, data):
    numbers, accounts = surrounded(stream_env, data)
    handler = stream_env.idempotent_handler()
    message = stream_env.on_failure_record(numbers[0], numbers[-1], 3)
    event = {"Records": [{"messageId": f"m-{numbers[0]}", "receiptHandle": "r", "body": message,
                          "attributes": {"ApproximateReceiveCount": "1"}, "messageAttributes": {},
                          "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:eu-west-1:123456789012:retry-dlq",
                          "awsRegion": "eu-west-1"}]}

    for _ in range(2):  # a failed message comes back; nothing is applied twice
        named_errors_only(lambda: handler(event, LocalLambdaContext()), Exception)

    assert [stream_env.balance(a) for a in accounts] == [(1, 1), (1, 1)]


@END_TO_END
@given(st.text(min_size=1, max_size=200))
def test_an_error_message_a_teams_code_writes_never_reaches_a_log_line(stream_env, text):
    secret = "SECRET-" + base64.b32encode(text.encode("utf-8", "surrogatepass")).decode()
    numbers, _ = surrounded(stream_env, b"{}")

    def leaky(record):
        raise ValueError(f"could not read {secret}")

    before = len(stream_env.log.getvalue())
    stream_env.app_dlq_handler(leaky)(stream_env.kinesis_event(numbers[0]), LocalLambdaContext())
    raised = None
    try:
        stream_env.idempotent_handler(leaky)(stream_env.kinesis_event(numbers[-1]), LocalLambdaContext())
    except Exception as exc:  # noqa: BLE001 - the runtime raises so Lambda bisects
        raised = exc

    assert raised is not None and secret not in str(raised)
    assert secret not in stream_env.log.getvalue()[before:]
