"""Judging a run by its outcome: the final state of everything the functions wrote, after the
faulted run, against a reference run of the same code on the same records, each delivered once in
the lane's order with no faults (the runner runs it in a fresh sandbox of the same stack).

What is compared (`snapshot`), for every place a function wrote to in either run (its journal):
- DynamoDB: every item of each table written to;
- S3: each object written (its body);
- SQS: the messages left in each queue sent to (bodies and counts), the component's own lanes aside;
- SNS, EventBridge, Kinesis, Step Functions starts and asynchronous invokes: the successful puts, as
  the journal recorded them (a repeat with the same deduplication id or execution name counts once,
  as AWS drops it).

Fields that differ between two runs by nature are recognised and named, never dropped silently:
time-like values (ISO timestamps, epoch seconds or milliseconds of this century), generated ids
(UUIDs, 32-hex tokens), a table's TTL attribute, and Powertools' idempotency bookkeeping (the
record's `status`, `expiration`, `in_progress_expiration`). They are compared as their kind
(`<time>`, `<uuid>`), so a row written twice with two timestamps is one row, and a row keyed by a
fresh uuid per delivery is two.

A place that differs names the records whose ids its values hold (`records_in`), and, with the
effect log of the team's code (drill/effects.py), the records that wrote to it in several
deliveries. An item or object whose value in the faulted run is one the reference run also wrote
to it (a put of an earlier record) depends on delivery order (the last writer wins): reported as
such, not as a duplicate.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable, Iterable, Optional

from boto3.dynamodb.types import TypeDeserializer

from integration_blueprint.drill.effects import EffectLog
from integration_blueprint.sandbox.interception import Journal

# Powertools' idempotency record (aws_lambda_powertools.utilities.idempotency.persistence.dynamodb):
# the attributes its layer rewrites on every attempt, and the statuses that mark an item as one.
POWERTOOLS_BOOKKEEPING = ("status", "expiration", "in_progress_expiration")
_POWERTOOLS_STATUSES = {"INPROGRESS", "COMPLETED", "EXPIRED"}

# Epoch times of this century's first half, in seconds or milliseconds: 2001-09-09 .. 2096-10-02.
_EPOCH_SECONDS = (1_000_000_000, 4_000_000_000)
_VOLATILE_TEXT = (
    ("time", re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")),
    ("generated id", re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")),
    ("generated id", re.compile(r"\b[0-9a-f]{32}\b")),
    ("time", re.compile(r"(?<![\w.])[1-3]\d{9}(?:\d{3})?(?:\.\d+)?(?![\w.])")),
)
# Bodies above this are compared by their SHA-256.
OBJECT_TEXT_LIMIT = 65_536
# How many differing places the report shows (the count says how many more).
SHOWN = 4

_DYNAMODB = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}
_S3 = {"PutObject", "CopyObject", "DeleteObject"}
_SQS = {"SendMessage", "SendMessageBatch"}


@dataclass
class Volatile:
    """Fields compared as their kind, by place: {'table order-totals': {'updated_at': 'time'}}."""

    fields: dict = field(default_factory=lambda: defaultdict(dict))

    def note(self, place: str, name: str, kind: str) -> None:
        self.fields[place].setdefault(name, kind)

    def describe(self) -> str:
        return "; ".join(f"{place}: " + ", ".join(f"{name} ({kind})" for name, kind in sorted(names.items()))
                         for place, names in sorted(self.fields.items()))


@dataclass
class Outcome:
    """The final state of one run: place ('table X', 'bucket Y', 'queue Z', 'topic T') -> key ->
    the values found there (one for an item or object; each message's body for a queue)."""

    places: dict = field(default_factory=dict)
    # What the run's puts wrote to each item or object on the way (for telling an order dependency).
    history: dict = field(default_factory=lambda: defaultdict(set))
    bookkeeping: set = field(default_factory=set)  # (place, key) of each Powertools idempotency record
    volatile: Volatile = field(default_factory=Volatile)


def normalized(value: Any, place: str, name: str, volatile: Volatile, ttl: str = "") -> Any:
    """`value` with what differs between runs by nature replaced by its kind, noting each field so
    treated under `place`."""
    if isinstance(value, dict):
        return {k: normalized(v, place, k if not name else f"{name}.{k}", volatile, ttl) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalized(v, place, name, volatile, ttl) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(json.dumps(normalized(v, place, name, volatile, ttl), sort_keys=True, default=str) for v in value)
    if ttl and name == ttl:
        volatile.note(place, name, "TTL")
        return "<ttl>"
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float, Decimal)):
        number = float(value)
        if _EPOCH_SECONDS[0] <= number < _EPOCH_SECONDS[1] or _EPOCH_SECONDS[0] * 1000 <= number < _EPOCH_SECONDS[1] * 1000:
            volatile.note(place, name or "value", "time")
            return "<time>"
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8", "replace")
    text = str(value)
    for kind, pattern in _VOLATILE_TEXT:
        text, count = pattern.subn(f"<{kind}>", text)
        if count:
            volatile.note(place, name or "value", kind)
    return text


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


