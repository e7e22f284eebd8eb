"""A team's function as Lambda runs it: each invocation in an execution environment of its own, a
process started from sandbox/lambda_bootstrap.py, that sees only what its deployment would.

What it sees: its archive (unpacked in the sandbox's staging folder, its working directory), its
declared layers (the Powertools layer stands for itself: the installed aws_lambda_powertools; a
layer the sandbox cannot fetch is left off and noted), the Python runtime's boto3 and botocore,
the standard library; its declared environment plus Lambda's reserved variables and the
emulator's credentials (nothing of the user's environment; HOME is its /tmp); a /tmp of its own.

What it may do, and what ends it:
- AWS calls: its botocore sends each call's API parameters through a pipe; the sandbox makes the
  call against the emulator in this process, on the invoking thread, so the journal and the
  injected faults (sandbox/interception.py) see it as they see an in-process function's, and
  nothing in the function's process can reach them. The answer goes back as the parsed response.
- Its timeout: an invocation still running after `enforced_timeout` of real time (the time the
  emulator spends answering its calls not counted: the emulator is far slower than AWS) is ended
  (the process group killed), `FunctionTimedOut`; its memory size, on everything it holds (a cgroup
  of the environment's own, containment.Limits; where none can be made, RLIMIT_AS and the report
  says memory is not enforced), `FunctionOutOfMemory`; both are FunctionCrashed, as Lambda counts
  them (the batch retried, the event sent to its on-failure destination). The next invocation gets
  a fresh process (a cold start). Lambda's other limits (`function_limits`): /tmp its ephemeral
  storage, 1,024 processes and threads, 1,024 file descriptors; what it prints is capped
  (`function_log`: a bounded head and tail per function).
- Its walls are made outside it, before its code runs (`function_walls`, integration_blueprint.containment:
  bubblewrap): no network, its own PID namespace (every process it started ends with it), of the
  host's files only its archive, layers, the runtime and the interpreter, read-only, a private
  /tmp, an unprivileged uid without capabilities. Where that sandbox cannot be made the drill
  refuses to run the team's code unless --no-isolation (`FunctionSpec.contained` False: a plain
  process, every verdict marked "not contained"). An audit hook in the process reports (a second
  line for the report, never the wall) a connection, a write outside /tmp or a read of the user's
  home; an `Incident` per refusal, per timeout and per out-of-memory end is kept with the invocation's event.

Warm reuse as on Lambda: an environment that finished an invocation serves the next one; concurrent
invocations (a Map's items) each get one of their own.
"""

from __future__ import annotations

import base64
import datetime
import importlib.util
import json
import os
import select
import shutil
import signal
import site
import struct
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from integration_blueprint.containment import (
    SYSTEM_READ_ONLY,
    CappedOutput,
    Contained,
    Limits,
    NotContained,
    Walls,
    cgroup_place,
    containment,
)
from integration_blueprint.core import aws_limits
from integration_blueprint.sandbox.errors import CodeError, FunctionCrashed, FunctionError, SandboxError

BOOTSTRAP = Path(__file__).with_name("lambda_bootstrap.py")

# What the Python runtime of Lambda provides (the AWS SDK and what it imports), and what the
# Powertools layer holds; the sandbox lays out the installed copies of these as the runtime and layer.
RUNTIME_PACKAGES = ("boto3", "botocore", "s3transfer", "jmespath", "dateutil", "urllib3", "six")
POWERTOOLS_PACKAGES = ("aws_lambda_powertools", "typing_extensions", "jmespath")
POWERTOOLS_LAYER_NAME = "AWSLambdaPowertoolsPython"  # in the ARN of every Powertools for Python layer

