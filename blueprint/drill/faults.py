"""Fault injection into the AWS calls handlers make, so handler code is not touched: the drill's
request interceptor, given to the sandbox through its one seam (sandbox/interception.py), which
hands it only the requests made while a function runs.

- Transient faults: a fraction of those requests are answered with a throttling or 5xx error
  instead of reaching the emulator (nothing happens server-side), as a real throttle would. The
  answer goes through botocore's response parsing and its retry handler, like a real one; whatever
  botocore gives up on reaches the handler as a ClientError.
- Crashes: an invocation chosen to crash dies right after one of its calls *succeeded* (the side
  effect is done) and before the handler sees the response, like a timeout or an out-of-memory kill.
  The crash is a BaseException, so no `except Exception` in a handler or library can swallow it.
- Outage: while `outage` is set, every call a handler makes (to the `outage_service` only, if one
  is named: the ledger's table throttled while the queues work) is throttled (a dependency down for
  an hour, a bad deploy): the persistent failure retries cannot fix.

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
from contextlib import contextmanager
from dataclasses import dataclass, field

from botocore.awsrequest import AWSResponse

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
    _count_lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    # Called with (operation name, request params, parsed response) after every successful handler
    # call, so a drill can count effects (every ledger write that went through, records re-read).
    auditors: list = field(default_factory=list)

    def __post_init__(self):
        self._rng = random.Random(self.seed)

    @contextmanager
    def invocation(self, key: str | None = None):
        """Calls made in this block (this thread) belong to a handler invocation; with a key, its
        faults come from a generator of its own (see the module docstring)."""
        self._local.rng = random.Random(f"{self.seed}:{key}") if key is not None else None
        self._local.claims = set()
        try:
            yield
        finally:
            self._local.crash_after = None
            self._local.rng = None
            self._local.claims = set()

    def open_claims(self) -> set:
        """Idempotency records this invocation (thread) left INPROGRESS."""
        return set(getattr(self._local, "claims", ()))

    def crash_after(self, calls: int) -> None:
        """Arm a crash for the current invocation (this thread): after `calls` successful calls."""
        self._local.crash_after = calls

    def before_send(self, service: str, operation: str, request) -> AWSResponse | None:
        if not self.enabled:
            return None
        rng = getattr(self._local, "rng", None) or self._rng
        outage = self.outage and self.outage_service in (None, service)
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
        for auditor in self.auditors:
            auditor(operation, params, parsed)
        claims = getattr(self._local, "claims", None)
        if claims is not None:
            _track_claim(claims, operation, params)
        remaining = getattr(self._local, "crash_after", None)
        if remaining is None:
            return
        if remaining <= 1:
            self._local.crash_after = None
            raise SimulatedCrash(f"injected crash after {operation}")
        self._local.crash_after = remaining - 1


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
