"""The reference run a pattern's outcome is judged against runs beside the faulted run (drill/reference.py):
forked from the pattern's process once its sandbox is realized, it leaves exactly what a reference run
in a fresh sandbox of the same stack leaves, sees nothing the faulted run writes meanwhile, and ends
with the process that forked it."""

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from integration_blueprint.drill.effects import WRITE_OPERATIONS
from integration_blueprint.drill.outcomes import compare
from integration_blueprint.drill.patterns import DRIVERS
from integration_blueprint.drill.reference import ReferenceBeside, fresh_reference
from integration_blueprint.drill.report import DrillOptions
from integration_blueprint.drill.runner import choose_instances
from integration_blueprint.sandbox.emulator import running_emulator
from integration_blueprint.sandbox.faults import FaultInjector
from integration_blueprint.sandbox.interception import Interception
from integration_blueprint.sandbox.realization import Sandbox

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
TEAM_PROGRAM = REPO / "tests" / "fixtures" / "team_program"
DEADLINE_SECONDS = 300.0


class Output(io.TextIOBase):
    """Where the child's printing goes (the runner's _PatternOutput: a `log` it writes to)."""

    log = None


@pytest.mark.parametrize("program, stack", [(REPO, "dev"), (TEAM_PROGRAM, "forgets")], ids=["reference handlers",
                                                                                         "team code"])
def test_the_reference_run_beside_the_faulted_run_leaves_what_a_fresh_sandboxs_reference_run_leaves(
        recordings, tmp_path, program, stack):
    options = DrillOptions(program_dir=program, stack=stack, records=12, seed=3, transient=0.5)
    chosen, _ = choose_instances(recordings(program, stack), DRIVERS)
    assert len(chosen) >= 4
    for label, (driver_class, scope) in chosen.items():
        fresh = fresh_reference(options, label, driver_class, scope, DEADLINE_SECONDS)

        faults = FaultInjector(transient_rate=options.transient, seed=f"{options.seed}:{label}",
                               write_operations=WRITE_OPERATIONS)
        with running_emulator(scope.config.get("aws:region", "us-east-1")) as emulator:
            sandbox = Sandbox(scope, emulator, Interception(requests=faults)).realize()
            beside = ReferenceBeside.start(options, label, driver_class, sandbox, DEADLINE_SECONDS, Output(),
                                           tmp_path / f"{label}.reference.log")
            assert beside is not None
            # Meanwhile the faulted run writes to its own sandbox: an item in every table it has.
            faults.enabled = True
            ddb = emulator.client("dynamodb", sandbox.session)
            for table in sandbox.tables.values():
                keys = ddb.describe_table(TableName=table)["Table"]["KeySchema"]
                ddb.put_item(TableName=table, Item={k["AttributeName"]: {"S": "written-by-the-faulted-run"} for k in keys})
            forked = beside.outcome(timeout=DEADLINE_SECONDS)
        assert beside.seconds > 0 and beside.log_text() is not None

        assert forked.places and set(forked.places) == set(fresh.places), label
        assert compare(forked, fresh, lambda text: []).differences == [], label
        assert "written-by-the-faulted-run" not in repr(forked.places), label


CHILD_OF_A_KILLED_PROCESS = """
import io, os, sys, time
from integration_blueprint.drill.patterns import IdempotentStreamDriver
from integration_blueprint.drill.reference import ReferenceBeside
from integration_blueprint.drill.report import DrillOptions
from integration_blueprint.preview.recording import record_program
from integration_blueprint.drill.runner import choose_instances
from integration_blueprint.sandbox.emulator import running_emulator
from integration_blueprint.sandbox.faults import FaultInjector
from integration_blueprint.sandbox.interception import Interception
from integration_blueprint.sandbox.realization import Sandbox

class Hanging(IdempotentStreamDriver):
    def drive(self, step):
        time.sleep(600)

class Output(io.TextIOBase):
    log = None

chosen, _ = choose_instances(record_program(sys.argv[1], stack="dev"), {"idempotent_stream": Hanging})
driver_class, scope = chosen["idempotent_stream"]
with running_emulator(scope.config.get("aws:region", "us-east-1")) as emulator:
    sandbox = Sandbox(scope, emulator, Interception(requests=FaultInjector())).realize()
    beside = ReferenceBeside.start(DrillOptions(records=5), "idempotent_stream", driver_class, sandbox, 600.0,
                                   Output(), __import__("pathlib").Path(sys.argv[2]))
    print(beside.pid, flush=True)
    time.sleep(600)
"""


def test_the_reference_run_ends_with_the_process_that_forked_it(tmp_path):
    """A pattern's process killed (its deadline passed, the drill stopped) takes its reference run with it."""
    # Its temporary folder in the test's: what a process killed this way leaves (its sandbox's staging) goes with it.
    process = subprocess.Popen([sys.executable, "-c", CHILD_OF_A_KILLED_PROCESS, str(REPO), str(tmp_path / "ref.log")],
                               stdout=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        child = int(process.stdout.readline())
        os.kill(child, 0)  # running
        process.kill()
        process.wait(timeout=30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(child):
            time.sleep(0.05)
        assert not _alive(child)
    finally:
        process.kill()
        process.wait(timeout=30)


def _alive(pid: int) -> bool:
    """Running: neither gone nor a zombie left for whoever adopted it to reap."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"
