"""The reference run a pattern's outcome is judged against (drill/outcomes.py): the same driver, seed
and records, each delivered once in the lane's order, no faults, in a sandbox of the same stack that
nothing has written to yet; what it left.

It runs beside the faulted run. The pattern's process realizes its sandbox once, then forks before
anything is sent: the child runs the reference in its copy of that freshly realized sandbox (the
state a fresh sandbox of the same stack starts from, without realizing it and starting an emulator
again) while the parent runs the faulted run, each on a core of its own. What the reference left
comes back through a pipe as data (pattern_results.outcome_message: JSON, checked on arrival).

The child reads nothing of the faulted run: it is forked before the faulted run's driver exists,
its fault injector is never enabled (nothing is injected), and no function has run yet (a team's
execution environments start at their first invocation, so none is shared). It ends with os._exit:
it never runs the emulator's stop, which would remove the staging folder the parent still uses,
and it dies with the process that forked it.

Where a process cannot fork (Windows) the reference runs after the faulted run, in a fresh sandbox
(`fresh_reference`); so does the second reference run that tells what varies between clean runs.
"""

from __future__ import annotations

import os
import random
import select
import signal
import sys
import threading
import time
import traceback
import warnings
from pathlib import Path
from typing import Any, Optional

from integration_blueprint.drill import pattern_results
from integration_blueprint.drill.outcomes import Outcome, Snapshot
from integration_blueprint.drill.patterns.base import DrillDeadline
from integration_blueprint.drill.report import DrillOptions
from integration_blueprint.sandbox.emulator import running_emulator
from integration_blueprint.sandbox.errors import SandboxError
from integration_blueprint.sandbox.faults import FaultInjector
from integration_blueprint.sandbox.interception import Interception
from integration_blueprint.sandbox.realization import Sandbox


class ReferenceUnfinished(Exception):
    """The reference run did not finish (its deadline, a sandbox that could not run it): no judgement."""


def run_reference(options: DrillOptions, name: str, driver_class: Any, sandbox: Sandbox, faults: FaultInjector,
                  deadline_seconds: float) -> Outcome:
    """The reference run in `sandbox` (realized, nothing sent yet), with `faults` never enabled."""
    driver = driver_class(sandbox, options, faults, random.Random(f"{options.seed}:{name}"))
    driver.reference = True
    driver.deadline_seconds = deadline_seconds
    driver.deadline = time.monotonic() + deadline_seconds
    driver.prepare()
    driver.drive(_no_progress)
    driver.recover(_no_progress)
    return Snapshot(sandbox, driver.own_queue_urls()).take(sandbox.journal)


def fresh_reference(options: DrillOptions, name: str, driver_class: Any, recorded: Any,
                    deadline_seconds: float) -> Outcome:
    """The reference run in a sandbox of its own: realized from the recording in a new emulator."""
    faults = FaultInjector(seed=f"{options.seed}:{name}")  # never enabled: nothing is injected
    with running_emulator(recorded.config.get("aws:region", "us-east-1")) as emulator:
        sandbox = Sandbox(recorded, emulator, Interception(requests=faults), contained=options.isolation).realize()
        return run_reference(options, name, driver_class, sandbox, faults, deadline_seconds)


def _no_progress(_fraction: float) -> None:
    """The reference run reports no progress of its own: the bar stays on the faulted run's."""


