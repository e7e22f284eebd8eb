"""Judging a run by its outcome: the final state of the whole emulator after the faulted run, against
a reference run of the same code on the same records, each delivered once in the lane's order with
no faults (the runner runs it in a fresh sandbox of the same stack).

What is compared (`Snapshot`): the emulator's whole world, read from its own state (drill/world.py):
every table's items, every bucket's objects, the messages left in every queue, the records of every
stream, what every topic was sent, every state machine's executions, every function and mapping,
each resource's settings (a queue's redrive, a mapping's batch size) and whatever any other service
holds (SES's sent messages, a Firehose stream, a queue or a function a handler created). Nothing
depends on knowing which operation wrote: a PartiQL INSERT is an item like any other. Beside it,
from the journal, the events put on EventBridge buses (delivered, not stored: the emulator keeps
none).

Set aside, each named in one place:
- world.SET_ASIDE: fields that count deliveries (receipt handles, sequence numbers, receive counts)
  or are derived from what is compared (item and message counts);
- world.DRIVEN: the contents of what the drill itself feeds (its streams, the component's lanes,
  the executions it starts), their settings compared;
- BOOKKEEPING: Powertools' idempotency records (the runtime's own are Powertools records too),
  whichever run has them, counted in the report.

Fields that differ between two runs by nature are compared as their kind and named, never dropped
silently: time-like values (ISO timestamps, epoch seconds or milliseconds of this century),
generated ids (UUIDs, 32-hex tokens), a table's TTL attribute. So a row written twice with two
timestamps is one row, and a row keyed by a fresh uuid per delivery is two.

A place that differs names the records whose ids its values hold (`records_in`), and, with the
effect log of the team's code (drill/effects.py), the records that wrote to it in several
deliveries. An item or object whose value in the faulted run is one the reference run also wrote
to it (a put of an earlier record) depends on delivery order (the last writer wins): reported as
such, not as a duplicate.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable, Iterable, Optional

from boto3.dynamodb.types import TypeDeserializer

from integration_blueprint.drill.effects import EffectLog
from integration_blueprint.drill.world import INFRASTRUCTURE, SETTINGS, body_text, read_world
from integration_blueprint.sandbox.interception import Journal

# Powertools' idempotency record (aws_lambda_powertools.utilities.idempotency.persistence.dynamodb):
# an item with one of its statuses and an expiry. How the layer claims a record, not what the record
# asked for: set aside whichever run has it, and however many (a key hashed from the whole event
# makes one per delivery).
_POWERTOOLS_STATUSES = {"INPROGRESS", "COMPLETED", "EXPIRED"}
_POWERTOOLS_EXPIRY = "expiration"
BOOKKEEPING = "Powertools idempotency records (the handler runtime's own included)"

# Epoch times of this century's first half, in seconds or milliseconds: 2001-09-09 .. 2096-10-02.
_EPOCH_SECONDS = (1_000_000_000, 4_000_000_000)
_VOLATILE_TEXT = (
    ("time", re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")),
    ("generated id", re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")),
    ("generated id", re.compile(r"\b[0-9a-f]{32}\b")),
    ("time", re.compile(r"(?<![\w.])[1-3]\d{9}(?:\d{3})?(?:\.\d+)?(?![\w.])")),
    # Firehose's S3 object names: <prefix>YYYY/MM/DD/HH/<stream>-<version>-YYYY-MM-DD-HH-MM-SS-<uuid>.
    ("time", re.compile(r"\b\d{4}/\d{2}/\d{2}/\d{2}/")),
    ("time", re.compile(r"\b\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}\b")),
)
# How many differing places the report shows (the count says how many more).
SHOWN = 4


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
    the values found there (one for an item or object; each message's body for a queue; a
    resource's configuration under world.SETTINGS)."""

    places: dict = field(default_factory=dict)
    # What the run's puts wrote to each item or object on the way (for telling an order dependency).
    history: dict = field(default_factory=lambda: defaultdict(set))
    bookkeeping: Counter = field(default_factory=Counter)  # place -> Powertools records set aside there
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


def is_bookkeeping(value: Any) -> bool:
    """A Powertools idempotency record (BOOKKEEPING)."""
    return isinstance(value, dict) and value.get("status") in _POWERTOOLS_STATUSES and _POWERTOOLS_EXPIRY in value


# Delivered, not stored: what a function put on an EventBridge bus reaches rules other stacks may
# add, and the emulator keeps none of it; the journal's successful puts stand for it (EventBridge
# has no deduplication: a repeat counts twice).
_DELIVERED = {"PutEvents": "event bus"}


