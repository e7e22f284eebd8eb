"""The billing dispatcher and the invoice item handler against values the drill never generates
(against moto): the dispatcher bills only rows that say exactly what to bill, the invoice key is
built from canonical values, and an oversized id is the handler's named error."""

import io
import logging
from decimal import Decimal

import boto3
import pytest
from moto import mock_aws

from integration_blueprint.handlers.reference import billing_dispatcher
from integration_blueprint.sandbox.lambda_context import LocalLambdaContext
from tests.conftest import REGION
from tests.invoice_fixtures import customer_total

ROW = {"invoice_id": "INV-1", "customer_id": "C-7", "region": "eu", "billing_date": "2026-11-01", "amount": "12.50"}
CONTEXT = LocalLambdaContext("invoice-enricher", timeout_seconds=30)
MARKER = "98765"  # a value no log line may quote


@pytest.fixture
def accounts():
    with mock_aws():
        ddb = boto3.client("dynamodb", region_name=REGION)
        ddb.create_table(TableName="accounts", BillingMode="PAY_PER_REQUEST",
                         KeySchema=[{"AttributeName": "tenant", "KeyType": "HASH"},
                                    {"AttributeName": "sk", "KeyType": "RANGE"}],
                         AttributeDefinitions=[{"AttributeName": "tenant", "AttributeType": "S"},
                                               {"AttributeName": "sk", "AttributeType": "S"}])
        yield boto3.resource("dynamodb", region_name=REGION).Table("accounts")


@pytest.fixture
def dispatcher_log():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(billing_dispatcher.logger.registered_formatter)  # JSON lines with their extra keys
    billing_dispatcher.logger.addHandler(handler)
    yield stream
    billing_dispatcher.logger.removeHandler(handler)


def employee(name, **fields):
    return {"tenant": "acme", "sk": f"employee#{name}", "employee": name, "monthly_amount": 1200, "currency": "EUR",
            "billable": True, **fields}


@pytest.mark.parametrize("fields, reason", [
    ({"monthly_amount": Decimal("12.7")}, "whole number"),
    ({"monthly_amount": Decimal(MARKER + ".5")}, "whole number"),
    ({"monthly_amount": MARKER}, "not a string"),
    ({"billable": "false"}, "billable must be a boolean"),
    ({"billable": "true"}, "billable must be a boolean"),
    ({"billable": 1}, "billable must be a boolean"),
])
def test_the_dispatcher_refuses_a_row_that_does_not_say_exactly_what_to_bill(accounts, dispatcher_log, fields, reason):
    accounts.put_item(Item=employee("alice"))
    accounts.put_item(Item=employee("bob", **fields))

    charges = list(billing_dispatcher.billable_charges(accounts, "2026-10"))

    assert [(c.employee, c.amount) for c in charges] == [("alice", 1200)]
    assert reason in dispatcher_log.getvalue() and MARKER not in dispatcher_log.getvalue()


def test_a_whole_amount_stored_with_a_fraction_of_zero_is_billed_as_it_is(accounts):
    accounts.put_item(Item=employee("alice", monthly_amount=Decimal("1200.00")))

    assert [c.amount for c in billing_dispatcher.billable_charges(accounts, "2026-10")] == [1200]


def test_one_invoice_dated_in_three_iso_forms_is_booked_once(enricher):
    keys = {enricher.lambda_handler({**ROW, "billing_date": when}, CONTEXT)["idempotency_key"]
            for when in ("2026-11-01", "20261101", "2026-W44-7")}

    assert keys == {"INV-1|eu|2026-11-01"}
    assert customer_total(REGION, "C-7") == (1250, 1)


@pytest.mark.parametrize("field", ["invoice_id", "customer_id", "region"])
def test_an_oversized_id_is_the_handlers_named_error_and_writes_nothing(enricher, field):
    with pytest.raises(enricher.InvalidInvoiceError, match=f"{field} is longer than"):
        enricher.lambda_handler({**ROW, field: "X" * 5_000}, CONTEXT)

    assert customer_total(REGION, "C-7") == (0, 0)


def test_a_nested_value_is_refused_by_name(enricher):
    nested: list = []
    for _ in range(2_000):
        nested = [nested]
    with pytest.raises(enricher.InvalidInvoiceError, match="amount must be text"):
        enricher.lambda_handler({**ROW, "amount": nested}, CONTEXT)
