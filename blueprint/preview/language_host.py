"""What every language host of the offline preview shares, and the one interface the recording
runs a program through (`LanguageHost`): python_host.PythonHost and node_host.NodeHost each start a
program as its Pulumi language host does; here is how any program's process is run (the engine's
token handed over on a pipe, its output in the run's private folder, its whole process group
ended when it exits or times out), how a run that failed is told (`ProgramFailure`), and what a
stopped program was waiting for.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Protocol, Sequence

from integration_blueprint.containment import CappedOutput, Contained, Limits, containment
from integration_blueprint.preview import loopback_relay, private_channel, process_tree, program_walls
from integration_blueprint.preview.engine import ROOT_STACK_TYPE, OfflineEngine
from integration_blueprint.preview.program_view import ProgramView

# What a program's process prints when it is stopped: the resources it declared (python_exec.py,
# node_token.js).
PENDING_TAG = "BLUEPRINT_PENDING "
# Where the engine saw a registration it refused declared, at the end of its error
# (engine_services: a component's refusal, an archive it could not read).
DECLARED_AT = re.compile(r" \(declared at (?P<file>/[^\n]+?):(?P<line>\d+)\)")
# A preview that runs longer is stuck (an input() in the program, a deadlock, an output that never
# resolves): it is stopped (`blueprint preview --timeout`).
PROGRAM_TIMEOUT_SECONDS = 600
# What a program's run may consume, all its processes together (its language host, a TypeScript
# compiler, what it starts): a program's run needs far less (a large TypeScript program about 2 GB,
# a few dozen threads); past these it is ended and the preview fails naming the cap.
PROGRAM_MEMORY_MB = 4096  # blueprint preview --program-memory
PROGRAM_TASKS = 1024
PROGRAM_LIMITS = Limits(memory_bytes=PROGRAM_MEMORY_MB * 1024 ** 2, tasks=PROGRAM_TASKS, open_files=4096)
# What a program prints is kept to its first and last bytes per stream (the report shows them, the
# cap named between them): a program that prints gigabytes neither fills the disk nor the report.
OUTPUT_HEAD_BYTES = 512 * 1024
OUTPUT_TAIL_BYTES = 512 * 1024
# How long the output of a process that has ended is still read (a daemon it left holding its
# stdout, outside a sandbox, does not hold the preview).
OUTPUT_DRAIN_SECONDS = 5


@dataclass(frozen=True)
class ProgramFailure:
    """How a program run ended when it did not succeed: the message to show, and where."""
    message: str
    file: str = ""
    line: int = 0
    module: str = ""  # the module a ModuleNotFoundError names
    engine_fault: bool = False
    raised: bool = False  # an exception the program raised (not an exit, a timeout or a log line)
    # A Node.js run that recorded no stack frames (node_host.NO_STACK_FRAMES): run it again to see them.
    without_stacks: bool = False
    # Further errors of the same run, each with its own location (every TypeScript diagnostic, every
    # refused component), shown after the first.
    also: tuple[str, ...] = ()
    # The part of the gate that failed (its shim or preload in the program's process, the engine, the
    # plugin), when the failure is the gate's own and not the program's.
    tool_part: str = ""
    # The gate's walls stopped the run (its timeout, a limit of the program's sandbox): it says why the
    # run was ended, nothing of an error the program itself reported.
    stopped: bool = False

    @property
    def gate_part(self) -> str:
        """The part of the gate that failed, or "" when the failure is the program's."""
        return self.tool_part or (ENGINE_PART if self.engine_fault else "")


# The gate's own code that runs inside a program's process (python_exec.py, node_token.js and the
# modules they import all live in this folder): a failure whose innermost frame lies here is the
# gate's, not the program's, whatever its message says.
GATE_CODE = Path(__file__).resolve().parent
ENGINE_PART = "the offline engine"
# A Python traceback's frames, outermost first (the last one is where it was raised).
_PYTHON_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)', re.MULTILINE)


