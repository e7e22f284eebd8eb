"""The preview's bounds on the program it runs (issue 47 item 4), through the CLI as CI runs it: the
program's output is kept to a bounded head and tail (the cap named in the report, the gate's own
memory unmoved by what it prints), its processes and threads and its memory are capped (each a
failure naming the cap), and every process the gate started ends with it, SIGKILL included."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from integration_blueprint.containment import cgroup_place, containment
from integration_blueprint.preview import process_tree
from integration_blueprint.preview.language_host import OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES, PROGRAM_TASKS

BLUEPRINT = Path(sys.executable).with_name("blueprint")
QUEUE = 'import pulumi_aws as aws\naws.sqs.Queue("orders")\n'

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not containment().available, reason="bubblewrap cannot make the sandbox here")]
needs_cgroup = pytest.mark.skipif(not (cgroup_place().memory and cgroup_place().pids),
                                  reason="no cgroup with memory and pids can be made here (the report says so)")


def program(folder: Path, code: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "Pulumi.yaml").write_text("name: bounded\nruntime: python\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (folder / "__main__.py").write_text(QUEUE + textwrap.dedent(code))
    return folder


def preview(folder: Path, *flags: str) -> tuple[int, dict, int, int]:
    """The exit code, the JSON report, its size in bytes, and the largest resident size (KiB) of
    any process of the run, the gate included."""
    measure = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], capture_output=True); "
               "sys.stderr.buffer.write(done.stdout); "
               "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", measure, str(BLUEPRINT), "preview", "--program", str(folder),
                           "--format", "json", *flags], capture_output=True, timeout=300)
    code, largest = map(int, done.stdout.split())
    return code, json.loads(done.stderr), len(done.stderr), largest


def test_a_program_printing_256_mib_leaves_a_small_report_with_its_head_and_tail_and_the_cap_named(tmp_path):
    folder = program(tmp_path / "app", """
        import sys
        print("FIRST LINE")
        chunk = "z" * (1024 * 1024)
        for _ in range(256):
            sys.stdout.write(chunk)
        print("\\nLAST LINE")
    """)
    code, report, size, largest_kib = preview(folder)

    assert report["error"] is None and code in (0, 1)
    printed = report["programOutput"]["stdout"]
    assert printed.startswith("FIRST LINE") and printed.rstrip().endswith("LAST LINE")
    assert f"it printed {256 * 1024 * 1024 + 22} bytes" in printed
    assert size < 2 * (OUTPUT_HEAD_BYTES + OUTPUT_TAIL_BYTES) + 1024 * 1024  # not 256 MB
    assert any("the gate's output cap" in note for note in report["notes"])
    assert largest_kib < 400 * 1024  # the gate read it as it came: 842 MB when it read it back whole


@needs_cgroup
def test_a_program_starting_3000_threads_is_refused_at_the_cap_and_the_preview_fails_naming_it(tmp_path):
    folder = program(tmp_path / "app", """
        import threading
        hold = threading.Event()
        for _ in range(3000):
            threading.Thread(target=hold.wait, daemon=True).start()
    """)
    code, report, _, _ = preview(folder)

    assert code == 2
    assert f"at the gate's cap of {PROGRAM_TASKS} processes and threads" in report["error"]["message"]


@needs_cgroup
def test_a_program_holding_more_than_its_memory_cap_is_ended_and_the_preview_fails_naming_the_cap(tmp_path):
    folder = program(tmp_path / "app", """
        import os
        held = os.memfd_create("cache")  # not the heap: an address-space limit never counted it
        for _ in range(512):
            os.write(held, b"x" * (1024 * 1024))
    """)
    code, report, _, _ = preview(folder, "--program-memory", "256")

    assert code == 2
    assert "more than the gate's memory cap (256 MiB" in report["error"]["message"]
    assert "--program-memory" in report["error"]["message"]


def alive(pid: int, started: str) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[21] == started
    except OSError:
        return False


def test_a_gate_killed_by_sigkill_mid_run_leaves_no_process_it_started(tmp_path):
    folder = program(tmp_path / "app", """
        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
        print("RUNNING", flush=True)
        time.sleep(120)
    """)
    # Its temporary folder in the test's: the run's and the pack's folders a killed gate cannot remove go with it.
    gate = subprocess.Popen([str(BLUEPRINT), "preview", "--program", str(folder), "--format", "json"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        deadline = time.monotonic() + 120
        started: dict[int, str] = {}
        while time.monotonic() < deadline:  # the pack host, the guardian, bwrap and the program's processes
            started = {pid: Path(f"/proc/{pid}/stat").read_text().split()[21]
                       for pid in process_tree.descendants(gate.pid) if Path(f"/proc/{pid}").exists()}
            commands = " ".join(Path(f"/proc/{pid}/cmdline").read_text(errors="replace") for pid in started
                                if Path(f"/proc/{pid}/cmdline").exists())
            if "time.sleep(120)" in commands and "pack_host" in commands:
                break
            time.sleep(0.2)
        assert "time.sleep(120)" in commands, "the program never started"
        time.sleep(0.5)
        started.update({pid: Path(f"/proc/{pid}/stat").read_text().split()[21]
                        for pid in process_tree.descendants(gate.pid) if Path(f"/proc/{pid}").exists()})
        os.kill(gate.pid, signal.SIGKILL)  # as CI cancels a job: no handler of the gate's runs
        gate.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(pid, at) for pid, at in started.items()):
            time.sleep(0.1)
        left = [Path(f"/proc/{pid}/cmdline").read_text(errors="replace") for pid, at in started.items()
                if alive(pid, at)]
        assert len(started) >= 4 and left == []
    finally:
        for pid in process_tree.descendants(gate.pid):
            os.kill(pid, signal.SIGKILL)
        if gate.poll() is None:
            gate.kill()
