"""A team's handler that tries to break out of its sandbox, run through the CLI as a team runs the
drill: it applies each charge twice on redelivery (a duplicate effect the drill must catch) and, at
its first invocation, tries every way out an attacker found in the hand-built walls (the fork
server's socket, a fresh interpreter through /proc/self/exe, umount and remount, /dev/shm, a setsid
daemon, the user's ~/.aws, writes on the host). Every attempt fails, the drill still FAILS it, and
nothing is left running or on disk. On a machine without user namespaces the drill refuses the
team's code (exit 2, the cause and the fix) unless --no-isolation, which marks every verdict."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from integration_blueprint.cli import main
from integration_blueprint.containment import containment
from integration_blueprint.drill import runner
from tests.containment_env import processes_with_argument
from tests.team_billing import ADD_TO_BALANCE, billing_program

ESCAPING_HANDLER = '''
"""Adds on every delivery (a duplicate effect per redelivery) and tries to break out once."""
import ctypes, glob, json, os, socket, subprocess, sys, time
import boto3

ddb = boto3.client("dynamodb")
SETTINGS = json.loads(%(settings)r)
tried = []


def attempt(name, action, found):
    try:
        found[name] = action()
    except Exception as exc:  # every way out: what it got
        found[name] = f"{type(exc).__name__}: {exc}"[:200]


def fork_server_sockets():
    sockets = []
    for folder in {"/tmp", os.environ.get("TMPDIR", "/tmp"), SETTINGS["drill_tmp"]}:
        for path in glob.glob(os.path.join(folder, "pymp-*", "*")) + glob.glob(os.path.join(folder, "*", "pymp-*", "*")):
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(path)
                sockets.append(path)
    return sockets or "none reachable"


LIBC = ctypes.CDLL(None, use_errno=True)


def native_open(path, flags):
    """open(2) itself, past the audit hook (a report, not a wall): the errno's name, or "opened"."""
    fd = LIBC.open(path.encode(), flags, 0o644)
    if fd < 0:
        import errno
        return errno.errorcode[ctypes.get_errno()]
    os.close(fd)
    return "opened"


def write(path):
    return native_open(path, os.O_WRONLY | os.O_CREAT)


def read(path):
    return native_open(path, os.O_RDONLY)


def escape():
    found = {}
    libc = LIBC
    attempt("fork_server", fork_server_sockets, found)
    fresh = (f"open({SETTINGS['host_file']!r}, 'w').write('fresh interpreter'); "
             f"print(open({SETTINGS['credentials']!r}).read())")
    attempt("proc_self_exe", lambda: subprocess.run(["/proc/self/exe", "-I", "-c", fresh], capture_output=True,
                                                     text=True, timeout=10).returncode, found)
    found["umount_tmp"] = libc.umount2(b"/tmp", 2) == 0
    found["remount_root"] = libc.mount(None, b"/", None, 32 | 4096, None) == 0
    attempt("shm", lambda: write("/dev/shm/" + SETTINGS["shm_name"]), found)
    attempt("daemon", lambda: subprocess.Popen(["sleep", SETTINGS["daemon_marker"]], start_new_session=True).pid, found)
    attempt("credentials", lambda: read(SETTINGS["credentials"]), found)
    attempt("home_credentials", lambda: read(os.path.expanduser("~/.aws/credentials")), found)
    attempt("host_write", lambda: write(SETTINGS["host_file"]), found)
    attempt("program_write", lambda: write(SETTINGS["program_file"]), found)
    attempt("environ_of_drill", lambda: read(f"/proc/{SETTINGS['drill_pid']}/environ"), found)
    print("ESCAPE " + json.dumps(found), flush=True)


def handler(event, context):
    if not tried:
        tried.append(True)
        escape()
