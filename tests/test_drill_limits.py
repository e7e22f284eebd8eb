"""Lambda's limits in a whole drill, run through the CLI as a team runs it (issue 46 item 3): a
correct consumer that prints 64 MiB at init leaves a bounded log and passes; a consumer that holds
more than its memory size in a memory file ends out of memory as Lambda ends it (a crash, its
records retried and parked), named in the report."""

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from integration_blueprint.cli import main
from integration_blueprint.containment import cgroup_place, containment
from tests.team_billing import billing_program

FIXED = Path(__file__).parent / "fixtures" / "team_program" / "fixed"
PROGRAM = billing_program("team-chatty", "team-hungry", code="./{name}",
                          actions=("dynamodb:UpdateItem", "dynamodb:PutItem", "dynamodb:ConditionCheckItem"))
CHATTY = 'import sys\nsys.stdout.write("y" * (64 * 1024 * 1024) + "\\n")\nsys.stdout.flush()\n'
HUNGRY = '''
import os
_handler = handler


def handler(event, context):
    held = os.memfd_create("cache")  # 256 MB for a 128 MB function
    for _ in range(256):
        os.write(held, b"x" * (1024 * 1024))
    return _handler(event, context)
'''


@pytest.mark.slow
@pytest.mark.skipif(not containment().available, reason=f"no sandbox on this machine: {containment().reason}")
@pytest.mark.skipif(not cgroup_place().memory, reason="no memory cgroup can be made here (the report says so)")
def test_a_chatty_consumer_leaves_a_bounded_log_and_a_hungry_one_ends_out_of_memory(tmp_path, monkeypatch, capsys):
    drill_tmp = Path(tempfile.mkdtemp(prefix="bp-"))  # short: the fork server's socket lives there
    monkeypatch.setenv("TMPDIR", str(drill_tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(drill_tmp))
    program = tmp_path / "program"
    program.mkdir()
    (program / "Pulumi.yaml").write_text("name: limited\nruntime: python\n")
    (program / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (program / "__main__.py").write_text(PROGRAM)
    for name, addition in (("team-chatty", CHATTY), ("team-hungry", HUNGRY)):
        shutil.copytree(FIXED, program / name)
        charges = program / name / "charges.py"
        charges.write_text((addition + charges.read_text()) if name == "team-chatty" else charges.read_text() + addition)
    try:
        code = main(["drill", "--program", str(program), "--records", "4", "--seed", "3", "--duplicates", "0",
                     "--crashes", "0", "--transient", "0", "--json", "--no-progress"])
        report = json.loads(capsys.readouterr().out)
        chatty, hungry = report["patterns"]["fifo_billing:team-chatty"], report["patterns"]["fifo_billing:team-hungry"]
        logs = sum(log.stat().st_size for log in Path(report["log_dir"]).glob("*"))

        assert code == 1  # the hungry one's records: none processed
        assert chatty["lost"] == 0 and chatty["duplicate_effects"] == 0, chatty["notes"]
        assert logs < 16 * 1024 * 1024  # 64 MiB per cold start before
        assert any("ended out of memory (Runtime.OutOfMemory)" in note for note in hungry["notes"]), hungry["notes"]
    finally:
        shutil.rmtree(drill_tmp, ignore_errors=True)
