"""The one sandbox for code under test (blueprint/containment.py): each wall proved from inside, by
code that tries to take it down with the kernel's own calls (ctypes: umount2, mount, setns, unshare,
ptrace), not only Python's; and on a machine without user namespaces, a refusal naming the fix."""

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from integration_blueprint.containment import (
    SYSTEM_READ_ONLY,
    NotContained,
    Walls,
    containment,
    interpreter_paths,
)
from tests.containment_env import processes_with_argument

pytestmark = pytest.mark.skipif(not containment().available,
                                reason=f"no sandbox on this machine: {containment().reason}")

# The attacker: one script that tries every wall and reports what each attempt got, as JSON.
ATTACKS = textwrap.dedent(r'''
    import ctypes, ctypes.util, errno, json, os, socket, subprocess, sys, time
    libc = ctypes.CDLL(None, use_errno=True)
    found = {}

    def outcome(call):
        ctypes.set_errno(0)
        result = call()
        return "succeeded" if result == 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))

    def attempt(name, action):
        try:
            found[name] = action()
        except OSError as exc:
            found[name] = errno.errorcode.get(exc.errno, str(exc.errno))

    settings = json.loads(sys.argv[1])
    MNT_DETACH, MS_RDONLY, MS_REMOUNT, MS_BIND = 2, 1, 32, 4096
    CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWNET = 0x10000000, 0x00020000, 0x40000000
    PTRACE_ATTACH = 16

    found["uid"], found["gid"] = os.getuid(), os.getgid()
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    found["capabilities"] = [status[k].strip() for k in ("CapEff", "CapPrm", "CapBnd", "CapAmb")]
    found["no_new_privs"] = status["NoNewPrivs"].strip()
    found["environment"] = dict(os.environ)
    found["umount_tmp"] = outcome(lambda: libc.umount2(b"/tmp", MNT_DETACH))
    found["umount_code"] = outcome(lambda: libc.umount2(settings["code"].encode(), MNT_DETACH))
    found["remount_code_writable"] = outcome(
        lambda: libc.mount(None, settings["code"].encode(), None, MS_REMOUNT | MS_BIND, None))
    found["mount_tmpfs"] = outcome(lambda: libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, None))
    found["bind_hidden_back"] = outcome(
        lambda: libc.mount(settings["code"].encode(), settings["hidden"].encode(), None, MS_BIND, None))
    namespace = os.open("/proc/1/ns/mnt", os.O_RDONLY)
    found["setns_mount"] = outcome(lambda: libc.setns(namespace, CLONE_NEWNS))
    found["unshare_user"] = outcome(lambda: libc.unshare(CLONE_NEWUSER))
    found["unshare_mount"] = outcome(lambda: libc.unshare(CLONE_NEWNS))
    found["unshare_net"] = outcome(lambda: libc.unshare(CLONE_NEWNET))
    found["ptrace_host"] = outcome(lambda: libc.ptrace(PTRACE_ATTACH, settings["host_pid"], None, None))
    found["host_proc_visible"] = os.path.exists(f"/proc/{settings['host_pid']}/environ")
    found["processes"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    attempt("write_code", lambda: open(os.path.join(settings["code"], "planted"), "w").write("x"))
    attempt("write_root", lambda: open("/planted", "w").write("x"))
    attempt("write_usr", lambda: open("/usr/planted", "w").write("x"))
    attempt("write_tmp", lambda: open("/tmp/planted", "w").write("x") and "written")
    attempt("write_shm", lambda: open("/dev/shm/planted", "w").write("x") and "written")
    attempt("write_own", lambda: open(os.path.join(settings["own"], "planted"), "w").write("x") and "written")
    found["host_secret_visible"] = os.path.exists(settings["secret"])
    found["hidden_listing"] = os.listdir(settings["hidden"])
    found["tmp_listing"] = sorted(os.listdir("/tmp"))
    found["shm_listing"] = sorted(os.listdir("/dev/shm"))

    def connect(family, address):
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            s.connect(address)
            return "connected"
    attempt("tcp_host_loopback", lambda: connect(socket.AF_INET, ("127.0.0.1", settings["tcp_port"])))
    attempt("unix_abstract_host", lambda: connect(socket.AF_UNIX, "\0" + settings["abstract"]))
    attempt("unix_file_host", lambda: connect(socket.AF_UNIX, settings["unix_path"]))
    attempt("dns", lambda: socket.getaddrinfo("example.com", 443) and "resolved")
    found["interfaces"] = sorted(name for _, name in socket.if_nameindex())
    # A daemon in a session of its own, meant to outlive the sandbox.
    daemon = subprocess.Popen(["sleep", settings["daemon_marker"]], start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.2)
    found["daemon_started"] = daemon.poll() is None
    print(json.dumps(found))
''')


