"""What the team's code raised in a drill: each distinct error told once (its type, message, the
team's file:line, how often), and the early stop of a drill whose every record fails the same way.

The errors come from the sandbox's journal: each invocation of the team's function that raised
carries what its code raised (sandbox/errors.py CodeError: the record's own exception where a batch
utility wrapped it, with the deepest frame in the function's archive); its traceback is in the
pattern's handler log. Crashes the drill injected are not the team's errors.

Two errors are the same error when they have the same type and were raised at the same line of the
team's code (a message may name the record: `KeyError: 'charge_id'` and `ValueError: bad amount 12`
each count once per line); without a line of the team's (an import that failed in a layer, a
runtime's error naming the record), the type and the message but for its numbers.

Early stop: a drill sends 1,500 records by default, each retried up to the lane's limits, so code
that fails every record (written for other records, a module missing from its archive) burns tens
of thousands of invocations and minutes to tell what the first ones told. The drill stops when the
first EARLY_STOP_RECORDS distinct records all failed, over at least EARLY_STOP_INVOCATIONS
invocations, with one and the same error, and no invocation succeeded
(core/conventions.py says why those numbers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from integration_blueprint.core import conventions
from integration_blueprint.drill.patterns.base import DrillDeadline
from integration_blueprint.sandbox.errors import CodeError
from integration_blueprint.sandbox.faults import SimulatedCrash
from integration_blueprint.sandbox.interception import Invocation, Journal

# How the sandbox's journal names an invocation the drill crashed on purpose.
_INJECTED_CRASH = SimulatedCrash.__name__
# The distinct errors a report lists (the handler log has every one).
REPORTED_ERRORS = 5

Identify = Callable[[Any], dict]  # an invocation's event -> the drill's records it delivered


def code_error(invocation: Invocation) -> Optional[CodeError]:
    """What the invocation's code raised (None if it returned, or the drill crashed it): the
    journal's cause, else its `Type: message` (a function running in the drill's own process)."""
    if invocation.error is None or invocation.error.startswith(_INJECTED_CRASH):
        return None
    if invocation.cause is not None:
        return invocation.cause
    kind, _, message = invocation.error.partition(": ")
    return CodeError(type=kind, message=message)


def same_error(one: CodeError, other: CodeError) -> bool:
    """The same error, or one told again by a runtime that names it without its message: the
    blueprint's handler runtime raises its own error naming the team's as `KeyError at
    sales.py:18` (handlers/runtime/redaction.py describe_error), as its Retry-DLQ lane does."""
    if signature(one) == signature(other):
        return True
    named, bare = (one, other) if one.location else (other, one)
    return bool(named.location) and not bare.location and \
        f"{named.type} at {named.location.rsplit('/', 1)[-1]}" in bare.message


def signature(error: CodeError) -> tuple[str, str]:
    """What makes two errors the same error (the module's docstring)."""
    return (error.type, error.location) if error.location else (error.type, _NUMBERS.sub("N", error.message))


# A message's numbers (a record's sequence number, a count) do not make another error.
_NUMBERS = re.compile(r"\d+")


@dataclass
class DistinctError:
    error: CodeError  # the first of its kind
    invocations: int = 0
    records: set = field(default_factory=set)  # the drill's records delivered to the invocations that raised it


def distinct_errors(journal: Journal, function: str, identify: Identify) -> list[DistinctError]:
    """Every error `function`'s code raised in the journal, once per distinct error, the most
    frequent first."""
    found: dict[tuple[str, str], DistinctError] = {}
    for invocation in journal.invocations:
        error = code_error(invocation) if invocation.function == function else None
        if error is None:
            continue
        entry = found.setdefault(signature(error), DistinctError(error))
        entry.invocations += 1
        entry.records.update(identify(invocation.event))
    return sorted(found.values(), key=lambda e: (-e.invocations, e.error.type))


def summary(errors: list[DistinctError]) -> list[str]:
    """The report's lines: one per distinct error, at most REPORTED_ERRORS."""
    lines = [f"the team's code raised {e.error.describe()}: {e.invocations} invocation(s), {len(e.records)} record(s)"
             for e in errors[:REPORTED_ERRORS]]
    if len(errors) > REPORTED_ERRORS:
        lines.append(f"and {len(errors) - REPORTED_ERRORS} other distinct error(s) (each in the handler log)")
    return lines


class EveryRecordFails(DrillDeadline):
    """The drill stopped early: every record it sent so far failed with the same error. Raised where
    a pattern checks its deadline, so the runner reports the state so far, failed, with this reason."""


class EarlyStop:
    """Watches a function's invocations in the journal as a drill runs (`check`, from the driver's
    deadline checks) and stops the drill once every record fails the same way. Disarmed for good
    by the first invocation that succeeds or fails otherwise: it only ever reads the journal's first
    invocations."""

    def __init__(self, pattern: str, function: str, identify: Identify, sample_records: str = ""):
        """`sample_records`: the --sample-records option that gives this component the team's own
        records (`orders=FILE`), or "" where the team already gave them (the fix then is the code)."""
        self.pattern, self.function, self.identify = pattern, function, identify
        self.sample_records = sample_records
        self.armed = True
        self._next = 0  # the first invocation of the journal not read yet
        self._error: Optional[CodeError] = None
        self._records: set = set()
        self._invocations = 0

    def check(self, journal: Journal) -> None:
        """Raise EveryRecordFails once the threshold is reached (see the module's docstring)."""
        invocations = journal.invocations
        while self.armed and self._next < len(invocations) and invocations[self._next].finished:
            self._read(invocations[self._next])
            self._next += 1
        if (self.armed and self._error is not None and len(self._records) >= conventions.EARLY_STOP_RECORDS
                and self._invocations >= conventions.EARLY_STOP_INVOCATIONS):
            self.armed = False
            raise EveryRecordFails(
                f"{self.pattern}: stopped early: the first {len(self._records)} records the drill sent all failed, over "
                f"{self._invocations} invocations, with {self._error.describe()}, and none succeeded (the counts above "
                "are the state when it stopped); fix that (the handler log has the traceback)"
                + (f" or, if the code is written for other records, give the drill yours (--sample-records "
                   f"{self.sample_records})" if self.sample_records else ""))

    def _read(self, invocation: Invocation) -> None:
        if invocation.function != self.function:
            return
        if invocation.error is None:
            self.armed = False  # it handled something: not every record fails
            return
        error = code_error(invocation)
        if error is None:
            return  # a crash the drill injected says nothing of the code
        if self._error is None:
            self._error = error
        elif not same_error(error, self._error):
            self.armed = False  # failing in more than one way: the drill goes on to tell them all
            return
        self._invocations += 1
        self._records.update(self.identify(invocation.event))

