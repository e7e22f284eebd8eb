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
that pattern exists for effects that cannot be guarded, except in its Retry-DLQ lane: a record
redelivered from there (`record.redelivered`) carries a unique key (`record.effect_key`: stream,
shard, sequence number) and its ADD is conditional on that key in the same write, so a retry lane
invocation that dies after the ADD cannot apply it twice when SQS redelivers the message.

Values are checked before anything is written (handlers/runtime/amounts.py): an amount that is not
a finite number >= 0 within MAX_AMOUNT_MINOR_UNITS fails with InvalidAmount. Error messages name the
record (shard, sequence number), never the payload.

Payload (JSON): {"eventId": "e-1", "account": "acct-1", "amount": 5}. A payload with
"poison": true always fails, so faults can be injected end to end.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Optional

import boto3

from integration_blueprint.handlers.runtime import config
from integration_blueprint.handlers.runtime.amounts import AmountError, check_amount
from integration_blueprint.handlers.runtime.stream_records import StreamRecord

# The business key the reference stacks configure as IDEMPOTENCY_KEY_JMESPATH.
BUSINESS_KEY_JMESPATH = "eventId"


class PoisonRecord(Exception):
    """The payload asks to fail (fault injection) or cannot be applied at all."""


class InvalidAmount(PoisonRecord):
    """The amount is not a finite number >= 0 within the accepted bound (see amounts.py)."""


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
        where = f"record {record.shard_id}/{record.sequence_number}"
        payload: Any = record.json()
        if not isinstance(payload, dict) or payload.get("poison"):
            raise PoisonRecord(f"{where} is a poison record (not a JSON object, or marked poison)")
        account, amount = payload.get("account"), payload.get("amount")
        if not account or not isinstance(account, str):
            raise PoisonRecord(f"{where} needs a non-empty string 'account'")
        if not isinstance(amount, (int, float)) or isinstance(amount, bool):
            raise InvalidAmount(f"{where} needs a numeric 'amount'")
        try:
            value = check_amount(amount)
        except AmountError as exc:
            raise InvalidAmount(f"{where}: {exc}") from None
        values = {":amount": {"N": str(value)}, ":one": {"N": "1"}}
        guard = self._guard_key(record, payload)
        if guard is None:
            self.client.update_item(TableName=self.table_name, Key={"account": {"S": account}},
                                    UpdateExpression="ADD balance :amount, applied :one",
                                    ExpressionAttributeValues=values)
            return
        try:
            self.client.update_item(
                TableName=self.table_name, Key={"account": {"S": account}},
                UpdateExpression="ADD balance :amount, applied :one, applied_events :events",
                ConditionExpression="attribute_not_exists(applied_events) OR NOT contains(applied_events, :event)",
                ExpressionAttributeValues={**values, ":events": {"SS": [guard]}, ":event": {"S": guard}},
            )
        except self.client.exceptions.ConditionalCheckFailedException:
            return  # applied by an earlier attempt that died before it could say so

    def _guard_key(self, record: StreamRecord, payload: dict) -> Optional[str]:
        """The key the ADD is made conditional on, or None for the plain ADD."""
        if self.guarded:
            return str(payload.get(BUSINESS_KEY_JMESPATH) or f"{record.shard_id}:{record.sequence_number}")
        if record.redelivered:
            return record.effect_key
        return None

    def balance(self, account: str) -> tuple[Decimal, int]:
        """(balance, number of events applied) for `account`."""
        item = self.client.get_item(TableName=self.table_name, Key={"account": {"S": account}},
                                    ConsistentRead=True).get("Item") or {}
        return (Decimal(item.get("balance", {}).get("N", "0")), int(item.get("applied", {}).get("N", "0")))