class ReferenceBeside:
    """The reference run in a child process forked from the pattern's, started by `start` right
    after the sandbox is realized; `outcome()` waits for what it left, `stop()` ends it unread."""

    def __init__(self, pid: int, reader: int, log_path: Path):
        self.pid = pid
        self.reader = reader
        self.log_path = log_path
        self.seconds = 0.0  # how long the child's reference run took
        self._done = False

    @classmethod
    def start(cls, options: DrillOptions, name: str, driver_class: Any, sandbox: Sandbox,
              deadline_seconds: float, output: Any, log_path: Path) -> Optional["ReferenceBeside"]:
        """Fork the reference run (None where this process cannot fork: the caller runs
        fresh_reference after the faulted run). `output` is what sys.stdout and sys.stderr write
        through (the runner's _PatternOutput): in the child it writes to `log_path`."""
        if not hasattr(os, "fork"):
            return None
        faults = sandbox.interception.requests
        if not isinstance(faults, FaultInjector) or faults.enabled:
            return None  # not a sandbox fresh from realize, as the runner makes it
        reader, writer = os.pipe()
        parent = os.getpid()
        with warnings.catch_warnings():
            # Python 3.12+ warns on fork() in a process with threads. The fork happens where none of
            # them holds a lock the child needs (nothing runs: the sandbox is just realized), and
            # the child runs only the reference run and ends with os._exit.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(reader)
            _child(parent, writer, options, name, driver_class, sandbox, faults, deadline_seconds, output, log_path)
        os.close(writer)
        return cls(pid, reader, log_path)

    def outcome(self, timeout: float) -> Outcome:
        """What the reference run left, once it ends (at most `timeout` seconds from now: then it is
        ended and counted as unfinished). ReferenceUnfinished if it did not finish."""
        data = bytearray()
        until = time.monotonic() + timeout
        try:
            while True:
                left = until - time.monotonic()
                if left <= 0:
                    raise ReferenceUnfinished(f"still running after {timeout:.0f} s (ended)")
                ready, _, _ = select.select([self.reader], [], [], min(left, 1.0))
                if not ready:
                    continue
                chunk = os.read(self.reader, 1 << 20)
                if not chunk:
                    break
                data += chunk
        finally:
            self.stop()
        if not data:
            raise ReferenceUnfinished("its process ended without a result; see the pattern's handler log")
        kind, value = pattern_results.parse_reference(bytes(data))
        if kind == "error":  # a bug in the drill, as in the pattern's own process
            raise RuntimeError(f"the reference run failed:\n{value}")
        if kind == "unfinished":
            raise ReferenceUnfinished(value)
        outcome, self.seconds = value
        return outcome

    def stop(self) -> None:
        """End the child if it still runs, and reap it."""
        if self._done:
            return
        self._done = True
        os.close(self.reader)
        try:
            if os.waitpid(self.pid, os.WNOHANG) == (0, 0):
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass

    def log_text(self) -> str:
        """What the reference run's functions printed and logged (removed once read)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        self.log_path.unlink(missing_ok=True)
        return text


def _child(parent: int, writer: int, options: DrillOptions, name: str, driver_class: Any, sandbox: Sandbox,
           faults: FaultInjector, deadline_seconds: float, output: Any, log_path: Path) -> None:
    """The forked child: the reference run, its outcome written to `writer`, then os._exit."""
    code = 0
    try:
        _die_with_parent(parent)
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it ends this
        except ValueError:  # forked from a thread that is not the main one: no handler of its own to set
            pass
        with open(log_path, "w") as log:
            output.log = log
            started = time.monotonic()
            try:
                outcome = run_reference(options, name, driver_class, sandbox, faults, deadline_seconds)
                message = pattern_results.outcome_message(outcome, time.monotonic() - started)
            except (DrillDeadline, SandboxError) as exc:
                message = pattern_results.unfinished_message(str(exc))
            finally:
                for function in {f.arn: f for f in sandbox.functions.values()}.values():
                    if function.environments is not None:
                        function.environments.close()  # the team's code's processes end with the run
            output.log = None
        _write_all(writer, message)
    except BaseException:  # noqa: BLE001 - whatever stopped it, the parent reads why
        code = 1
        try:
            _write_all(writer, pattern_results.error_message(traceback.format_exc()))
        except BaseException:  # noqa: BLE001 - the parent then reads an empty result
            pass
    finally:
        os._exit(code)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.close(fd)


def _die_with_parent(parent: int) -> None:
    """The child ends when the process that forked it does (a killed pattern process, a killed drill):
    at once on Linux (the kernel's parent-death signal, as bwrap's --die-with-parent), else within
    0.2 s (a thread watching its parent)."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # it died before the signal was asked for
            os._exit(1)
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="reference-parent-watch").start()
