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
from pathlib import Path
from typing import Any, Iterator

from integration_blueprint.sandbox.errors import SandboxError

IDENTIFYING_MIN_CHARS = 3


def parse_option(text: str) -> tuple[str, Path]:
    """`COMPONENT=FILE` as the CLI takes it."""
    name, separator, path = text.partition("=")
    if not separator or not name or not path:
        raise SandboxError(f"--sample-records {text!r}: expected COMPONENT=FILE (the component's name in the "
                           "program, a JSON Lines file of its records), e.g. orders=samples/orders.jsonl")
    return name, Path(path)


def load(path: Path) -> list[dict]:
    """The file's records, each a JSON object; SandboxError naming the line that is not one, or a
    record given twice (the drill tells records apart by their payload)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SandboxError(f"--sample-records: cannot read {path}: {exc}") from None
    records: list[dict] = []
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
    if not records:
        raise SandboxError(f"--sample-records: {path} holds no records")
    return records


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
    """The drill's records by id (`line <n>`), the payload text each was sent as, and its values."""

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