class Snapshot:
    """Reads the final state of a sandbox's whole world (drill/world.py)."""

    def __init__(self, sandbox: Any, plumbing: Iterable[str] = ()):
        self.sandbox = sandbox
        self.plumbing = set(plumbing)  # the component's own queues: how it retries (world.DRIVEN)
        recorded_tables = sandbox.recorded.of_type("aws:dynamodb/table:Table")
        self.keys = {r.outputs["name"]: tuple(k for k in (r.inputs.get("hashKey"), r.inputs.get("rangeKey")) if k)
                     for r in recorded_tables}
        self.ttl = {f"table {r.outputs['name']}": ((r.inputs.get("ttl") or {}).get("attributeName") or "")
                    for r in recorded_tables if (r.inputs.get("ttl") or {}).get("enabled")}

    def take(self, journal: Journal) -> Outcome:
        outcome = Outcome()
        for place, keyed in read_world(self.sandbox, self.plumbing).items():
            entries: dict = defaultdict(list)
            for key, values in keyed.items():
                if key == SETTINGS:  # the emulator's own creation times and ids: compared as their kind, unnamed
                    entries[key].extend(normalized(v, place, "", Volatile()) for v in values)
                    continue
                for value in values:
                    if is_bookkeeping(value):
                        outcome.bookkeeping[place] += 1
                        continue
                    shown = normalized(key, place, "key", outcome.volatile) if key else key
                    entries[shown].append(normalized(value, place, "", outcome.volatile, self.ttl.get(place, "")))
            outcome.places[place] = entries
        for invocation in journal.invocations:
            for call in invocation.calls:
                self._remember_put(outcome, call.operation, call.params)
                if call.operation in _DELIVERED:
                    for entry in call.params.get("Entries") or []:
                        place = f"{_DELIVERED[call.operation]} {_name(entry.get('EventBusName') or 'default')}"
                        outcome.places.setdefault(place, defaultdict(list))[""].append(
                            normalized({k: entry.get(k) for k in ("Source", "DetailType", "Detail")}, place, "",
                                       outcome.volatile))
        return outcome

    def _remember_put(self, outcome: Outcome, operation: str, params: dict) -> None:
        """What a put wrote on the way (an earlier record's value: drill/outcomes.py's order rule)."""
        if operation == "PutItem":
            table, item = params.get("TableName", ""), _plain(params.get("Item") or {})
            if is_bookkeeping(item):
                return
            place = f"table {table}"
            key = ", ".join(f"{k}={v if isinstance(v, str) else json.dumps(v, default=str)}"
                            for k, v in ((k, item.get(k)) for k in self.keys.get(table, ())))
            outcome.history[(place, normalized(key, place, "key", Volatile()))].add(
                canonical(normalized(item, place, "", Volatile(), self.ttl.get(place, ""))))
        elif operation == "PutObject":
            place = f"bucket {params.get('Bucket', '')}"
            body = normalized(body_text(params.get("Body")), place, "body", Volatile())
            key = normalized(params.get("Key", ""), place, "key", Volatile())
            outcome.history[(place, key)].add(canonical({"body": body}))


def _as_written(place: str, value: Any) -> Any:
    """What a put of `value` wrote, as history holds it (an object: its body)."""
    if place.startswith("bucket ") and isinstance(value, dict):
        return {"body": value.get("body")}
    return value


def _name(target: str) -> str:
    """A queue URL, topic or stream ARN as its last part (the name)."""
    return re.split(r"[/:]", target)[-1] if target.startswith(("https://", "http://", "arn:")) else target


def _plain(item: dict) -> dict:
    deserializer = TypeDeserializer()
    try:
        return {name: deserializer.deserialize(value) for name, value in item.items()}
    except (TypeError, ValueError, AttributeError):
        return item


@dataclass
class Difference:
    place: str
    key: str
    here: list  # the values found after the faulted run
    reference: list  # the values the reference run left
    records: list = field(default_factory=list)  # the records whose ids the values hold
    writers: str = ""  # what the effect log says wrote there (records and deliveries)
    order_dependent: bool = False
    against: str = "the reference run"  # what `reference` is


    def describe(self) -> str:
        where = f"{self.place} {self.key}".strip()
        if self.order_dependent:
            what = f"holds {_excerpt(self.here[0])}, an earlier record's value in the reference run's order"
        elif self.key and len(self.here) == 1 and len(self.reference) == 1:
            what = _field_diff(self.here[0], self.reference[0], self.against)
        elif not self.reference:
            what = f"{len(self.here)} written here, absent from {self.against}: {_excerpt(self.here[0])}"
        elif not self.here:
            what = f"absent here, {len(self.reference)} in {self.against}: {_excerpt(self.reference[0])}"
        else:
            extra = Counter(canonical(v) for v in self.here) - Counter(canonical(v) for v in self.reference)
            missing = Counter(canonical(v) for v in self.reference) - Counter(canonical(v) for v in self.here)
            what = f"{len(self.here)} here, {len(self.reference)} in {self.against}"
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


