"""The drill's view of a function: counts invocations, crashes the planned ones (at the botocore
layer, see faults.py) and re-delivers a fraction of records as duplicates."""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from integration_blueprint.drill.faults import FaultInjector, SimulatedCrash
from integration_blueprint.sandbox.errors import FunctionCrashed


@dataclass
class Invoker:
    """Wraps a sandbox function for one pattern: counts invocations, crashes the planned ones and
    re-delivers a fraction of records as duplicates."""

    function: Callable
    faults: FaultInjector
    rng: random.Random
    duplicate_rate: float
    crash_plan: set = field(default_factory=set)  # invocation numbers to crash
    # For single-item events: which item an event is, so the final outcome per item is known.
    item_key: Optional[Callable[[Any], Optional[str]]] = None
    outcomes: dict = field(default_factory=dict)  # item -> "ok" | "failed" (last delivery)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    invocations: int = 0
    duplicates_delivered: int = 0
    crashes: int = 0

    def __call__(self, event: Any, context: Any = None) -> Any:
        key = self.item_key(event) if self.item_key else None
        try:
            response = self._invoke(event, context)
        except BaseException:
            if key is not None:
                self.outcomes[key] = "failed"
            raise
        if key is not None:
            self.outcomes[key] = "ok"
        if isinstance(event, dict) and "Records" in event:
            again = [r for r in event["Records"] if self.rng.random() < self.duplicate_rate]
            duplicate = {**event, "Records": again} if again else None
            count = len(again)
        else:  # a single item (Step Functions): the whole event is one delivery
            duplicate = event if self.rng.random() < self.duplicate_rate else None
            count = 1
        if duplicate is not None:
            self.duplicates_delivered += count
            try:
                self._invoke(duplicate, context)
            except Exception:  # noqa: BLE001 - the original delivery's outcome stands
                pass
        return response

    def _invoke(self, event: dict, context: Any) -> Any:
        with self._lock:
            self.invocations += 1
            # A planned crash waits for an invocation that makes enough AWS calls to die after
            # one; it is claimed by one invocation at a time (Map children run in parallel).
            due = min((n for n in self.crash_plan if n <= self.invocations), default=None)
            if due is not None:
                self.crash_plan.discard(due)
        if due is not None:
            self.faults.crash_after(self.rng.randint(1, 3))
        try:
            with self.faults.invocation():
                result = self.function(event, context)
        except SimulatedCrash as crash:
            self.crashes += 1
            due = None
            reset = getattr(self.function, "reset", None)
            if reset is not None:
                reset()  # the instance died: the next invocation is a cold start with empty caches
            raise FunctionCrashed(str(crash)) from None
        finally:
            if due is not None:
                with self._lock:
                    self.crash_plan.add(due)  # it made too few calls to crash: the next one will
        return result


def plan_crashes(rng: random.Random, count: int, expected_invocations: int) -> set:
    """Which invocations crash: spread over the invocations the run is expected to make (never the
    very first, so some work is always in flight before a crash)."""
    if count <= 0:
        return set()
    last = max(expected_invocations, 2 * count + 2)
    return set(rng.sample(range(2, last), count))
