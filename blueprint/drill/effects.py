"""Judging code the drill did not write by what it does: the writes a team's handler makes to AWS
through the SDK while it processes a record, attributed to that record.

The drill cannot read a team's ledger, so it watches effects: every successful write call a function
makes (DynamoDB puts, updates, deletes, batch and transactional writes; SQS sends; SNS publishes;
S3 puts; Kinesis puts; EventBridge events; Step Functions starts; asynchronous Lambda invokes), read
from the sandbox's journal of invocations. Each is attributed to the record it is about, by the
record's identifying values appearing in the call (a charge's tenant, employee, month and amount;
an event's id, account and amount): the record of the delivery whose values it holds most of, else
the only record of the delivery.

Across every delivery of a record (duplicates, retries after a crash, redrives):
- a write that accumulates (an ADD or `x = x + :v` update, a message sent or published without a
  deduplication id, a stream record, an event) landing in two deliveries is a duplicate effect;
- writes that overwrite (a put, a delete, a SET, a send with a deduplication id) are a duplicate
  effect only when the deliveries wrote different items (a row keyed by a fresh uuid per delivery);
  writing the same item again leaves the same state;
- a record that was handled (not parked) with no effect at all is lost.

Not effects: Powertools idempotency records (an item put with `status` INPROGRESS or COMPLETED and
an `expiration`, and that item's later update and delete) and sends to the component's own queues
(its failure lanes), which are how the pattern retries, not what the record asked for.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from integration_blueprint.sandbox.interception import Journal

# Powertools' idempotency record (aws_lambda_powertools.utilities.idempotency.persistence): its
# status values and the attribute holding its expiry.
_IDEMPOTENCY_STATUSES = {"INPROGRESS", "COMPLETED", "EXPIRED"}
_IDEMPOTENCY_EXPIRY = "expiration"

# An update expression that adds to what is there (ADD, SET a = a + :v, list_append) repeats its effect.
_ACCUMULATING_UPDATE = re.compile(r"\bADD\b|=\s*[^,=]*?[+-]\s*[:#\w]|list_append", re.IGNORECASE)


@dataclass(frozen=True)
class Effect:
    operation: str  # the API operation ("UpdateItem")
    target: str  # the table, queue, topic, bucket, stream, bus, state machine or function
    identity: str  # what it writes: an item's key, an object key, a dedup id (or the message itself)
    accumulates: bool  # doing it again changes the state again
    text: str = field(default="", compare=False, repr=False)  # what attribution searches

    def describe(self) -> str:
        kind = "adds again" if self.accumulates else "overwrites"
        return f"{self.operation} {_short(self.target)} {_short(self.identity, 60)} ({kind})"


def _short(value: str, limit: int = 40) -> str:
    value = value.rsplit("/", 1)[-1] if value.startswith(("https://", "arn:")) else value
    return value if len(value) <= limit else value[:limit - 3] + "..."


def _text(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, default=_bytes_text)
    except (TypeError, ValueError, RecursionError):
        return str(value)


def _bytes_text(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value[:65_536]).decode("utf-8", "replace")
    return str(value)


def _item_key(item: dict, key_attributes: tuple[str, ...]) -> str:
    return _key_text({name: item.get(name) for name in key_attributes} if key_attributes else item)


def _key_text(key: Any) -> str:
    """A DynamoDB key as a person reads it: `pk=tenant-0001, sk=balance`."""
    if not isinstance(key, dict):
        return _text(key)
    parts = []
    for name, value in sorted(key.items()):
        shown = next(iter(value.values())) if isinstance(value, dict) and len(value) == 1 else value
        parts.append(f"{name}={shown if isinstance(shown, str) else _text(shown)}")
    return ", ".join(parts)


class EffectLog:
    """Every write functions made while the drill watched, by record and delivery."""

    def __init__(self, key_schema: dict[str, tuple[str, ...]], plumbing: Iterable[str] = (),
                 find: Optional[Callable[[str], Optional[str]]] = None):
        self.key_schema = key_schema  # table name -> its key attributes (hash, range)
        self.plumbing = set(plumbing)  # targets that are the pattern's own lanes, not effects
        self.find = find  # the record a write's text names, among all the drill sent (None: unknown)
        self.idempotency_tables: set[str] = set()  # tables Powertools keeps idempotency records in
        self.idempotency_records: set[tuple[str, str]] = set()  # (table, key) of each such record
        # record id -> delivery number -> effects made for that record in that delivery
        self.by_record: dict[str, dict[int, list[Effect]]] = defaultdict(lambda: defaultdict(list))
        self.unattributed: list[Effect] = []
        self.touched: set[str] = set()  # records of a delivery that made a write no record could claim

    def read(self, journal: Journal, function: str,
             identify: Callable[[Any], dict[str, tuple[str, ...]]]) -> None:
        """Every invocation of `function` in the sandbox's journal, each a delivery of the records
        `identify(event)` names (record id -> values identifying it), and the writes it made."""
        for delivery, invocation in enumerate(journal.invocations):
            if invocation.function != function:
                continue
            records = identify(invocation.event)
            for call in invocation.calls:
                self.record(delivery, records, call.operation, call.params)

    def record(self, delivery: int, records: dict[str, tuple[str, ...]], operation: str, params: dict) -> None:
        """One successful call made in a delivery of `records`."""
        for effect in self.effects_of(operation, params):
            if effect.target in self.plumbing or (effect.target, effect.identity) in self.idempotency_records:
                continue
            owner = self._owner(effect, records)
            if owner is not None:
                self.by_record[owner][delivery].append(effect)
            else:
                self.unattributed.append(effect)
                self.touched.update(records)

    def _owner(self, effect: Effect, records: dict[str, tuple[str, ...]]) -> Optional[str]:
        """The record of the delivery whose identifying values the write holds most of (a tie is no
        answer); the only record of a delivery of one; else the record the write names among all."""
        scores = {record: sum(1 for v in values if v and v in effect.text) for record, values in records.items()}
        best = max(scores.values(), default=0)
        leaders = [record for record, score in scores.items() if score == best]
        if best > 0 and len(leaders) == 1:
            return leaders[0]
        if len(records) == 1:
            return next(iter(records))
        if best == 0 and self.find is not None:  # a lane whose events name no record (by reference)
            return self.find(effect.text)
        return None

    def effects_of(self, operation: str, params: dict) -> list[Effect]:
        """The writes one successful call made (none for a read)."""
        extract = _EXTRACTORS.get(operation)
        return extract(self, params) if extract is not None else []

    # ---- DynamoDB ----------------------------------------------------------------------------------

    def _put(self, table: str, item: dict) -> Effect:
        identity = _item_key(item, self.key_schema.get(table, ()))
        status = item.get("status")
        if isinstance(status, dict) and status.get("S") in _IDEMPOTENCY_STATUSES and _IDEMPOTENCY_EXPIRY in item:
            # Powertools' record: bookkeeping, as are its later update and delete (same key), even
            # in a table that also holds the team's own items.
            self.idempotency_tables.add(table)
            self.idempotency_records.add((table, identity))
        return Effect("PutItem", table, identity, False, _text(item))

    def _update(self, table: str, key: dict, expression: str, values: Any, operation="UpdateItem") -> Effect:
        return Effect(operation, table, _key_text(key), bool(_ACCUMULATING_UPDATE.search(expression or "")),
                      _text([key, values]))

    def _dynamodb_put(self, params: dict) -> list[Effect]:
        return [self._put(params.get("TableName", ""), params.get("Item") or {})]

    def _dynamodb_update(self, params: dict) -> list[Effect]:
        return [self._update(params.get("TableName", ""), params.get("Key") or {}, params.get("UpdateExpression", ""),
                             params.get("ExpressionAttributeValues"))]

    def _dynamodb_delete(self, params: dict) -> list[Effect]:
        key = params.get("Key") or {}
        return [Effect("DeleteItem", params.get("TableName", ""), _key_text(key), False, _text(key))]

    def _dynamodb_batch(self, params: dict) -> list[Effect]:
        effects = []
        for table, requests in (params.get("RequestItems") or {}).items():
            for request in requests:
                if "PutRequest" in request:
                    effects.append(self._put(table, request["PutRequest"].get("Item") or {}))
                elif "DeleteRequest" in request:
                    key = request["DeleteRequest"].get("Key") or {}
                    effects.append(Effect("DeleteItem", table, _key_text(key), False, _text(key)))
        return effects

    def _dynamodb_transaction(self, params: dict) -> list[Effect]:
        effects = []
        for entry in params.get("TransactItems") or []:
            if "Put" in entry:
                effects.append(self._put(entry["Put"].get("TableName", ""), entry["Put"].get("Item") or {}))
            elif "Update" in entry:
                update = entry["Update"]
                effects.append(self._update(update.get("TableName", ""), update.get("Key") or {},
                                            update.get("UpdateExpression", ""),
                                            update.get("ExpressionAttributeValues"), "TransactWriteItems"))
            elif "Delete" in entry:
                key = entry["Delete"].get("Key") or {}
                effects.append(Effect("DeleteItem", entry["Delete"].get("TableName", ""), _key_text(key), False,
                                      _text(key)))
        return effects

    # ---- messages, objects, events ----------------------------------------------------------------

    @staticmethod
    def _message(operation: str, target: str, entry: dict, body_field: str) -> Effect:
        body = entry.get(body_field, "")
        deduplication = entry.get("MessageDeduplicationId")
        if deduplication:  # AWS drops a repeat with the same id for 5 minutes: it overwrites
            return Effect(operation, target, str(deduplication), False, _text(entry))
        return Effect(operation, target, _text(body), True, _text(entry))

    def _sqs_send(self, params: dict) -> list[Effect]:
        return [self._message("SendMessage", params.get("QueueUrl", ""), params, "MessageBody")]

    def _sqs_send_batch(self, params: dict) -> list[Effect]:
        return [self._message("SendMessage", params.get("QueueUrl", ""), entry, "MessageBody")
                for entry in params.get("Entries") or []]

    def _sns_publish(self, params: dict) -> list[Effect]:
        target = params.get("TopicArn") or params.get("TargetArn") or params.get("PhoneNumber", "")
        return [self._message("Publish", target, params, "Message")]

    def _sns_publish_batch(self, params: dict) -> list[Effect]:
        return [self._message("Publish", params.get("TopicArn", ""), entry, "Message")
                for entry in params.get("PublishBatchRequestEntries") or []]

    def _s3_put(self, params: dict) -> list[Effect]:
        target, key = params.get("Bucket", ""), params.get("Key", "")
        return [Effect("PutObject", target, key, False, _text([key, params.get("Body"), params.get("Metadata")]))]

    def _s3_copy(self, params: dict) -> list[Effect]:
        target, key = params.get("Bucket", ""), params.get("Key", "")
        return [Effect("CopyObject", target, key, False, _text([key, params.get("CopySource")]))]

    def _s3_delete(self, params: dict) -> list[Effect]:
        target, key = params.get("Bucket", ""), params.get("Key", "")
        return [Effect("DeleteObject", target, key, False, key)]

    def _kinesis_put(self, params: dict) -> list[Effect]:
        entries = params.get("Records") or [params]
        target = params.get("StreamName") or params.get("StreamARN", "")
        return [Effect("PutRecord", target, _text(e.get("Data")), True, _text(e)) for e in entries]

    def _events_put(self, params: dict) -> list[Effect]:
        return [Effect("PutEvents", e.get("EventBusName") or "default", _text(e.get("Detail")), True, _text(e))
                for e in params.get("Entries") or []]

    def _start_execution(self, params: dict) -> list[Effect]:
        target, name = params.get("stateMachineArn", ""), params.get("name")
        # An execution name is unique per state machine for 90 days: starting it again is refused.
        return [Effect("StartExecution", target, name or _text(params.get("input")), not name, _text(params))]

    def _lambda_invoke(self, params: dict) -> list[Effect]:
        return [Effect("Invoke", params.get("FunctionName", ""), _text(params.get("Payload")), True, _text(params))]


# What each write operation did, by operation (a read has none). Every extractor is a method, so the
# DynamoDB ones can use the table keys and the idempotency records seen so far.
_EXTRACTORS: dict[str, Callable[[EffectLog, dict], list[Effect]]] = {
    "PutItem": EffectLog._dynamodb_put,
    "UpdateItem": EffectLog._dynamodb_update,
    "DeleteItem": EffectLog._dynamodb_delete,
    "BatchWriteItem": EffectLog._dynamodb_batch,
    "TransactWriteItems": EffectLog._dynamodb_transaction,
    "SendMessage": EffectLog._sqs_send,
    "SendMessageBatch": EffectLog._sqs_send_batch,
    "Publish": EffectLog._sns_publish,
    "PublishBatch": EffectLog._sns_publish_batch,
    "PutObject": EffectLog._s3_put,
    "CopyObject": EffectLog._s3_copy,
    "DeleteObject": EffectLog._s3_delete,
    "PutRecord": EffectLog._kinesis_put,
    "PutRecords": EffectLog._kinesis_put,
    "PutEvents": EffectLog._events_put,
    "StartExecution": EffectLog._start_execution,
    "Invoke": EffectLog._lambda_invoke,
}


# Every operation that writes (an effect or a lane's send): where a crash can fall (sandbox/faults.py).
WRITE_OPERATIONS = frozenset(_EXTRACTORS)


@dataclass
class Verdict:
    """What the effects say about the records the drill sent."""

    once: set = field(default_factory=set)  # records whose effect landed exactly once
    duplicated: dict = field(default_factory=dict)  # record -> what landed twice
    without_effect: set = field(default_factory=set)  # records no delivery wrote anything for

    def examples(self, limit: int = 3) -> list[str]:
        return [f"{record}: {why}" for record, why in sorted(self.duplicated.items())[:limit]]


def judge(log: EffectLog, records: Iterable[str]) -> Verdict:
    """Each record's effects across all its deliveries (see the module docstring)."""
    verdict = Verdict()
    for record in records:
        deliveries = {number: effects for number, effects in log.by_record.get(record, {}).items() if effects}
        if not deliveries:
            if record not in log.touched:  # it may own a write that could not be pinned on one record
                verdict.without_effect.add(record)
            continue
        why = _duplicated(deliveries)
        if why:
            verdict.duplicated[record] = why
        else:
            verdict.once.add(record)
    return verdict


