"""Fault injection at the botocore layer, so handler code is not touched.

- Transient faults: a fraction of the AWS calls handlers make fail with a throttling or 5xx error
  before reaching the emulator (nothing happens server-side), as a real throttle would.
- Crashes: an invocation chosen to crash dies right after one of its calls *succeeded* (the side
  effect is done) and before the handler sees the response, like a timeout or an out-of-memory kill.
  The crash is a BaseException, so no `except Exception` in a handler or library can swallow it.

Only the default boto3 session is instrumented: handlers build their clients from it, while the
sandbox's own pollers and checks use separate sessions and are never faulted.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field

import boto3
from botocore.awsrequest import AWSResponse

TRANSIENT_FAULTS = (
    (400, "ThrottlingException", "Rate exceeded (injected)"),
    (400, "ProvisionedThroughputExceededException", "Throughput exceeded (injected)"),
    (500, "InternalServerError", "Internal error (injected)"),
    (503, "ServiceUnavailable", "Service unavailable (injected)"),
)


class SimulatedCrash(BaseException):
    """The function instance died (timeout, out of memory) in the middle of an invocation."""


@dataclass
class FaultInjector:
    transient_rate: float = 0.0
    seed: int = 0
    transient_injected: int = 0
    calls_seen: int = 0
    crashes_done: int = 0
    _rng: random.Random = field(init=False)
    _local: threading.local = field(default_factory=threading.local, init=False)
    enabled: bool = False
    # Called with (operation name, request params) after every successful handler call, so a drill
    # can count effects (for example every ledger write that went through).
    auditors: list = field(default_factory=list)

    def __post_init__(self):
        self._rng = random.Random(self.seed)

    def install(self) -> None:
        """Hook the default session; clients created from now on carry the hooks."""
        boto3.setup_default_session()
        events = boto3.DEFAULT_SESSION.events
        events.register("before-parameter-build.*.*", self._remember_params)
        events.register("before-call.*.*", self._before_call)
        events.register("after-call.*.*", self._after_call)

    def crash_after(self, calls: int) -> None:
        """Arm a crash for the current invocation (this thread): after `calls` successful calls."""
        self._local.crash_after = calls

    def disarm(self) -> None:
        self._local.crash_after = None

    @staticmethod
    def _remember_params(params, context=None, **_):
        if context is not None:
            context["audit_params"] = params  # the API parameters, as the handler passed them

    def _before_call(self, model, **_):
        if not self.enabled:
            return None
        self.calls_seen += 1
        if self.transient_rate and self._rng.random() < self.transient_rate:
            self.transient_injected += 1
            status, code, message = self._rng.choice(TRANSIENT_FAULTS)
            return (AWSResponse("https://sandbox.invalid", status, {}, None),
                    {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}})
        return None

    def _after_call(self, http_response, parsed, model, context=None, **_):
        if http_response.status_code >= 300:
            return
        for auditor in self.auditors:
            auditor(model.name, (context or {}).get("audit_params") or {})
        remaining = getattr(self._local, "crash_after", None)
        if remaining is None:
            return
        if remaining <= 1:
            self._local.crash_after = None
            self.crashes_done += 1
            raise SimulatedCrash(f"injected crash after {model.name}")
        self._local.crash_after = remaining - 1