class Snapshot:
    """Reads the final state of a sandbox: the places its functions wrote to (from its journal)."""

    def __init__(self, sandbox: Any, plumbing: Iterable[str] = ()):
        self.sandbox = sandbox
        self.plumbing = {_name(p) for p in plumbing}  # the component's own queues: how it retries
        recorded_tables = sandbox.recorded.of_type("aws:dynamodb/table:Table")
        self.keys = {r.outputs["name"]: tuple(k for k in (r.inputs.get("hashKey"), r.inputs.get("rangeKey")) if k)
                     for r in recorded_tables}
        self.ttl = {r.outputs["name"]: ((r.inputs.get("ttl") or {}).get("attributeName") or "")
                    for r in recorded_tables if (r.inputs.get("ttl") or {}).get("enabled")}

    def take(self, journal: Journal) -> Outcome:
        outcome = Outcome()
        log = EffectLog(self.keys)
        tables: set[str] = set()
        objects: set[tuple[str, str]] = set()
        queues: set[str] = set()
        messages: dict[str, Counter] = defaultdict(Counter)
        for invocation in journal.invocations:
            for call in invocation.calls:
                for effect in log.effects_of(call.operation, call.params):
                    if call.operation in _DYNAMODB:
                        tables.add(effect.target)
                        self._remember_put(outcome, effect.target, call.operation, call.params)
                    elif call.operation in _S3:
                        objects.add((effect.target, effect.identity))
                        if call.operation == "PutObject":
                            place = f"bucket {effect.target}"
                            body = normalized(_body_text(call.params.get("Body")), place, "body", Volatile())
                            outcome.history[(place, effect.identity)].add(canonical(body))
                    elif call.operation in _SQS:
                        if _name(effect.target) not in self.plumbing:
                            queues.add(effect.target)
                    elif effect.accumulates:
                        messages[f"{_KINDS.get(call.operation, 'target')} {_name(effect.target)}"][effect.text] += 1
                    else:  # a deduplication id or an execution name: AWS takes it once
                        messages[f"{_KINDS.get(call.operation, 'target')} {_name(effect.target)}"][effect.identity] = 1
        for table in sorted(tables):
            outcome.places[f"table {table}"] = self._items(table, outcome.volatile, outcome.bookkeeping)
        for bucket, key in sorted(objects):
            found = self._object(bucket, key)
            if found is not None:
                place = f"bucket {bucket}"
                key_text = normalized(key, place, "key", outcome.volatile)
                outcome.places.setdefault(place, defaultdict(list))[key_text].append(
                    normalized(found, place, "body", outcome.volatile))
        for queue in sorted(queues):
            outcome.places[f"queue {_name(queue)}"] = self._messages(queue, outcome.volatile)
        for place, counted in sorted(messages.items()):
            bodies: dict = defaultdict(list)
            for text, count in counted.items():
                bodies[""].extend([normalized(text, place, "message", outcome.volatile)] * count)
            outcome.places[place] = bodies
        return outcome

    def _remember_put(self, outcome: Outcome, table: str, operation: str, params: dict) -> None:
        if operation != "PutItem":
            return
        place, item = f"table {table}", _plain(params.get("Item") or {})
        key, value = self._item_entry(table, item, Volatile())
        outcome.history[(place, key)].add(canonical(value))

    def _item_entry(self, table: str, item: dict, volatile: Volatile) -> tuple[str, Any]:
        place = f"table {table}"
        key_names = self.keys.get(table, ())
        bookkeeping = (item.get("status") in _POWERTOOLS_STATUSES and "expiration" in item)
        shown = {}
        for name, value in item.items():
            if bookkeeping and name in POWERTOOLS_BOOKKEEPING:
                volatile.note(place, name, "Powertools idempotency bookkeeping")
                continue
            shown[name] = value
        key = ", ".join(f"{name}={normalized(item.get(name), place, name, volatile)}" for name in key_names)
        return key, normalized(shown, place, "", volatile, self.ttl.get(table, ""))

    def _items(self, table: str, volatile: Volatile, bookkeeping: set) -> dict:
        ddb = self.sandbox.emulator.client("dynamodb", self.sandbox.session)
        found: dict = defaultdict(list)
        for page in ddb.get_paginator("scan").paginate(TableName=table):
            for raw in page.get("Items", []):
                item = _plain(raw)
                key, value = self._item_entry(table, item, volatile)
                found[key].append(value)
                if item.get("status") in _POWERTOOLS_STATUSES and "expiration" in item:
                    bookkeeping.add((f"table {table}", key))
        return found

    def _object(self, bucket: str, key: str) -> Optional[str]:
        s3 = self.sandbox.emulator.client("s3", self.sandbox.session)
        try:
            body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        except Exception:  # noqa: BLE001 - deleted (or never there): absent is the outcome
            return None
        return _body_text(body)

    def _messages(self, queue_url: str, volatile: Volatile) -> dict:
        sqs = self.sandbox.sqs
        place = f"queue {_name(queue_url)}"
        try:
            url = sqs.get_queue_url(QueueName=_name(queue_url))["QueueUrl"]
        except Exception:  # noqa: BLE001 - not in the sandbox: nothing was left there
            return {}
        bodies: dict = defaultdict(list)
        while True:
            batch = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=300).get("Messages", [])
            if not batch:
                return bodies
            for message in batch:
                bodies[""].append(normalized(message["Body"], place, "message", volatile))
            sqs.delete_message_batch(QueueUrl=url, Entries=[
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(batch)])