def _duplicated(deliveries: dict[int, list[Effect]]) -> Optional[str]:
    if len(deliveries) < 2:
        return None
    # An accumulating write to the same place in two deliveries: the same item's counter, or any
    # message to the same queue or topic (its body may differ by a timestamp; it is still sent twice).
    seen: dict[tuple, int] = {}
    for effects in deliveries.values():
        places = {_place(e): e for e in effects if e.accumulates}
        for place, effect in places.items():
            seen[place] = seen.get(place, 0) + 1
            if seen[place] == 2:
                return f"{effect.describe()} landed in {len(deliveries)} deliveries"
    # Overwrites: more distinct items across deliveries than any one delivery writes means new rows.
    written = [{(e.operation, e.target, e.identity) for e in effects if not e.accumulates}
               for effects in deliveries.values()]
    union = set().union(*written)
    if len(union) > max(len(w) for w in written):
        sample = sorted(union)[:2]
        return (f"{len(deliveries)} deliveries wrote {len(union)} different items where one delivery writes "
                f"{max(len(w) for w in written)}, e.g. {'; '.join(f'{o} {_short(t)} {_short(i, 60)}' for o, t, i in sample)}")
    return None


def _place(effect: Effect) -> tuple:
    keyed = effect.operation in ("UpdateItem", "TransactWriteItems")
    return (effect.operation, effect.target, effect.identity if keyed else "")
