"""The engine reaching a server a sandboxed program serves on its own loopback: the SDK's Callbacks
service (transforms), which every Pulumi SDK binds to 127.0.0.1:<port> and names to the engine as
its target. The program's loopback is its sandbox's network namespace (containment.py), which the
gate is not in, so a relay of ours joins that namespace and carries the engine's connections there:
a process that accepts on a Unix socket in the run's private folder (made and bound by the gate,
handed over as a file descriptor) and forwards each connection to the port inside. It enters the
sandbox's network namespace through util-linux's `nsenter`, never by hand: first the user
namespace that owns it (ours, which lets an unprivileged process join it; asked of the kernel with
ioctl_ns(2)), then the network namespace; it sees nothing else of the sandbox (not its files, not
its processes), and the program cannot see it.

This file also runs as that relay's script (standard library only, the gate's interpreter with -I):
    nsenter --user=<owner> --net=<ns> --preserve-credentials python -I loopback_relay.py <listening fd> <port>
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Callable, Optional

# What the relay prints once it listens inside the namespace.
READY = "ready"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost")
START_SECONDS = 10
# ioctl_ns(2): a namespace's owning user namespace, as a new file descriptor (_IO(0xb7, 0x1)). The
# network namespace is owned by the sandbox's outer user namespace; its processes live in a nested
# one (bwrap's --disable-userns), which cannot join it.
NS_GET_USERNS = 0xB701


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
        nsenter = shutil.which("nsenter")
        if nsenter is None:
            raise RuntimeError("nsenter (util-linux) is not on PATH: the engine needs it to reach the sandboxed "
                               f"program's loopback port {port} (its transforms); install util-linux")
        path = str(Path(self._folder) / f"loopback-{port}.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)  # in the gate's private folder, which the relay need not enter
        listener.listen()
        network = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
        try:
            owner = fcntl.ioctl(network, NS_GET_USERNS)
        finally:
            os.close(network)
        try:
            relay = subprocess.Popen(
                [nsenter, f"--user=/proc/self/fd/{owner}", f"--net=/proc/{pid}/ns/net", "--preserve-credentials",
                 sys.executable, "-I", __file__, str(listener.fileno()), str(port)],
                pass_fds=(listener.fileno(), owner), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, start_new_session=True)
        finally:
            listener.close()  # the relay holds both now
            os.close(owner)
        from integration_blueprint.preview import process_tree  # here: this file also runs as the relay itself

        process_tree.adopt(relay)
        timer = threading.Timer(START_SECONDS, relay.kill)
        timer.start()
        try:
            said = relay.stdout.readline().strip() if relay.stdout else ""
        finally:
            timer.cancel()
        if said != READY:
            relay.kill()
            _, stderr = relay.communicate()
            process_tree.release(relay)
            raise RuntimeError(f"the relay to the program's loopback port {port} did not start: {stderr.strip()[-1000:]}")
        return f"unix:{path}", relay

    def close(self) -> None:
        with self._lock:
            for _, relay in self._relays.values():
                relay.kill()
                relay.communicate()
                from integration_blueprint.preview import process_tree

                process_tree.release(relay)
            self._relays.clear()


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
    listener = socket.socket(fileno=int(sys.argv[1]))  # bound by the gate; nsenter has joined the namespaces
    port = int(sys.argv[2])
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
