"""The engine reaching a server a sandboxed program serves on its own loopback: the SDK's Callbacks
service (transforms), which every Pulumi SDK binds to 127.0.0.1:<port> and names to the engine as
its target. The program's loopback is its sandbox's network namespace (containment.py), which the
gate is not in, so a relay of ours joins that namespace and carries the engine's connections there:
a process that listens on a Unix socket in the run's private folder and forwards each connection
to the port inside. It joins the sandbox's user namespace first (ours: that is what lets an
unprivileged process join the network namespace it owns), then its network namespace; it sees
nothing else of the sandbox (not its files, not its processes), and the program cannot see it.

This file also runs as that relay's script (standard library only, the gate's interpreter with -I):
    python -I loopback_relay.py <pid in the sandbox> <port> <socket path>
"""

from __future__ import annotations

import ctypes
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Callable, Optional

# setns(2) flags (linux/sched.h).
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
# ioctl_ns(2): the user namespace that owns a namespace (_IO(0xb7, 0x1)).
NS_GET_USERNS = 0xB701
# What the relay prints once it listens inside the namespace.
READY = "ready"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost")
START_SECONDS = 10


class Relays:
    """The engine's way to a program's loopback targets: `address(target)` is where the engine dials
    `127.0.0.1:<port>` of the sandboxed program (a relay started for it once), any other target as it
    is. `program_pid` names a process inside the sandbox (None while there is none)."""

    def __init__(self, folder: str, program_pid: Callable[[], Optional[int]]):
        self._folder, self._program_pid = folder, program_pid
        self._lock = threading.Lock()
        self._relays: dict[str, tuple[str, subprocess.Popen]] = {}

    def address(self, target: str) -> str:
        host, _, port = target.rpartition(":")
        if host not in LOOPBACK_HOSTS or not port.isdigit():
            return target
        with self._lock:
            if target not in self._relays:
                self._relays[target] = self._start(int(port))
            return self._relays[target][0]

    def _start(self, port: int) -> tuple[str, subprocess.Popen]:
        pid = self._program_pid()
        if pid is None:
            raise RuntimeError(f"the program's sandbox has no process to reach its loopback port {port} through")
        path = str(Path(self._folder) / f"loopback-{port}.sock")
        relay = subprocess.Popen([sys.executable, "-I", __file__, str(pid), str(port), path], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        timer = threading.Timer(START_SECONDS, relay.kill)
        timer.start()
        try:
            said = relay.stdout.readline().strip() if relay.stdout else ""
        finally:
            timer.cancel()
        if said != READY:
            relay.kill()
            _, stderr = relay.communicate()
            raise RuntimeError(f"the relay to the program's loopback port {port} did not start: {stderr.strip()[-1000:]}")
        return f"unix:{path}", relay

    def close(self) -> None:
        with self._lock:
            for _, relay in self._relays.values():
                relay.kill()
                relay.communicate()
            self._relays.clear()


def _enter(pid: int) -> None:
    """Join the network namespace of `pid`, through the user namespace that owns it (bwrap nests a
    second user namespace inside that one for the sandbox's uid: the process's own is not the owner)."""
    libc = ctypes.CDLL(None, use_errno=True)

    def checked(result: int, what: str) -> int:
        if result < 0:
            error = ctypes.get_errno()
            raise OSError(error, f"{what}: {os.strerror(error)}")
        return result

    network = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    owner = checked(libc.ioctl(network, NS_GET_USERNS), "finding the user namespace of the sandbox's network")
    checked(libc.setns(owner, CLONE_NEWUSER), "joining the user namespace of the sandbox's network")
    checked(libc.setns(network, CLONE_NEWNET), "joining the sandbox's network namespace")
    os.close(owner)
    os.close(network)


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(1 << 16):
            target.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, target):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main() -> None:
    pid, port, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)  # in the gate's folder, before leaving the gate's namespaces
    listener.listen()
    _enter(pid)
    print(READY, flush=True)
    while True:
        engine, _ = listener.accept()
        try:
            program = socket.create_connection(("127.0.0.1", port))
        except OSError:
            engine.close()
            continue
        for source, target in ((engine, program), (program, engine)):
            threading.Thread(target=_pump, args=(source, target), daemon=True).start()


if __name__ == "__main__":
    main()
