"""The reference stream consumers' side effect: add an amount to a per-account balance.

An atomic ADD: applying an event twice visibly doubles the balance, so the tests, the benchmark
and the drills can prove each event was applied exactly once.

`guarded=True` (the idempotent consumer's reference) makes the ADD conditional on the event's key
not having been applied, in the same write. Powertools' idempotency alone leaves a window: a
function that dies after the ADD and before its COMPLETED write leaves an INPROGRESS record that
expires with the invocation, and the retry would add again. The guard closes it: one transaction
(TransactWriteItems) creates the event's guard item (`applied#<sha256 of account and key>`, only if
it does not exist, with a TTL) and ADDs to the account item. Both items keep the same small size
however many events an account gets, so a hot account costs the same 4 write units per event
(2 items, each billed twice in a transaction) as any other; keeping the applied keys in the
account item instead made it grow with every event until DynamoDB's 400 KB item limit refused
every write (benchmarks/hot_key.py). This is Powertools' own layout for idempotency records (one
item per key, a TTL); Powertools' utility cannot make the ADD itself conditional, hence this write.
`guarded=False` (the non-idempotent consumer's reference) is the plain ADD: that pattern exists for
effects that cannot be guarded, except in its Retry-DLQ lane: a record redelivered from there
(`record.redelivered`) carries a unique key (`record.effect_key`: stream, shard, sequence number)
and its ADD is guarded the same way, so a retry lane invocation that dies after the ADD cannot
apply it twice when SQS redelivers the message.

A guard expires after GUARD_TTL_SECONDS: longer than any record can come back (the stream's
longest retention, plus a Retry-DLQ and an Unrecoverable-DLQ stay at SQS's longest retention).

Values are checked before anything is written (handlers/runtime/amounts.py): an amount that is not
a finite number >= 0 within MAX_AMOUNT_MINOR_UNITS fails with InvalidAmount. Error messages name the
record (shard, sequence number), never the payload.

Payload (JSON): {"eventId": "e-1", "account": "acct-1", "amount": 5}. A payload with
"poison": true always fails, so faults can be injected end to end.
"""

from __future__ import annotations

import hashlib
import time
from decimal import Decimal
from functools import cached_property
from typing import Any, Optional

import boto3

from integration_blueprint.core.aws_limits import (
    KINESIS_RETENTION_MAX_HOURS,
    POWERTOOLS_IDEMPOTENCY_TTL_ATTR,
    SQS_RETENTION_MAX_SECONDS,
)
from integration_blueprint.handlers.runtime import config
from integration_blueprint.handlers.runtime.amounts import AmountError, check_amount
from integration_blueprint.handlers.runtime.redaction import PayloadFreeError
from integration_blueprint.handlers.runtime.retry import TransientServiceError
from integration_blueprint.handlers.runtime.stream_records import StreamRecord

# The business key the reference stacks configure as IDEMPOTENCY_KEY_JMESPATH.
BUSINESS_KEY_JMESPATH = "eventId"
# Guard items share the ledger table (keyed by account) under this prefix; no account may use it.
GUARD_PREFIX = "applied#"
# DynamoDB's largest partition key value (2048 bytes); a longer account could never be written.
ACCOUNT_MAX_BYTES = 2048
# How long a guard outlives its event's first application: a record can be read back from the
# stream for up to its longest retention, and an on-failure record or inserted record can wait in
# the Retry-DLQ and then the Unrecoverable-DLQ, each for up to SQS's longest retention.
GUARD_TTL_SECONDS = KINESIS_RETENTION_MAX_HOURS * 3600 + 2 * SQS_RETENTION_MAX_SECONDS
# The ledger table's TTL attribute (components/tables.py gives every idempotency-style table Powertools' name).
TTL_ATTRIBUTE = POWERTOOLS_IDEMPOTENCY_TTL_ATTR
# DynamoDB cancels a transaction with one reason per item; these mean "try again" (transient).
TRANSIENT_CANCELLATION_REASONS = frozenset({"TransactionConflict", "ThrottlingError",
                                            "ProvisionedThroughputExceeded", "RequestLimitExceeded"})


def guard_item_key(account: str, key: str) -> str:
    """The guard item's key for event `key` of `account`: fixed-size whatever the ids' lengths."""
    digest = hashlib.sha256(f"{len(account)}:{account}|{key}".encode("utf-8", "surrogatepass")).hexdigest()
    return GUARD_PREFIX + digest


class PoisonRecord(PayloadFreeError):
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

    @cached_property
    def client(self):
        return self._client or boto3.client("dynamodb")

    def __call__(self, record: StreamRecord) -> None:
        where = f"record {record.shard_id}/{record.sequence_number}"
        payload: Any = record.json()
        if not isinstance(payload, dict) or payload.get("poison"):
            raise PoisonRecord(f"{where} is a poison record (not a JSON object, or marked poison)")
        account, amount = payload.get("account"), payload.get("amount")
        if not account or not isinstance(account, str):
            raise PoisonRecord(f"{where} needs a non-empty string 'account'")
        if account.startswith(GUARD_PREFIX) or len(account.encode("utf-8")) > ACCOUNT_MAX_BYTES:
            raise PoisonRecord(f"{where}: 'account' must not start with {GUARD_PREFIX!r} and must be at most "
                               f"{ACCOUNT_MAX_BYTES} bytes (a DynamoDB partition key)")
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
            self.client.transact_write_items(TransactItems=[
                {"Update": {"TableName": self.table_name, "Key": {"account": {"S": guard_item_key(account, guard)}},
                            "UpdateExpression": "SET #ttl = :expires",
                            "ConditionExpression": "attribute_not_exists(account)",
                            "ExpressionAttributeNames": {"#ttl": TTL_ATTRIBUTE},
                            "ExpressionAttributeValues": {":expires": {"N": str(int(time.time()) + GUARD_TTL_SECONDS)}}}},
                {"Update": {"TableName": self.table_name, "Key": {"account": {"S": account}},
                            "UpdateExpression": "ADD balance :amount, applied :one",
                            "ExpressionAttributeValues": values}},
            ])
        except self.client.exceptions.TransactionCanceledException as exc:
            reasons = [reason.get("Code") for reason in exc.response.get("CancellationReasons", [])]
            if reasons and reasons[0] == "ConditionalCheckFailed":
                return  # applied by an earlier attempt that died before it could say so
            if TRANSIENT_CANCELLATION_REASONS.intersection(reasons):
                # Another writer of the same account at the same moment: retry.py retries this code.
                raise TransientServiceError(f"{where}: the ledger write was cancelled ({', '.join(map(str, reasons))})"
                                            ) from None
            raise

    def _guard_key(self, record: StreamRecord, payload: dict) -> Optional[str]:
        """The key the ADD is made conditional on, or None for the plain ADD."""
        if self.guarded:
            return str(payload.get(BUSINESS_KEY_JMESPATH) or f"{record.shard_id}:{record.sequence_number}")
        if record.redelivered:
            return record.effect_key
        return None

    def guard_exists(self, account: str, key: str) -> bool:
        """Whether the event `key` of `account` has been applied (and its guard has not expired)."""
        return "Item" in self.client.get_item(TableName=self.table_name, ConsistentRead=True,
                                              Key={"account": {"S": guard_item_key(account, key)}})

    def balance(self, account: str) -> tuple[Decimal, int]:
        """(balance, number of events applied) for `account`."""
        item = self.client.get_item(TableName=self.table_name, Key={"account": {"S": account}},
                                    ConsistentRead=True).get("Item") or {}
        return (Decimal(item.get("balance", {}).get("N", "0")), int(item.get("applied", {}).get("N", "0")))