def _field_diff(here: Any, reference: Any, against: str = "the reference run") -> str:
    if isinstance(here, dict) and isinstance(reference, dict):
        changed = [name for name in sorted(set(here) | set(reference)) if here.get(name) != reference.get(name)]
        return ", ".join(f"{name} {_excerpt(here.get(name), 40)} here, {_excerpt(reference.get(name), 40)} in {against}"
                         for name in changed[:3])
    return f"{_excerpt(here)} here, {_excerpt(reference)} in {against}"


@dataclass
class Comparison:
    """The faulted run's outcome against the reference run's."""

    differences: list = field(default_factory=list)  # Difference, not order-dependent
    order_dependent: list = field(default_factory=list)  # Difference whose outcome is an earlier record's
    # Items one run left and the other not that hold nothing but their key and values of a kind
    # (a guard item a retry path writes): bookkeeping, named.
    markers: list = field(default_factory=list)
    # BOOKKEEPING set aside, by place: (here, in the reference run).
    bookkeeping: dict = field(default_factory=dict)
    # Resources the run changed or made (a function's calls): their settings against the program's.
    infrastructure: list = field(default_factory=list)
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
        if self.infrastructure:
            notes.append(f"infrastructure changed during the run (by a function's calls; the reference run may do the "
                         f"same, the program declares otherwise): {len(self.infrastructure)} resource(s): "
                         + " | ".join(d.describe() for d in self.infrastructure[:SHOWN])
                         + (f" | and {len(self.infrastructure) - SHOWN} more" if len(self.infrastructure) > SHOWN else ""))
        if self.order_dependent:
            notes.append("outcome depends on delivery order (the last writer wins, not a duplicate): "
                         + " | ".join(d.describe() for d in self.order_dependent[:SHOWN]))
        if self.bookkeeping:
            notes.append(f"set aside as bookkeeping, whichever run has them: {BOOKKEEPING}: "
                         + ", ".join(f"{place}: {here} here, {there} in the reference run"
                                     for place, (here, there) in sorted(self.bookkeeping.items())))
        if self.markers:
            places = Counter(d.place for d in self.markers)
            notes.append("bookkeeping items only one run left (their key and times only: how a retry path marks "
                         "what it applied), not compared: "
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
            if _bookkeeping_only(place, key, a or b) and not (a and b):
                comparison.markers.append(difference)
            elif key and len(a) == 1 and canonical(_as_written(place, a[0])) in reference.history.get((place, key), set()):
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
    comparison.bookkeeping = {place: (here.bookkeeping.get(place, 0), reference.bookkeeping.get(place, 0))
                              for place in sorted(set(here.bookkeeping) | set(reference.bookkeeping))}
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


def _bookkeeping_only(place: str, key: str, values: list) -> bool:
    """An item that holds only its key and values compared as their kind (a guard item)."""
    if not place.startswith("table ") or not key or key == SETTINGS:
        return False
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
    declared = getattr(driver, "declared_infrastructure", None)
    if declared is not None:
        comparison.infrastructure = infrastructure_changes(here, declared)
    report.outcome_differences = len(comparison.differences) + len(comparison.infrastructure)
    report.order_dependent = len(comparison.order_dependent)
    report.notes.extend(comparison.notes())
    _without_effect_not_lost(report, driver, comparison)
    return comparison


# What infrastructure_changes holds a resource's settings to.
DECLARED = "the program (as the sandbox realized it, before any function ran)"


def infrastructure_changes(here: Outcome, declared: dict[str, list]) -> list[Difference]:
    """Each resource whose settings differ from `declared` (world.infrastructure as the sandbox
    realized the program, before any function ran), or that was made during the run."""
    now = {place: keyed[SETTINGS] for place, keyed in here.places.items()
           if SETTINGS in keyed and any(place.startswith(f"{kind} ") for kind in INFRASTRUCTURE)}
    changes = []
    for place in sorted(set(now) | set(declared)):
        mine = list(now.get(place, []))
        theirs = [normalized(value, place, "", Volatile()) for value in declared.get(place, [])]
        if Counter(canonical(v) for v in mine) != Counter(canonical(v) for v in theirs):
            changes.append(Difference(place, SETTINGS, mine, theirs, against=DECLARED))
    return changes


def _without_effect_not_lost(report: Any, driver: Any, comparison: Comparison) -> None:
    """Records the team's code handled with no write of its own (drill/effects.py) are lost only when
    the outcome says so: a conditional write refused for an older version (v1 after v2), a record
    whose effect a later one overwrites, leaves the state the reference run left."""
    without_effect = sorted(getattr(driver, "without_effect", None) or ())
    if not without_effect or comparison.differences or comparison.infrastructure or report.lost != len(without_effect):
        return
    report.lost = 0
    report.processed_once += len(without_effect)
    report.notes.append(f"{len(without_effect)} record(s) made no write of their own (e.g. "
                        f"{', '.join(without_effect[:3])}: a conditional write refused, an older version after a newer "
                        "one) and are not lost: the final state is the reference run's")
