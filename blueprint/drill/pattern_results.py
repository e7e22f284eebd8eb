"""What crosses from a pattern's worker process to the drill: JSON with a fixed schema, validated on
arrival, never a pickle. The schema is the report's own dataclass (PatternReport and what it
holds): a message naming a field the report does not have, or a value of another type, is refused.

The worker is where the emulator answers the team's code; a pickle from it would run whatever code
it named in the drill's process, the one that decides the verdict. Data can only be data.

Messages, one per frame of a multiprocessing Connection's send_bytes (raw bytes, never its pickling
send/recv):
    {"progress": 0.42}
    {"report": {...PatternReport's fields...}}   or   {"report": null} (the pattern does not apply)
    {"error": "the worker's traceback"}          (a bug in the drill: raised in the drill's process)

The reference run, forked beside a pattern's faulted run (drill/reference.py), hands its outcome back
to the pattern's process the same way, in one message read to its end:
    {"outcome": {...Outcome's fields...}, "seconds": 12.3}
    {"unfinished": "why"}   (its deadline passed, its sandbox could not run it)
    {"error": "its traceback"}
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections import defaultdict
from typing import Any, Optional, Union

from integration_blueprint.drill.outcomes import Outcome, Volatile
from integration_blueprint.drill.report import PatternReport

# A pattern's report is a few KB (its notes, usage figures); far past that is not a report.
MAX_MESSAGE_BYTES = 4 * 1024 * 1024


class MalformedResult(ValueError):
    """A message from a pattern's worker that is not one the drill sends itself."""


def progress_message(fraction: float) -> bytes:
    return json.dumps({"progress": float(fraction)}).encode()


def report_message(report: Optional[PatternReport]) -> bytes:
    return json.dumps({"report": None if report is None else dataclasses.asdict(report)}).encode()


def error_message(traceback_text: str) -> bytes:
    return json.dumps({"error": traceback_text[-20000:]}).encode()


def parse(data: bytes) -> tuple[str, Any]:
    """("progress", fraction) | ("report", PatternReport or None) | ("error", text); MalformedResult
    for anything else."""
    try:
        message = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedResult(f"not JSON ({exc})") from None
    if not isinstance(message, dict) or len(message) != 1:
        raise MalformedResult("not one of the worker's messages")
    [(kind, value)] = message.items()
    if kind == "progress" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return kind, float(value)
    if kind == "error" and isinstance(value, str):
        return kind, value
    if kind == "report":
        return kind, None if value is None else _build(PatternReport, value, "report")
    raise MalformedResult(f"unknown message {kind!r}")


def outcome_message(outcome: Outcome, seconds: float) -> bytes:
    """What a reference run left (drill/outcomes.py Outcome), as data: tuples and sets as lists."""
    fields = {f.name for f in dataclasses.fields(Outcome)}
    if fields != set(_OUTCOME_FIELDS):  # an Outcome that grew a field must not cross without it
        raise TypeError(f"pattern_results cannot carry Outcome's fields {sorted(fields - set(_OUTCOME_FIELDS))}")
    return json.dumps({"outcome": {
        "places": outcome.places,
        "history": [[place, key, sorted(values)] for (place, key), values in outcome.history.items()],
        "bookkeeping": dict(outcome.bookkeeping),
        "volatile": outcome.volatile.fields,
    }, "seconds": float(seconds)}).encode()


_OUTCOME_FIELDS = ("places", "history", "bookkeeping", "volatile")


def unfinished_message(why: str) -> bytes:
    return json.dumps({"unfinished": why}).encode()


def parse_reference(data: bytes) -> tuple[str, Any]:
    """("outcome", (Outcome, seconds)) | ("unfinished", why) | ("error", text); MalformedResult for
    anything else."""
    try:
        message = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedResult(f"not JSON ({exc})") from None
    if isinstance(message, dict) and set(message) == {"outcome", "seconds"}:
        seconds = message["seconds"]
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
            raise MalformedResult("reference.seconds: not a number")
        return "outcome", (_outcome(message["outcome"]), float(seconds))
    if isinstance(message, dict) and len(message) == 1:
        [(kind, value)] = message.items()
        if kind in ("unfinished", "error") and isinstance(value, str):
            return kind, value
    raise MalformedResult("not one of the reference run's messages")


def _outcome(data: Any) -> Outcome:
    if not isinstance(data, dict) or set(data) != set(_OUTCOME_FIELDS):
        raise MalformedResult(f"outcome: not an object of {list(_OUTCOME_FIELDS)}")
    places, history, bookkeeping, volatile = (data[name] for name in _OUTCOME_FIELDS)
    if not (isinstance(places, dict) and all(
            isinstance(keyed, dict) and all(isinstance(values, list) for values in keyed.values())
            for keyed in places.values())):
        raise MalformedResult("outcome.places: not {place: {key: [values]}}")
    if not (isinstance(history, list) and all(
            isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str) and isinstance(entry[1], str)
            and isinstance(entry[2], list) and all(isinstance(v, str) for v in entry[2]) for entry in history)):
        raise MalformedResult("outcome.history: not [[place, key, [values]]]")
    if not (isinstance(bookkeeping, dict) and all(
            isinstance(count, int) and not isinstance(count, bool) and count >= 0 for count in bookkeeping.values())):
        raise MalformedResult("outcome.bookkeeping: not {place: count}")
    if not (isinstance(volatile, dict) and all(
            isinstance(names, dict) and all(isinstance(kind, str) for kind in names.values())
            for names in volatile.values())):
        raise MalformedResult("outcome.volatile: not {place: {name: kind}}")
    outcome = Outcome()  # its own defaults (defaultdicts), filled
    outcome.places.update({place: defaultdict(list, keyed) for place, keyed in places.items()})
    for place, key, values in history:
        outcome.history[(place, key)].update(values)
    outcome.bookkeeping.update(bookkeeping)
    outcome.volatile = Volatile()
    for place, names in volatile.items():
        for name, kind in names.items():
            outcome.volatile.note(place, name, kind)
    return outcome


def _build(cls: type, data: Any, where: str) -> Any:
    """An instance of dataclass `cls` from `data`, every field checked against its declared type."""
    if not isinstance(data, dict):
        raise MalformedResult(f"{where}: not an object")
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown, missing = set(data) - fields, fields - set(data)
    if unknown or missing:  # the worker sends every field (dataclasses.asdict), and only those
        raise MalformedResult(f"{where}: unknown fields {sorted(unknown)}" if unknown else f"{where}: missing {sorted(missing)}")
    return cls(**{name: _value(hints[name], value, f"{where}.{name}") for name, value in data.items()})


def _value(kind: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(kind)
    if origin in (Union, types.UnionType):
        for option in typing.get_args(kind):
            try:
                return _value(option, value, where)
            except MalformedResult:
                continue
        raise MalformedResult(f"{where}: {type(value).__name__} is none of {kind}")
    if kind is type(None):
        if value is None:
            return None
    elif dataclasses.is_dataclass(kind) and isinstance(kind, type):
        return _build(kind, value, where)
    elif kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif kind in (int, str, bool):
        if type(value) is kind:
            return value
    elif (origin or kind) in (dict, list):
        if isinstance(value, origin or kind):
            return value  # JSON's own: plain data whatever it holds
    elif kind is Any:
        return value
    raise MalformedResult(f"{where}: {type(value).__name__}, expected {getattr(kind, '__name__', kind)}")
