"""Fault injection into the AWS calls functions make, so handler code is not touched: the request
interceptor a caller (the drill) gives the sandbox through its one seam (sandbox/interception.py),
which hands it only the requests made while a function runs. The caller sets what to inject (rates,
an outage, a crash armed for an invocation); the mechanics live here.

- Transient faults: a fraction of those requests are answered with a throttling or 5xx error
  instead of reaching the emulator (nothing happens server-side), as a real throttle would. The
  answer goes through botocore's response parsing and its retry handler, like a real one; whatever
  botocore gives up on reaches the handler as a ClientError.
- Crashes: an invocation chosen to crash dies right after one of its calls *succeeded* (the side
  effect is done) and before the handler sees the response, like a timeout or an out-of-memory kill.
  The crash is a BaseException, so no `except Exception` in a handler or library can swallow it.
- Outage: while `outage` is set, every call a handler makes (to the `outage_service` only, if one
  is named: the ledger's table throttled while the queues work; none to `outage_spared`) is
  throttled (a dependency down for an hour, a bad deploy): the persistent failure retries cannot fix.

Repeatable: an invocation given a key (`invocation(key)`) draws its faults from its own generator,
seeded with the drill's seed and the key, so parallel invocations (Distributed Map children) get
the same faults whatever order the threads run in.

An invocation that ends with an idempotency claim still open (Powertools put an INPROGRESS record
and its delete failed) is reported by `open_claims`: the record expires with the invocation's
time, so the invoker waits that out rather than let the next delivery's timing decide.
"""

from __future__ import annotations

import json
import random
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable

from botocore.awsrequest import AWSResponse

from integration_blueprint.sandbox.errors import InjectedCrash

TRANSIENT_FAULTS = (
    (400, "ThrottlingException", "Rate exceeded (injected)"),
    (400, "ProvisionedThroughputExceededException", "Throughput exceeded (injected)"),
    (500, "InternalServerError", "Internal error (injected)"),
    (503, "ServiceUnavailable", "Service unavailable (injected)"),
)


class _Body:
    """The raw body of an injected response, as botocore reads it."""

    def __init__(self, data: bytes):
        self.data = data

    def stream(self, **_):
        yield self.data


class SimulatedCrash(BaseException):
    """The function instance died (timeout, out of memory) in the middle of an invocation."""


