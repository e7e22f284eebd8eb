"""A previewed program is code under test: it runs inside the sandbox (program_walls, containment.py)
and each attack an adversarial review made from a program fails there, run through the CLI as a
team's CI runs it: disabling the pack that judges it (its token read from /proc/<pack>/mem, then
Configure), leaving a `setsid` daemon behind, reading ~/.aws, writing the host. Where the machine
cannot make the sandbox (no unprivileged user namespaces) the preview still runs, every report says
the program was not contained, and --strict exits 2 on it."""

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from integration_blueprint.containment import containment

BLUEPRINT = Path(sys.executable).with_name("blueprint")
CREDENTIALS = "aws_secret_access_key = wJalrXUtnFEMI-attack-marker"
# Every attack program first declares a queue whose DLQ redrive allows one receive: a mandatory
# violation the verdict must keep, whatever the program does next.
VIOLATION = '''
import json, os, re, subprocess, sys, time
import pulumi_aws as aws
dlq = aws.sqs.Queue("dlq", message_retention_seconds=1209600)
aws.sqs.Queue("orders", redrive_policy=dlq.arn.apply(
    lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1})))
'''
ATTACKS = {
    # Find the pack's process, its analyzer socket and every token-shaped string in its memory, and
    # configure it with every policy disabled, for a few seconds (before and after the gate does).
    "disable-the-pack": '''
import glob, grpc
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

def packs():
    for folder in glob.glob("/proc/[0-9]*"):
        try:
            if b"pack_host" in open(folder + "/cmdline", "rb").read():
                yield folder
        except OSError:
            pass

def sockets(folder):
    inodes = set()
    for fd in glob.glob(folder + "/fd/*"):
        try:
            inodes.add(os.readlink(fd)[len("socket:["):-1])
        except OSError:
            pass
    for line in open("/proc/net/unix").read().splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 8 and fields[6] in inodes:
            yield fields[7]

def tokens(folder):
    found = set()
    try:
        memory = open(folder + "/mem", "rb")
        for line in open(folder + "/maps"):
            start, end = (int(x, 16) for x in line.split()[0].split("-"))
            if "rw" not in line.split()[1] or end - start > 64 << 20:
                continue
            try:
                memory.seek(start)
                found |= set(re.findall(rb"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])", memory.read(end - start)))
            except OSError:
                pass
    except OSError:
        pass
    return found

seen = {"packs": 0, "sockets": 0, "tokens": 0, "configured": 0}
deadline = time.time() + 4
while time.time() < deadline:
    for folder in packs():
        seen["packs"] += 1
        candidates = tokens(folder)
        seen["tokens"] += len(candidates)
        for path in sockets(folder):
            seen["sockets"] += 1
            request = analyzer_pb2.ConfigureAnalyzerRequest()
            for rule in ("sqs-dlq-max-receive-count", "dlq-has-depth-alarm"):
                request.policyConfig[rule].enforcementLevel = analyzer_pb2.DISABLED
            with grpc.insecure_channel("unix:" + path) as channel:
                for token in candidates:
                    try:
                        analyzer_pb2_grpc.AnalyzerStub(channel).Configure(
                            request, metadata=[("blueprint-run-token", token.decode())], timeout=2)
                        seen["configured"] += 1
                    except grpc.RpcError:
                        pass
    time.sleep(0.3)
print("ATTACK " + json.dumps(seen))
''',
    # A daemon in a session of its own, twice forked: out of the preview's process group.
    "setsid-daemon": '''
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", "DAEMON-" + os.getcwd()])
    os._exit(0)
os.wait()
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "DAEMON-" + os.getcwd()],
                 start_new_session=True)
print("ATTACK " + json.dumps({"started": 2}))
''',
    # The user's AWS credentials, through the home the environment names.
    "read-aws-credentials": '''
read = []
for path in (os.path.expanduser("~/.aws/credentials"), os.environ["HOME"] + "/.aws/credentials"):
    try:
        read.append(open(path).read())
    except OSError as exc:
        read.append(type(exc).__name__)
print("ATTACK " + json.dumps({"read": read}))
''',
    # Files on the host: beside the project, in the project, in /tmp.
    "write-the-host": '''
written = []
for path in (os.path.join(os.path.dirname(os.getcwd()), "planted"), os.path.join(os.getcwd(), "planted"),
             "/tmp/planted-" + os.path.basename(os.path.dirname(os.getcwd()))):
    try:
        open(path, "w").write("x")
        written.append(path)
    except OSError:
        pass
print("ATTACK " + json.dumps({"written": written}))
''',
}


