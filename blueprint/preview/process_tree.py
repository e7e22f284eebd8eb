"""The preview's child processes (the program, the policy pack, the component plugin) each lead a
process group of their own, and each is ended with everything it started.

A child starts in a new session (`start_new_session=True`), so whatever it starts (a daemon a
program spawned, a worker) shares its group, and a terminal's Ctrl-C reaches the preview alone,
which then ends each group itself. Waiting for a child does not reap it (a pidfd, or waitid with
WNOWAIT): while it is an unreaped zombie its group id cannot be given to another process, so the
group signal that follows reaches only what the child left behind. A process that made a session of
its own (a double-forked daemon calling setsid) leaves the group and is out of reach, as it is from
a terminal's job control.

However the preview ends, its children end with it: each is adopted (`adopt`) by a guardian, a
small process of the preview's in a session of its own, that holds the read end of a pipe only the
preview holds open; when the preview is gone (SIGKILL, as CI cancels a job, included) the pipe
reads as ended and the guardian kills every group still adopted, then exits. It lives only while
something is adopted: when the last adopted child is released the preview closes the pipe and the
guardian exits with nothing to kill (a process that records programs as a library, a test or a
benchmark, is left with no process of the gate's running); the next `adopt` starts a new one. A
sandboxed child's group is bwrap's: its PID namespace, and every process in it, ends with bwrap.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Optional

# How long a group has to end on SIGTERM before it is killed.
TERM_GRACE_SECONDS = 5


def wait(process: subprocess.Popen, timeout: Optional[float]) -> bool:
    """Whether `process` exited within `timeout` seconds (None: however long it takes), without
    reaping it: `end` then signals its group safely. Output it left open (a daemon holding its
    stdout) does not hold this up."""
    try:
        handle = os.pidfd_open(process.pid)
    except (AttributeError, OSError):  # not Linux >= 5.3: wait with WNOWAIT, polling
        return _poll(process, timeout)
    try:
        ready, _, _ = select.select([handle], [], [], timeout)
        return bool(ready)
    finally:
        os.close(handle)


def _poll(process: subprocess.Popen, timeout: Optional[float]) -> bool:
    import time

    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        try:
            if os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:  # already reaped
            return True
        if deadline is not None and time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


def end(process: subprocess.Popen, grace: float = TERM_GRACE_SECONDS, *, sandboxed: bool = False) -> None:
    """End `process` and its group: SIGTERM, `grace` seconds to finish, then SIGKILL for what is
    left (a daemon that ignores SIGTERM, or one the process left running when it exited); then
    reap it. A `sandboxed` process (bwrap) runs its command in a session of its own, which its
    group's signal does not reach and bwrap does not pass on: the processes under it get SIGTERM
    first, and bwrap ends when its command has (its PID namespace takes the rest with it)."""
    if process.returncode is None:  # not reaped: its group id is still its own
        if sandboxed and not wait(process, 0):
            for pid in descendants(process.pid):
                _signal(pid, signal.SIGTERM)
            wait(process, grace)
        _signal_group(process, signal.SIGTERM)
        wait(process, grace)
        _signal_group(process, signal.SIGKILL)
    process.wait()
    release(process)


# The guardian's own script: the standard library's os and signal, nothing else to import.
GUARDIAN = str(Path(__file__).with_name("guardian.py"))


class _Guardian:
    """The guardian of this process's children while any is adopted (started by the first `adopt`,
    ended by the `release` of the last)."""

    def __init__(self) -> None:
        read, self.write = os.pipe()  # both ends close-on-exec: no child but the guardian holds one
        try:
            self.process = subprocess.Popen([sys.executable, "-I", "-S", GUARDIAN], stdin=read,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                            start_new_session=True, close_fds=True)
        finally:
            os.close(read)
        self.owner = os.getpid()
        self.adopted: set[int] = set()

    def tell(self, line: str) -> None:
        try:
            os.write(self.write, line.encode() + b"\n")  # one short write: atomic on a pipe
        except OSError:
            pass

    def close(self) -> None:
        """Nothing is adopted: the pipe ends, and so does the guardian (reaped by subprocess's own
        clean-up at the next start of a child, or by whoever adopts orphans)."""
        os.close(self.write)


_guardian: Optional[_Guardian] = None
_guardian_lock = threading.Lock()


def adopt(process: subprocess.Popen) -> None:
    """Have `process`'s group killed when this process ends, however it ends (`process` leads a
    group of its own: start_new_session=True). `end` releases it."""
    global _guardian
    with _guardian_lock:
        if _guardian is None or _guardian.owner != os.getpid():
            _guardian = _Guardian()
        _guardian.adopted.add(process.pid)
        _guardian.tell(f"+{process.pid}")


def run(argv: list[str], *, timeout: float, **kwargs) -> subprocess.CompletedProcess:
    """subprocess.run, its child adopted (it ends with this process however this ends) and its group
    ended with it (on a timeout too: subprocess.TimeoutExpired, as subprocess.run raises)."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, **kwargs)
    adopt(process)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        end(process, grace=0)
        raise
    end(process, grace=0)
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


def release(process: subprocess.Popen) -> None:
    """`process` has ended and been reaped: its group id may be another's now, never to be killed.
    The last one released ends the guardian."""
    global _guardian
    with _guardian_lock:
        if _guardian is None or _guardian.owner != os.getpid():
            return
        _guardian.adopted.discard(process.pid)
        _guardian.tell(f"-{process.pid}")
        if not _guardian.adopted:
            _guardian.close()
            _guardian = None


def descendants(pid: int) -> list[int]:
    """Every process under `pid` (the kernel's per-thread children lists), deepest last."""
    found, queue = [], [pid]
    while queue:
        parent = queue.pop(0)
        for children in Path(f"/proc/{parent}/task").glob("*/children"):
            try:
                queue += [int(child) for child in children.read_text().split()]
            except OSError:  # the thread or the process ended meanwhile
                continue
        if parent != pid:
            found.append(parent)
    return found


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass
