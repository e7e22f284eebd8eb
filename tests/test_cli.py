"""The `blueprint` command as a team's CI uses it: its help and version, where it finds the
program, `policy ls`, what the drill says without its optional extra, the drill's progress line,
and the CI workflow a team copies (examples/ci/)."""

import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from integration_blueprint import __version__
from integration_blueprint.cli import build_parser, main
from integration_blueprint.drill.progress import ProgressBar

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
WORKFLOW = REPO_ROOT / "examples" / "ci" / "policy-preview.yml"
WORKFLOW_SCHEMA = FIXTURES / "schemas" / "github-workflow.json"


# ---- help and version ------------------------------------------------------------------------

def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == f"blueprint {__version__}"


def test_help_lists_every_command_in_words_for_users_not_the_modules_docstring(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: blueprint")
    for command in ("preview", "drill", "policy"):
        assert re.search(rf"^\s+{command}\s+\S", out, re.M), command
    assert "add_<name>_command" not in out and "Exit codes" not in out


def test_policy_help_lists_its_actions(capsys):
    with pytest.raises(SystemExit):
        main(["policy", "--help"])
    out = capsys.readouterr().out
    assert re.search(r"^\s+ls\s+list the pack's policies", out, re.M)
    assert re.search(r"^\s+path\s+print the policy pack's folder", out, re.M)


# ---- --program defaults to the current directory -----------------------------------------------

def test_preview_takes_the_program_from_the_current_directory_like_pulumi(monkeypatch, capsys):
    program = FIXTURES / "every_violation"
    monkeypatch.chdir(program)
    code = main(["preview", "--stack", "ci", "--format", "json"])
    output = json.loads(capsys.readouterr().out)
    assert output["program"] == str(program) and code == 1


def test_preview_outside_a_project_says_to_point_program_at_one(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["preview"]) == 2
    error = capsys.readouterr().err
    assert f"no Pulumi.yaml project file found searching upwards from {tmp_path}" in error
    assert "point --program at the folder of a Pulumi project" in error


def test_drill_takes_the_program_from_the_nearest_project_at_or_above_the_current_directory(monkeypatch, tmp_path):
    from integration_blueprint.drill import runner

    seen = {}

    def fake_run_drill(options, **_):
        seen["program_dir"] = options.program_dir
        raise KeyboardInterrupt  # stop before any sandbox starts

    monkeypatch.setattr(runner, "run_drill", fake_run_drill)
    (tmp_path / "Pulumi.yaml").write_text("name: app\nruntime: python\n")
    (tmp_path / "infra" / "queues").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "infra" / "queues")  # as `pulumi` finds the project from a subfolder
    assert main(["drill", "--no-progress"]) == 130  # interrupted: no traceback, the exit code of a Ctrl-C
    assert seen["program_dir"] == tmp_path.resolve()


# ---- the drill without its optional extra ------------------------------------------------------