''' + ADD_TO_BALANCE

# Two instances: two pattern processes, whose reports cross to the drill as data.
PROGRAM = billing_program("team-billing", "team-invoicing")

TEAM_PROGRAM = Path(__file__).parent / "fixtures" / "team_program"
DRILL = ["drill", "--records", "20", "--seed", "3", "--duplicates", "0.3", "--crashes", "1", "--transient", "0",
         "--json", "--no-progress"]


@pytest.fixture
def escaping_program(tmp_path, monkeypatch):
    """The team's program, its escaping handler, and what it aims at on the host."""
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    credentials = home / ".aws" / "credentials"
    credentials.write_text("[default]\naws_secret_access_key = the-developers-own\n")
    monkeypatch.setenv("HOME", str(home))
    # The drill's temp folders in a folder of the test's own (the machine's /tmp is shared), short:
    # the fork server's socket lives there, and a Unix socket's path has at most 107 bytes.
    drill_tmp = Path(tempfile.mkdtemp(prefix="bp-"))
    monkeypatch.setenv("TMPDIR", str(drill_tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(drill_tmp))
    program = tmp_path / "program"
    (program / "code").mkdir(parents=True)
    (program / "Pulumi.yaml").write_text("name: escaping\nruntime: python\n")
    (program / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (program / "__main__.py").write_text(PROGRAM)
    marker = uuid.uuid4().hex[:10]
    settings = {"credentials": str(credentials), "host_file": str(tmp_path / f"host-{marker}"),
                "program_file": str(program / "planted.txt"), "shm_name": f"blueprint-{marker}",
                "daemon_marker": f"{int(marker[:4], 16) + 1000}.{os.getpid()}", "drill_pid": os.getpid(),
                "drill_tmp": str(drill_tmp)}
    (program / "code" / "charges.py").write_text(ESCAPING_HANDLER % {"settings": json.dumps(settings)})
    yield program, settings
    for pid in processes_with_argument(settings["daemon_marker"]):
        os.kill(pid, 9)
    Path("/dev/shm", settings["shm_name"]).unlink(missing_ok=True)
    shutil.rmtree(drill_tmp, ignore_errors=True)


def escapes(log_dir: str) -> list[dict]:
    return [json.loads(line.split("ESCAPE ", 1)[1]) for log in Path(log_dir).glob("*.log")
            for line in log.read_text().splitlines() if "ESCAPE " in line]


def leftovers(before: set) -> set:
    """What the drill left in its temp folder (its pymp-*, sandbox and work folders)."""
    return {p.name for p in Path(tempfile.gettempdir()).iterdir()
            if p.name.startswith(("pymp-", "blueprint-sandbox-", "blueprint-drill-work-"))} - before


@pytest.mark.slow
@pytest.mark.skipif(not containment().available, reason=f"no sandbox on this machine: {containment().reason}")
def test_a_handler_that_tries_every_way_out_still_fails_the_drill_and_leaves_no_trace(escaping_program, capsys):
    program, settings = escaping_program
    before = leftovers(set())

    code = main([*DRILL, "--program", str(program)])

    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["contained"] is True
    assert set(report["patterns"]) == {"fifo_billing:team-billing", "fifo_billing:team-invoicing"}
    for pattern in report["patterns"].values():
        assert pattern["duplicate_effects"] > 0, pattern["notes"]
    tries = escapes(report["log_dir"])
    assert len(tries) >= 2  # each pattern's first environment tried
    for found in tries:
        assert found["fork_server"] == "none reachable"
        assert found["proc_self_exe"] != 0  # the fresh interpreter wrote nothing and read nothing
        assert found["umount_tmp"] is False and found["remount_root"] is False
        # The files are not there at all (only the function's archive, layers and runtime are).
        assert found["credentials"] == found["home_credentials"] == "ENOENT"
        # Its writes to those paths land, if anywhere, in its private /tmp (the test's folders are under
        # /tmp): the host's copies are checked below.
        assert found["environ_of_drill"] == "ENOENT"  # its own PID namespace: the drill's pid is not there
        assert isinstance(found["daemon"], int)  # it started, and did not outlive its sandbox (below)
    assert not Path(settings["host_file"]).exists() and not (program / "planted.txt").exists()
    assert not Path("/dev/shm", settings["shm_name"]).exists()
    assert processes_with_argument(settings["daemon_marker"]) == []
    assert leftovers(before) == set()


@pytest.mark.slow
def test_only_a_drill_of_team_code_needs_the_sandbox(recordings, monkeypatch):
    """The blueprint's reference handlers are the package's own code: a drill of them runs where no
    sandbox can be made (as `make local` on such a machine); one of a team's code does not."""
    from integration_blueprint.containment import Containment
    from integration_blueprint.drill.patterns import DRIVERS
    from integration_blueprint.drill.report import DrillOptions
    from integration_blueprint.drill.runner import _require_containment, choose_instances
    from integration_blueprint.sandbox.errors import SandboxError

    monkeypatch.setattr(runner, "containment", lambda: Containment(False, None, "no user namespaces here", "the fix"))
    reference, _ = choose_instances(recordings(), DRIVERS)
    team, _ = choose_instances(recordings(program=TEAM_PROGRAM, stack="forgets"), DRIVERS)

    _require_containment(DrillOptions(), reference)  # runs
    _require_containment(DrillOptions(isolation=False), team)  # --no-isolation: runs, marked
    with pytest.raises(SandboxError, match=r"the drill runs the team's code \(.*orders.*\) only inside a sandbox, "
                       r"which cannot be made here: no user namespaces here. Fix: the fix; or pass --no-isolation"):
        _require_containment(DrillOptions(), team)


@pytest.mark.slow
def test_a_link_out_of_a_functions_folder_stops_the_drill_before_any_code_runs_naming_it(tmp_path, capsys):
    """Pulumi would pack what the link points to (here a developer's credentials): one line, exit 2."""
    credentials = tmp_path / "credentials"
    credentials.write_text("aws_secret_access_key = the-developers-own")
    program = tmp_path / "program"
    (program / "code").mkdir(parents=True)
    (program / "Pulumi.yaml").write_text("name: linking\nruntime: python\n")
    (program / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (program / "__main__.py").write_text(PROGRAM)
    (program / "code" / "charges.py").write_text("def handler(event, context):\n    return {}\n")
    (program / "code" / "settings.ini").symlink_to(credentials)

    code = main([*DRILL, "--program", str(program)])

    [line] = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert line.startswith("error: function team-billing-")
    assert f"archive entry 'settings.ini' (code/settings.ini) is a link to {credentials}, outside the program's " in line
    assert "Pulumi packs the file a link points to" in line


def run_without_user_namespaces(arguments: list[str]) -> subprocess.CompletedProcess:
    """The CLI on a machine where no user namespace can be made (as in many CI containers)."""
    command = " ".join(f"'{a}'" for a in [sys.executable, "-m", "integration_blueprint", *arguments])
    return subprocess.run(["unshare", "-Ur", "sh", "-c", f"echo 0 > /proc/sys/user/max_user_namespaces && {command}"],
                          capture_output=True, text=True, timeout=600, env={**os.environ})


@pytest.mark.slow
@pytest.mark.skipif(not containment().available, reason="needs user namespaces to take them away")
def test_without_user_namespaces_the_drill_refuses_the_teams_code_unless_no_isolation_which_marks_every_verdict(
        escaping_program):
    program, settings = escaping_program

    refused = run_without_user_namespaces([*DRILL, "--program", str(program)])

    assert refused.returncode == 2, refused.stderr
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith("error: the drill runs the team's code (team-billing, team-invoicing) only inside a sandbox")
    assert "user.max_user_namespaces is 0" in line and "sysctl -w user.max_user_namespaces" in line
    assert "--no-isolation" in line
    assert not Path(settings["host_file"]).exists()  # the team's code never ran

    text = [a for a in DRILL if a != "--json"]
    uncontained = run_without_user_namespaces([*text, "--program", str(program), "--no-isolation"])

    assert uncontained.returncode == 1, uncontained.stderr  # its duplicate effects, caught all the same
    verdicts = [line for line in uncontained.stdout.splitlines() if line.startswith("fifo_billing")]
    assert len(verdicts) == 2 and all(line.endswith("FAIL (not contained)") for line in verdicts), uncontained.stdout
    assert "not contained: --no-isolation ran the team's code outside the sandbox" in uncontained.stdout
    assert uncontained.stdout.splitlines()[-1].startswith("result: (not contained) FAILED")