# Lambda's init phase has 10 s (AWS docs, "Lambda execution environment lifecycle"); an environment
# that has not imported its handler by then is ended.
INIT_SECONDS = 10.0
# The real time an invocation may run before it is ended: its timeout scaled by this, and never less
# than the floor (a busy machine must not end a healthy invocation). Compressed like the drill's
# other waits, less: handlers see TIME_SCALE of their timeout as remaining time.
TIMEOUT_SCALE = 0.05
TIMEOUT_FLOOR_SECONDS = 2.0
# Lambda's /dev/shm is not there to use (multiprocessing's queues fail on it); here it is a small tmpfs.
SHM_BYTES = 1024 * 1024
# The sandbox's own processes in a function's cgroup (bwrap, and its PID 1 inside), beyond Lambda's
# processes-and-threads limit, which counts the function's own.
SANDBOX_TASKS = 2
# What a function prints is kept to its first and last bytes (per function, over all its
# environments); what is between is counted and named, never written: a function that prints
# gigabytes does not fill the drill's disk.
LOG_HEAD_BYTES = 256 * 1024
LOG_TAIL_BYTES = 256 * 1024
MIB = 1024 * 1024


def enforced_timeout(timeout_seconds: float) -> float:
    """The real seconds an invocation of a function with this timeout runs before it is ended."""
    return max(TIMEOUT_FLOOR_SECONDS, timeout_seconds * TIMEOUT_SCALE)


class FunctionTimedOut(FunctionCrashed):
    """The invocation ran past its (enforced) timeout: ended, as Lambda ends it."""


class FunctionOutOfMemory(FunctionCrashed):
    """The invocation needed more than its memory size: ended (Runtime.OutOfMemory)."""


class FunctionNotContained(SandboxError):
    """The sandbox a team's function runs in cannot be made on this machine (and --no-isolation was not given)."""


@dataclass
class Incident:
    """Something an invocation did that its deployment would not be allowed to, or a limit it hit."""

    function: str
    kind: str  # timeout | out-of-memory | connection | write | read | exit | protocol | guard
    detail: str
    event: Any = None  # the invocation's event, for the driver to name its records


# --- the walls ----------------------------------------------------------------------------------------

def guards(contained: bool = True) -> dict[str, str]:
    """Each guard and how it is enforced (a value starting 'NOT CONTAINED' is not: --no-isolation)."""
    limits = {"timeout": "the sandbox killed past the enforced timeout",
              "output": f"the first {LOG_HEAD_BYTES // 1024} KiB and the last {LOG_TAIL_BYTES // 1024} KiB of what each "
                        "function prints are kept; what is between is counted and named in its log"}
    if contained:
        limits.update(contained_limits())
        walls = "bubblewrap (integration_blueprint.containment), made before the function's code runs"
        return {
            "network": f"{walls}: a network namespace with nothing in it (not even the host's loopback)",
            "processes": f"{walls}: a PID namespace; every process the function started ends with its environment",
            "files": f"{walls}: only its archive, layers and the runtime, read-only; a private /tmp and /dev/shm",
            "privileges": f"{walls}: an unprivileged uid, no capabilities, no new user namespace",
            **limits,
        }
    why = containment().reason or "--no-isolation"
    return {
        "network": f"NOT CONTAINED (--no-isolation; {why}): connections only reported by an audit hook",
        "processes": "NOT CONTAINED (--no-isolation): the process group is killed; a process that starts its own "
                     "session survives",
        "files": "NOT CONTAINED (--no-isolation): the function reads and writes as the drill's user",
        "privileges": "NOT CONTAINED (--no-isolation): the drill's user",
        "memory": "NOT CONTAINED (--no-isolation): RLIMIT_AS only (the address space: a memfd, /tmp or a child "
                  "process is not counted)",
        **limits,
    }