@pytest.fixture(scope="module")
def attack(tmp_path_factory):
    """The attacker run once inside walls like a function's: its code read-only, a folder of its own
    writable, a hidden folder inside the code, the host's secrets and sockets left outside."""
    base = tmp_path_factory.mktemp("containment")
    code, own, outside = base / "code", base / "own", base / "outside"
    for folder in (code, own, outside):
        folder.mkdir()
    (code / "attack.py").write_text(ATTACKS)
    hidden = code / "secrets"
    hidden.mkdir()
    (hidden / "credentials").write_text("aws_secret_access_key = host")
    secret = outside / "credentials"
    secret.write_text("host secret")
    host_file = Path(f"/tmp/blueprint-host-file-{uuid.uuid4().hex[:8]}")  # one per worker: they run at once
    host_file.write_text("host /tmp")
    shm_marker = Path(f"/dev/shm/blueprint-host-{uuid.uuid4().hex[:8]}")
    shm_marker.write_text("host shm")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    abstract_name = f"blueprint-test-{uuid.uuid4().hex}"
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind("\0" + abstract_name)
    abstract.listen()
    unix_path = str(outside / "host.sock")
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(unix_path)
    unix.listen()
    daemon_marker = f"{int(uuid.uuid4().int % 100000) + 1000}.{os.getpid()}"
    os.environ["BLUEPRINT_HOST_SECRET"] = "drill"
    settings = {"code": str(code), "own": str(own), "hidden": str(hidden), "secret": str(secret),
                "host_pid": os.getpid(), "tcp_port": listener.getsockname()[1], "abstract": abstract_name,
                "unix_path": unix_path, "daemon_marker": daemon_marker}
    walls = Walls(read_only=[*SYSTEM_READ_ONLY, *interpreter_paths(), str(code)], writable=[str(own)],
                  hidden=[str(hidden)], environment={"PATH": "/usr/bin:/bin", "GIVEN": "yes"}, cwd=str(code))
    try:
        done = subprocess.run(containment().command(walls, [sys.executable, "-I", "attack.py", json.dumps(settings)]),
                              capture_output=True, text=True, timeout=60, env={})
        assert done.returncode == 0, done.stderr
        time.sleep(0.2)
        yield {**json.loads(done.stdout), "daemons": processes_with_argument(daemon_marker), "own": own,
               "code": code, "shm_host": sorted(os.listdir("/dev/shm")), "shm_marker": shm_marker.name,
               "tmp_host": Path("/tmp/planted").exists()}
    finally:
        del os.environ["BLUEPRINT_HOST_SECRET"]
        for s in (listener, abstract, unix):
            s.close()
        shm_marker.unlink()
        host_file.unlink()
        for pid in processes_with_argument(daemon_marker):
            os.kill(pid, 9)


def test_the_contained_code_runs_as_an_unprivileged_user_with_no_capability_and_no_new_privileges(attack):
    assert attack["uid"] != 0 and attack["gid"] != 0
    assert attack["capabilities"] == ["0000000000000000"] * 4
    assert attack["no_new_privs"] == "1"


def test_its_mounts_cannot_be_undone_nor_new_ones_made_nor_another_namespace_entered(attack):
    # umount2 and mount need CAP_SYS_ADMIN in the namespace that owns the mounts: it holds none.
    for call in ("umount_tmp", "umount_code", "remount_code_writable", "mount_tmpfs", "bind_hidden_back",
                 "setns_mount", "unshare_mount", "unshare_net"):
        assert attack[call] == "EPERM", (call, attack[call])
    # A user namespace of its own would give it capabilities there: refused (bwrap --disable-userns).
    assert attack["unshare_user"] in ("EPERM", "ENOSPC"), attack["unshare_user"]


