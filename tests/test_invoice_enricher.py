"""The Distributed Map item handler against moto DynamoDB: duplicates do the work once and
return the same result; invalid rows fail with the named error."""

import pytest

from integration_blueprint.sandbox.lambda_context import LocalLambdaContext
from tests.conftest import REGION
from tests.invoice_fixtures import customer_total

ROW = {"invoice_id": "INV-1", "customer_id": "C-7", "region": "eu", "billing_date": "2026-11-01",
       "amount": "12.50"}
CONTEXT = LocalLambdaContext("invoice-enricher", timeout_seconds=30)


def test_duplicate_row_does_the_work_once_and_returns_the_same_result(enricher):
    first = enricher.lambda_handler(dict(ROW), CONTEXT)
    second = enricher.lambda_handler(dict(ROW), CONTEXT)

    assert first == second
    assert first["idempotency_key"] == "INV-1|eu|2026-11-01"
    assert first["amount_cents"] == 1250 and first["status"] == "enriched"
    assert customer_total(REGION, "C-7") == (1250, 1)


def test_same_invoice_in_another_region_or_date_is_a_different_invoice(enricher):
    enricher.lambda_handler(dict(ROW), CONTEXT)
    enricher.lambda_handler({**ROW, "region": "us"}, CONTEXT)
    enricher.lambda_handler({**ROW, "billing_date": "2026-12-01"}, CONTEXT)

    assert customer_total(REGION, "C-7") == (3750, 3)


def test_key_ignores_formatting_noise_but_a_changed_amount_is_refused(enricher):
    enricher.lambda_handler(dict(ROW), CONTEXT)
    # Whitespace around values is not a different invoice.
    enricher.lambda_handler({k: f" {v} " for k, v in ROW.items()}, CONTEXT)
    assert customer_total(REGION, "C-7") == (1250, 1)

    with pytest.raises(Exception) as refused:
        enricher.lambda_handler({**ROW, "amount": "99.00"}, CONTEXT)
    assert type(refused.value).__name__ == "IdempotencyValidationError"
    assert customer_total(REGION, "C-7") == (1250, 1)


def test_item_batch_records_each_row_once(enricher):
    other = {**ROW, "invoice_id": "INV-2", "amount": "1.05"}
    result = enricher.lambda_handler({"Items": [dict(ROW), other, dict(ROW)], "BatchInput": {}}, CONTEXT)

    assert [r["invoice_id"] for r in result["results"]] == ["INV-1", "INV-2", "INV-1"]
    assert customer_total(REGION, "C-7") == (1355, 2)


@pytest.mark.parametrize("change, message", [
    ({"invoice_id": ""}, "missing invoice_id"),
    ({"amount": None}, "missing amount"),
    ({"amount": "ten"}, "not a number"),
    ({"amount": "-1.00"}, "must be >= 0"),
    ({"amount": "1.005"}, "at most 2 decimals"),
    ({"amount": "NaN"}, "must be >= 0"),
    ({"billing_date": "01/11/2026"}, "not a YYYY-MM-DD date"),
    ({"region": "eu|us"}, "must not contain"),
])
def test_invalid_rows_fail_with_the_named_error_and_change_nothing(enricher, change, message):
    with pytest.raises(enricher.InvalidInvoiceError, match=message):
        enricher.lambda_handler({**ROW, **change}, CONTEXT)
    assert customer_total(REGION, "C-7") == (0, 0)


def test_a_failed_row_can_be_retried_once_fixed(enricher):
    """A failure leaves no idempotency record behind, so the corrected row is processed."""
    with pytest.raises(enricher.InvalidInvoiceError):
        enricher.lambda_handler({**ROW, "amount": "oops"}, CONTEXT)
    assert enricher.lambda_handler(dict(ROW), CONTEXT)["status"] == "enriched"
    assert customer_total(REGION, "C-7") == (1250, 1)


def test_a_crash_after_the_invoice_was_recorded_never_records_it_again(enricher):
    """The function dies after recording the invoice but before Powertools marks the row
    COMPLETED: its INPROGRESS record expires with the invocation and the retry runs the work
    again. The ledger row's conditional write keeps the invoice from being recorded twice."""
    import boto3

    from tests.invoice_fixtures import IDEMPOTENCY_TABLE

    enricher.lambda_handler(dict(ROW), CONTEXT)
    ddb = boto3.client("dynamodb", region_name=REGION)
    for item in ddb.scan(TableName=IDEMPOTENCY_TABLE)["Items"]:  # as if COMPLETED was never written
        ddb.delete_item(TableName=IDEMPOTENCY_TABLE, Key={"id": item["id"]})

    retried = enricher.lambda_handler(dict(ROW), CONTEXT)

    assert retried["status"] == "enriched" and retried["amount_cents"] == 1250
    assert customer_total(REGION, "C-7") == (1250, 1)