def contained_limits() -> dict[str, str]:
    """How each of Lambda's limits is enforced on a contained function here, or "NOT ENFORCED" and why."""
    said = containment().enforcement(function_limits(aws_limits.LAMBDA_MEMORY_DEFAULT_MB,
                                                     aws_limits.LAMBDA_EPHEMERAL_STORAGE_DEFAULT_MB))
    place = cgroup_place()
    if place.memory:
        said["memory"] = ("its memory size, on everything it holds (heap, memory files, /tmp, /dev/shm, child "
                          f"processes): {place.how('memory')}; over it, the kernel ends it (Runtime.OutOfMemory)")
    else:
        said["memory"] += " (only RLIMIT_AS is set: the address space, not a memfd, /tmp or a child process)"
    if place.pids:
        said["processes and threads"] = (f"Lambda's {aws_limits.LAMBDA_PROCESSES_AND_THREADS_MAX}: "
                                         f"{place.how('pids')}; one more is refused (EAGAIN)")
    said["file descriptors"] = f"Lambda's {aws_limits.LAMBDA_FILE_DESCRIPTORS_MAX} (RLIMIT_NOFILE)"
    if not said["/tmp"].startswith("NOT"):
        said["/tmp"] = ("its ephemeral storage (ephemeralStorage.size, else Lambda's "
                        f"{aws_limits.LAMBDA_EPHEMERAL_STORAGE_DEFAULT_MB} MB): a tmpfs of that size (ENOSPC past it)")
    return said


def function_limits(memory_mb: int, ephemeral_storage_mb: int) -> Limits:
    """Lambda's limits for a function of this memory size and ephemeral storage (its /tmp)."""
    return Limits(memory_bytes=memory_mb * MIB, tasks=aws_limits.LAMBDA_PROCESSES_AND_THREADS_MAX + SANDBOX_TASKS,
                  open_files=aws_limits.LAMBDA_FILE_DESCRIPTORS_MAX, tmp_bytes=ephemeral_storage_mb * MIB,
                  shm_bytes=SHM_BYTES)


def function_walls(spec: FunctionSpec, runtime_dir: Path, environment: dict, fds: tuple[int, ...]) -> Walls:
    """What a function's process sees: the system's libraries, the interpreter (not its virtualenv:
    the packages of the drill), its archive, its layers and the runtime (each package the layer and
    runtime folders link to), read-only; a private /tmp; the pipes to the sandbox; no network."""
    folders = [*spec.layers, runtime_dir]
    links = [str(entry.resolve()) for folder in folders for entry in Path(folder).iterdir()]
    interpreter = [os.path.realpath(sys.executable), sys.base_prefix, sys.base_exec_prefix]
    return Walls(read_only=[*SYSTEM_READ_ONLY, *interpreter, str(BOOTSTRAP), str(spec.code_root),
                            *map(str, folders), *links],
                 hidden=interpreter_packages(), environment=environment, cwd=spec.code_root, network=False,
                 pass_fds=fds, limits=function_limits(spec.memory_mb, spec.ephemeral_storage_mb))


def interpreter_packages() -> list[str]:
    """The interpreter installation's own site-packages: what is installed there is not the function's
    runtime (its boto3 is laid out from the drill's, RUNTIME_PACKAGES), so it is not there for it."""
    folders = site.getsitepackages([sys.base_prefix, sys.base_exec_prefix])
    return sorted({os.path.realpath(f) for f in folders if os.path.isdir(f)})


# --- what a function's process is given ------------------------------------------------------------------

def _installed(package: str) -> Optional[Path]:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return None
    origin = Path(spec.origin)
    return origin.parent if origin.name == "__init__.py" else origin


def lay_out(folder: Path, packages: tuple[str, ...]) -> Path:
    """A folder holding links to the installed `packages` (a runtime's or a layer's contents)."""
    folder.mkdir(parents=True, exist_ok=True)
    for package in packages:
        source = _installed(package)
        if source is not None and not (folder / source.name).exists():
            (folder / source.name).symlink_to(source)
    return folder


@dataclass
class FunctionSpec:
    """What one function's environments are started with."""

    name: str
    arn: str
    handler: str
    code_root: Path  # its archive, unpacked in the staging folder
    archive: str  # the archive as the program names it (for messages)
    layers: list  # folders on the import path after the code (Lambda's /opt/python)
    environment: dict  # its declared variables + Lambda's reserved ones + the emulator's credentials
    timeout: int
    memory_mb: int
    staging: Path  # the sandbox's staging folder (the only place anything is written)
    time_scale: float
    # Run inside the sandbox (integration_blueprint.containment); False only with --no-isolation.
    contained: bool = True
    ephemeral_storage_mb: int = aws_limits.LAMBDA_EPHEMERAL_STORAGE_DEFAULT_MB  # its /tmp


