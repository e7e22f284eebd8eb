"""A function's Lambda execution environment, on the worker's side: the first code that runs in the
process the sandbox starts for a function (sandbox/execution_environment.py), before any of the
function's own. Standard library only, until the function's paths are set.

    python -I -S -B lambda_bootstrap.py <fd from the sandbox> <fd to the sandbox>

It reads its settings from the sandbox (the import path: the function's archive, its layers, the
Python runtime's boto3; its /tmp; its memory size; the handler), then:
- installs an audit hook that refuses, and reports to the sandbox, a connection (every one: the
  emulator is reached through the sandbox's pipe, not a socket) and a write outside its /tmp: a
  report for the drill, not a wall (the walls were made outside this process, before it started:
  integration_blueprint.containment);
- limits its address space (RLIMIT_AS) to what it started with plus the function's memory size, where
  the drill could not bound all it holds with a cgroup (containment.Limits);
- imports the handler as Lambda's runtime does (Runtime.ImportModuleError naming the module, or
  Runtime.HandlerNotFound), with every botocore request answered by the sandbox: the request's
  API parameters go to the sandbox, which makes the call against the emulator (journaling it and
  injecting its faults there, where this process cannot reach) and sends back the parsed response;
- then runs invocations, one at a time, until the sandbox closes the pipe.

Messages are length-prefixed JSON both ways; bytes, datetimes and streams are tagged (see _encode).
"""

import base64
import datetime
import importlib
import io
import json
import os
import struct
import sys
import threading
import time
import traceback


class Channel:
    """The pipe pair to the sandbox. One message at a time each way (calls from several threads of
    the function take turns)."""

    def __init__(self, read_fd, write_fd):
        self.read_fd, self.write_fd = read_fd, write_fd
        self.lock = threading.Lock()  # a call and its reply
        self.sending = threading.Lock()  # one message at a time (a refusal may come from any thread)

    def send(self, message):
        data = json.dumps(message, default=_encode).encode()
        payload = struct.pack(">I", len(data)) + data
        with self.sending:
            while payload:
                written = os.write(self.write_fd, payload)
                payload = payload[written:]

    def receive(self):
        header = self._read(4)
        if header is None:
            return None
        return json.loads(self._read(struct.unpack(">I", header)[0]), object_hook=_decode)

    def _read(self, size):
        chunks: list = []
        left = size
        while left:
            chunk = os.read(self.read_fd, min(left, 1 << 20))
            if not chunk:  # the sandbox closed the pipe: between messages, the end; inside one, gone
                if left == size:
                    return None
                os._exit(3)
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def request(self, message):
        """Send and wait for the sandbox's reply (a call made by any thread of the function)."""
        with self.lock:
            self.send(message)
            return self.receive()


def _encode(value):
    if isinstance(value, (bytes, bytearray)):
        return {"__bytes__": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, datetime.datetime):
        return {"__datetime__": value.isoformat()}
    if hasattr(value, "read"):  # a file or stream the function passed as a body
        return {"__bytes__": base64.b64encode(value.read()).decode()}
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)  # a Decimal or an object the SDK would have serialized as text


def _decode(value):
    if "__bytes__" in value and len(value) == 1:
        return base64.b64decode(value["__bytes__"])
    if "__stream__" in value and len(value) == 1:
        data = base64.b64decode(value["__stream__"])
        from botocore.response import StreamingBody
        return StreamingBody(io.BytesIO(data), len(data))
    if "__datetime__" in value and len(value) == 1:
        return datetime.datetime.fromisoformat(value["__datetime__"])
    return value


# --- guards ------------------------------------------------------------------------------------------

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_PATH_EVENTS = {"os.remove", "os.rename", "os.replace", "os.mkdir", "os.rmdir", "os.symlink", "os.link",
                "os.chmod", "os.chown", "os.truncate", "os.utime", "shutil.rmtree", "shutil.move"}
_NETWORK_EVENTS = {"socket.connect", "socket.sendto", "socket.sendmsg", "socket.getaddrinfo",
                   "socket.gethostbyname", "socket.gethostbyaddr"}


