"""The reference stream consumers' side effect: add an amount to a per-account balance.

Deliberately not idempotent by itself (an atomic ADD): applying an event twice visibly doubles it,
so the tests, the benchmark and the drills can prove each event was applied exactly once.

Payload (JSON): {"eventId": "e-1", "account": "acct-1", "amount": 5}. A payload with
"poison": true always fails, so faults can be injected end to end.
"""

from __future__ import annotations

import os
from decimal import Decimal
from typing import Optional

import boto3

from handlers.stream_records import StreamRecord

# The business key the reference stacks configure as IDEMPOTENCY_KEY_JMESPATH.
BUSINESS_KEY_JMESPATH = "eventId"


class PoisonRecord(Exception):
    """The payload asks to fail (fault injection) or cannot be applied at all."""


class AccountLedger:
    """`process_record` for the reference handlers: one atomic balance update per event."""

    def __init__(self, table_name: Optional[str] = None, client=None):
        self._table_name = table_name
        self._client = client

    @property
    def table_name(self) -> str:
        name = self._table_name or os.environ.get("LEDGER_TABLE_NAME")
        if not name:
            raise RuntimeError("environment variable LEDGER_TABLE_NAME is not set; the stream consumer "
                               "components set it when they deploy the reference handler")
        return name

    @property
    def client(self):
        if self._client is None:
            self._client = boto3.client("dynamodb")
        return self._client

    def __call__(self, record: StreamRecord) -> None:
        payload = record.json()
        if not isinstance(payload, dict) or payload.get("poison"):
            raise PoisonRecord(f"record {record.sequence_number} is a poison record: {payload!r}")
        account, amount = payload.get("account"), payload.get("amount")
        if not account or not isinstance(amount, (int, float)) or isinstance(amount, bool):
            raise PoisonRecord(f"record {record.sequence_number} needs 'account' and a numeric 'amount'")
        self.client.update_item(
            TableName=self.table_name,
            Key={"account": {"S": str(account)}},
            UpdateExpression="ADD balance :amount, applied :one",
            ExpressionAttributeValues={":amount": {"N": str(Decimal(str(amount)))}, ":one": {"N": "1"}},
        )

    def balance(self, account: str) -> tuple[Decimal, int]:
        """(balance, number of events applied) for `account`."""
        item = self.client.get_item(TableName=self.table_name, Key={"account": {"S": account}},
                                    ConsistentRead=True).get("Item") or {}
        return (Decimal(item.get("balance", {}).get("N", "0")), int(item.get("applied", {}).get("N", "0")))