def test_it_sees_no_process_outside_and_cannot_trace_one(attack):
    assert attack["ptrace_host"] == "ESRCH"
    assert not attack["host_proc_visible"]
    assert max(attack["processes"]) < 10  # its own PID namespace: bwrap's init, itself, its children


def test_it_writes_nowhere_but_its_own_folder_and_its_private_tmp(attack):
    assert attack["write_code"] == "EROFS"
    assert attack["write_root"] == "EROFS"
    assert attack["write_usr"] == "EROFS"
    assert attack["write_own"] == "written" and (attack["own"] / "planted").read_text() == "x"
    assert attack["write_tmp"] == "written" and not attack["tmp_host"]  # its /tmp is not the host's
    assert not (attack["code"] / "planted").exists()
    # Nothing of the host's /tmp (its files, sockets, pymp-* folders): only what it wrote, and the way
    # to its own folder (the test's temporary folders live under the host's /tmp) and
    # the way to every folder bound in (the interpreter's too, where a checkout lives under /tmp).
    bound = [attack["own"], attack["code"], *map(Path, interpreter_paths())]
    ways_in = {path.parts[2] for path in bound if len(path.parts) > 2 and path.parts[1] == "tmp"}
    assert set(attack["tmp_listing"]) <= {"planted", *ways_in}
    assert "blueprint-host-file" not in attack["tmp_listing"]


def test_its_dev_shm_is_its_own(attack):
    assert attack["write_shm"] == "written"
    assert attack["shm_listing"] == ["planted"]
    assert attack["shm_marker"] in attack["shm_host"] and "planted" not in attack["shm_host"]


def test_it_sees_only_the_files_listed_and_hidden_folders_empty(attack):
    assert not attack["host_secret_visible"]
    assert attack["hidden_listing"] == []


def test_it_has_only_the_environment_given(attack):
    environment = {k: v for k, v in attack["environment"].items() if k not in ("PWD", "LC_CTYPE")}
    assert environment == {"PATH": "/usr/bin:/bin", "GIVEN": "yes"}


def test_it_reaches_no_network_not_even_the_hosts_loopback_nor_its_unix_sockets(attack):
    assert attack["tcp_host_loopback"] == "ECONNREFUSED"  # its own loopback, where nothing listens
    assert attack["unix_abstract_host"] == "ECONNREFUSED"  # abstract names belong to a network namespace
    assert attack["unix_file_host"] == "ENOENT"  # the socket's folder is not there
    assert attack["dns"] != "resolved"
    assert attack["interfaces"] == ["lo"]


def test_a_setsid_daemon_does_not_outlive_the_sandbox(attack):
    assert attack["daemon_started"]
    assert attack["daemons"] == []


def test_a_sandbox_started_from_a_short_lived_thread_outlives_the_thread_not_the_process():
    """The drill starts environments from pool and poller threads: a warm one must not die when the
    thread that started it ends (only when the process does: the next test's daemon check)."""
    walls = Walls(read_only=[*SYSTEM_READ_ONLY])
    started = []

    def start_and_see_it_running():  # the thread ends only once the sandbox is whole (bwrap set up)
        process = containment().popen(walls, ["sh", "-c", "echo up; exec sleep 30"], stdout=subprocess.PIPE)
        started.append(process)
        assert process.stdout.readline() == b"up\n"

    thread = threading.Thread(target=start_and_see_it_running)
    thread.start()
    thread.join()
    [process] = started
    try:
        time.sleep(0.5)
        assert process.poll() is None  # still running after the thread that asked for it ended
    finally:
        process.kill()
        process.wait(timeout=10)


def test_a_sandbox_ends_with_the_process_that_started_it_killed_or_not():
    marker = f"{os.getpid() % 1000 + 200}.{time.time_ns() % 10**9}"
    starter = textwrap.dedent(f"""
        import os, time
        from integration_blueprint.containment import SYSTEM_READ_ONLY, Walls, containment
        containment().popen(Walls(read_only=SYSTEM_READ_ONLY), ["sleep", "{marker}"], start_new_session=True)
        time.sleep(0.5)
        os.kill(os.getpid(), 9)  # the drill killed: no cleanup of its own runs
    """)
    subprocess.run([sys.executable, "-c", starter], timeout=60)
    time.sleep(0.5)
    assert processes_with_argument(marker) == []