def is_gate_file(path: str) -> bool:
    """Whether `path` is one of the gate's own files (not the program's, not a library's)."""
    if not path.startswith("/"):
        return False
    return Path(path).resolve().is_relative_to(GATE_CODE)


def raised_in_gate(traceback_text: str) -> str:
    """The gate's own file a Python traceback was raised in (its innermost frame), else ""."""
    frames = _PYTHON_FRAME.findall(traceback_text)
    return frames[-1][0] if frames and is_gate_file(frames[-1][0]) else ""


def engine_failure(engine: OfflineEngine) -> Optional[ProgramFailure]:
    """The offline engine's own failure while it answered the program, if there was one: reported
    as ours, whatever the program's language."""
    if not engine.failures:
        return None
    part = engine.failure_part or ENGINE_PART
    return ProgramFailure(f"{part} itself failed (this is a bug in blueprint, not in your program; please report it "
                          "with this message):\n" + engine.failures[0], engine_fault=True, tool_part=part)


class LanguageHost(Protocol):
    """A program's language host, as the engine sees it: run the program against an engine, and
    say whether a failed run is worth a second run that locates its error (and which answer to keep)."""

    def run(self, engine: OfflineEngine, *, locate: bool, timeout: float) -> Optional[ProgramFailure]:
        """Run the program to its end against `engine`; None when it succeeded. `locate`: the
        second, slower run that finds where an error was raised."""
        ...

    def worth_locating(self, failure: ProgramFailure) -> bool:
        ...

    def located(self, failure: ProgramFailure, again: Optional[ProgramFailure]) -> ProgramFailure:
        """The failure to report, given the first run's and the locating run's."""
        ...


@dataclass(frozen=True)
class ProgramRun:
    """How a program's process ended, and what it printed."""
    returncode: int
    stdout: str
    stderr: str  # without the lines the exec script tags for the preview
    timed_out: bool = False
    pending: tuple = ()  # (type, name) of each resource a stopped program had declared
    out_of_memory: bool = False  # ended by the kernel at PROGRAM_LIMITS' memory
    tasks_refused: int = 0  # new processes or threads refused at PROGRAM_LIMITS' tasks
    notes: tuple = ()  # what the report says of the limits: output left out, a limit not enforced here


def limit_failure(engine: OfflineEngine, done: ProgramRun) -> Optional[ProgramFailure]:
    """The failure of a run that went past the gate's limits, named with the limit; None if it did not."""
    limits = program_limits(engine)
    if done.out_of_memory:
        return ProgramFailure(f"the program's processes held more than the gate's memory cap "
                              f"({(limits.memory_bytes or 0) // 1024 ** 2} MiB: its language host and every process it "
                              "started, together) and were ended by the kernel. A program's preview needs far less: "
                              "look for what it builds and keeps; `blueprint preview --program-memory MB` raises the cap",
                              stopped=True)
    if done.tasks_refused:
        return ProgramFailure(f"the program was refused a new process or thread {done.tasks_refused}x at the gate's cap "
                              f"of {limits.tasks} processes and threads together: a program's preview needs a few "
                              "dozen; look for threads or processes started in a loop", stopped=True)
    return None


# The second run that only locates an error the first run already reported (with stack frames) gets
# the first run's time three times over (frames cost CPU, and a busy machine's runs vary) and this
# much more, at most the preview's own timeout: past it, the first run's error is reported as it was.
# A run that formats its error without end would otherwise hold the preview until its timeout or
# memory cap: the Node.js SDK colours every uncaught error's stack, and Node.js releases without the
# fix of nodejs/node#64011 loop without bound on a frame under node_modules/@scope/ that names no
# folder after the scope (the SDK's own frames, source-mapped to node_modules/@pulumi/config.ts).
LOCATE_EXTRA_SECONDS = 30.0


