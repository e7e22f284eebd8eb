"""A preview run's private channels: the engine, the policy pack and the component plugin listen on
Unix sockets in a folder only the run's user can enter (0700), and answer only calls that carry
the run's token.

The folder keeps other users out (the kernel checks it on connect); the token keeps out a process
of the same user that is not part of the run (a socket's path is listed in /proc/net/unix, a
command line and an environment in /proc/<pid>). A token travels to a child on an inherited pipe
(`hand_over` / `handed_over`), never on a command line or in the environment, and every call
carries it as gRPC metadata. The engine's token goes to the program and the plugin, whose SDKs
call the engine; the pack's and the plugin's tokens stay with the gate, their only client, so a
program under test cannot reconfigure the pack that judges it.

Standard library and grpc only: the program's own interpreter imports this file (python_exec.py).
"""

from __future__ import annotations

import collections
import hmac
import json
import os
import secrets
import threading
from typing import Optional

import grpc

TOKEN_HEADER = "blueprint-run-token"
# The number of the inherited pipe a child reads its channel settings from (a number, not a secret).
FD_VARIABLE = "BLUEPRINT_CHANNEL_FD"
REFUSAL = "this channel belongs to one blueprint preview run; a call without the run's token is refused"


def new_token() -> str:
    return secrets.token_hex(32)


def socket_address(folder: str, name: str) -> str:
    """A gRPC address (both the Python and the Node.js SDK dial `unix:` addresses as given)."""
    return f"unix:{os.path.join(folder, name + '.sock')}"


def hand_over(settings: dict) -> int:
    """The read end of a pipe holding `settings`, for one child to inherit (Popen pass_fds, and
    FD_VARIABLE naming it in its environment) and read once with `handed_over`."""
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as pipe:
        pipe.write(json.dumps(settings))  # far below a pipe's buffer: the write never waits
    return read_end


def handed_over() -> Optional[dict]:
    """What the parent handed over on the inherited pipe; None for a process not started by a
    preview (a plugin started by the Pulumi CLI)."""
    number = os.environ.pop(FD_VARIABLE, "")
    if not number.isdigit():
        return None
    with os.fdopen(int(number)) as pipe:
        return json.loads(pipe.read())


def _carries(metadata, token: bytes) -> bool:
    sent = next((value for key, value in metadata or () if key == TOKEN_HEADER), "")
    return hmac.compare_digest(sent.encode() if isinstance(sent, str) else sent, token)


def _refuse(request, context):
    context.abort(grpc.StatusCode.UNAUTHENTICATED, REFUSAL)


async def _refuse_async(request, context):
    await context.abort(grpc.StatusCode.UNAUTHENTICATED, REFUSAL)


ONCE_REFUSAL = ("this method was called once already by the blueprint preview run that owns the channel; "
                "a second call is refused (the pack is configured once, before the program starts)")


def _refuse_again(request, context):
    context.abort(grpc.StatusCode.FAILED_PRECONDITION, ONCE_REFUSAL)


class TokenCheck(grpc.ServerInterceptor):
    """A server's calls go through only with the run's token; the methods named in `once` (full
    gRPC method names) only the first time, even with it."""

    def __init__(self, token: str, once: tuple[str, ...] = ()):
        self._token = token.encode()
        self._refused = grpc.unary_unary_rpc_method_handler(_refuse)
        self._refused_again = grpc.unary_unary_rpc_method_handler(_refuse_again)
        self._once, self._lock = set(once), threading.Lock()
        self._called: set[str] = set()

    def intercept_service(self, continuation, handler_call_details):
        if not _carries(handler_call_details.invocation_metadata, self._token):
            return self._refused
        method = handler_call_details.method
        if method in self._once:
            with self._lock:
                if method in self._called:
                    return self._refused_again
                self._called.add(method)
        return continuation(handler_call_details)


class AsyncTokenCheck(grpc.aio.ServerInterceptor):
    """TokenCheck for an asyncio server (the Python provider SDK's)."""

    def __init__(self, token: str):
        self._token = token.encode()
        self._refused = grpc.unary_unary_rpc_method_handler(_refuse_async)

    async def intercept_service(self, continuation, handler_call_details):
        if _carries(handler_call_details.invocation_metadata, self._token):
            return await continuation(handler_call_details)
        return self._refused


class _CallDetails(collections.namedtuple("_CallDetails", ("method", "timeout", "metadata", "credentials",
                                                           "wait_for_ready", "compression")),
                   grpc.ClientCallDetails):
    pass


class _TokenSend(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    def __init__(self, token: str):
        self._header = (TOKEN_HEADER, token)

    def _details(self, details) -> _CallDetails:
        return _CallDetails(details.method, details.timeout, [*(details.metadata or ()), self._header],
                            details.credentials, details.wait_for_ready, details.compression)

    def intercept_unary_unary(self, continuation, client_call_details, request):
        return continuation(self._details(client_call_details), request)

    def intercept_unary_stream(self, continuation, client_call_details, request):
        return continuation(self._details(client_call_details), request)


def with_token(channel: grpc.Channel, token: str) -> grpc.Channel:
    """`channel` with the run's token on every call."""
    return grpc.intercept_channel(channel, _TokenSend(token))


class GrpcAsSeenBy:
    """The grpc module as one library module sees it, some of its functions replaced: how a
    registered patch (integration_blueprint.core.patches) changes what that module binds or dials, and
    nothing else in its process."""

    def __init__(self, **replaced):
        self.__dict__.update(replaced)

    def __getattr__(self, name: str):
        return getattr(grpc, name)
