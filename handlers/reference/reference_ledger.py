"""The reference stream consumers' side effect: add an amount to a per-account balance.

An atomic ADD: applying an event twice visibly doubles the balance, so the tests, the benchmark
and the drills can prove each event was applied exactly once.

`guarded=True` (the idempotent consumer's reference) makes the ADD conditional on the event's key
not being in the account's `applied_events` set, in the same single-item write. Powertools'
idempotency alone leaves a window: a function that dies after the ADD and before its COMPLETED
write leaves an INPROGRESS record that expires with the invocation, and the retry would add again.
The guard closes it at the cost of one key per event in the account item (DynamoDB's 400 KB item
limit allows about ten thousand per account; a ledger with more events per account keeps one row
per event instead). `guarded=False` (the non-idempotent consumer's reference) is the plain ADD:
that pattern exists for effects that cannot be guarded.

Payload (JSON): {"eventId": "e-1", "account": "acct-1", "amount": 5}. A payload with
"poison": true always fails, so faults can be injected end to end.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Optional

import boto3

from integration_blueprint.handlers.runtime import config
from integration_blueprint.handlers.runtime.stream_records import StreamRecord

# The business key the reference stacks configure as IDEMPOTENCY_KEY_JMESPATH.
BUSINESS_KEY_JMESPATH = "eventId"


class PoisonRecord(Exception):
    """The payload asks to fail (fault injection) or cannot be applied at all."""


class AccountLedger:
    """`process_record` for the reference handlers: one atomic balance update per event."""

    def __init__(self, table_name: Optional[str] = None, client=None, *, guarded: bool = False):
        self._table_name = table_name
        self._client = client
        self.guarded = guarded

    @property
    def table_name(self) -> str:
        return self._table_name or config.required(config.LEDGER_TABLE_NAME,
                                                   set_by="IdempotentStreamConsumer or NonIdempotentStreamConsumer")

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
        values = {":amount": {"N": str(Decimal(str(amount)))}, ":one": {"N": "1"}}
        if not self.guarded:
            self.client.update_item(TableName=self.table_name, Key={"account": {"S": str(account)}},
                                    UpdateExpression="ADD balance :amount, applied :one",
                                    ExpressionAttributeValues=values)
            return
        event_key = str(payload.get(BUSINESS_KEY_JMESPATH) or f"{record.shard_id}:{record.sequence_number}")
        try:
            self.client.update_item(
                TableName=self.table_name, Key={"account": {"S": str(account)}},
                UpdateExpression="ADD balance :amount, applied :one, applied_events :events",
                ConditionExpression="attribute_not_exists(applied_events) OR NOT contains(applied_events, :event)",
                ExpressionAttributeValues={**values, ":events": {"SS": [event_key]}, ":event": {"S": event_key}},
            )
        except self.client.exceptions.ConditionalCheckFailedException:
            return  # applied by an earlier attempt that died before it could say so

    def balance(self, account: str) -> tuple[Decimal, int]:
        """(balance, number of events applied) for `account`."""
        item = self.client.get_item(TableName=self.table_name, Key={"account": {"S": account}},
                                    ConsistentRead=True).get("Item") or {}
        return (Decimal(item.get("balance", {}).get("N", "0")), int(item.get("applied", {}).get("N", "0")))