def install_guards(channel, writable, unreadable, readable):
    """An audit hook (it cannot be removed) refusing connections and writes outside `writable`,
    reads under `unreadable` (the user's home) but outside `readable` (the function's paths) and
    reads of another process's /proc entries (its environment);
    each refusal is reported to the sandbox before the function sees PermissionError."""
    writable = [os.path.realpath(p) for p in writable]
    unreadable = [os.path.realpath(p) for p in unreadable]
    readable = [os.path.realpath(p) for p in readable]
    local = threading.local()
    own_pid = str(os.getpid())

    def under(path, roots):
        return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)

    def refuse(kind, detail):
        local.busy = True
        try:
            channel.send({"guard": {"kind": kind, "detail": detail}})
        finally:
            local.busy = False
        raise PermissionError(f"refused by the sandbox ({kind}): {detail}; a Lambda function reaches AWS through the "
                              "SDK and writes only under /tmp")

    def resolve(path):
        if isinstance(path, int):
            return None
        if isinstance(path, bytes):
            path = path.decode(errors="replace")
        return os.path.realpath(os.path.join(os.getcwd(), os.fspath(path)))

    def hook(event, args):
        if getattr(local, "busy", False):
            return
        if event in _NETWORK_EVENTS:
            target = args[1] if len(args) > 1 else args[0] if args else ""
            refuse("connection", f"{event} {target!r}")
        elif event == "open":
            path, mode, flags = (list(args) + [None, None, None])[:3]
            resolved = resolve(path)
            if resolved is None or resolved.startswith("/dev/"):
                return
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool((flags or 0) & _WRITE_FLAGS)
            if writes and not under(resolved, writable):
                refuse("write", f"open {resolved!r} for writing")
            if not writes and under(resolved, unreadable) and not under(resolved, readable):
                refuse("read", f"open {resolved!r} (the user's home)")
            if not writes and resolved.startswith("/proc/") and resolved.split("/")[2].isdigit() \
                    and resolved.split("/")[2] != own_pid:
                refuse("read", f"open {resolved!r} (another process)")
        elif event in _PATH_EVENTS:
            for path in args[:2]:
                resolved = resolve(path) if isinstance(path, (str, bytes, os.PathLike)) else None
                if resolved is not None and not under(resolved, writable):
                    refuse("write", f"{event} {resolved!r}")

    sys.addaudithook(hook)