@dataclass
class FaultInjector:
    transient_rate: float = 0.0
    seed: int | str = 0
    transient_injected: int = 0
    outage_injected: int = 0
    _rng: random.Random = field(init=False)
    _local: threading.local = field(default_factory=threading.local, init=False)
    enabled: bool = False
    outage: bool = False
    outage_service: str | None = None  # a botocore service name ("dynamodb"); None: every service
    outage_spared: frozenset = frozenset()  # services an outage of every service leaves up
    _count_lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    # The operations that write (the caller's list); when given, an armed crash counts only these, so
    # it falls after the invocation's n-th write, the boundary between two of its effects.
    write_operations: frozenset = frozenset()

    def __post_init__(self):
        self._rng = random.Random(self.seed)

    @contextmanager
    def invocation(self, key: str | None = None):
        """Calls made in this block (this thread) belong to a handler invocation; with a key, its
        faults come from a generator of its own (see the module docstring)."""
        self._local.rng = random.Random(f"{self.seed}:{key}") if key is not None else None
        self._local.claims = set()
        self._local.writes = []
        try:
            yield
        finally:
            self._local.last_writes, self._local.writes = self._local.writes, []
            self._local.crash_after = None
            self._local.rng = None
            self._local.claims = set()

    def run(self, function: Callable[[Any, Any], Any], event: Any, context: Any, key: str | None = None,
            crash_after: int | None = None) -> Any:
        """One invocation of `function` under the faults: drawn from the generator of `key`, and with
        a crash armed after `crash_after` successful calls if given. A crashed invocation ends when
        its (compressed) time is up, its instance gone (the next invocation is a cold start), and
        raises InjectedCrash (a FunctionCrashed); one that left an idempotency claim open also waits its time out."""
        try:
            with self.invocation(key):
                if crash_after is not None:
                    self.crash_after(crash_after)
                try:
                    return function(event, context)
                finally:
                    if self.open_claims():
                        wait_out(context)
        except SimulatedCrash as crash:
            wait_out(context)  # (again, for a crash before any claim was recorded)
            reset = getattr(function, "reset", None)
            if reset is not None:
                reset()  # the instance died: the next invocation is a cold start with empty caches
            raise InjectedCrash(str(crash)) from None

    def open_claims(self) -> set:
        """Idempotency records this invocation (thread) left INPROGRESS."""
        return set(getattr(self._local, "claims", ()))

    def last_writes(self) -> list[str]:
        """The write operations the last invocation on this thread made, in order."""
        return list(getattr(self._local, "last_writes", ()))

    def crash_after(self, calls: int) -> None:
        """Arm a crash for the current invocation (this thread): after `calls` successful calls (writes,
        with `write_operations`)."""
        self._local.crash_after = calls

    def before_send(self, service: str, operation: str, request) -> AWSResponse | None:
        if not self.enabled:
            return None
        rng = getattr(self._local, "rng", None) or self._rng
        outage = self.outage and self.outage_service in (None, service) and service not in self.outage_spared
        if outage:
            status, code, message = TRANSIENT_FAULTS[0][0], TRANSIENT_FAULTS[0][1], "Rate exceeded (injected outage)"
        else:
            if not self.transient_rate or rng.random() >= self.transient_rate:
                return None
            status, code, message = rng.choice(TRANSIENT_FAULTS)
        with self._count_lock:
            if outage:
                self.outage_injected += 1
            else:
                self.transient_injected += 1
        body = json.dumps({"__type": code, "message": message}).encode()
        headers = {"x-amzn-ErrorType": code, "Content-Type": "application/x-amz-json-1.0",
                   "x-amzn-query-error": f"{code};Sender"}
        return AWSResponse(request.url, status, headers, _Body(body))

    def after_call(self, operation: str, params: dict, parsed: dict) -> None:
        claims = getattr(self._local, "claims", None)
        if claims is not None:
            _track_claim(claims, operation, params)
        if self.write_operations:
            if operation not in self.write_operations:
                return  # a read: a crash armed for after the n-th write waits for writes
            writes = getattr(self._local, "writes", None)
            if writes is not None:
                writes.append(operation)
        remaining = getattr(self._local, "crash_after", None)
        if remaining is None:
            return
        if remaining <= 1:
            self._local.crash_after = None
            raise SimulatedCrash(f"injected crash after {operation}")
        self._local.crash_after = remaining - 1


def wait_out(context: Any) -> None:
    """Until the invocation's (compressed) time is up. A crash is a timeout or an out-of-memory
    kill; modelled as the timeout, it ends then, so an idempotency record it left in progress has
    expired when the caller learns of the failure, as on AWS, whatever the thread timing. The same
    wait follows an invocation that left a claim open (a failed delete): whether the next delivery
    finds it expired must not depend on how fast this machine is."""
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    if remaining is not None:
        time.sleep(remaining() / 1000 + 0.001)


_IN_PROGRESS = "INPROGRESS"  # Powertools' idempotency record status while a claim is held


def _claim_key(table: str, key: dict) -> tuple:
    return (table, json.dumps(key, sort_keys=True, default=str))


def _track_claim(claims: set, operation: str, params: dict) -> None:
    table = params.get("TableName", "")
    if operation == "PutItem" and (params.get("Item") or {}).get("status", {}).get("S") == _IN_PROGRESS:
        item = params["Item"]
        claims.add(_claim_key(table, {k: item[k] for k in ("id", "sort_key") if k in item}))
    elif operation in ("UpdateItem", "DeleteItem") and "Key" in params:
        claims.discard(_claim_key(table, params["Key"]))