_KINDS = {"Publish": "topic", "PublishBatch": "topic", "PutEvents": "event bus", "PutRecord": "stream",
          "PutRecords": "stream", "StartExecution": "state machine", "Invoke": "function"}


def _name(target: str) -> str:
    """A queue URL, topic or stream ARN as its last part (the name)."""
    return re.split(r"[/:]", target)[-1] if target.startswith(("https://", "http://", "arn:")) else target


def _plain(item: dict) -> dict:
    deserializer = TypeDeserializer()
    try:
        return {name: deserializer.deserialize(value) for name, value in item.items()}
    except (TypeError, ValueError, AttributeError):
        return item


def _body_text(body: Any) -> str:
    if hasattr(body, "read"):
        body = body.read()
    if isinstance(body, str):
        body = body.encode()
    data = bytes(body or b"")
    if len(data) > OBJECT_TEXT_LIMIT:
        return "sha256:" + hashlib.sha256(data).hexdigest()
    return data.decode("utf-8", "replace")


@dataclass
class Difference:
    place: str
    key: str
    here: list  # the values found after the faulted run
    reference: list  # the values the reference run left
    records: list = field(default_factory=list)  # the records whose ids the values hold
    writers: str = ""  # what the effect log says wrote there (records and deliveries)
    order_dependent: bool = False

    def describe(self) -> str:
        where = f"{self.place} {self.key}".strip()
        if self.order_dependent:
            what = f"holds {_excerpt(self.here[0])}, an earlier record's value in the reference run's order"
        elif self.key and len(self.here) == 1 and len(self.reference) == 1:
            what = _field_diff(self.here[0], self.reference[0])
        elif not self.reference:
            what = f"{len(self.here)} written here, absent from the reference run: {_excerpt(self.here[0])}"
        elif not self.here:
            what = f"absent here, {len(self.reference)} in the reference run: {_excerpt(self.reference[0])}"
        else:
            extra = Counter(canonical(v) for v in self.here) - Counter(canonical(v) for v in self.reference)
            missing = Counter(canonical(v) for v in self.reference) - Counter(canonical(v) for v in self.here)
            what = f"{len(self.here)} here, {len(self.reference)} in the reference run"
            if extra:
                text, count = extra.most_common(1)[0]
                what += f"; e.g. {count} more of {_excerpt(json.loads(text))}"
            elif missing:
                text, count = missing.most_common(1)[0]
                what += f"; e.g. {count} fewer of {_excerpt(json.loads(text))}"
        named = f" (records {', '.join(self.records[:4])}{' ...' if len(self.records) > 4 else ''})" if self.records else ""
        return f"{where}: {what}{named}{'; ' + self.writers if self.writers else ''}"