def limit_memory(memory_mb, address=True):
    """No core files; and, where the drill could not bound all it holds (a cgroup), the address
    space this process has now (the interpreter) plus the function's memory size. Returns None, or
    why the limit could not be set (no /proc, no RLIMIT_AS on this platform)."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if not address:
            return None
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[0])
        limit = pages * os.sysconf("SC_PAGE_SIZE") + memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, OSError, ValueError, AttributeError) as exc:
        return f"memory NOT IN FORCE: {exc}"
    return None


# --- AWS calls through the sandbox ----------------------------------------------------------------

def answer_calls_through(channel):
    """Every botocore client made from now on sends its calls' API parameters to the sandbox and
    gets its parsed response back, through the SDK's own before-call event (as a stubbed client
    does); the SDK still validates and serializes them and raises its modeled errors."""
    try:
        from botocore import handlers
        from botocore.awsrequest import AWSResponse
    except ImportError:
        return  # no SDK on the path: nothing to answer

    def remember_params(params, context=None, **_):
        if context is not None:
            context["sandbox_params"] = params

    def call(model, params, context=None, **_):
        config = (context or {}).get("client_config")
        message = {"call": {"service": model.service_model.service_name, "operation": model.name,
                            "params": (context or {}).get("sandbox_params") or {},
                            "region": (context or {}).get("client_region"),
                            "retries": getattr(config, "retries", None)}}
        reply = channel.request(message)
        if reply is None:
            os._exit(3)  # the sandbox is gone
        if "failure" in reply:
            raise RuntimeError(reply["failure"])
        status = reply["status"]
        return AWSResponse(params.get("url", ""), status, {}, None), reply["parsed"]

    handlers.BUILTIN_HANDLERS.extend([
        ("before-parameter-build", remember_params),
        ("before-call", call),
    ])


# --- the runtime ------------------------------------------------------------------------------------

class Context:
    """The Lambda context object, as the Python runtime passes it."""

    def __init__(self, settings, request):
        self.function_name = settings["function_name"]
        self.function_version = "$LATEST"
        self.invoked_function_arn = settings["function_arn"]
        self.memory_limit_in_mb = settings["memory_mb"]
        self.aws_request_id = request["request_id"]
        self.log_group_name = f"/aws/lambda/{self.function_name}"
        self.log_stream_name = "sandbox"
        self.identity = self.client_context = None
        self._deadline = time.monotonic() + request["budget_seconds"]

    def get_remaining_time_in_millis(self):
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def load_handler(handler, archive):
    module_name, _, attribute = handler.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except SyntaxError as exc:
        raise LambdaError("Runtime.UserCodeSyntaxError", f"Syntax error in module '{module_name}': {exc}", exc) from None
    except ModuleNotFoundError as exc:
        raise LambdaError("Runtime.ImportModuleError",
                          f"Unable to import module '{module_name}': No module named '{exc.name}' (not in the "
                          f"function's archive {archive} nor its layers)", exc) from None
    except Exception as exc:  # noqa: BLE001 - Lambda reports any failure at import the same way
        raise LambdaError("Runtime.ImportModuleError", f"Unable to import module '{module_name}': {exc}", exc) from None
    function = getattr(module, attribute, None)
    if not callable(function):
        raise LambdaError("Runtime.HandlerNotFound", f"Handler '{attribute}' missing on module '{module_name}'")
    return function


class LambdaError(Exception):
    def __init__(self, error_type, message, original=None):
        super().__init__(message)
        self.error_type = error_type
        self.original = original  # what the function's code raised, for its traceback and file:line


def error_payload(exc, paths):
    """The error as Lambda returns it to the caller (errorType, errorMessage, stackTrace), and the
    team's own exception (`cause`), which it also logs as Lambda's runtime does: `[ERROR] Type:
    message` and the traceback, on the function's output (the drill's pattern log)."""
    error_type, message = getattr(exc, "error_type", type(exc).__name__), str(exc)[:1000]
    cause = team_error(exc, paths)
    payload = {"errorType": error_type, "errorMessage": message, "cause": cause,
               "stackTrace": traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:]}
    raised = "" if cause["exception"] is exc else (
        f"\n(raised to Lambda as {error_type}: {(message.splitlines() or [''])[0][:200]})")
    print(f"[ERROR] {cause['errorType']}: {cause['errorMessage']}\n{cause.pop('trace')}{raised}", flush=True)
    del cause["exception"]
    return payload


def within(filename, roots):
    """Whether a frame's file is under one of `roots` (a frozen module's `<frozen ...>` is not)."""
    return os.path.isabs(filename) and os.path.realpath(filename).startswith(roots)


# How much of a traceback the log shows (its innermost frames: a deep recursion prints thousands).
TRACE_CHARACTERS = 8000


def team_error(exc, paths):
    """The exception the team's code raised, as its author reads it, with the deepest frame in the
    function's own code (`location`, relative to its archive, `paths[0]`: not the layers, not this
    package's runtime shipped beside it), and its traceback from the first frame of the function's
    paths on (as Lambda's runtime shows it: not this bootstrap's frames, nor importlib's).

    A wrapper raised outside the team's code is unwrapped to what the team's code raised (`inner`):
    Powertools' BatchProcessingError to the first record's exception, an ExceptionGroup to its
    first, a runtime's error raised while handling the team's; an init error to what the import
    raised."""
    roots = tuple(os.path.realpath(path) + os.sep for path in paths)
    shown = exc
    for _ in range(10):  # a wrapper of a wrapper, not a cycle
        if getattr(shown, "original", None) is not None:
            break  # Lambda's own init error: its type and message say more than the import's
        if team_raised(shown, roots[0]):
            break
        wrapped = list(inner_exceptions(shown))
        # The one the team's code raised, else the first a batch utility or a group holds explicitly.
        inner = next((e for e, _ in wrapped if team_frame(e, roots[0])), None) or \
            next((e for e, explicit in wrapped if explicit), None)
        if inner is None:
            break
        shown = inner
    traced = getattr(shown, "original", None) or shown
    location = function = code = ""
    frame = team_frame(traced, roots[0])
    if frame is not None:
        relative = os.path.realpath(frame.filename)[len(roots[0]):]
        location, function, code = f"{relative}:{frame.lineno}", frame.name, (frame.line or "").strip()
    own = traced.__traceback__
    while own is not None and not within(own.tb_frame.f_code.co_filename, roots):
        own = own.tb_next
    trace = "".join(traceback.format_exception(type(traced), traced, own))
    if len(trace) > TRACE_CHARACTERS:  # the innermost frames, from a whole line on
        trace = "Traceback (its outermost frames cut):\n" + trace[-TRACE_CHARACTERS:].split("\n", 1)[-1]
    return {"exception": shown, "errorType": getattr(shown, "error_type", type(shown).__name__),
            "errorMessage": str(shown)[:1000], "location": location, "function": function, "code": code[:200],
            "trace": trace}


def inner_exceptions(exc):
    """What `exc` wraps, first first, each with whether it holds it explicitly: Powertools'
    `child_exceptions` (exc_info tuples) and an ExceptionGroup's `exceptions` do; the exception it
    was raised from or while handling may be anything."""
    children = getattr(exc, "child_exceptions", None)
    for child in children if isinstance(children, (list, tuple)) else ():
        if isinstance(child, tuple) and len(child) > 1 and isinstance(child[1], BaseException):
            yield child[1], True
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield inner, True
    for inner in (exc.__cause__, exc.__context__):
        if isinstance(inner, BaseException):
            yield inner, False


def team_frames(exc, root):
    """The frames of `exc`'s traceback in the function's own code (its archive, less this
    package's runtime shipped beside it), outermost first; a syntax error's line too."""
    frames = traceback.extract_tb(exc.__traceback__)
    if isinstance(exc, SyntaxError) and exc.filename:
        frames.append(traceback.FrameSummary(exc.filename, exc.lineno or 0, "<module>", line=exc.text or ""))
    return [f for f in frames if within(f.filename, (root,))
            and not os.path.realpath(f.filename)[len(root):].startswith("integration_blueprint" + os.sep)]


def team_frame(exc, root):
    """The deepest frame of the team's code in `exc`'s traceback, or None."""
    frames = team_frames(exc, root)
    return frames[-1] if frames else None


def team_raised(exc, root):
    """Whether the team's code itself raised `exc` (the innermost frame of its traceback is the team's)."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and team_frame(exc, root) == frames[-1]


def compressed(settings):
    """The package's handler runtime, where the function ships it, is told how the sandbox
    compresses time through its declared interface (handlers/runtime/retry.compressed_time)."""
    retry = sys.modules.get("integration_blueprint.handlers.runtime.retry")
    if retry is None:
        import contextlib
        return contextlib.nullcontext()
    return retry.compressed_time(settings["time_scale"])


def watch_sandbox(read_fd):
    """Exit when the sandbox's end of the pipe is gone (the drill was killed)."""
    import select

    poller = select.poll()
    poller.register(read_fd, select.POLLHUP | select.POLLERR)
    while True:
        for _, event in poller.poll(1000):
            if event & (select.POLLHUP | select.POLLERR):
                os._exit(3)
        time.sleep(0.5)


def main():
    channel = Channel(int(sys.argv[1]), int(sys.argv[2]))
    settings = channel.receive()
    threading.stack_size(256 * 1024)
    threading.Thread(target=watch_sandbox, args=(channel.read_fd,), daemon=True).start()
    threading.stack_size(0)
    standard_library = [p for p in sys.path if p]
    own_tmp = settings["tmp"]
    os.environ["TMPDIR"] = own_tmp
    sys.path[:0] = settings["paths"]
    install_guards(channel, writable=[own_tmp], unreadable=settings["unreadable"],
                   readable=settings["paths"] + settings["readable"] + standard_library)
    # Where the drill bounds all it holds (a cgroup), no address-space limit: it would end a function
    # for what it reserved (threads' stacks), not what it holds, which Lambda does not.
    unlimited = limit_memory(settings["memory_mb"], address=settings.get("address_limit", True))
    answer_calls_through(channel)
    try:
        handler = load_handler(settings["handler"], settings["archive"])
    except LambdaError as exc:
        channel.send({"init_error": error_payload(exc, settings["paths"]), "unlimited": unlimited})
        handler = None
    else:
        channel.send({"ready": True, "unlimited": unlimited})
    while True:
        message = channel.receive()
        if message is None:
            return
        request = message["invoke"]
        if handler is None:  # Lambda tries the init again on each invocation
            try:
                handler = load_handler(settings["handler"], settings["archive"])
            except LambdaError as exc:
                channel.send({"error": error_payload(exc, settings["paths"])})
                continue
        try:
            with compressed(settings):
                result = handler(request["event"], Context(settings, request))
        except MemoryError as exc:
            channel.send({"error": {"errorType": "Runtime.OutOfMemory", "errorMessage": f"MemoryError: {exc}"},
                          "fatal": True})
            os._exit(4)
        except (SystemExit, KeyboardInterrupt) as exc:
            channel.send({"error": {"errorType": "Runtime.ExitError",
                                    "errorMessage": f"Runtime exited with error: {exc!r}"}, "fatal": True})
            os._exit(5)
        except BaseException as exc:  # noqa: BLE001 - the function's error is the invocation's result
            channel.send({"error": error_payload(exc, settings["paths"])})
        else:
            try:
                payload = json.loads(json.dumps(result))
            except (TypeError, ValueError) as exc:
                channel.send({"error": {"errorType": "Runtime.MarshalError",
                                        "errorMessage": f"Unable to marshal response: {exc}"}})
            else:
                channel.send({"result": payload})

if __name__ == "__main__":
    main()
