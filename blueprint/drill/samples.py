"""A team's own sample records for the drill (`blueprint drill --sample-records COMPONENT=FILE`).

FILE is JSON Lines: one JSON object per line, the payload as the component's lane hands it to the
team's code (docs/drill.md has each pattern's shape): a stream consumer's record data, a FIFO
consumer's message body, a Distributed Map item's row (a flat object; its values become CSV text).
The drill sends each line once (--records does not apply to that component) with its faults.

Effects are attributed to a record by its values (drill/effects.py): a write belongs to the record
of the delivery whose values it holds most of. A record's identifying values are the text of its
scalar values (at every depth) of at least IDENTIFYING_MIN_CHARS characters: shorter ones ("1",
"EU") appear inside too many other writes to tell records apart. A value only one record holds (an
order id) also attributes a write whose delivery held several records and named none of them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Optional

from integration_blueprint.sandbox.errors import SandboxError

IDENTIFYING_MIN_CHARS = 3

# Stream records' partition keys (`--partition-key [COMPONENT=]FIELD`): Kinesis keeps the order of
# one key's records on one shard, so the drill keys each record as the team's producer does. Without
# the option the team's own records all go under this one key (the file's order: the order any
# producer keeps for records of one key); the drill's own records go under their account, as the
# blueprint's reference producer keys them.
SAMPLE_PARTITION_KEY = "sample-records"
DRILL_RECORD_FIELDS = ("eventId", "account", "amount")  # the drill's own stream records (team code)

# A field whose name says it identifies its record (`id`, `order_id`, `eventId`, `idempotency_key`):
# the report names a team's records by it where it names every record once.
ID_FIELD = re.compile(r"(?:^|_)(?:id|ID|Id|key|KEY)$|[a-z0-9](?:Id|ID|Key)$")


class SampleRecords(list[dict]):
    """A file's records (JSON objects, in the file's order), with the line of the file each stood on."""

    def __init__(self, records: Iterable[dict] = (), lines: Optional[Iterable[int]] = None):
        super().__init__(records)
        self.lines = list(lines) if lines is not None else list(range(1, len(self) + 1))


def record_ids(records: list[dict]) -> list[str]:
    """How the report names each of a team's records: `order_id=A-17`, by the first field (in the
    order the records first name their fields) whose name says it is an id and whose value names
    every record once; without one, the record's line in the file (`line 11`)."""
    for name in dict.fromkeys(key for record in records for key in record):
        values = [record.get(name) for record in records]
        if ID_FIELD.search(name) and all(isinstance(v, (str, int)) and not isinstance(v, bool) and str(v).strip()
                                         for v in values) and len({str(v) for v in values}) == len(values):
            return [f"{name}={value}" for value in values]
    return [f"line {number}" for number in getattr(records, "lines", range(1, len(records) + 1))]


def parse_option(text: str) -> tuple[str, Path]:
    """`COMPONENT=FILE` as the CLI takes it."""
    name, separator, path = text.partition("=")
    if not separator or not name or not path:
        raise SandboxError(f"--sample-records {text!r}: expected COMPONENT=FILE (the component's name in the "
                           "program, a JSON Lines file of its records), e.g. orders=samples/orders.jsonl")
    return name, Path(path)


def parse_partition_key(text: str) -> tuple[str, str]:
    """`[COMPONENT=]FIELD` as the CLI takes it: (component, or "" for every stream component; field)."""
    name, separator, field = text.rpartition("=")
    if (separator and not name) or not field:
        raise SandboxError(f"--partition-key {text!r}: expected FIELD or COMPONENT=FIELD (a field of the stream's "
                           "records, as your producer keys them), e.g. orders=order_id")
    return name, field


