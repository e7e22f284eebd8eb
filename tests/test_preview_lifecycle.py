"""How a preview ends: when the program exits (whatever it left running), after --timeout, or on
SIGINT/SIGTERM, always with every process it started ended, and never with a traceback; inputs
nested as deep as the SDK sends them are read, deeper ones refused with what to do.
"""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pulumi
import pulumi_aws as aws
import pytest
from pulumi.runtime.proto import resource_pb2

from integration_blueprint.cli import EXIT_INTERRUPTED, EXIT_TERMINATED
from integration_blueprint.core.conventions import DEEPEST_JUDGED_NESTING
from integration_blueprint.preview import language_host
from integration_blueprint.preview.engine import OfflineEngine
from integration_blueprint.preview.recording import ProgramError, record_program

BLUEPRINT = Path(sys.executable).with_name("blueprint")


def write_program(folder: Path, body: str) -> Path:
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: lifecycle\nruntime: python\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (folder / "__main__.py").write_text(body)
    return folder


def alive(pid: int, settle: float = 5) -> bool:
    """Whether `pid` still runs `settle` seconds on (a signal is delivered asynchronously; a
    zombie waiting for its new parent to reap it does not run)."""
    deadline = time.monotonic() + settle
    while True:
        try:
            running = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (FileNotFoundError, ProcessLookupError):
            running = False
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.05)


