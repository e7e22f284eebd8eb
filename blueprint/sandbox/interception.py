"""The one way in for a caller that watches or disturbs the sandbox's functions (the drill): an
`Interception` given to `Sandbox(recorded, emulator, interception)`.

It holds two things, both optional (what happened is read back afterwards from the sandbox's
`Journal`: every invocation, its event, its successful AWS calls and how it ended):

- function wrappers, by function name: `wrap(name, wrapper)`; from then on every invocation of that
  function, whatever triggers it (an event source mapping, an asynchronous invoke, a Step Functions
  task, `Sandbox.invoke`), runs `wrapper(event, context)` instead, and the wrapper runs the function
  itself (the sandbox's `LocalFunction`, which it holds) as many times as it likes;
- a request interceptor (`RequestInterceptor`): sees every AWS request a function makes while it
  runs, before it is sent (it may answer it instead of the emulator: an injected throttle) and
  after it succeeded (with the API parameters and the parsed response).

Before either, every call a function makes is put to the sandbox's authorizer (`install_authorizer`:
sandbox/authorization.py), which refuses what the function's role does not allow as AWS would; a
refused call reaches neither the interceptor nor the emulator.

Requests the sandbox makes itself (realizing, polling, the drill's checks) and those of the emulator's
own Step Functions interpreter never reach the interceptor: only calls made on a thread while a
function runs do. Handlers know nothing of any of this: they make their calls through their own
`boto3.client(...)` and read only their environment and their Lambda context.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Callable, Iterator, Optional, Protocol

import boto3
from botocore.awsrequest import AWSResponse

from integration_blueprint.core.patches import BOTOCORE_VERIFIED, FIX, Patcher, patch
from integration_blueprint.sandbox.errors import CodeError, error_type

# Set on a botocore request a before-send hook has answered (an interceptor's response): moto must
# not also carry it out, since botocore runs every before-send handler (the emulator's fix
# answered_requests_are_not_dispatched reads it).
ANSWERED = "sandbox_answered"

# The patch every emulator applies for its block (emulator.EMULATOR_PATCHES).
NAMES = ("request_hooks_on_every_session",)

Wrapper = Callable[[Any, Any], Any]


class RequestInterceptor(Protocol):
    def before_send(self, service: str, operation: str, request: Any) -> Optional[AWSResponse]:
        """A function's request about to be sent: a response answers it (the emulator never sees
        it, as a real throttle never reaches the service); None lets it through."""

    def after_call(self, operation: str, params: dict, parsed: dict) -> None:
        """A function's call succeeded (HTTP < 300): the API parameters as the function passed them,
        and the parsed response. May raise a BaseException to end the invocation there (a crash)."""


class Authorizing(Protocol):
    """Who decides whether a function's call is allowed (sandbox/authorization.py Authorizer)."""

    def check(self, function: str, service: str, operation: str, params: dict, region: str) -> Optional[dict]:
        """None: the call goes on. Else the parsed refusal (botocore raises ClientError from it)."""

    def observe(self, operation: str, params: dict, parsed: dict) -> None:
        """A function's call succeeded (what a later decision may depend on)."""


class Interception:
    def __init__(self, requests: Optional[RequestInterceptor] = None):
        self.requests = requests
        self._wrappers: dict[str, Wrapper] = {}

    def wrap(self, function_name: str, wrapper: Wrapper) -> None:
        """Every invocation of `function_name` runs `wrapper(event, context)` from now on."""
        self._wrappers[function_name] = wrapper

    def wrapper(self, function_name: str) -> Optional[Wrapper]:
        return self._wrappers.get(function_name)


@dataclass
class Call:
    """One AWS call a function made that succeeded (HTTP < 300)."""

    operation: str  # the API operation ("PutItem")
    params: dict  # the API parameters, as the function passed them
    response: Any  # the parsed response


