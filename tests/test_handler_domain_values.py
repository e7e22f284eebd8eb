"""Values the domain forbids are refused at the edge with named errors, before anything is written,
and no error message or log line repeats the payload (against moto): NaN and Infinity, negative
amounts, 1e400 and amounts beyond MAX_AMOUNT_MINOR_UNITS, in the stream ledgers, billing and invoices."""

import json

import pytest
from moto import mock_aws

from integration_blueprint.handlers.reference import billing_consumer
from integration_blueprint.handlers.runtime.amounts import MAX_AMOUNT_MINOR_UNITS
from integration_blueprint.handlers.runtime.billing import Charge, InvalidCharge
from integration_blueprint.handlers.runtime.idempotent_stream import RecordFailed
from integration_blueprint.sandbox.lambda_context import LocalLambdaContext
from tests.billing_env import ledger_rows, sqs_record
from tests.conftest import REGION
from tests.invoice_fixtures import create_tables, customer_total, load_handler
from tests.stream_env import STREAM

SECRET = "iban-DE00-do-not-log"
# JSON texts Python's parser accepts: NaN, Infinity, an overflow to Infinity, a negative amount, and
# an amount far above the bound.
FORBIDDEN_AMOUNTS = ["NaN", "Infinity", "-Infinity", "1e400", "-5", str(10**40)]


def put_raw(env, amount_json):
    text = f'{{"eventId": "e-1", "account": "acct-1", "note": "{SECRET}", "amount": {amount_json}}}'
    return env.kinesis.put_record(StreamName=STREAM, PartitionKey="acct-1", Data=text.encode())["SequenceNumber"]


def ledger_items(env):
    return env.ddb.scan(TableName="ledger")["Items"]


@pytest.mark.parametrize("amount", FORBIDDEN_AMOUNTS)
def test_the_idempotent_stream_ledger_refuses_a_forbidden_amount_before_writing(env, amount):
    sequence_number = put_raw(env, amount)

    with pytest.raises(RecordFailed, match="InvalidAmount") as failed:
        env.idempotent_handler()(env.kinesis_event(sequence_number), LocalLambdaContext())

    assert failed.value.__cause__ is None  # the chain could carry a payload value (redaction.py)
    assert ledger_items(env) == []
    assert SECRET not in str(failed.value) and SECRET not in env.log.getvalue()


@pytest.mark.parametrize("amount", FORBIDDEN_AMOUNTS)
def test_the_app_dlq_stream_ledger_parks_a_forbidden_amount_with_the_named_error(env, amount):
    sequence_number = put_raw(env, amount)

    env.app_dlq_handler()(env.kinesis_event(sequence_number), LocalLambdaContext())

    assert ledger_items(env) == []
    [inserted] = [json.loads(m["Body"]) for m in env.messages(env.retry_url)]
    assert inserted["error"]["type"] == "InvalidAmount" and SECRET not in inserted["error"]["message"]
    assert SECRET not in env.log.getvalue()


def test_the_bound_is_stated_in_the_refusal(env):
    sequence_number = put_raw(env, str(MAX_AMOUNT_MINOR_UNITS + 1))

    env.app_dlq_handler()(env.kinesis_event(sequence_number), LocalLambdaContext())

    [inserted] = [json.loads(m["Body"]) for m in env.messages(env.retry_url)]
    assert str(MAX_AMOUNT_MINOR_UNITS) in inserted["error"]["message"]


def test_amounts_up_to_the_bound_are_applied(env):
    sequence_number = put_raw(env, str(MAX_AMOUNT_MINOR_UNITS))

    env.app_dlq_handler()(env.kinesis_event(sequence_number), LocalLambdaContext())

    assert env.balance() == (MAX_AMOUNT_MINOR_UNITS, 1)


# --- billing -----------------------------------------------------------------------------------

def charge_text(amount_json):
    return (f'{{"tenant": "acme", "employee": "{SECRET}", "month": "2026-10", "currency": "EUR", '
            f'"amount": {amount_json}}}')


@pytest.mark.parametrize("amount", [*FORBIDDEN_AMOUNTS, "0", str(MAX_AMOUNT_MINOR_UNITS + 1)])
def test_a_charge_with_a_forbidden_amount_is_refused_before_charging_and_never_logged(billing_env, caplog, amount):
    with pytest.raises(InvalidCharge) as refused:
        Charge.from_message(charge_text(amount))
    assert SECRET not in str(refused.value)

    event = {"Records": [sqs_record("m1", charge_text(amount), "acme#2026-10")]}
    response = billing_consumer.lambda_handler(event, LocalLambdaContext("consumer"))

    assert response == {"batchItemFailures": [{"itemIdentifier": "m1"}]}
    assert ledger_rows(billing_env.ddb) == []
    assert all(SECRET not in str(vars(r)) for r in caplog.records)


def test_a_charge_above_the_bound_names_the_bound():
    with pytest.raises(InvalidCharge, match=f"largest accepted charge \\({MAX_AMOUNT_MINOR_UNITS} minor units"):
        Charge.from_message(charge_text(str(10**40)))
    assert Charge.from_message(charge_text(str(MAX_AMOUNT_MINOR_UNITS))).amount == MAX_AMOUNT_MINOR_UNITS


# --- invoice_enricher --------------------------------------------------------------------------

ROW = {"invoice_id": "INV-1", "customer_id": SECRET, "region": "eu", "billing_date": "2026-11-01", "amount": "12.50"}


@pytest.fixture
def enricher(monkeypatch):
    with mock_aws():
        create_tables(REGION)
        yield load_handler(monkeypatch)


@pytest.mark.parametrize("amount, reason", [
    ("1e400", "largest accepted amount"),
    (str(10**40), "largest accepted amount"),
    (str(MAX_AMOUNT_MINOR_UNITS), "largest accepted amount"),  # in cents that is 100 times too much
    ("Infinity", "finite"),
    ("-Infinity", "finite"),
    ("-0.01", "must be >= 0"),
])
def test_an_invoice_with_a_forbidden_amount_fails_with_the_named_error_not_a_decimal_one(enricher, caplog, amount, reason):
    with pytest.raises(enricher.InvalidInvoiceError, match=reason) as refused:
        enricher.lambda_handler({**ROW, "amount": amount}, LocalLambdaContext())

    assert customer_total(REGION, SECRET) == (0, 0)
    assert SECRET not in str(refused.value) and all(SECRET not in str(vars(r)) for r in caplog.records)


def test_an_invalid_row_is_never_logged_or_repeated_in_the_error(enricher, caplog):
    with pytest.raises(enricher.InvalidInvoiceError, match="missing billing_date") as refused:
        enricher.lambda_handler({**ROW, "billing_date": ""}, LocalLambdaContext())

    assert SECRET not in str(refused.value)
    assert any(r.getMessage() == "invalid invoice row" for r in caplog.records)  # the log line is there...
    assert all(SECRET not in str(vars(r)) for r in caplog.records)  # ...without the row