def test_the_environment_given_does_not_show_on_the_hosts_process_list():
    """/proc/<pid>/cmdline is readable by every user of the machine: bwrap reads its options,
    --setenv pairs included, from a memory file."""
    walls = Walls(read_only=[*SYSTEM_READ_ONLY], environment={"TOKEN": "s3cr3t-value"})
    process = containment().popen(walls, ["sh", "-c", 'test "${#TOKEN}" -eq 12 && sleep 5'])
    try:
        time.sleep(0.5)
        command_line = Path(f"/proc/{process.pid}/cmdline").read_bytes()
        assert process.poll() is None  # the sandbox has its environment (the test passed)
        assert b"s3cr3t-value" not in command_line and b"--args" in command_line
    finally:
        process.kill()
        process.wait(timeout=10)


def test_the_probe_runs_once_per_process():
    assert containment() is containment()


def test_a_probe_started_in_the_background_is_the_one_every_caller_gets():
    """The preview starts the probe before its packs (probe_in_background); the program's start,
    and any other caller meanwhile, wait for that probe's answer instead of making another sandbox."""
    check = textwrap.dedent("""
        import json, subprocess, threading, time
        from integration_blueprint import containment as module
        probes, run = [], subprocess.run
        def counted(*args, **kwargs):
            probes.append(args[0][-1])
            time.sleep(0.3)  # the probe still running when the callers ask
            return run(*args, **kwargs)
        module.subprocess.run = counted
        module.probe_in_background()
        module.probe_in_background()
        answers = []
        callers = [threading.Thread(target=lambda: answers.append(module.containment())) for _ in range(3)]
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join()
        print(json.dumps({"probes": probes, "same": all(a is answers[0] for a in answers),
                          "available": answers[0].available}))
    """)
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    # one probe: one sandbox around `true`, with the overlay and the sized /tmp the walls may ask for
    assert json.loads(done.stdout) == {"probes": ["true"], "same": True, "available": True}


def test_a_bwrap_without_overlays_or_sized_tmpfs_is_still_used_without_them(tmp_path):
    """An older bwrap (0.8: no --size; 0.9: no --tmp-overlay) refuses the one probe that asks for
    everything: the probe then tries each feature alone, and the sandbox is made without the missing."""
    real = containment().tool
    older = tmp_path / "bwrap"
    older.write_text(f"""#!/bin/sh
for option in "$@"; do
  case "$option" in --size|--tmp-overlay) echo "bwrap: Unknown option $option" >&2; exit 1;; esac
done
exec {real} "$@"
""")
    older.chmod(0o755)
    check = textwrap.dedent(f"""
        import json
        from integration_blueprint import containment as module
        module._bwrap = lambda: {str(older)!r}
        c = module.containment()
        print(json.dumps({{"available": c.available, "overlays": c.overlays, "sized": c.sized_tmpfs}}))
    """)
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"available": True, "overlays": False, "sized": False}


def test_a_machine_without_user_namespaces_gets_not_contained_naming_the_cause_and_the_fix():
    """As on a CI container that forbids them: every nested user namespace fails (ENOSPC)."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare command to take user namespaces away")
    check = textwrap.dedent("""
        import json
        from integration_blueprint.containment import Walls, NotContained, containment
        c = containment()
        try:
            c.command(Walls(), ["true"])
            raised = None
        except NotContained as exc:
            raised = {"reason": exc.reason, "fix": exc.fix}
        print(json.dumps({"available": c.available, "reason": c.reason, "fix": c.fix, "raised": raised}))
    """)
    done = subprocess.run(["unshare", "-Ur", "sh", "-c",
                           'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" -c "$1"', sys.executable, check],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["available"] is False
    assert "user.max_user_namespaces is 0" in seen["reason"]
    assert "sysctl -w user.max_user_namespaces" in seen["fix"]
    assert seen["raised"] == {"reason": seen["reason"], "fix": seen["fix"]}
    assert NotContained("r", "f").args[0] == "r. Fix: f"
