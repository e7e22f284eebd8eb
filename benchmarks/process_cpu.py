"""Every process's CPU in a benchmark's figure, the sandboxed program's too.

A process's CPU reaches RUSAGE_CHILDREN only when its parent waits for it. bwrap (the sandbox of every
program a preview runs) does not wait for the program it ran: the program is left to be reaped by
whoever adopts it, by default init, and its CPU is lost to the figure. A benchmark calls
adopt_orphans() once (it becomes a child subreaper: orphaned descendants are reparented to it) and
reap() after each run, before it reads RUSAGE_CHILDREN.
"""

import ctypes
import os
import resource
import time

PR_SET_CHILD_SUBREAPER = 36  # prctl(2)
REAP_SECONDS = 30  # what a run leaves behind must end by then (the gate ends the sandbox as it exits)


def adopt_orphans() -> None:
    """Make this process the one every orphaned descendant is reparented to."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}: the sandboxed "
                         "program's CPU could not be counted")


def reap() -> int:
    """Wait for every descendant left (adopted orphans); how many there were."""
    reaped, deadline = 0, time.monotonic() + REAP_SECONDS
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid:
            reaped += 1
        elif time.monotonic() > deadline:
            raise SystemExit(f"processes of the run still running {REAP_SECONDS} s after it ended")
        else:
            time.sleep(0.01)


def cpu_seconds() -> float:
    """CPU seconds of this process and of every process it has waited for (reap() first)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
