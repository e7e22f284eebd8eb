"""The drill's view of a function: counts invocations, crashes the planned ones (at the botocore
layer, see faults.py) and re-delivers a fraction of records as duplicates.

Repeatable whatever the thread timing: every random choice of an invocation (its transient faults,
where a crash hits, which records are delivered again) comes from a generator seeded with the drill's
seed and the invocation's identity, not from a sequence shared across threads. An invocation's
identity is its item and the how-many-th delivery of that item it is (Distributed Map children run
in parallel), or its number for mappings that invoke one batch at a time. Two deliveries of the same
item do not overlap: whichever wins a race would otherwise decide whether the other meets an
idempotency record still in progress.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from integration_blueprint.sandbox.errors import InjectedCrash
from integration_blueprint.sandbox.faults import FaultInjector


@dataclass
class Invoker:
    """Wraps a sandbox function for one pattern: counts invocations, crashes the planned ones and
    re-delivers a fraction of records as duplicates."""

    function: Callable
    faults: FaultInjector
    rng: random.Random
    duplicate_rate: float
    crash_plan: set = field(default_factory=set)  # invocation numbers to crash (one batch at a time)
    # Items whose delivery crashes (parallel invokers: by item, since invocation numbers follow threads).
    crash_items: set = field(default_factory=set)
    # Crash the next invocation after this many successful AWS calls (a crash aimed at one moment).
    crash_next_after: Optional[int] = None
    # The event source ("aws:sqs", "aws:kinesis") of the only deliveries that may be duplicated or
    # crashed, for a pattern whose contract covers one lane; None: every delivery.
    lane: Optional[str] = None
    # Crash after each write of the handler in turn (write 1, 2, ... of an invocation), so every
    # boundary between two of its writes is hit across the run (plan_boundary).
    crash_boundaries: bool = False
    writes_seen: int = 0  # the most writes an invocation in the lane made without crashing
    boundaries: Counter = field(default_factory=Counter)  # write n -> crashes that fell right after it
    boundary_operations: dict = field(default_factory=dict)  # write n -> the operation it was
    # For single-item events: which item an event is, so the final outcome per item is known.
    item_key: Optional[Callable[[Any], Optional[str]]] = None
    outcomes: dict = field(default_factory=dict)  # item -> "ok" | "failed" (last delivery)
    seed: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _item_locks: dict = field(default_factory=dict, repr=False)
    _deliveries: Counter = field(default_factory=Counter, repr=False)
    invocations: int = 0
    duplicates_delivered: int = 0  # records delivered again
    duplicate_invocations: int = 0  # invocations that delivered them
    crashes: int = 0

    def __call__(self, event: Any, context: Any = None) -> Any:
        if context is None and hasattr(self.function, "context"):
            context = self.function.context()  # as LocalFunction would, but visible to a crash
        key = self.item_key(event) if self.item_key else None
        if key is None:
            return self._deliver(event, context, None)
        with self._lock:
            item_lock = self._item_locks.setdefault(key, threading.Lock())
        with item_lock:
            return self._deliver(event, context, key)

    def _deliver(self, event: Any, context: Any, key: Optional[str]) -> Any:
        with self._lock:
            self.invocations += 1
            if key is not None:
                self._deliveries[key] += 1
                identity = f"{key}#{self._deliveries[key]}"
            else:
                identity = f"#{self.invocations}"
        rng = random.Random(f"{self.seed}:{identity}")
        try:
            response = self._invoke(event, context, identity, key, rng)
        except BaseException:
            if key is not None:
                self.outcomes[key] = "failed"
            raise
        if key is not None:
            self.outcomes[key] = "ok"
        if not self._in_lane(event):
            return response
        if isinstance(event, dict) and "Records" in event:
            again = [r for r in event["Records"] if rng.random() < self.duplicate_rate]
            duplicate = {**event, "Records": again} if again else None
            count = len(again)
        else:  # a Step Functions child's item, or batch of items: the whole event is one delivery
            duplicate = event if rng.random() < self.duplicate_rate else None
            items = event.get("Items") if isinstance(event, dict) else None
            count = len(items) if isinstance(items, list) else 1
        if duplicate is not None:
            with self._lock:
                self.duplicates_delivered += count
                self.duplicate_invocations += 1
                self.invocations += 1
            try:
                again_context = context.fresh() if hasattr(context, "fresh") else context  # an invocation of its own
                self._invoke(duplicate, again_context, f"{identity}/again", None, random.Random(f"{self.seed}:{identity}/again"))
            except Exception:  # noqa: BLE001 - the original delivery's outcome stands
                pass
        return response

    def _invoke(self, event: dict, context: Any, identity: str, key: Optional[str], rng: random.Random) -> Any:
        due: Any = None  # the planned crash this invocation claimed (an invocation number or an item)
        crash_after: Optional[int] = None
        with self._lock:
            if not self._in_lane(event):
                pass  # a planned crash waits for a delivery in the lane
            elif self.crash_next_after is not None:
                crash_after, self.crash_next_after = self.crash_next_after, None
            else:
                # A planned crash waits for an invocation that makes enough AWS calls to die after one.
                due = (key if key in self.crash_items else None) if key is not None else \
                    min((n for n in self.crash_plan if n <= self.invocations), default=None)
                if due is None and key is None and self._boundary_unhit() and self.invocations % EXTRA_CRASH_SPACING == 0:
                    due = self.invocations  # a crash more, until every boundary was hit once
                # An item (a Map child) may make a single AWS call, and a crash it is too short for
                # cannot move to another item without the thread timing deciding which: it dies
                # right after its first successful write.
                if due is None:
                    crash_after = None
                elif key is not None:
                    crash_after = 1
                else:
                    crash_after = self._next_boundary() if self.crash_boundaries else rng.randint(1, 3)
                self.crash_plan.discard(due)
                self.crash_items.discard(due)
        try:
            response = self.faults.run(self.function, event, context, key=identity, crash_after=crash_after)
        except InjectedCrash as crash:  # the drill's (a timeout or running out of memory is the function's own)
            with self._lock:
                self.crashes += 1
                if crash_after is not None:
                    self.boundaries[crash_after] += 1
                    self.boundary_operations.setdefault(crash_after, str(crash).rsplit(" ", 1)[-1])
            due = None
            raise
        finally:
            if due is not None:  # it made too few calls to crash: the next one will
                with self._lock:
                    (self.crash_items if isinstance(due, str) else self.crash_plan).add(due)
        if self._in_lane(event):
            with self._lock:
                self.writes_seen = max(self.writes_seen, len(self.faults.last_writes()))
        return response

    def _aimed_at(self) -> int:
        """How many boundaries the crashes aim at: after each of the first writes of an invocation."""
        return min(self.writes_seen, CRASH_BOUNDARIES_MAX)

    def _boundary_unhit(self) -> bool:
        return self.crash_boundaries and any(self.boundaries[n] == 0 for n in range(1, self._aimed_at() + 1))

    def _next_boundary(self) -> int:
        """The boundary least crashed at so far (the earliest of those): after write n of the invocation."""
        return min(range(1, max(self._aimed_at(), 1) + 1), key=lambda n: (self.boundaries[n], n))

    def boundary_note(self) -> str:
        """Which write boundaries the crashes fell on, for the report."""
        if not self.boundaries:
            return ""
        name = getattr(self.function, "name", "the function")
        hit = ", ".join(f"write {n} ({self.boundary_operations.get(n, '?')}) {count}x"
                        for n, count in sorted(self.boundaries.items()))
        missed = [n for n in range(1, self._aimed_at() + 1) if not self.boundaries[n]]
        later = f"{CRASH_BOUNDARIES_MAX + 1}" + (f"..{self.writes_seen}" if self.writes_seen > CRASH_BOUNDARIES_MAX + 1 else "")
        beyond = f"; boundaries after write {later} not aimed at" if self.writes_seen > CRASH_BOUNDARIES_MAX else ""
        return (f"{name}: crashes fell after {hit}, of the {self.writes_seen} write(s) an invocation made at most"
                + (f"; not reached: after write {', '.join(map(str, missed))}" if missed else "") + beyond)

    def _in_lane(self, event: Any) -> bool:
        if self.lane is None:
            return True
        records = event.get("Records") if isinstance(event, dict) else None
        if not isinstance(records, list) or not records:
            return False
        return all(isinstance(r, dict) and r.get("eventSource") == self.lane for r in records)

    def calm(self) -> None:
        """The fault window closed: no more planned crashes."""
        with self._lock:
            self.crash_plan.clear()
            self.crash_items.clear()
            self.crash_next_after = None


# Crashes aim at the boundary after each of an invocation's first writes, up to this many (a batch of
# ten records with two writes each makes twenty: the first records' boundaries are the same kinds).
CRASH_BOUNDARIES_MAX = 4
# Crashes beyond the planned ones, until every boundary was hit once, fall on every this-many-th invocation.
EXTRA_CRASH_SPACING = 2


def plan_crashes(rng: random.Random, count: int, expected_invocations: int) -> set:
    """Which invocations crash: spread over the invocations the run is expected to make (never the
    very first, so some work is always in flight before a crash)."""
    if count <= 0:
        return set()
    last = max(expected_invocations, 2 * count + 2)
    return set(rng.sample(range(2, last), count))
