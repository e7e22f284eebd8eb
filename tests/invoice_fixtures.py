"""Shared setup for the invoice enricher tests: its two tables in moto, and the handler module
loaded against them (it reads table names from the environment at import, as in Lambda)."""

import importlib
import sys

import boto3

IDEMPOTENCY_TABLE = "invoice-idempotency"
TOTALS_TABLE = "customer-totals"
ENVIRONMENT = {"IDEMPOTENCY_TABLE": IDEMPOTENCY_TABLE, "CUSTOMER_TOTALS_TABLE": TOTALS_TABLE,
               "POWERTOOLS_SERVICE_NAME": "invoice-enricher"}


class FakeLambdaContext:
    """The parts of the Lambda context the handler uses (Powertools reads the remaining time)."""

    function_name = "invoice-enricher"
    aws_request_id = "00000000-0000-0000-0000-000000000000"

    def __init__(self, timeout_ms: int = 30_000):
        self.timeout_ms = timeout_ms

    def get_remaining_time_in_millis(self) -> int:
        return self.timeout_ms


def create_tables(region: str) -> None:
    ddb = boto3.client("dynamodb", region_name=region)
    for name, key in ((IDEMPOTENCY_TABLE, "id"), (TOTALS_TABLE, "customer_id")):
        ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                         KeySchema=[{"AttributeName": key, "KeyType": "HASH"}],
                         AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}])


def load_handler(monkeypatch):
    """Import handlers.invoice_enricher fresh (a cold start) with ENVIRONMENT set."""
    for key, value in ENVIRONMENT.items():
        monkeypatch.setenv(key, value)
    sys.modules.pop("handlers.invoice_enricher", None)
    return importlib.import_module("handlers.invoice_enricher")


def customer_total(region: str, customer_id: str) -> tuple[int, int]:
    """(total_cents, invoice_count) of a customer, (0, 0) if nothing was recorded."""
    item = boto3.client("dynamodb", region_name=region).get_item(
        TableName=TOTALS_TABLE, Key={"customer_id": {"S": customer_id}}).get("Item", {})
    return int(item.get("total_cents", {"N": "0"})["N"]), int(item.get("invoice_count", {"N": "0"})["N"])
