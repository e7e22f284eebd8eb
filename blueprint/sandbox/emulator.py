"""The embedded AWS emulator: moto, in this process.

Every botocore request made while it runs, by the sandbox or by a handler through its own
unmodified `boto3.client(...)`, is answered by moto's in-process dispatcher (moto's `mock_aws`)
from AWS's own endpoint URLs, without a socket: no HTTP server, no thread per request, no request
serialized twice. Nothing leaves the process: a request moto does not answer fails loudly
(`NotEmulated`) instead of reaching the network, and the AWS endpoint variables a developer may
have set (AWS_ENDPOINT_URL, for LocalStack) are cleared for the run.

moto spends most of a drill's CPU; sandbox/shortcuts.py makes it faster without changing its answers.
"""

from __future__ import annotations

import gc
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator

import boto3
from botocore.config import Config

from integration_blueprint.sandbox import shortcuts

FAKE_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "sandbox", "AWS_SECRET_ACCESS_KEY": "sandbox"}


@dataclass
class Emulator:
    region: str
    running: bool = True  # False once its block has ended
    # The sandbox's clients, one per session and service: a client is thread-safe and costs ~10 ms
    # to make, and the drivers ask for one each time they poll or check.
    _clients: dict = field(default_factory=dict, repr=False)
    _clients_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def session(self) -> boto3.session.Session:
        """A session for the sandbox's own calls (realizing, polling, checking). Handlers use the
        default session, which is the only one faults are injected into."""
        return boto3.session.Session(aws_access_key_id="sandbox", aws_secret_access_key="sandbox",
                                     region_name=self.region)

    def client(self, service: str, session: boto3.session.Session | None = None):
        if session is None:
            return self._make_client(service, self.session())
        with self._clients_lock:  # a session is not thread-safe: its clients are made one at a time
            if (session, service) not in self._clients:
                self._clients[session, service] = self._make_client(service, session)
            return self._clients[session, service]

    @staticmethod
    def _make_client(service: str, session: boto3.session.Session):
        return session.client(
            service,  # AWS's own endpoint, answered in-process
            config=Config(retries={"max_attempts": 2, "mode": "standard"}))

    def environment(self) -> dict[str, str]:
        """What a function's environment needs to talk to the emulator."""
        return {"AWS_DEFAULT_REGION": self.region, "AWS_REGION": self.region, **FAKE_CREDENTIALS}


class NotEmulated(RuntimeError):
    """A request the emulator did not answer: the sandbox never sends one to the network."""


# Set on a botocore request a before-send handler has already answered (the drill's fault
# injector): moto must not also carry it out, since botocore runs every before-send handler.
ANSWERED = "sandbox_answered"


def _answered_requests_are_not_dispatched() -> None:
    from moto.core.botocore_stubber import BotocoreStubber

    if getattr(BotocoreStubber, "_sandbox_answered", False):
        return
    dispatch = BotocoreStubber.__call__

    def __call__(self, event_name, request, **kwargs):
        if getattr(request, ANSWERED, False):
            return None
        return dispatch(self, event_name, request, **kwargs)

    BotocoreStubber.__call__ = __call__
    BotocoreStubber._sandbox_answered = True


@contextmanager
def _nothing_leaves_the_process() -> Iterator[None]:
    from botocore import endpoint

    def refuse(self, request):
        raise NotEmulated(f"the sandbox's emulator did not answer {request.method} {request.url}; "
                          "no request is sent to the network")

    send = endpoint.Endpoint._send
    endpoint.Endpoint._send = refuse
    try:
        yield
    finally:
        endpoint.Endpoint._send = send


# The sandbox's one time compression for waits it cannot skip: botocore's backoff after a throttle
# or 5xx (the retries themselves unchanged), Step Functions retry waits (still computed by moto from
# the definition) and, in realization.py, the remaining time a handler sees all shrink by this
# factor, so a wait takes the same share of an invocation's time (or of an INPROGRESS record's
# life) as on AWS. Whole seconds become milliseconds.
TIME_SCALE = 0.002


@contextmanager
def _compressed_sdk_retry_waits() -> Iterator[None]:
    import time as real_time
    import types

    from botocore import endpoint

    original = endpoint.time
    endpoint.time = types.SimpleNamespace(
        sleep=lambda seconds: real_time.sleep(seconds * TIME_SCALE),
        time=real_time.time, monotonic=real_time.monotonic)
    try:
        yield
    finally:
        endpoint.time = original


def _compress_state_machine_retry_waits() -> None:
    import time as real_time
    import types

    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

    if getattr(retrier_decl, "_sandbox_compressed", False):
        return
    retrier_decl.time = types.SimpleNamespace(
        sleep=lambda seconds: real_time.sleep(seconds * TIME_SCALE),
        time=real_time.time, monotonic=real_time.monotonic)
    retrier_decl._sandbox_compressed = True


@contextmanager
def environment_variables(values: dict[str, str]) -> Iterator[None]:
    """Set `values` in os.environ for the block, then put back exactly what was there."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextmanager
def _without_endpoint_overrides() -> Iterator[None]:
    """AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE> would send requests past the emulator."""
    saved = {key: value for key, value in os.environ.items() if key.startswith("AWS_ENDPOINT_URL")}
    for key in saved:
        del os.environ[key]
    try:
        yield
    finally:
        os.environ.update(saved)


@contextmanager
def running_emulator(region: str) -> Iterator[Emulator]:
    """moto answering every AWS request of this process, from an empty account, for the block."""
    from moto import mock_aws
    from moto.core.config import default_user_config

    # The state machine interpreter runs executions (ported from LocalStack); off by default.
    # In-process, it calls S3, SQS and Lambda back through moto's dispatcher too.
    default_user_config["stepfunctions"]["execute_state_machine"] = True
    _answered_requests_are_not_dispatched()
    shortcuts.apply_all()
    _compress_state_machine_retry_waits()
    emulator = Emulator(region=region)
    previous_threshold = gc.get_threshold()
    # mock_aws starts from empty backends and stops with them discarded.
    with _without_endpoint_overrides(), mock_aws(), _nothing_leaves_the_process(), \
            environment_variables(emulator.environment()), _compressed_sdk_retry_waits():
        gc.set_threshold(EMULATOR_GC_THRESHOLD, *previous_threshold[1:])
        try:
            yield emulator
        finally:
            gc.set_threshold(*previous_threshold)
            emulator.running = False


# Allocations between two collections of the young generation while the emulator runs (Python's
# default is 700). moto allocates a great many short-lived objects per request: at 700 a
# 600-record stream drill collected 840 times (1.0 s of its 14 s of CPU), at 50,000 16 times (0.55 s).
EMULATOR_GC_THRESHOLD = 50_000
