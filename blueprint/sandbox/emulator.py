"""The embedded AWS emulator: moto, in this process.

Every botocore request made while it runs, by the sandbox or by a handler through its own
unmodified `boto3.client(...)`, is answered by moto's in-process dispatcher (moto's `mock_aws`)
from AWS's own endpoint URLs, without a socket: no HTTP server, no thread per request, no request
serialized twice. Nothing leaves the process: a request moto does not answer fails loudly
(`NotEmulated`) instead of reaching the network, and the AWS endpoint variables a developer may
have set (AWS_ENDPOINT_URL, for LocalStack) are cleared for the run.

moto spends most of a drill's CPU; sandbox/shortcuts.py makes it faster without changing its answers.
Every change the emulator makes to moto and botocore (its fixes here and in moto_fixes.py, its speed
changes) is a registered patch (integration_blueprint.core.patches), applied for the emulator's block
and undone after it.
"""

from __future__ import annotations

import gc
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

import boto3
from botocore.config import Config

from integration_blueprint.core import patches
from integration_blueprint.core.patches import BOTOCORE_VERIFIED, FIX, MOTO_VERIFIED, Patcher, patch
from integration_blueprint.sandbox import authorization, distributed_map, interception, moto_fixes, shortcuts
from integration_blueprint.sandbox.interception import ANSWERED

FAKE_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "sandbox", "AWS_SECRET_ACCESS_KEY": "sandbox"}


@dataclass
class Emulator:
    region: str
    running: bool = True  # False once its block has ended
    # What answers lambda:Invoke from moto's Step Functions interpreter (moto's own Lambda would
    # start Docker): (function name, payload) -> Lambda's Invoke response. The sandbox sets it.
    invoke_function: Optional[Callable[[str, Any], dict]] = None
    # What the state machines run by the sandbox's Distributed Map executor billed (transitions,
    # child executions, EXPRESS children): the drill's cost meter reads it.
    state_machine_usage: distributed_map.StateMachineUsage = field(default_factory=distributed_map.StateMachineUsage)
    time_scale: float = field(default_factory=lambda: TIME_SCALE)  # waits and timeouts last this share of AWS's
    # Called, last first, when the block ends: what a sandbox set up for it (its interceptor, the
    # folders of the team's code and their place on sys.path).
    on_stop: list = field(default_factory=list, repr=False)
    # The sandbox's clients, one per session and service: a client is thread-safe and costs ~10 ms
    # to make, and the drivers ask for one each time they poll or check.
    _clients: dict = field(default_factory=dict, repr=False)
    _clients_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def session(self) -> boto3.session.Session:
        """A session for the sandbox's own calls (realizing, polling, checking): made outside any
        function's run, so nothing it sends is journaled or faulted (sandbox/interception.py)."""
        return interception.without_request_hooks(boto3.session.Session(
            aws_access_key_id="sandbox", aws_secret_access_key="sandbox", region_name=self.region))

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


@patch("answered_requests_are_not_dispatched", target="moto.core.botocore_stubber.BotocoreStubber.__call__",
       package="moto", verified=MOTO_VERIFIED, kind=FIX,
       buys="a request a before-send handler already answered (an injected fault) is not also carried out by "
            "moto, which botocore would call as the next before-send handler")
def _answered_requests_are_not_dispatched(patcher: Patcher) -> None:
    from moto.core.botocore_stubber import BotocoreStubber

    dispatch = BotocoreStubber.__call__

    def __call__(self, event_name, request, **kwargs):
        if getattr(request, ANSWERED, False):
            return None
        return dispatch(self, event_name, request, **kwargs)

    patcher.replace(BotocoreStubber, "__call__", __call__)


@patch("nothing_leaves_the_process", target="botocore.endpoint.Endpoint._send", package="botocore",
       verified=BOTOCORE_VERIFIED, kind=FIX,
       buys="a request moto does not answer fails (NotEmulated) instead of reaching the network")
def _nothing_leaves_the_process(patcher: Patcher) -> None:
    from botocore import endpoint

    def refuse(self, request):
        raise NotEmulated(f"the sandbox's emulator did not answer {request.method} {request.url}; "
                          "no request is sent to the network")

    patcher.replace(endpoint.Endpoint, "_send", refuse)