def running(marker: str, settle: float = 5) -> list[int]:
    """The processes whose command line names `marker` (a program's folder: inside the preview's
    sandbox a process knows only its own PID namespace's numbers), still running `settle` seconds on."""
    def find() -> list[int]:
        found = []
        for process in Path("/proc").iterdir():
            try:
                if process.name.isdigit() and marker.encode() in (process / "cmdline").read_bytes() \
                        and (process / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(process.name))
            except OSError:
                continue
        return found
    deadline = time.monotonic() + settle
    while (found := find()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


# A program that starts a process holding its stdout and stderr open, named by the program's folder.
DAEMON = '''
import os, subprocess, sys
import pulumi_aws as aws
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", os.getcwd()])
aws.sqs.Queue("orders")
'''

# A program one of whose resources waits on an output nothing ever resolves.
NEVER_RESOLVES = '''
import asyncio
import pulumi, pulumi_aws as aws
aws.sqs.Queue("first")
aws.sqs.Queue("orders", name=pulumi.Output.from_input(asyncio.get_event_loop().create_future()))
'''


def test_the_program_s_exit_ends_the_wait_and_what_it_left_running_is_ended(tmp_path):
    program = write_program(tmp_path / "program", DAEMON)
    started = time.monotonic()
    recorded = record_program(program, timeout=60)
    assert time.monotonic() - started < 30  # not the daemon's 300 s, nor the timeout
    assert [r.name for r in recorded.resources if r.custom] == ["orders"]
    assert not running(str(program))


@pytest.mark.slow
def test_a_program_waiting_on_an_output_that_never_resolves_is_stopped_at_the_timeout_naming_it(tmp_path):
    program = write_program(tmp_path / "program", NEVER_RESOLVES)
    started = time.monotonic()
    with pytest.raises(ProgramError) as stopped:
        # (5 s: the program must reach its second queue first, which a loaded machine can take seconds to)
        record_program(program, timeout=5)
    assert time.monotonic() - started < 30
    message = str(stopped.value)
    assert "did not finish within 5 s" in message and "--timeout" in message
    assert "orders (aws:sqs/queue:Queue)" in message and "first" not in message
    assert not running(str(program))


@pytest.mark.slow
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, EXIT_INTERRUPTED), (signal.SIGTERM, EXIT_TERMINATED)])
def test_a_stopped_preview_ends_its_program_and_pack_and_exits_without_a_traceback(tmp_path, signum, code):
    program = write_program(tmp_path / "program", NEVER_RESOLVES)
    preview = subprocess.Popen([str(BLUEPRINT), "preview", "--program", str(program)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(
            b"python_exec.py" in Path(f"/proc/{pid}/cmdline").read_bytes() for pid in running(str(program), settle=0)
            if Path(f"/proc/{pid}/cmdline").exists()):
        time.sleep(0.05)
    time.sleep(0.5)  # the pack has started beside it
    children = [int(pid) for task in Path(f"/proc/{preview.pid}/task").iterdir()
                for pid in (task / "children").read_text().split()]
    preview.send_signal(signum)
    _, err = preview.communicate(timeout=30)
    assert preview.returncode == code
    assert "Traceback" not in err and "nothing was judged" in err
    assert len(children) >= 2  # the program and the pack
    assert not any(alive(child) for child in children) and not running(str(program))


# Run as a script by the test below, in a process of its own: nothing else adopted there.
GUARDIAN_LIFETIME = """
import json, subprocess, sys
from integration_blueprint.preview import process_tree

children = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
            for _ in range(2)]
for child in children:
    process_tree.adopt(child)
guardian = process_tree._guardian
seen = {"first": guardian is not None and guardian.process.poll() is None}
process_tree.end(children[0], grace=0)  # ends and releases it
seen["one_left"] = process_tree._guardian is guardian and guardian.process.poll() is None
process_tree.end(children[1], grace=0)
seen["none_left"] = process_tree._guardian is None and guardian.process.wait(timeout=10) == 0
later = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
process_tree.adopt(later)
seen["later"] = process_tree._guardian not in (None, guardian)
process_tree.end(later, grace=0)
seen["end"] = process_tree._guardian is None
print(json.dumps(seen))
"""


def test_the_guardian_lives_while_a_child_is_adopted_and_ends_with_the_last_release():
    done = subprocess.run([sys.executable, "-c", GUARDIAN_LIFETIME], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    # alive with two children, still with one, gone (having killed nothing) with none; a later child
    # gets a guardian of its own, gone again once that child is released
    assert json.loads(done.stdout) == {"first": True, "one_left": True, "none_left": True, "later": True, "end": True}


# Run as a script by the test below: a subreaper (the orphans of what it runs come back to it) that
# previews a program through the CLI and then in its own process (as a library caller, a test or a
# benchmark, does), then says which of its descendants still run once both are done.
LEFT_BEHIND = """
import ctypes, json, os, subprocess, sys, time
from pathlib import Path
from integration_blueprint.preview.run import run_preview

assert ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
program, blueprint = sys.argv[1], sys.argv[2]
cli = subprocess.run([blueprint, "preview", "--program", program, "--format", "json"], capture_output=True)
result = run_preview(Path(program))
left, deadline = [], time.monotonic() + 10
while True:
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:  # no descendant left, running or a zombie
        break
    if not pid and time.monotonic() > deadline:
        children = [child for task in Path("/proc/self/task").iterdir() for child in (task / "children").read_text().split()]
        left = [Path(f"/proc/{child}/cmdline").read_text(errors="replace").replace(chr(0), " ") for child in children]
        break
    time.sleep(0.02)
print(json.dumps({"cli": cli.returncode, "resources": [r.name for r in result.recorded.resources], "left": left}))
"""


@pytest.mark.slow
def test_a_preview_leaves_no_process_running_once_it_is_done_from_the_cli_or_in_process(tmp_path):
    program = write_program(tmp_path / "program", DAEMON)
    done = subprocess.run([sys.executable, "-c", LEFT_BEHIND, str(program), str(BLUEPRINT)], capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    said = json.loads(done.stdout.splitlines()[-1])
    assert said["cli"] == 0 and said["resources"] == ["orders"]
    assert said["left"] == []  # neither the guardian, a pack host, bwrap, nor the program's daemon


@pytest.mark.parametrize("depth", [200, 400])
def test_inputs_nested_as_deep_as_the_sdk_sends_them_are_read(tmp_path, depth):
    """The Pulumi engine reads about 5,000 levels; a Python program's SDK sends a few hundred."""
    program = write_program(tmp_path / "program", f'''
import pulumi_aws as aws
deep = "leaf"
for _ in range({depth}):
    deep = {{"k": deep}}
aws.iam.Policy("nested", policy=deep)
''')
    policy = record_program(program, timeout=60).named("nested").inputs["policy"]
    policy = json.loads(policy) if isinstance(policy, str) else policy  # the provider's Check encodes a document
    for _ in range(depth):
        policy = policy["k"]
    assert policy == "leaf"


def test_a_component_whose_outputs_nest_as_deep_as_the_gate_reads_is_judged_by_the_pack(policy_analyzer):
    """pulumi-policy reads a value recursively; at Python's default limit the pack crashed near 190
    levels (and the user was told to check a --policy-pack flag they never passed)."""
    def program():
        class ApprovalChain(pulumi.ComponentResource):
            def __init__(self, name):
                super().__init__("acme:workflows:ApprovalChain", name)
                chain: dict = {"step": 0}
                for step in range(DEEPEST_JUDGED_NESTING - 2):
                    chain = {"step": step, "next": chain}
                aws.sqs.Queue(f"{name}-requests", opts=pulumi.ResourceOptions(parent=self))
                self.register_outputs({"chain": chain})
        ApprovalChain("approvals")

    recorded = record_program(program, stack="test")
    policy_analyzer.configure({})

    violations = policy_analyzer.analyze(recorded)

    assert "queue-topic-policy-denies-insecure-transport" in {v.policy for v in violations}
    chain = recorded.named("approvals").outputs["chain"]
    for _ in range(DEEPEST_JUDGED_NESTING - 2):
        chain = chain["next"]
    assert chain == {"step": 0}


def test_a_value_deeper_than_the_gate_reads_fails_the_gate_naming_the_limit_and_the_resource():
    """Deeper than conventions.DEEPEST_JUDGED_NESTING (a JavaScript program's SDK sends such values):
    the gate's own limit, never blamed on the program."""
    deep: object = "leaf"
    for _ in range(DEEPEST_JUDGED_NESTING + 200):
        deep = {"k": deep}
    with OfflineEngine(project="app", stack="dev", config={}) as engine:
        monitor, _ = engine.in_process_stubs()
        request = resource_pb2.RegisterResourceRequest(type="aws:iam/policy:Policy", name="nested", custom=True)
        request.object.update({"policy": deep})

        with pytest.raises(grpc.RpcError) as answered:
            monitor.RegisterResource(request)

        assert answered.value.code() == grpc.StatusCode.INTERNAL
        failure = language_host.engine_failure(engine)
    assert failure is not None and failure.engine_fault
    assert (f"aws:iam/policy:Policy 'nested' holds a value nested {DEEPEST_JUDGED_NESTING + 201} levels deep; the "
            f"offline preview reads values nested up to {DEEPEST_JUDGED_NESTING} levels") in failure.message
    assert "`pulumi preview --policy-pack`" in failure.message and "Traceback" not in failure.message