def test_drill_without_the_local_extra_exits_2_naming_the_extra(monkeypatch, capsys):
    for name in [m for m in sys.modules if m == "moto" or m.startswith("moto.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "moto", None)  # `import moto` now raises ImportError
    code = main(["drill", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert "install the extra: pip install" in err and "[local]" in err
    assert "Traceback" not in err and err.count("\n") == 1


@pytest.mark.parametrize("direct_url, command", [
    (None, "pip install 'integration-blueprint[local]'"),
    ({"url": "https://git.example.com/acme/blueprint.git", "vcs_info": {"vcs": "git", "commit_id": "6af3db2"}},
     "pip install 'integration-blueprint[local] @ git+https://git.example.com/acme/blueprint.git@6af3db2'"),
    ({"url": "file:///wheels/integration_blueprint-0.1.0-py3-none-any.whl", "archive_info": {}},
     "pip install 'integration-blueprint[local] @ file:///wheels/integration_blueprint-0.1.0-py3-none-any.whl'"),
])
def test_the_extras_install_command_fits_how_the_package_was_installed(monkeypatch, direct_url, command):
    """A wheel or git pin is not on the index by name: the fix installs the extra from the same source."""
    from importlib import metadata

    from integration_blueprint.install_source import install_command

    real = metadata.distribution("integration-blueprint")

    class Installed:  # the installed distribution, with the direct_url.json pip would have written
        def read_text(self, name):
            return json.dumps(direct_url) if name == "direct_url.json" and direct_url else (
                None if name == "direct_url.json" else real.read_text(name))
    monkeypatch.setattr(metadata, "distribution", lambda name: Installed())
    assert install_command("local") == command


# ---- policy ls -----------------------------------------------------------------------------------

@pytest.fixture
def project_with_two_stacks(tmp_path):
    """A project whose stack config folder holds a dev stack (with a policy config) and a prod
    stack (without one)."""
    (tmp_path / "Pulumi.yaml").write_text("name: team\nruntime: python\nstackConfigDir: env\n")
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "env" / "Pulumi.prod.yaml").write_text("config: {}\n")
    (tmp_path / "env" / "policy.dev.json").write_text(json.dumps({
        "dlq-has-depth-alarm": "advisory", "sqs-dlq-max-receive-count": {"minimum": 6}}))
    return tmp_path


def test_policy_ls_lists_every_rule_with_its_level_per_stack(project_with_two_stacks, monkeypatch, capsys):
    monkeypatch.chdir(project_with_two_stacks)
    assert main(["policy", "ls", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["pack"] == "integration-blueprint" and listing["stacks"] == ["dev", "prod"]
    policies = {p["name"]: p for p in listing["policies"]}
    from integration_blueprint.policies.rules import POLICIES

    assert set(policies) == {p.name for p in POLICIES} and list(policies) == sorted(policies)
    assert policies["dlq-has-depth-alarm"]["levels"] == {"default": "mandatory", "dev": "advisory",
                                                         "prod": "mandatory"}
    receive = policies["sqs-dlq-max-receive-count"]
    assert receive["configSchema"]["properties"]["minimum"]["type"] == "integer"
    assert "maxReceiveCount" in receive["description"]
    assert receive["kind"] == "resource" and policies["dlq-has-depth-alarm"]["kind"] == "stack"


def test_policy_ls_text_shows_levels_description_and_settings(project_with_two_stacks, capsys):
    assert main(["policy", "ls", "--program", str(project_with_two_stacks)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^NAME\s+DEFAULT\s+DEV\s+PROD$", out, re.M)
    assert re.search(r"^dlq-has-depth-alarm\s+mandatory\s+advisory\s+mandatory$", out, re.M)
    assert re.search(r"^    config: minimum \(integer, 1\.\.1000, default 4\)", out, re.M)


def test_policy_ls_refuses_a_stack_policy_config_that_does_not_fit_the_pack(project_with_two_stacks, capsys):
    (project_with_two_stacks / "env" / "policy.prod.json").write_text('{"sqs-dlq-max-receive-count": {"minimun": 6}}')
    assert main(["policy", "ls", "--program", str(project_with_two_stacks)]) == 2
    assert "has no setting 'minimun'; did you mean 'minimum'?" in capsys.readouterr().err


def test_policy_ls_outside_a_project_lists_the_packs_own_levels(tmp_path, capsys):
    assert main(["policy", "ls", "--program", str(tmp_path), "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["stacks"] == [] and all(set(p["levels"]) == {"default"} for p in listing["policies"])


# ---- the drill's progress line -------------------------------------------------------------------

class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_draws_nothing_into_a_redirected_log():
    log = io.StringIO()  # not a terminal
    bar = ProgressBar(log)
    for step in range(1000):
        bar("fifo_billing", step / 1000)
    bar.close()
    assert log.getvalue() == ""


def test_progress_on_a_terminal_writes_a_bounded_number_of_updates():
    screen = _Terminal()
    bar = ProgressBar(screen)
    for step in range(20_000):  # the drill reports every few milliseconds
        bar("distributed_map", step / 20_000)
    bar("distributed_map", 1.0)
    bar.close()
    updates = screen.getvalue().count("\r")
    assert 100 <= updates <= 101
    last = screen.getvalue().split("\r")[-1]
    assert last.endswith("\n") and last.rstrip().endswith("100% done")


def test_progress_never_cuts_its_label_and_wipes_a_longer_one():
    screen = _Terminal()
    bar = ProgressBar(screen)
    long_label = "fifo_billing, stream_ledger_idempotent, stream_ledger_app_dlq, distributed_map"
    bar(long_label, 0.25)
    bar("distributed_map", 0.5)
    first, second = screen.getvalue().split("\r")[1:]
    assert first.endswith(f"running: {long_label}")
    assert len(second) == len(first) and second.rstrip().endswith("running: distributed_map")


# ---- the CI workflow a team copies -------------------------------------------------------------

def _workflow() -> dict:
    document = yaml.safe_load(WORKFLOW.read_text())
    document["on"] = document.pop(True)  # YAML 1.1 reads the key `on` as true
    return document


def test_the_ci_workflow_is_a_valid_github_actions_workflow():
    """actionlint has no wheel on PyPI (its sdist downloads the binary from GitHub), so the
    workflow is checked against SchemaStore's GitHub workflow schema instead."""
    schema = json.loads(WORKFLOW_SCHEMA.read_text())
    jsonschema.validate(_workflow(), schema, cls=jsonschema.Draft7Validator)
    # and the check can fail: a misspelled step key is refused
    broken = _workflow()
    broken["jobs"]["offline-preview"]["steps"][0]["use"] = broken["jobs"]["offline-preview"]["steps"][0].pop("uses")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema, cls=jsonschema.Draft7Validator)


def test_the_ci_workflow_runs_the_real_and_the_offline_preview():
    jobs = _workflow()["jobs"]
    assert set(jobs) == {"stacks", "pulumi-preview", "offline-preview"}
    real = {s.get("uses", "").split("@")[0]: s for s in jobs["pulumi-preview"]["steps"]}
    assert real["pulumi/actions"]["with"]["command"] == "preview"
    assert "policyPacks" in real["pulumi/actions"]["with"] and "policyPackConfigs" in real["pulumi/actions"]["with"]
    assert "secrets.PULUMI_ACCESS_TOKEN" in json.dumps(jobs["pulumi-preview"])
    offline = jobs["offline-preview"]
    assert "secrets." not in json.dumps(offline)  # runs for forks and on runners without credentials
    assert offline["permissions"]["security-events"] == "write"
    uses = [s.get("uses", "").split("@")[0] for s in offline["steps"]]
    assert "github/codeql-action/upload-sarif" in uses
    script = "\n".join(s.get("run", "") for s in offline["steps"])
    assert "--report sarif=" in script and "--report markdown=" in script and "GITHUB_STEP_SUMMARY" in script


def test_the_ci_workflow_discovers_the_stacks_and_previews_each_once_uploading_sarif_whatever_the_verdict():
    text = WORKFLOW.read_text()
    jobs = _workflow()["jobs"]
    assert "blueprint stack ls --json" in json.dumps(jobs["stacks"])
    assert jobs["pulumi-preview"]["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.stacks) }}"
    assert not re.search(r"\b(dev|staging|prod)\b", json.dumps(jobs))  # no stack is written in
    offline = jobs["offline-preview"]
    assert len(re.findall(r"blueprint preview", json.dumps(offline))) == 1  # one run per stack, every report
    upload = next(s for s in offline["steps"] if s.get("uses", "").startswith("github/codeql-action/upload-sarif"))
    assert upload["if"].startswith("always()")
    # .venv as the README and Pulumi.yaml name it; the engine is ours, not the SDK's mocks
    assert "python -m venv .venv" in text and " venv/" not in text and "mock" not in text.lower()


def test_stack_ls_lists_the_stacks_of_the_projects_stack_config_folder(capsys):
    assert main(["stack", "ls", "--json", "--program", str(REPO_ROOT)]) == 0
    assert json.loads(capsys.readouterr().out) == ["dev", "prod", "staging"]


@pytest.mark.slow  # a subprocess of its own (the plugin) or a whole preview
def test_one_preview_writes_every_report_it_is_asked_for(tmp_path, capsys):
    sarif, markdown = tmp_path / "dev.sarif", tmp_path / "dev.md"
    code = main(["preview", "--program", str(REPO_ROOT), "--stack", "dev", "--format", "json",
                 "--report", f"sarif={sarif}", "--report", f"markdown={markdown}"])
    report = json.loads(capsys.readouterr().out)
    assert code == (1 if report["summary"]["mandatory"] else 0)
    sarif_results = json.loads(sarif.read_text())["runs"][0]["results"]
    assert len(sarif_results) == len(report["violations"])
    assert "`dev`" in markdown.read_text() or "dev" in markdown.read_text().splitlines()[0]
    with pytest.raises(SystemExit):
        main(["preview", "--report", "pdf=x.pdf"])
    assert "is not FORMAT=FILE" in capsys.readouterr().err


def test_every_blueprint_command_in_the_workflow_parses():
    text = WORKFLOW.read_text()
    commands = re.findall(r"venv/bin/(blueprint [^>)\n]*)", text)
    assert len(commands) >= 3
    for command in commands:
        # a shell array's expansion ("$@": the extra packs' flags) stands for flags of its own
        words = [w for w in shlex.split(command)[1:] if w != "$@" and not w.endswith("[@]}")]
        build_parser().parse_args([w.replace("$stack", "dev").replace("$STACK", "dev") for w in words])


@pytest.mark.slow  # a subprocess of its own (the plugin) or a whole preview
def test_schema_prints_the_package_schema_the_plugin_serves(capsys):
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert (schema["name"], schema["version"]) == ("blueprint", __version__)
    assert {token.rsplit(":", 1)[-1] for token in schema["resources"]} == {
        "FifoBillingQueue", "IdempotentStreamConsumer", "NonIdempotentStreamConsumer", "DistributedMapBatch"}


@pytest.mark.slow  # a subprocess of its own (the plugin) or a whole preview
def test_sdk_writes_the_typescript_package_with_its_declarations(typescript_sdk):
    """(typescript_sdk is `blueprint sdk --language typescript --out <folder>`, conftest.py.)"""
    assert {path.name for path in typescript_sdk.iterdir()} == {"package.json", "index.js", "index.d.ts", "README.md"}
    declarations = (typescript_sdk / "index.d.ts").read_text()
    assert "export declare class DistributedMapBatch extends pulumi.ComponentResource" in declarations
    # the one required input makes the args themselves required
    assert "constructor(name: string, args: DistributedMapBatchArgs, opts?" in declarations
    assert "maxConcurrency: pulumi.Input<number>;" in declarations
    assert "readonly stateMachineArn: pulumi.Output<string>;" in declarations
    assert 'exports.FifoBillingQueue = FifoBillingQueue;' in (typescript_sdk / "index.js").read_text()


def test_sdk_refuses_a_language_it_does_not_write(capsys):
    with pytest.raises(SystemExit):
        main(["sdk", "--language", "cobol", "--out", "x"])
    assert "invalid choice: 'cobol'" in capsys.readouterr().err


def test_docs_prints_the_reference_page_a_team_has_without_the_repository(capsys):
    assert main(["docs", "fifobillingqueue"]) == 0
    page = capsys.readouterr().out
    assert page == (Path(__file__).resolve().parents[1] / "docs" / "components" / "FifoBillingQueue.md").read_text() + "\n"

    assert main(["docs", "FifoQueue"]) == 2
    assert "the components are FifoBillingQueue, " in capsys.readouterr().err


def test_the_ci_workflow_keeps_both_reports_of_a_run_that_could_not_judge_the_program(tmp_path):
    """Issue 31: a refused argument (exit 2) used to leave a 0-byte SARIF file and a "see the job
    log" line. The step's own script, run with a `blueprint` that fails as a refused run does (it
    still writes the reports --report asks for)."""
    step = next(s for s in _workflow()["jobs"]["offline-preview"]["steps"] if s.get("id") == "preview")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    fake = tmp_path / ".venv" / "bin" / "blueprint"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do case "$a" in sarif=*|markdown=*) echo "report of: $*" > "${a#*=}";; '
                    'esac; done\necho "error: refused" >&2\nexit 2\n')
    fake.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "STACKS": "dev prod", "RUNNER_TEMP": str(tmp_path / "tmp"),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_OUTPUT": str(tmp_path / "output")}
    (tmp_path / "tmp").mkdir()
    subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env, check=True, timeout=60)
    for stack in ("dev", "prod"):
        sarif = tmp_path / "policy-preview" / f"{stack}.sarif"
        assert sarif.read_text().startswith(f"report of: preview --stack {stack} --report sarif=")
    summary = (tmp_path / "summary.md").read_text()
    assert "report of: preview --stack prod --report sarif=" in summary
    assert (tmp_path / "output").read_text() == "exit-code=2\n"