def _excerpt(value: Any, limit: int = 90) -> str:
    text = value if isinstance(value, str) else canonical(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _field_diff(here: Any, reference: Any) -> str:
    if isinstance(here, dict) and isinstance(reference, dict):
        changed = [name for name in sorted(set(here) | set(reference)) if here.get(name) != reference.get(name)]
        return ", ".join(f"{name} {_excerpt(here.get(name), 40)} here, {_excerpt(reference.get(name), 40)} in the "
                         "reference run" for name in changed[:3])
    return f"{_excerpt(here)} here, {_excerpt(reference)} in the reference run"


@dataclass
class Comparison:
    """The faulted run's outcome against the reference run's."""

    differences: list = field(default_factory=list)  # Difference, not order-dependent
    order_dependent: list = field(default_factory=list)  # Difference whose outcome is an earlier record's
    # Items one run left and the other not that hold nothing but their key and values of a kind
    # (a guard or Powertools record a retry path writes): bookkeeping, named.
    markers: list = field(default_factory=list)
    places: int = 0  # how many places were compared
    volatile: str = ""  # the fields compared as their kind, named

    @property
    def records(self) -> list[str]:
        return sorted({r for d in self.differences for r in d.records})

    def notes(self) -> list[str]:
        notes = [f"outcome compared with a reference run (each record once, in the lane's order, no faults): "
                 f"{self.places} place(s), {len(self.differences)} differ"
                 + (f", {len(self.order_dependent)} depend on delivery order" if self.order_dependent else "")]
        if self.differences:
            records = self.records
            notes.append(f"final state differs from the reference run: {len(self.differences)} place(s)"
                         + (f", records {', '.join(records[:6])}{' ...' if len(records) > 6 else ''}" if records else "")
                         + ": " + " | ".join(d.describe() for d in self.differences[:SHOWN])
                         + (f" | and {len(self.differences) - SHOWN} more" if len(self.differences) > SHOWN else ""))
        if self.order_dependent:
            notes.append("outcome depends on delivery order (the last writer wins, not a duplicate): "
                         + " | ".join(d.describe() for d in self.order_dependent[:SHOWN]))
        if self.markers:
            places = Counter(d.place for d in self.markers)
            notes.append("bookkeeping items only one run left (their key and times only, or Powertools records: "
                         "how a retry path marks what it applied), not compared: "
                         + ", ".join(f"{count} in {place}" for place, count in sorted(places.items())))
        if self.volatile:
            notes.append(f"compared as their kind (they differ between runs by nature): {self.volatile}")
        return notes


def compare(here: Outcome, reference: Outcome, records_in: Callable[[str], list[str]],
            log: Optional[EffectLog] = None) -> Comparison:
    """Every place either run wrote, key by key (see the module docstring)."""
    comparison = Comparison()
    places = sorted(set(here.places) | set(reference.places))
    comparison.places = len(places)
    for place in places:
        mine, theirs = here.places.get(place, {}), reference.places.get(place, {})
        for key in sorted(set(mine) | set(theirs)):
            a, b = list(mine.get(key, [])), list(theirs.get(key, []))
            if Counter(canonical(v) for v in a) == Counter(canonical(v) for v in b):
                continue
            difference = Difference(place, key, a, b)
            difference.records = _records(records_in, a, b, key)
            # Only the differences the report shows are explained (it reads every record's effects).
            shown = len(comparison.differences) < SHOWN
            difference.writers = _writers(log, place, key) if log is not None and shown else ""
            if _bookkeeping_only(place, key, a or b, here.bookkeeping | reference.bookkeeping) and not (a and b):
                comparison.markers.append(difference)
            elif key and len(a) == 1 and canonical(a[0]) in reference.history.get((place, key), set()):
                difference.order_dependent = True
                comparison.order_dependent.append(difference)
            else:
                comparison.differences.append(difference)
    volatile = Volatile()
    for source in (here.volatile, reference.volatile):
        for place, names in source.fields.items():
            for name, kind in names.items():
                volatile.note(place, name, kind)
    comparison.volatile = volatile.describe()
    return comparison


# What `varying` puts for a place whose keys differ between two clean runs: its values are compared
# as a multiset, whatever key each has.
ANY_KEY = "<any key>"
VARIES = "<varies>"


def varying(first: Outcome, second: Outcome) -> dict[str, set[str]]:
    """By place, what differs between two clean reference runs of the same records: the fields of
    items with the same key (or the whole value: a body), ANY_KEY when the keys themselves differ."""
    found: dict[str, set[str]] = defaultdict(set)
    for place in set(first.places) & set(second.places):
        a, b = first.places[place], second.places[place]
        if set(a) != set(b):
            found[place].add(ANY_KEY)
        for key in set(a) & set(b):
            for one, other in zip(sorted(a[key], key=canonical), sorted(b[key], key=canonical)):
                if one == other:
                    continue
                if isinstance(one, dict) and isinstance(other, dict):
                    found[place].update(name for name in set(one) | set(other) if one.get(name) != other.get(name))
                else:
                    found[place].add(VARIES)
    return dict(found)


def masked(outcome: Outcome, varies: dict[str, set[str]]) -> Outcome:
    """`outcome` with what varies between clean runs compared as VARIES (and named as such)."""
    result = Outcome(places={}, history=outcome.history, bookkeeping=outcome.bookkeeping, volatile=Volatile())
    for place, names in outcome.volatile.fields.items():
        for name, kind in names.items():
            result.volatile.note(place, name, kind)
    for place, keyed in outcome.places.items():
        what = varies.get(place, set())
        entries: dict = defaultdict(list)
        for key, values in keyed.items():
            for value in values:
                if VARIES in what:
                    value = VARIES
                elif isinstance(value, dict) and what:
                    value = {name: (VARIES if name in what else v) for name, v in value.items()}
                entries["" if ANY_KEY in what else key].append(value)
        for name in what:
            shown = {ANY_KEY: "key", VARIES: "value"}.get(name, name)
            result.volatile.note(place, shown, "differs between two clean reference runs")
        result.places[place] = entries
    return result


def _bookkeeping_only(place: str, key: str, values: list, bookkeeping: set) -> bool:
    """An item that is a Powertools record, or holds only its key and values compared as their kind."""
    if not place.startswith("table ") or not key:
        return False
    if (place, key) in bookkeeping:
        return True
    key_names = {part.split("=", 1)[0] for part in key.split(", ")}
    return all(isinstance(value, dict) and all(
        name in key_names or (isinstance(v, str) and v.startswith("<") and v.endswith(">")) for name, v in value.items())
        for value in values)


def _records(records_in: Callable[[str], list[str]], here: list, reference: list, key: str) -> list[str]:
    """The records a differing place names: those whose values differ between the runs (or, for a
    count, that are there a different number of times), else those its key names."""
    extra = (Counter(canonical(v) for v in here) - Counter(canonical(v) for v in reference)) \
        + (Counter(canonical(v) for v in reference) - Counter(canonical(v) for v in here))
    found = set(records_in(key))
    for text in extra:
        found.update(records_in(text))
    return sorted(found)


def _writers(log: EffectLog, place: str, key: str) -> str:
    """The records the team's code wrote to `place` for in more than one delivery, and how often."""
    target = place.split(" ", 1)[1]
    counts = {}
    for record, deliveries in log.by_record.items():
        hits = [n for n, effects in deliveries.items()
                if any(_name(e.target) == target and (not key or _same_key(e.identity, key)) for e in effects)]
        if len(hits) > 1:
            counts[record] = len(hits)
    if not counts:
        return ""
    shown = ", ".join(f"{record} ({n} deliveries)" for record, n in sorted(counts.items())[:4])
    return f"written for {shown}{' ...' if len(counts) > 4 else ''}"


def _same_key(identity: str, key: str) -> bool:
    """An effect's identity (`pk=acct-1, sk=total`, sorted by name) and a snapshot key (in key order)."""
    return sorted(p.strip() for p in identity.split(",")) == sorted(p.strip() for p in key.split(","))


def judge_outcome(report: Any, driver: Any, here: Outcome, reference: Outcome,
                  reference_again: Optional[Callable[[], Outcome]] = None) -> Comparison:
    """The faulted run's outcome against the reference run's, into the pattern's report (a
    difference fails it; one that depends on delivery order is counted apart). When they differ and
    `reference_again` is given, a second clean reference run is the evidence for what varies by
    nature: what differs between the two clean runs is compared as `<varies>` and named."""
    comparison = compare(here, reference, driver.records_in, driver.effect_log_of_run())
    if comparison.differences and reference_again is not None:
        varies = varying(reference, reference_again())
        if varies:
            comparison = compare(masked(here, varies), masked(reference, varies), driver.records_in,
                                 driver.effect_log_of_run())
    report.outcome_differences = len(comparison.differences)
    report.order_dependent = len(comparison.order_dependent)
    report.notes.extend(comparison.notes())
    return comparison
