"""A failure of the gate is never reported as the program's (preview/failure.py): whose failure it
is comes from where it was raised (the innermost frame in the gate's own files: the shim or the
preload in the program's process), or from which part failed (the engine, blueprint's own policy
pack); every format then says "the gate failed", naming the part, and only the program's own errors
say that `pulumi preview` fails the same way."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from integration_blueprint.preview import node_host
from integration_blueprint.preview.analyzer import DEFAULT_PACK_DIR, AnalyzerError
from integration_blueprint.preview.engine import OfflineEngine
from integration_blueprint.preview.python_host import run_python_program
from integration_blueprint.preview.recording import ProgramError
from integration_blueprint.preview.reports.formats import FORMATS
from integration_blueprint.preview.reports.markdown import render_markdown
from integration_blueprint.preview.reports.sarif import to_sarif
from integration_blueprint.preview.reports.text import render_text
from integration_blueprint.preview.run import failed_preview
from tests.conftest import python_project

SAME_UNDER_PULUMI = "the same way under `pulumi preview`"


def write_program(folder: Path, source: str) -> Path:
    return python_project(folder, source)


def test_an_error_raised_in_the_python_shim_is_the_gates_naming_the_shim(tmp_path):
    program = write_program(tmp_path / "app", "import pulumi_aws as aws\naws.sqs.Queue('jobs')\n")
    with OfflineEngine(project="app", stack="dev", config={}, program_dir=program) as engine:
        # The shim writes the interpreter's import path where the host tells it: a folder there makes
        # the shim's own code raise, before the program runs.
        (Path(engine.folder) / "search-path.json").mkdir()
        failure = run_python_program(engine, interpreter=[sys.executable], program_dir=program,
                                     main=program / "__main__.py", config={}, secret_keys=[], timeout=120)

    assert failure is not None and failure.gate_part == "the Python language host's shim (python_exec.py)"
    assert "IsADirectoryError" in failure.message and "python_exec.py" in failure.message


def test_a_programs_own_error_raised_through_the_shim_stays_the_programs(tmp_path):
    """The program runs inside the shim (runpy): its error's outer frames are the shim's, its innermost its own."""
    program = write_program(tmp_path / "app", "def check():\n    raise ValueError('no queue name')\ncheck()\n")
    with OfflineEngine(project="app", stack="dev", config={}, program_dir=program) as engine:
        failure = run_python_program(engine, interpreter=[sys.executable], program_dir=program,
                                     main=program / "__main__.py", config={}, secret_keys=[], timeout=120)

    assert failure is not None and not failure.gate_part
    assert (failure.message, failure.file, failure.line) == ("ValueError: no queue name", str(program / "__main__.py"), 2)


def test_an_error_thrown_in_the_node_preload_is_the_gates_naming_the_preload(tmp_path):
    """The preload run as the host runs it, without the channel it reads the token from: it throws."""
    node = node_host.node_executable(os.environ)
    thrown = subprocess.run([node, "--require", str(node_host.TOKEN_PRELOAD), "-e", "1"], capture_output=True,
                            text=True, timeout=60, env={"PATH": os.environ["PATH"]}, cwd=tmp_path)
    assert thrown.returncode != 0

    with OfflineEngine(project="app", stack="dev", config={}, program_dir=tmp_path) as engine:
        failure = node_host.program_failure(engine, thrown.returncode, thrown.stderr, program_dir=tmp_path, cwd=tmp_path)

    assert failure.gate_part == f"the Node.js language host's preload ({node_host.TOKEN_PRELOAD.name})"
    assert not failure.file


def every_format(result) -> dict[str, str]:
    """Each format's report, markdown's escapes (`node\\_token.js`) read as the page shows them."""
    return {"text": render_text(result), "markdown": render_markdown(result).replace("\\", ""), **{
        name: FORMATS[name](result) for name in ("json", "sarif")}}


@pytest.mark.parametrize("failed, part", [
    (ProgramError("TypeError: Cannot read properties of undefined (reading 'interceptors')",
                  tool_part="the Node.js language host's preload (node_token.js)"),
     "the Node.js language host's preload (node_token.js)"),
    (ProgramError("the offline engine itself failed: KeyError: 'arnFormat'", engine_fault=True), "the offline engine"),
    (AnalyzerError("the policy pack failed: maximum recursion depth exceeded", pack_dir=DEFAULT_PACK_DIR),
     "the policy pack (blueprint's own)"),
])
def test_every_format_says_the_gate_failed_naming_the_part_and_never_blames_the_program(tmp_path, failed, part):
    program = write_program(tmp_path / "app", "")

    result = failed_preview(program, failed, stack="dev")

    shown = every_format(result)
    assert result.exit_code == 2
    for name, text in shown.items():
        assert "The gate failed" in text and part in text, name
        assert SAME_UNDER_PULUMI not in text and "--policy-pack names" not in text, name
    error = json.loads(shown["json"])["error"]
    assert (error["kind"], error["part"]) == ("tool", part)
    [notification] = to_sarif(result)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert notification["descriptor"]["id"] == "blueprint-preview/tool" and notification["properties"] == {"part": part}


def test_a_pack_given_with_policy_pack_that_fails_is_that_packs_failure_and_a_program_error_the_programs(tmp_path):
    program = write_program(tmp_path / "app", "")

    theirs = failed_preview(program, AnalyzerError("the policy pack failed: boom", pack_dir=tmp_path / "pack"),
                            stack="dev")
    own = failed_preview(program, ProgramError("ValueError: no queue name", file=str(program / "__main__.py"), line=2),
                         stack="dev")

    assert json.loads(FORMATS["json"](theirs))["error"]["kind"] == "policy-pack"
    assert "--policy-pack names" in render_text(theirs) and "The gate failed" not in render_text(theirs)
    assert SAME_UNDER_PULUMI in render_text(own) and "The gate failed" not in render_markdown(own)