def partition_key_of(record: dict, field: str) -> Any:
    """The record's value of `field` (a dotted path reaches into objects), or None."""
    value: Any = record
    for part in field.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def check_partition_keys(partition_keys: dict[str, str], samples: Mapping[str, list[dict]]) -> None:
    """Every record a partition key applies to has the field; SandboxError naming the first that has not."""
    for component, field in partition_keys.items():
        for name, records in (samples.items() if not component else [(component, samples.get(component))]):
            if records is None:  # the drill's own records
                if field.split(".")[0] not in DRILL_RECORD_FIELDS:
                    raise SandboxError(f"--partition-key {component}={field}: the drill's own stream records have "
                                       f"the fields {', '.join(DRILL_RECORD_FIELDS)}; give the drill your records "
                                       f"(--sample-records {component}=FILE) to key them by a field of yours")
                continue
            for number, record in enumerate(records, start=1):
                if partition_key_of(record, field) in (None, "", [], {}):
                    raise SandboxError(f"--partition-key {field}: record {number} of --sample-records {name} has no "
                                       f"{field!r}, so it has no partition key (Kinesis refuses a record without one)")


def load(path: Path) -> SampleRecords:
    """The file's records, each a JSON object; SandboxError naming the line that is not one, or a
    record given twice (the drill tells records apart by their payload)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SandboxError(f"--sample-records: cannot read {path}: {exc}") from None
    records: list[dict] = []
    numbers: list[int] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise SandboxError(f"--sample-records: {path} line {number} is not JSON ({exc})") from None
        if not isinstance(record, dict):
            raise SandboxError(f"--sample-records: {path} line {number} is not a JSON object")
        text = canonical(record)
        if text in seen:
            raise SandboxError(f"--sample-records: {path} line {number} repeats line {seen[text]}; the drill "
                               "makes the duplicates itself, each record must be given once")
        seen[text] = number
        records.append(record)
        numbers.append(number)
    if not records:
        raise SandboxError(f"--sample-records: {path} holds no records")
    return SampleRecords(records, numbers)


def canonical(record: Any) -> str:
    """A record's text whatever its key order: how a delivered payload is matched to its record."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), default=str)


def identifying_values(record: Any) -> tuple[str, ...]:
    """The text of the record's scalar values of at least IDENTIFYING_MIN_CHARS characters."""
    return tuple(dict.fromkeys(text for text in _scalars(record) if len(text) >= IDENTIFYING_MIN_CHARS))


def _scalars(value: Any) -> Iterator[str]:
    """Every string and number in `value`, in document order (a stack, not recursion: a file's
    record may nest as deep as the JSON parser allowed)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, (dict, list)):
            pending.extend(reversed(list(item.values()) if isinstance(item, dict) else item))
        elif isinstance(item, str):
            yield item
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            yield str(item)


class SampleIndex:
    """The drill's records by id (`record_ids`), the payload text each was sent as, and its values."""

    def __init__(self) -> None:
        self.by_text: dict[str, str] = {}  # the payload's canonical text -> record id
        self.values: dict[str, tuple[str, ...]] = {}
        self._owners: dict[str, set[str]] = {}  # identifying value -> the records holding it

    def add(self, record_id: str, payload: Any, values: tuple[str, ...]) -> None:
        self.by_text[canonical(payload)] = record_id
        self.values[record_id] = values
        for value in values:
            self._owners.setdefault(value, set()).add(record_id)

    def record_of(self, payload: Any) -> str | None:
        return self.by_text.get(canonical(payload))

    def named(self, text: str) -> str | None:
        """The one record whose own values (held by no other record) appear in `text`, if one."""
        found = {next(iter(owners)) for value, owners in self._owners.items() if len(owners) == 1 and value in text}
        return found.pop() if len(found) == 1 else None

    def records_in(self, text: str) -> list[str]:
        """Every record `text` names: by a value no other record holds, or by all its values that are
        not numbers (an amount alone names nothing)."""
        found = {next(iter(owners)) for value, owners in self._owners.items()
                 if len(owners) == 1 and not _numeric(value) and value in text}
        for record, values in self.values.items():
            words = [value for value in values if not _numeric(value)]
            if words and all(value in text for value in words):
                found.add(record)
        return sorted(found)


def _numeric(value: str) -> bool:
    return value.replace(".", "", 1).lstrip("-").isdigit()