@dataclass
class Invocation:
    """One run of a function: its event, the calls it made that succeeded, and how it ended."""

    function: str
    event: Any
    calls: list = field(default_factory=list)  # Call, in order
    error: Optional[str] = None  # `Type: message` if it raised (a crash included)
    cause: Optional[CodeError] = None  # what its code raised, where (a function running in its own process)
    finished: bool = False  # it returned or raised (until then, `error` None says nothing)


class Journal:
    """Every invocation the sandbox ran, in the order they started, with their successful AWS calls:
    what a caller reads afterwards to check effects, instead of being called back on every request."""

    def __init__(self) -> None:
        self.invocations: list[Invocation] = []

    def calls(self, since: int = 0) -> Iterator[tuple[Invocation, Call]]:
        """Every call of the invocations from the `since`-th on (len() before a phase marks it)."""
        for invocation in self.invocations[since:]:
            for call in invocation.calls:
                yield invocation, call

    def __len__(self) -> int:
        return len(self.invocations)


_RUNNING = threading.local()  # .invocation: the invocation running on this thread, if any


def running_invocation() -> Optional[Invocation]:
    """The invocation this thread is running (None outside one)."""
    return getattr(_RUNNING, "invocation", None)


class FunctionRun:
    """Marks this thread as running an invocation of `name` for a block and journals it (nested
    runs restore the outer one)."""

    def __init__(self, name: str, event: Any, journal: Optional[Journal]):
        self.invocation = Invocation(name, event)
        self.journal = journal
        self.outer: Optional[Invocation] = None

    def __enter__(self) -> Invocation:
        self.outer = running_invocation()
        _RUNNING.invocation = self.invocation
        if self.journal is not None:
            self.journal.invocations.append(self.invocation)
        return self.invocation

    def __exit__(self, kind: Any, error: Any, _traceback: Any) -> None:
        _RUNNING.invocation = self.outer
        if error is not None:
            self.invocation.error = f"{error_type(error)}: {str(error)[:200]}"
            cause = getattr(error, "cause", None)  # a FunctionError's (sandbox/errors.py)
            self.invocation.cause = cause if isinstance(cause, CodeError) else None
        self.invocation.finished = True


# The interceptor and the authorizer of the sandbox whose emulator is running (None between them).
_ACTIVE: dict[str, Any] = {"requests": None, "authorizer": None}


def _remember_params(params, context=None, **_):
    if context is not None and running_invocation() is not None:
        context["sandbox_params"] = params  # the API parameters, as the function passed them


def _authorize(model, params=None, request_signer=None, context=None, **_):
    """A function's call, before it is sent: refused here, as AWS refuses it, when its role does not
    allow it (the emulator never sees it); the call's parameters are those the function passed."""
    authorizer = _ACTIVE["authorizer"]
    invocation = running_invocation()
    if authorizer is None or invocation is None:
        return None
    api_params = (context or {}).get("sandbox_params") or {}
    refusal = authorizer.check(invocation.function, model.service_model.signing_name, model.name, api_params,
                               getattr(request_signer, "region_name", "") or "")
    if refusal is None:
        return None
    return AWSResponse("", refusal["ResponseMetadata"]["HTTPStatusCode"], {}, None), refusal


def _before_send(request, event_name="", **_):
    interceptor = _ACTIVE["requests"]
    if interceptor is None or running_invocation() is None:
        return None
    _, service, operation = (event_name.split(".") + ["", ""])[:3]  # before-send.<service>.<operation>
    response = interceptor.before_send(service, operation, request)
    if response is not None:
        setattr(request, ANSWERED, True)  # moto must not also carry it out
    return response


def _after_call(http_response, parsed, model, context=None, **_):
    invocation = running_invocation()
    if invocation is None or http_response.status_code >= 300:
        return
    params = (context or {}).get("sandbox_params") or {}
    # Copies as they are now: boto3's DynamoDB resource layer turns both into plain Python values
    # in place after this hook. Journaled before a crash: the effect is done.
    invocation.calls.append(Call(model.name, journal_copy(params), journal_copy(parsed)))
    authorizer = _ACTIVE["authorizer"]
    if authorizer is not None:
        authorizer.observe(model.name, params, parsed)
    interceptor = _ACTIVE["requests"]
    if interceptor is not None:
        interceptor.after_call(model.name, params, parsed)