# The sandbox's one time compression for waits it cannot skip: botocore's backoff after a throttle
# or 5xx (the retries themselves unchanged), Step Functions retry waits (still computed by moto from
# the definition) and, in realization.py, the remaining time a handler sees all shrink by this
# factor, so a wait takes the same share of an invocation's time (or of an INPROGRESS record's
# life) as on AWS. Whole seconds become milliseconds.
TIME_SCALE = 0.002


def _compressed_clock():
    import time as real_time
    import types

    return types.SimpleNamespace(sleep=lambda seconds: real_time.sleep(seconds * TIME_SCALE),
                                 time=real_time.time, monotonic=real_time.monotonic)


@patch("compress_sdk_retry_waits", target="botocore.endpoint.time", package="botocore",
       verified=BOTOCORE_VERIFIED, kind=FIX,
       buys="botocore's backoff between retries lasts TIME_SCALE of its length (the retries unchanged)")
def _compress_sdk_retry_waits(patcher: Patcher) -> None:
    from botocore import endpoint

    patcher.replace(endpoint, "time", _compressed_clock())


@patch("compress_state_machine_retry_waits",
       target="moto.stepfunctions.parser.asl.component.common.retry.retrier_decl.time", package="moto",
       verified=MOTO_VERIFIED, kind=FIX,
       buys="Step Functions retry waits (as the interpreter computes them) last TIME_SCALE of their length")
def _compress_state_machine_retry_waits(patcher: Patcher) -> None:
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

    patcher.replace(retrier_decl, "time", _compressed_clock())


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
    global _RUNNING
    emulator = _RUNNING = Emulator(region=region)
    previous_threshold = gc.get_threshold()
    # mock_aws starts from empty backends and stops with them discarded; the patches are undone.
    with patches.applied(EMULATOR_PATCHES), _without_endpoint_overrides(), \
            mock_aws(), environment_variables(emulator.environment()), distributed_map.serving(emulator):
        gc.set_threshold(EMULATOR_GC_THRESHOLD, *previous_threshold[1:])
        try:
            yield emulator
        finally:
            for undo in reversed(emulator.on_stop):
                undo()
            gc.set_threshold(*previous_threshold)
            emulator.running = False
            _RUNNING = None


# Allocations between two collections of the young generation while the emulator runs (Python's
# default is 700). moto allocates a great many short-lived objects per request: at 700 a
# 600-record stream drill collected 840 times (1.0 s of its 14 s of CPU), at 50,000 16 times (0.55 s).
EMULATOR_GC_THRESHOLD = 50_000


_RUNNING: Optional[Emulator] = None  # the emulator whose block this process is in


@patch("state_machine_lambda_tasks_run_in_process",
       target="moto.stepfunctions.parser.asl.component.state.exec.state_task.lambda_eval_utils.boto_client_for",
       package="moto", verified=MOTO_VERIFIED, kind=FIX,
       buys="Step Functions' Lambda tasks invoke the sandbox's functions (moto's Lambda would start Docker)")
def _state_machine_lambda_tasks_run_in_process(patcher: Patcher) -> None:
    from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils

    build = lambda_eval_utils.boto_client_for

    class InProcessLambda:
        def __init__(self, emulator: Emulator):
            self.emulator = emulator

        def invoke(self, FunctionName: str, Payload: Any = None, **_):
            assert self.emulator.invoke_function is not None
            return self.emulator.invoke_function(FunctionName, Payload)

    def boto_client_for(region, service, state_credentials=None):
        emulator = _RUNNING
        if service == "lambda" and emulator is not None and emulator.invoke_function is not None:
            return InProcessLambda(emulator)
        return build(region, service, state_credentials)

    patcher.replace(lambda_eval_utils, "boto_client_for", boto_client_for)


# Every patch the emulator applies for its block (patches.REGISTRY has each one's target and versions).
EMULATOR_PATCHES = ("answered_requests_are_not_dispatched", "nothing_leaves_the_process", "compress_sdk_retry_waits",
                    "compress_state_machine_retry_waits", "state_machine_lambda_tasks_run_in_process",
                    *interception.NAMES, *authorization.NAMES, *moto_fixes.NAMES, *distributed_map.NAMES, *shortcuts.NAMES)
