"""Shared setup for the invoice enricher tests: its two tables in moto, and the handler module
loaded against them (it reads table names from the environment at import, as in Lambda)."""

import importlib
import sys

import boto3

IDEMPOTENCY_TABLE = "invoice-idempotency"
LEDGER_TABLE = "invoice-ledger"
ENVIRONMENT = {"IDEMPOTENCY_TABLE_NAME": IDEMPOTENCY_TABLE, "INVOICE_LEDGER_TABLE_NAME": LEDGER_TABLE,
               "POWERTOOLS_SERVICE_NAME": "invoice-enricher"}


def create_tables(region: str) -> None:
    ddb = boto3.client("dynamodb", region_name=region)
    for name, keys in ((IDEMPOTENCY_TABLE, ("id",)), (LEDGER_TABLE, ("customer_id", "invoice_key"))):
        ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                         KeySchema=[{"AttributeName": k, "KeyType": t} for k, t in zip(keys, ("HASH", "RANGE"))],
                         AttributeDefinitions=[{"AttributeName": k, "AttributeType": "S"} for k in keys])


def load_handler(monkeypatch):
    """Import integration_blueprint.handlers.reference.invoice_enricher fresh (a cold start) with ENVIRONMENT set."""
    for key, value in ENVIRONMENT.items():
        monkeypatch.setenv(key, value)
    sys.modules.pop("integration_blueprint.handlers.reference.invoice_enricher", None)
    return importlib.import_module("integration_blueprint.handlers.reference.invoice_enricher")


def customer_total(region: str, customer_id: str) -> tuple[int, int]:
    """(total_cents, invoice_count) of a customer from its ledger rows, (0, 0) if none."""
    rows = boto3.client("dynamodb", region_name=region).query(
        TableName=LEDGER_TABLE, KeyConditionExpression="customer_id = :c",
        ExpressionAttributeValues={":c": {"S": customer_id}})["Items"]
    return sum(int(r["amount_cents"]["N"]) for r in rows), len(rows)