def locating_timeout(first_run_seconds: float, timeout: float) -> float:
    """How long the locating run may take, given the first run's time and the preview's timeout."""
    return min(timeout, 3 * first_run_seconds + LOCATE_EXTRA_SECONDS)


def program_limits(engine: OfflineEngine) -> Limits:
    """PROGRAM_LIMITS, with the memory cap `blueprint preview --program-memory` gave."""
    memory_mb = getattr(engine, "program_memory_mb", None) or PROGRAM_MEMORY_MB
    return dataclasses.replace(PROGRAM_LIMITS, memory_bytes=memory_mb * 1024 ** 2)


def _pending(stderr: str) -> tuple:
    for line in stderr.splitlines():
        if line.startswith(PENDING_TAG):
            return tuple(tuple(entry) for entry in json.loads(line[len(PENDING_TAG):]))
    return ()


def run_program(engine: OfflineEngine, argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float,
                project_dir: Path, read_only: Sequence[Path] = (), writable_files: Sequence[Path] = ()) -> ProgramRun:
    """Run a program's process against `engine` until it exits (or `timeout`), then end its process
    group (anything it left running). It runs inside the sandbox (program_walls: its repository
    through a throwaway overlay, `read_only` read-only, the engine's socket and `writable_files`
    writable, the user's secrets and the gate's folders masked) where the machine can make one; else
    as it is, and `engine.not_contained` says why. The engine's token is handed over on a pipe
    (private_channel). Its output is read as it comes and kept to a bounded head and tail (a daemon
    that keeps its pipes open does not hold the preview past OUTPUT_DRAIN_SECONDS), and inside the
    sandbox its memory and processes are bounded (PROGRAM_LIMITS); `notes` say what was left out and
    what could not be bounded here."""
    engine.working_directory = cwd
    handed = private_channel.hand_over({"engine_token": engine.token})
    env = {**env, private_channel.FD_VARIABLE: str(handed)}
    sandbox = containment()
    relays: Optional[loopback_relay.Relays] = None
    outputs = [CappedOutput(OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES, what=f"the program's {name}")
               for name in ("stdout", "stderr")]
    notes: list[str] = []
    try:
        if sandbox.available:
            seen = program_walls.visibility(project_dir=project_dir, cwd=cwd, read_only=read_only, environ=env,
                                            gate_folders=_gate_folders(engine), allow_read=engine.allow_read)
            engine.seen = seen
            walls = program_walls.program_walls(seen, cwd=cwd, engine_socket=engine.address,
                                                writable_files=writable_files, environment=env, pass_fds=(handed,))
            walls = dataclasses.replace(walls, limits=program_limits(engine))
            notes += [f"the program's {name} was NOT bounded: {how}"
                      for name, how in sandbox.enforcement(walls.limits).items() if how.startswith("NOT ENFORCED")]
            process: subprocess.Popen = sandbox.popen(walls, argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                      stderr=subprocess.PIPE, start_new_session=True)
            inside = process  # bound for the relays' lookup: the sandbox's first process is bwrap's child
            first_inside = lambda: next(iter(process_tree.descendants(inside.pid)), None)  # noqa: E731
            relays = loopback_relay.Relays(engine.folder, first_inside)
            engine.callbacks.reach = relays.address
            engine.view = ProgramView(seen.repository, first_inside)
        else:
            engine.not_contained = program_walls.not_contained_note(sandbox.reason, sandbox.fix)
            process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, pass_fds=[handed], start_new_session=True)
    finally:
        os.close(handed)
    process_tree.adopt(process)
    drains = [threading.Thread(target=output.drain, args=(stream,), daemon=True)
              for output, stream in zip(outputs, (process.stdout, process.stderr))]
    for drain in drains:
        drain.start()
    try:
        exited = _wait(process, engine, timeout)
    finally:
        # SIGTERM first: a stopped Python program reports what it awaited
        process_tree.end(process, sandboxed=sandbox.available)
        if relays is not None:
            engine.callbacks.close()
            relays.close()
    for drain in drains:
        drain.join(OUTPUT_DRAIN_SECONDS)
    out_of_memory = isinstance(process, Contained) and process.out_of_memory()
    tasks_refused = process.tasks_refused() if isinstance(process, Contained) else 0
    if isinstance(process, Contained):
        process.release()
    for output, name in zip(outputs, ("stdout", "stderr")):
        if output.left_out:
            notes.append(f"the program printed {output.total} bytes on {name}: the report keeps the first "
                         f"{output.head} and the last {output.tail} (the gate's output cap)")
    stdout, stderr = (output.value().decode(errors="replace") for output in outputs)
    return ProgramRun(process.returncode if exited else -1, stdout,
                      "".join(line for line in stderr.splitlines(keepends=True) if not line.startswith(PENDING_TAG)),
                      timed_out=not exited, pending=_pending(stderr), out_of_memory=out_of_memory,
                      tasks_refused=tasks_refused, notes=tuple(notes))