# Values a call's parameters and parsed response hold that nothing can change in place.
_IMMUTABLE = frozenset({str, bytes, int, float, bool, type(None), Decimal, datetime})


def journal_copy(value: Any, memo: Optional[dict] = None) -> Any:
    """`value` copied as copy.deepcopy copies it (a sub-value held in two places, or holding
    itself, is copied once, through the same memo), for what botocore's parameters and parsed
    responses are made of (dicts, lists, immutable leaves) without deepcopy's dispatch per value
    (3-4% of a stream pattern's CPU: two copies per call); anything else (a streaming body, a set, a
    tuple) is copied by copy.deepcopy."""
    kind = type(value)
    if kind in _IMMUTABLE:
        return value
    if memo is None:
        memo = {}
    copied = memo.get(id(value))
    if copied is not None:
        return copied
    if kind is dict:
        copied = memo[id(value)] = {}
        for key, item in value.items():
            copied[key] = journal_copy(item, memo)
    elif kind is list:
        copied = memo[id(value)] = []
        for item in value:
            copied.append(journal_copy(item, memo))
    else:
        copied = copy.deepcopy(value, memo)
    return copied


@patch("request_hooks_on_every_session", target="botocore.handlers.BUILTIN_HANDLERS", package="botocore",
       verified=BOTOCORE_VERIFIED, kind=FIX,
       buys="every botocore session made while the emulator runs carries the sandbox's request hooks, so the "
            "calls a function makes through a session of its own (Powertools' idempotency layer makes one) are "
            "journaled and faulted like those of the default session")
def _request_hooks_on_every_session(patcher: Patcher) -> None:
    import moto.core.models  # noqa: F401 - moto adds its stubber to the list when imported: before the copy
    from botocore import handlers

    patcher.replace(handlers, "BUILTIN_HANDLERS", [
        *handlers.BUILTIN_HANDLERS,
        # On `<event>.*.*`, as specific as a service's own handlers: botocore runs the most specific
        # first, and boto3's DynamoDB resource layer rewrites the response in place on `after-call.dynamodb`.
        ("before-parameter-build.*.*", _remember_params),
        # Before anything is sent (and before an injected fault): a refused call never reaches AWS.
        ("before-call.*.*", _authorize),
        # First, so an answered request is answered here and never carried out by the emulator.
        ("before-send.*.*", _before_send, handlers.REGISTER_FIRST),
        ("after-call.*.*", _after_call),
    ])


def without_request_hooks(session: Any) -> Any:
    """`session` (a boto3 Session) with the hooks taken off: the sandbox's own calls (realizing,
    polling, checking) never pass through them."""
    events = session.events
    events.unregister("before-parameter-build.*.*", _remember_params)
    events.unregister("before-call.*.*", _authorize)
    events.unregister("before-send.*.*", _before_send)
    events.unregister("after-call.*.*", _after_call)
    return session


def install_request_hooks(interceptor: Optional[RequestInterceptor], on_stop: list) -> None:
    """From now on until the emulator's block ends, the running invocation journals its successful
    calls and `interceptor` (if any) sees its requests, whichever session its clients come from
    (the hooks are on every session, request_hooks_on_every_session), until the emulator's block
    ends (`on_stop`: its undo list). The default session is made again so it carries them too."""
    _ACTIVE["requests"] = interceptor
    boto3.setup_default_session()

    def uninstall() -> None:
        _ACTIVE["requests"] = None

    on_stop.append(uninstall)


def install_authorizer(authorizer: Optional[Authorizing], on_stop: list) -> None:
    """From now on until the emulator's block ends, every call a function makes is first put to
    `authorizer` (the hooks are on every session, as for the interceptor)."""
    _ACTIVE["authorizer"] = authorizer

    def uninstall() -> None:
        _ACTIVE["authorizer"] = None

    on_stop.append(uninstall)