def write_program(folder: Path, attack: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "Pulumi.yaml").write_text("name: attacker\nruntime: python\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (folder / "__main__.py").write_text(VIOLATION + textwrap.dedent(ATTACKS[attack]))
    return folder


def home_with_credentials(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(f"[default]\n{CREDENTIALS}\n")
    return home


def daemons(marker: str) -> list[int]:
    found = []
    for process in Path("/proc").iterdir():
        try:
            if process.name.isdigit() and f"DAEMON-{marker}".encode() in (process / "cmdline").read_bytes():
                found.append(int(process.name))
        except OSError:
            continue
    return found


def preview(program: Path, home: Path, *, without_user_namespaces: bool = False,
            strict: bool = True) -> tuple[int, dict]:
    command = [str(BLUEPRINT), "preview", "--program", str(program), "--format", "json", *(["--strict"] if strict else [])]
    if without_user_namespaces:
        # A machine whose kernel allows no user namespaces: any nested one then fails with ENOSPC.
        command = ["unshare", "-Ur", "sh", "-c",
                   'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"', "sh", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "HOME": str(home)})
    return done.returncode, json.loads(done.stdout)


def attack_outcome(report: dict) -> dict:
    line = next(line for line in report["programOutput"]["stdout"].splitlines() if line.startswith("ATTACK "))
    return json.loads(line[len("ATTACK "):])


def mandatory(report: dict) -> set:
    return {(v["policy"], v["name"]) for v in report["violations"] if v["level"] == "mandatory"}


@pytest.mark.slow
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_each_attack_of_a_contained_program_fails_and_the_verdict_stands(attack, tmp_path):
    if not containment().available:
        pytest.skip(f"this machine cannot make the sandbox ({containment().reason}): the test below covers it")
    program, home = write_program(tmp_path / "project" / "app", attack), home_with_credentials(tmp_path)
    try:
        exit_code, report = preview(program, home)
        outcome = attack_outcome(report)
        assert report["contained"] is True and report["error"] is None
        assert exit_code == 1  # the mandatory violation, judged: nothing went unchecked
        assert ("sqs-dlq-max-receive-count", "orders") in mandatory(report)
        if attack == "disable-the-pack":
            assert outcome == {"packs": 0, "sockets": 0, "tokens": 0, "configured": 0}
        if attack == "setsid-daemon":
            assert outcome == {"started": 2}
            time.sleep(0.5)
            assert daemons(str(program)) == []  # ended with the program's PID namespace
        if attack == "read-aws-credentials":
            assert outcome == {"read": ["FileNotFoundError", "FileNotFoundError"]}
            assert CREDENTIALS not in json.dumps(report)
        if attack == "write-the-host":
            # The project is writable through an overlay the run throws away (a program may build its
            # zip there); what it wrote elsewhere went to its private /tmp. Nothing reached the host.
            assert not (program.parent / "planted").exists() and not (program / "planted").exists()
            assert not Path(f"/tmp/planted-{program.parent.name}").exists()
    finally:
        for pid in daemons(str(program)):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_without_user_namespaces_the_preview_runs_and_every_report_says_the_program_was_not_contained(tmp_path):
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-Ur", "true"], capture_output=True).returncode:
        if containment().available:
            pytest.skip("cannot make a machine without user namespaces here (`unshare -Ur` fails)")
    program, home = write_program(tmp_path / "project" / "app", "read-aws-credentials"), home_with_credentials(tmp_path)
    exit_code, report = preview(program, home, without_user_namespaces=containment().available)
    assert report["contained"] is False and report["error"] is None
    assert exit_code == 2  # --strict: the program ran outside the sandbox
    assert "not contained" in report["notes"][0] and "user namespaces" in report["notes"][0]
    assert "Fix: " in report["notes"][0]
    assert any("the program was not contained" in line for line in report["incomplete"])
    assert ("sqs-dlq-max-receive-count", "orders") in mandatory(report)  # still judged


@pytest.mark.slow
def test_without_user_namespaces_a_program_that_steals_the_packs_token_still_cannot_pass_the_gate(tmp_path):
    """Uncontained, the program can read the pack's memory, but every pack answers Configure once:
    the gate configures it first and the program's is refused (the violation stands, exit 1), or
    the program's came first and the gate's own is refused (exit 2). Never a clean exit 0."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-Ur", "true"], capture_output=True).returncode:
        pytest.skip("cannot make a machine without user namespaces here (`unshare -Ur` fails)")
    program, home = write_program(tmp_path / "project" / "app", "disable-the-pack"), home_with_credentials(tmp_path)
    exit_code, report = preview(program, home, without_user_namespaces=True, strict=False)
    assert report["contained"] is False
    if exit_code == 1:
        assert attack_outcome(report)["configured"] == 0  # every stolen Configure refused
        assert ("sqs-dlq-max-receive-count", "orders") in mandatory(report)
    else:
        assert exit_code == 2 and report["error"] is not None, report


def test_a_not_contained_run_is_said_so_in_text_markdown_and_sarif():
    from integration_blueprint.preview.recording import RecordedStack
    from integration_blueprint.preview.reports.markdown import render_markdown
    from integration_blueprint.preview.reports.sarif import to_sarif
    from integration_blueprint.preview.reports.text import render_text
    from integration_blueprint.preview.run import PreviewResult

    note = "the program ran without the sandbox (not contained: ...): no user namespaces. Fix: allow them"
    recorded = RecordedStack(project="p", stack="dev", program_dir=None, config={}, unknowns=False, resources=[],
                             not_contained=note)
    for strict in (False, True):
        result = PreviewResult(recorded, [], None, strict=strict)
        assert result.exit_code == (2 if strict else 0)
        assert note in render_text(result) and note in render_markdown(result)
        sarif = to_sarif(result)["runs"][0]["invocations"][0]
        assert any(note in n["message"]["text"] for n in sarif["toolExecutionNotifications"])
        assert sarif["executionSuccessful"] is not strict