# How often a running program's run is looked at for an error that ended it (engine.ending).
ENDING_POLL_SECONDS = 0.1


def _wait(process: subprocess.Popen, engine: OfflineEngine, timeout: float) -> bool:
    """Whether the program exited (or the engine ended its run: engine.ended_by) within `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if process_tree.wait(process, max(0.0, min(left, ENDING_POLL_SECONDS))):
            return True
        if engine.ending.is_set():
            return True
        if left <= 0:
            return False


def ended_run(engine: OfflineEngine) -> Optional[ProgramFailure]:
    """The error that ended the run (an archive the engine could not read), at the program's line that
    declared the resource; None when the program ran to its end."""
    if engine.ended_by is None:
        return None
    message, file, line = engine.ended_by
    return ProgramFailure(message, file=file, line=line, raised=True)


def stopped_run(engine: OfflineEngine, done: ProgramRun, timeout: float) -> Optional[ProgramFailure]:
    """What stopped a program's run before its own exit could say anything, in the order it is
    decided: the engine's failure or an error that ended the run, the timeout, a limit of the
    program's walls; None when the run ended by itself (its exit code is then the program's). A
    stopped run's output is kept for the report, as far as the program got."""
    stopped = engine_failure(engine) or ended_run(engine)
    if stopped is None and done.timed_out:
        stopped = ProgramFailure(timeout_message(engine, timeout, done.pending), stopped=True)
    if stopped is None:
        engine.limit_notes = list(done.notes)
        stopped = limit_failure(engine, done)
    if stopped is not None:
        engine.program_stdout, engine.program_stderr = done.stdout, done.stderr
    return stopped


def _gate_folders(engine: OfflineEngine) -> list[Path]:
    """The gate's own folders a program is never shown: the run's private folder and, where the
    temporary folder is inside something the program sees (TMPDIR in the checkout), all of it (the
    policy packs' folders are there)."""
    return [Path(engine.folder), Path(tempfile.gettempdir())]


def timeout_message(engine: OfflineEngine, timeout: float, pending: tuple) -> str:
    """What a stopped program was waiting for: the resources it declared but never registered (an
    input that never resolved), as the program reported them when it was stopped."""
    registered = {(r.type, r.name) for r in engine.resources} | {(ROOT_STACK_TYPE, f"{engine.project}-{engine.stack}")}
    waiting = [f"{name} ({type_})" for type_, name in pending if (type_, name) not in registered]
    what = (f"; still waiting to register {', '.join(waiting[:10])}{' and more' if len(waiting) > 10 else ''}: "
            "an input of theirs never resolved (an Output or a promise that nothing completes?)") if waiting else \
        " (does it wait for input, on a lock, or on an output that never resolves?)"
    return (f"the program did not finish within {timeout:g} s (blueprint preview --timeout) and was stopped, with "
            f"{len(engine.resources)} resources registered{what}")
