"""The one way in for a caller that watches or disturbs the sandbox's functions (the drill): an
`Interception` given to `Sandbox(recorded, emulator, interception)`.

It holds two things, both optional:

- function wrappers, by function name: `wrap(name, wrapper)`; from then on every invocation of that
  function, whatever triggers it (an event source mapping, an asynchronous invoke, a Step Functions
  task, `Sandbox.invoke`), runs `wrapper(event, context)` instead, and the wrapper runs the function
  itself (the sandbox's `LocalFunction`, which it holds) as many times as it likes;
- a request interceptor (`RequestInterceptor`): sees every AWS request a function makes while it
  runs, before it is sent (it may answer it instead of the emulator: an injected throttle) and
  after it succeeded (with the API parameters and the parsed response).

Requests the sandbox makes itself (realizing, polling, the drill's checks) and those of the emulator's
own Step Functions interpreter never reach the interceptor: only calls made on a thread while a
function runs do. Handlers know nothing of any of this: they make their calls through their own
`boto3.client(...)` and read only their environment and their Lambda context.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional, Protocol

import boto3
from botocore.awsrequest import AWSResponse

from integration_blueprint.sandbox.emulator import ANSWERED, Emulator

Wrapper = Callable[[Any, Any], Any]


class RequestInterceptor(Protocol):
    def before_send(self, service: str, operation: str, request: Any) -> Optional[AWSResponse]:
        """A function's request about to be sent: a response answers it (the emulator never sees
        it, as a real throttle never reaches the service); None lets it through."""

    def after_call(self, operation: str, params: dict, parsed: dict) -> None:
        """A function's call succeeded (HTTP < 300): the API parameters as the function passed them,
        and the parsed response. May raise a BaseException to end the invocation there (a crash)."""


class Interception:
    def __init__(self, requests: Optional[RequestInterceptor] = None):
        self.requests = requests
        self._wrappers: dict[str, Wrapper] = {}

    def wrap(self, function_name: str, wrapper: Wrapper) -> None:
        """Every invocation of `function_name` runs `wrapper(event, context)` from now on."""
        self._wrappers[function_name] = wrapper

    def wrapper(self, function_name: str) -> Optional[Wrapper]:
        return self._wrappers.get(function_name)


_RUNNING = threading.local()  # .function: the name of the function running on this thread, if any


def running_function() -> Optional[str]:
    """The function whose invocation this thread is running (None outside an invocation)."""
    return getattr(_RUNNING, "function", None)


class FunctionRun:
    """Marks this thread as running `name` for a block (nested runs restore the outer one)."""

    def __init__(self, name: str):
        self.name = name
        self.outer: Optional[str] = None

    def __enter__(self) -> None:
        self.outer = running_function()
        _RUNNING.function = self.name

    def __exit__(self, *_: Any) -> None:
        _RUNNING.function = self.outer


def install_request_hooks(interceptor: RequestInterceptor, emulator: Emulator) -> None:
    """Hook the default boto3 session (where handlers' clients come from) so `interceptor` sees the
    requests functions make, until the emulator's block ends. Clients made from now on carry the hooks."""
    boto3.setup_default_session()
    events = boto3.DEFAULT_SESSION.events

    def remember_params(params, context=None, **_):
        if context is not None and running_function() is not None:
            context["sandbox_params"] = params  # the API parameters, as the function passed them

    def before_send(request, event_name="", **_):
        if running_function() is None:
            return None
        _, service, operation = (event_name.split(".") + ["", ""])[:3]  # before-send.<service>.<operation>
        response = interceptor.before_send(service, operation, request)
        if response is not None:
            setattr(request, ANSWERED, True)  # moto must not also carry it out
        return response

    def after_call(http_response, parsed, model, context=None, **_):
        if running_function() is None or http_response.status_code >= 300:
            return
        interceptor.after_call(model.name, (context or {}).get("sandbox_params") or {}, parsed)

    events.register("before-parameter-build.*.*", remember_params)
    # First, so an answered request is answered here and never carried out by the emulator.
    events.register_first("before-send.*.*", before_send)
    events.register("after-call.*.*", after_call)

    def uninstall() -> None:
        events.unregister("before-parameter-build.*.*", remember_params)
        events.unregister("before-send.*.*", before_send)
        events.unregister("after-call.*.*", after_call)

    emulator.on_stop.append(uninstall)