def reserved_variables(spec: FunctionSpec, region: str, runtime_dir: Path) -> dict[str, str]:
    """Lambda's reserved environment variables (AWS docs, "Defined runtime environment variables")."""
    return {
        "AWS_REGION": region, "AWS_DEFAULT_REGION": region, "AWS_LAMBDA_FUNCTION_NAME": spec.name,
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory_mb),
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{spec.name}", "AWS_LAMBDA_LOG_STREAM_NAME": "sandbox",
        "AWS_EXECUTION_ENV": "AWS_Lambda_python3.12", "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
        "LAMBDA_TASK_ROOT": str(spec.code_root), "LAMBDA_RUNTIME_DIR": str(runtime_dir), "_HANDLER": spec.handler,
        "TZ": ":UTC", "LANG": "en_US.UTF-8", "PATH": "/usr/local/bin:/usr/bin:/bin",
        # The emulator's credentials (the execution role's, on AWS); no profile, no config file.
        "AWS_ACCESS_KEY_ID": "sandbox", "AWS_SECRET_ACCESS_KEY": "sandbox", "AWS_SESSION_TOKEN": "sandbox",
    }


# --- the pipe protocol (the other half is lambda_bootstrap.Channel) --------------------------------------

def _encode(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return {"__bytes__": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, datetime.datetime):
        return {"__datetime__": value.isoformat()}
    if hasattr(value, "read"):  # a streaming body (S3 GetObject, Lambda Invoke): read whole
        return {"__stream__": base64.b64encode(value.read()).decode()}
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def _decode(value: dict) -> Any:
    if len(value) == 1 and "__bytes__" in value:
        return base64.b64decode(value["__bytes__"])
    if len(value) == 1 and "__datetime__" in value:
        return datetime.datetime.fromisoformat(value["__datetime__"])
    return value


class _Ended(Exception):
    """The environment's process is gone or broke the protocol (`out_of_memory`: the kernel ended it
    at its memory size)."""

    def __init__(self, message: str, out_of_memory: bool = False):
        super().__init__(message)
        self.out_of_memory = out_of_memory


class ExecutionEnvironment:
    """One function process: started, initialized, then invoked one event at a time."""

    def __init__(self, spec: FunctionSpec, region: str, runtime_dir: Path, answer: Callable[[dict], dict],
                 on_incident: Callable[[Incident], None], event: Any = None, output: Optional[CappedOutput] = None):
        """Start the process and run its init (the handler's import), whose AWS calls `answer` makes;
        `event` is the invocation that asked for this environment (named in an incident at init)."""
        self.spec = spec
        self.answer = answer
        self.on_incident = on_incident
        self.output = output or function_log(spec.name)
        self.memory_bounded = False  # its memory size bounds all it holds (a cgroup), not just RLIMIT_AS
        to_child, self._to_child = os.pipe()
        self._from_child, from_child = os.pipe()
        environment = {**spec.environment, **reserved_variables(spec, region, runtime_dir)}
        command = [sys.executable, "-I", "-S", "-B", "-u", str(BOOTSTRAP), str(to_child), str(from_child)]
        self.folder: Optional[Path] = None
        self.process: subprocess.Popen
        try:
            if spec.contained:
                # The real interpreter, not the drill's virtualenv (whose packages it is not given).
                command[0] = os.path.realpath(sys.executable)
                tmp = "/tmp"
                walls = function_walls(spec, runtime_dir, {**environment, "HOME": tmp, "TMPDIR": tmp},
                                       (to_child, from_child))
                self.process = containment().popen(walls, command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                   stderr=subprocess.STDOUT, start_new_session=True)
                self.memory_bounded = bool(self.process.cgroup and "memory" in self.process.cgroup.folders)
            else:  # --no-isolation: a folder of its own for /tmp, the rest as the drill's user
                self.folder = Path(spec.staging) / f"env-{spec.name}-{uuid.uuid4().hex[:8]}"
                tmp = str(self.folder / "tmp")
                Path(tmp).mkdir(parents=True)
                self.process = subprocess.Popen(command, pass_fds=(to_child, from_child), cwd=spec.code_root,
                                                env={**environment, "HOME": tmp, "TMPDIR": tmp}, stdin=subprocess.DEVNULL,
                                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        except NotContained as exc:
            for fd in (to_child, from_child, self._to_child, self._from_child):
                os.close(fd)
            raise FunctionNotContained(f"function {spec.name}: {exc}") from None
        os.close(to_child)
        os.close(from_child)
        os.set_blocking(self._to_child, False)
        self._buffer = b""
        threading.Thread(target=self._relay_output, daemon=True, name=f"log-{spec.name}").start()
        home = os.path.expanduser("~")
        self._send({
            "paths": [str(spec.code_root), *map(str, spec.layers), str(runtime_dir)],
            "readable": [str(p.resolve()) for folder in (*spec.layers, runtime_dir) for p in Path(folder).iterdir()],
            "unreadable": [home] if home not in ("/", "") else [], "tmp": tmp,
            "handler": spec.handler, "archive": spec.archive, "memory_mb": spec.memory_mb,
            "address_limit": not self.memory_bounded,
            "function_name": spec.name, "function_arn": spec.arn, "time_scale": spec.time_scale})
        self.init_error: Optional[dict] = None
        try:
            message, _ = self._next(time.monotonic() + INIT_SECONDS, "its init (importing the handler)", event)
            if "ready" not in message and "init_error" not in message:
                raise _Ended("it sent something that is not the sandbox's protocol")
            self._whole_or_not_at_all()
        except BaseException:
            self.end()
            raise
        if "init_error" in message:
            self.init_error = message["init_error"]
        if message.get("unlimited"):  # why its memory size could not be set as a limit
            on_incident(Incident(spec.name, "guard", str(message["unlimited"])[:300]))

    def _relay_output(self) -> None:
        """What the function prints goes to the sandbox's output (the drill's pattern log), capped."""
        assert self.process.stdout is not None
        self.output.drain(self.process.stdout)

    def _whole_or_not_at_all(self) -> None:
        """An environment the kernel took a process of for memory (a child process it started; on a
        cgroup v1 host, the one process it chose) is ended whole, as Lambda ends it."""
        if self._out_of_memory():
            raise _Ended("a process of it was ended over its memory size", out_of_memory=True)

    def _out_of_memory(self) -> bool:
        return isinstance(self.process, Contained) and self.process.out_of_memory()

    # ---- the protocol ----------------------------------------------------------------------------

    def _send(self, message: dict, deadline: Optional[float] = None) -> None:
        """Write a message, within `deadline` (a process that stops reading cannot block the sandbox)."""
        data = json.dumps(message, default=_encode).encode()
        payload = memoryview(struct.pack(">I", len(data)) + data)
        deadline = deadline or time.monotonic() + INIT_SECONDS
        try:
            while payload:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("it stopped reading from the sandbox")
                _, ready, _ = select.select([], [self._to_child], [], left)
                if ready:
                    payload = payload[os.write(self._to_child, payload):]
        except OSError as exc:
            raise _Ended(f"its process is gone ({exc})") from None

    def _read(self, size: int, deadline: float, doing: str) -> bytes:
        while len(self._buffer) < size:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(doing)
            ready, _, _ = select.select([self._from_child], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise _Ended(f"its process ended ({self._exit_status()})", out_of_memory=self._out_of_memory())
            self._buffer += chunk
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def _receive(self, deadline: float, doing: str) -> dict:
        (size,) = struct.unpack(">I", self._read(4, deadline, doing))
        if size > MAX_MESSAGE_BYTES:
            raise _Ended(f"it sent a message of {size} bytes (more than Lambda's 6 MB payload)")
        try:
            message = json.loads(self._read(size, deadline, doing), object_hook=_decode)
        except ValueError as exc:
            raise _Ended(f"it sent something that is not the sandbox's protocol ({exc})") from None
        if not isinstance(message, dict):
            raise _Ended("it sent something that is not the sandbox's protocol")
        return message

    def _exit_status(self) -> str:
        code = self.process.poll()
        if code is None:
            return "closed its pipe"
        return f"killed by signal {-code}" if code < 0 else f"exit status {code}"

    # ---- invoking --------------------------------------------------------------------------------

    def _next(self, deadline: float, doing: str, event: Any) -> tuple[dict, float]:
        """The function's next message that is neither an AWS call nor a refusal (those are served
        here: each call made by `answer`, each refusal kept as an incident), and the deadline moved
        on by the time the emulator spent answering: its time is not the function's (it answers far
        slower than AWS would)."""
        while True:
            message = self._receive(deadline, doing)
            if "call" in message:
                asked = time.monotonic()
                try:
                    reply = self.answer(message["call"])
                except BaseException:
                    self.end()  # a crash injected after the call: the environment dies with it
                    raise
                deadline += time.monotonic() - asked
                try:
                    self._send(reply, time.monotonic() + INIT_SECONDS)
                except TimeoutError:
                    raise _Ended("it stopped reading from the sandbox") from None
            elif "guard" in message:
                guard = message["guard"] if isinstance(message["guard"], dict) else {}
                self.on_incident(Incident(self.spec.name, str(guard.get("kind")), str(guard.get("detail"))[:300], event))
            else:
                return message, deadline

    def invoke(self, event: Any, request_id: str, budget_seconds: float) -> Any:
        """Run one invocation. Returns its result or raises FunctionError (its exception),
        FunctionCrashed (it ended) or what answering one of its calls raised (an injected crash)."""
        limit = enforced_timeout(self.spec.timeout)
        deadline = time.monotonic() + limit
        try:
            self._send({"invoke": {"event": event, "request_id": request_id, "budget_seconds": budget_seconds}},
                       deadline)
            message, deadline = self._next(deadline, f"invocation {request_id}", event)
            self._whole_or_not_at_all()
        except TimeoutError:
            self.end()  # the process group: whatever it started ends with it
            self.on_incident(Incident(self.spec.name, "timeout", f"still running after {limit:g} s of real time "
                                      f"(its timeout {self.spec.timeout} s, scaled by {TIMEOUT_SCALE:g})", event))
            raise FunctionTimedOut(f"Task timed out after {self.spec.timeout} seconds "
                                   f"(ended after {limit:g} s of real time: the sandbox compresses time)") from None
        if "result" in message:
            return message["result"]
        if "error" not in message:
            raise _Ended("it sent something that is not the sandbox's protocol")
        error = message["error"] if isinstance(message["error"], dict) else {}
        error_type, text = str(error.get("errorType", "Error")), str(error.get("errorMessage", ""))
        if not message.get("fatal"):
            raise FunctionError(error_type, text, CodeError.from_payload(error.get("cause")))
        self.end()  # its process ended with the error (out of memory, an exit)
        if error_type == aws_limits.LAMBDA_OUT_OF_MEMORY_ERROR:
            self.on_incident(Incident(self.spec.name, "out-of-memory", f"needed more than its {self.spec.memory_mb} MB",
                                      event))
            raise FunctionOutOfMemory(f"Runtime.OutOfMemory: {text}")
        self.on_incident(Incident(self.spec.name, "exit", text[:300], event))
        raise FunctionCrashed(f"{error_type}: {text}")

    def end(self) -> None:
        """Kill the environment's process and everything it started."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        if isinstance(self.process, Contained):
            refused = self.process.tasks_refused()
            if refused:
                self.on_incident(Incident(self.spec.name, "tasks", f"a new process or thread refused {refused}x at "
                                          f"Lambda's {aws_limits.LAMBDA_PROCESSES_AND_THREADS_MAX}"))
            self.process.release()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self._to_child = self._from_child = -1
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


MAX_MESSAGE_BYTES = 16 * 1024 * 1024

# Lambda's errorType for an init no retry can mend (the code does not change between invocations),
# besides an import of a module that is not there.
UNMENDABLE_INIT_ERRORS = ("Runtime.HandlerNotFound", "Runtime.UserCodeSyntaxError")


class FunctionCalls:
    """The sandbox's side of a function's AWS calls: each made here with a client like the
    function's (its service, region and retry settings), on the thread running the invocation, so
    the request hooks journal it and inject the drill's faults (sandbox/interception.py). The
    answer is the parsed response, an error response as botocore parses it, or why the call could
    not be made."""

    RETRY_KEYS = {"max_attempts", "total_max_attempts", "mode"}

    def __init__(self, region: str):
        self.region = region
        self._clients: dict = {}
        self._lock = threading.Lock()
        self._session: Any = None

    def _client(self, service: str, region: str, retries: Any) -> Any:
        import boto3
        from botocore.config import Config

        settings = {k: v for k, v in retries.items() if k in self.RETRY_KEYS} if isinstance(retries, dict) else {}
        if not all(isinstance(v, str) if k == "mode" else isinstance(v, int) and 0 <= v <= 20 for k, v in settings.items()):
            settings = {}
        key = (service, region, tuple(sorted(settings.items())))
        with self._lock:
            if key not in self._clients:
                if self._session is None:  # made now: it carries the request hooks (interception.py)
                    self._session = boto3.session.Session(aws_access_key_id="sandbox", aws_secret_access_key="sandbox",
                                                          region_name=self.region)
                self._clients[key] = self._session.client(service, region_name=region,
                                                          config=Config(retries=settings or None))
            return self._clients[key]

    def answer(self, call: Any) -> dict:
        from botocore import xform_name
        from botocore.exceptions import ClientError

        try:
            if not isinstance(call, dict) or not isinstance(call.get("params"), dict):
                raise ValueError("a call without parameters")
            region = call["region"] if isinstance(call.get("region"), str) else self.region
            client = self._client(str(call.get("service")), region, call.get("retries"))
            operation = str(call.get("operation"))
            if operation not in client.meta.service_model.operation_names:
                raise ValueError(f"{call.get('service')} has no operation {operation!r}")
            parsed = getattr(client, xform_name(operation))(**call["params"])
        except ClientError as exc:
            return {"status": exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 400,
                    "parsed": exc.response}
        except Exception as exc:  # noqa: BLE001 - the function sees why its call could not be made
            return {"failure": f"{type(exc).__name__}: {exc}"[:1000]}
        return {"status": parsed.get("ResponseMetadata", {}).get("HTTPStatusCode") or 200, "parsed": parsed}


class Environments:
    """A function's execution environments: warm ones reused, a fresh one after a crash."""

    def __init__(self, spec: FunctionSpec, region: str, runtime_dir: Path, answer: Callable[[dict], dict],
                 on_incident: Callable[[Incident], None]):
        self.spec = spec
        self.region = region
        self.runtime_dir = runtime_dir
        self.answer = answer
        self.on_incident = on_incident
        self._idle: list[ExecutionEnvironment] = []
        self._all: set[ExecutionEnvironment] = set()
        self._lock = threading.Lock()
        self.started = 0
        self.output = function_log(spec.name)
        # An init that fails whatever the moment (a module or handler its archive lacks, a syntax
        # error) fails every later invocation the same way: remembered, not started again.
        self._broken: Optional[dict] = None

    def invoke(self, event: Any, context: Any) -> Any:
        if self._broken is not None:
            raise FunctionError(self._broken.get("errorType", ""), self._broken.get("errorMessage", ""),
                                CodeError.from_payload(self._broken.get("cause")))
        with self._lock:
            environment = self._idle.pop() if self._idle else None
        if environment is None:
            environment = self._start(event)
        if environment.init_error is not None:
            self._discard(environment)
            error = environment.init_error
            missing = (error.get("errorType") == "Runtime.ImportModuleError"
                       and "No module named" in str(error.get("errorMessage")))
            if missing or error.get("errorType") in UNMENDABLE_INIT_ERRORS:
                self._broken = error
            raise FunctionError(error.get("errorType", "Runtime.ImportModuleError"), error.get("errorMessage", ""),
                                CodeError.from_payload(error.get("cause")))
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        budget = remaining() / 1000 if remaining is not None else self.spec.timeout * self.spec.time_scale
        request_id = str(getattr(context, "aws_request_id", "") or uuid.uuid4())
        try:
            result = environment.invoke(event, request_id, budget)
        except FunctionError:
            self._release(environment)
            raise
        except _Ended as exc:
            self._discard(environment)
            if exc.out_of_memory:
                raise self._out_of_memory(event) from None
            self.on_incident(Incident(self.spec.name, "protocol", str(exc), event))
            raise FunctionCrashed(f"Runtime exited before completing request: {exc}") from None
        except BaseException:
            self._discard(environment)
            raise
        self._release(environment)
        return result

    def _start(self, event: Any) -> ExecutionEnvironment:
        try:
            environment = ExecutionEnvironment(self.spec, self.region, self.runtime_dir, self.answer, self.on_incident,
                                               event, self.output)
        except TimeoutError:
            self.on_incident(Incident(self.spec.name, "timeout", f"its init did not finish within {INIT_SECONDS:g} s",
                                      event))
            raise FunctionTimedOut(f"Init timed out after {INIT_SECONDS:g} seconds") from None
        except _Ended as exc:
            if exc.out_of_memory:
                raise self._out_of_memory(event) from None
            raise FunctionCrashed(f"Runtime exited during init: {exc}") from None
        with self._lock:
            self._all.add(environment)
            self.started += 1
        return environment

    def _out_of_memory(self, event: Any) -> FunctionOutOfMemory:
        """The kernel ended the environment at its memory size (everything it held: heap, memfd, /tmp,
        child processes), as Lambda ends it."""
        self.on_incident(Incident(self.spec.name, "out-of-memory", f"held more than its {self.spec.memory_mb} MB "
                                  "(heap, memory files, /tmp and child processes together)", event))
        return FunctionOutOfMemory(f"{aws_limits.LAMBDA_OUT_OF_MEMORY_ERROR}: Runtime exited with error: signal: killed "
                                   f"(over its memory size, {self.spec.memory_mb} MB)")

    def _release(self, environment: ExecutionEnvironment) -> None:
        with self._lock:
            if environment in self._all:
                self._idle.append(environment)

    def _discard(self, environment: ExecutionEnvironment) -> None:
        environment.end()
        with self._lock:
            self._all.discard(environment)
            if environment in self._idle:
                self._idle.remove(environment)

    def reset(self) -> None:
        """The warm environments go: the next invocation is a cold start."""
        with self._lock:
            idle, self._idle = self._idle, []
            for environment in idle:
                self._all.discard(environment)
        for environment in idle:
            environment.end()

    def close(self) -> None:
        with self._lock:
            every, self._all, self._idle = list(self._all), set(), []
        for environment in every:
            environment.end()
        self.output.close()


def function_log(name: str) -> CappedOutput:
    """Where a function's output goes: the drill's output, each line marked with the function's
    name, its first LOG_HEAD_BYTES as they come and its last LOG_TAIL_BYTES when it is closed."""
    at_line_start = [True]

    def write(data: bytes) -> None:
        text = data.decode(errors="replace")
        marked = []
        for line in text.splitlines(keepends=True):
            marked.append(f"[{name}] {line}" if at_line_start[0] else line)
            at_line_start[0] = line.endswith("\n")
        sys.stdout.write("".join(marked))

    return CappedOutput(LOG_HEAD_BYTES, LOG_TAIL_BYTES, write, what=f"function {name}'s output")
