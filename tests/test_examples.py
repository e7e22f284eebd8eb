"""What a team copies works as written: the CI example's jobs run their own steps (the offline job
for real, the `pulumi preview` job's commands up to the CLI, which is not installed here) and both
judge with the same policy config; the TypeScript example's tsconfig.json uses no option
TypeScript 6 refuses."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from integration_blueprint.preview.reports.markdown import code

REPO_ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = REPO_ROOT / "examples" / "ci" / "policy-preview.yml"
TSCONFIG = REPO_ROOT / "examples" / "typescript" / "tsconfig.json"
# The steps that need the network (a fresh runner's virtualenv and its requirements): the test's own
# virtualenv stands in for them (.venv links to it).
INSTALL_LINES = ("python -m venv .venv", ".venv/bin/pip install -r requirements.txt")

PROGRAM = '''import json

import pulumi_aws as aws

# The DLQ belongs to another stack; one receive before it is parked (sqs-dlq-max-receive-count).
aws.sqs.Queue("orders", visibility_timeout_seconds=60, redrive_policy=json.dumps({
    "deadLetterTargetArn": "arn:aws:sqs:eu-west-1:123456789012:orders-dlq", "maxReceiveCount": 1}))
'''


def workflow() -> dict:
    document = yaml.safe_load(WORKFLOW.read_text())
    document["on"] = document.pop(True)  # YAML 1.1 reads the key `on` as true
    return document


def step(job: str, name_start: str) -> dict:
    return next(s for s in workflow()["jobs"][job]["steps"] if s.get("name", "").startswith(name_start))


def expand(text: str, context: dict[str, str]) -> str:
    """A step's `${{ expression }}`s with the values a runner would give them (each one known here)."""
    return re.sub(r"\$\{\{\s*([^}]+?)\s*\}\}", lambda m: context[m.group(1)], text)


def run_step(script: str, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-e", "-c", script], cwd=folder, env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=300)


def github_file(path: Path) -> dict[str, str]:
    """A GITHUB_OUTPUT or GITHUB_ENV file as the runner reads it (NAME=value lines)."""
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if line)


@pytest.fixture
def team_program(tmp_path) -> Path:
    """A team's project as the example expects it: requirements.txt, Pulumi.yaml's virtualenv .venv
    (here the test's own, with this package), stacks in stacks/, and a policy config for dev only."""
    folder = tmp_path / "payments"
    (folder / "stacks").mkdir(parents=True)
    (folder / "Pulumi.yaml").write_text("name: payments\nruntime:\n  name: python\n  options:\n"
                                        "    virtualenv: .venv\nstackConfigDir: stacks\n")
    (folder / "requirements.txt").write_text("integration-blueprint\n")
    (folder / "__main__.py").write_text(PROGRAM)
    for stack in ("dev", "prod"):
        (folder / "stacks" / f"Pulumi.{stack}.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (folder / "stacks" / "policy.dev.json").write_text(
        json.dumps({"sqs-dlq-max-receive-count": {"enforcementLevel": "advisory"}}))
    (folder / ".venv").symlink_to(Path(sys.prefix))
    return folder


def test_the_install_steps_skipped_here_are_only_the_installs():
    for job in ("stacks", "pulumi-preview", "offline-preview"):
        script = step(job, "Install the program")["run"]
        assert all(line in script.splitlines() for line in INSTALL_LINES), job
    assert "stacks/policy." not in WORKFLOW.read_text()  # the config is found, never written in


@pytest.mark.slow  # two previews, each a program and a policy pack of their own
def test_the_ci_example_runs_and_both_previews_read_each_stacks_own_policy_config(team_program, tmp_path):
    runner = tmp_path / "runner"
    runner.mkdir()
    files = {name: runner / name for name in ("output", "env", "path", "summary")}
    for path in files.values():
        path.touch()

    # stacks: the stacks are discovered
    found = run_step(step("stacks", "Discover the stacks")["run"], team_program, {"GITHUB_OUTPUT": str(files["output"])})
    assert found.returncode == 0, found.stderr
    stacks = json.loads(github_file(files["output"])["stacks"])
    assert stacks == ["dev", "prod"]

    # offline-preview: every stack previewed once, its reports written, the worst exit code kept
    offline = step("offline-preview", "Offline policy preview")
    files["output"].write_text("")
    ran = run_step(offline["run"], team_program, {
        "STACKS": " ".join(stacks), "RUNNER_TEMP": str(runner), "GITHUB_OUTPUT": str(files["output"]),
        "GITHUB_STEP_SUMMARY": str(files["summary"])})
    assert ran.returncode == 0, ran.stderr
    assert github_file(files["output"])["exit-code"] == "1"  # prod: the mandatory violation; dev: advisory
    sarif = {stack: json.loads((team_program / "policy-preview" / f"{stack}.sarif").read_text()) for stack in stacks}
    levels = {stack: {r["ruleId"]: r["level"] for r in sarif[stack]["runs"][0]["results"]} for stack in stacks}
    assert levels["dev"]["sqs-dlq-max-receive-count"] == "warning"
    assert levels["prod"]["sqs-dlq-max-receive-count"] == "error"
    summary = files["summary"].read_text()
    assert all(code(text) in summary for text in ("dev", "prod", "policy.dev.json"))

    # pulumi-preview, per stack: the pack runs with the virtualenv's Python and the same config file
    install = step("pulumi-preview", "Install the program")
    pulumi_step = next(s for s in workflow()["jobs"]["pulumi-preview"]["steps"]
                       if s.get("uses", "").startswith("pulumi/actions"))
    script = "\n".join(line for line in install["run"].splitlines() if line not in INSTALL_LINES)
    for stack in stacks:
        for name in ("env", "path"):
            files[name].write_text("")
        env = {key: expand(str(value), {"matrix.stack": stack}) for key, value in install.get("env", {}).items()}
        done = run_step(script, team_program, {**env, "GITHUB_ENV": str(files["env"]), "GITHUB_PATH": str(files["path"])})
        assert done.returncode == 0, done.stderr
        set_env = github_file(files["env"])
        config = expand(pulumi_step["with"]["policyPackConfigs"], {"env.POLICY_CONFIG": set_env["POLICY_CONFIG"]})
        expected = team_program / "stacks" / "policy.dev.json" if stack == "dev" else None
        assert config == (str(expected) if expected else ""), stack
        pack = Path(expand(pulumi_step["with"]["policyPacks"], {"env.POLICY_PACK": set_env["POLICY_PACK"]}))
        assert (pack / "PulumiPolicy.yaml").is_file()
        python = set_env["PULUMI_PYTHON_CMD"]
        assert Path(files["path"].read_text().strip()) / "python" == Path(python)
        imports = subprocess.run([python, "-c", "import pulumi_policy, integration_blueprint"], capture_output=True,
                                 text=True, timeout=60)
        assert imports.returncode == 0, imports.stderr
    offline_dev = json.loads(subprocess.run(
        [str(team_program / ".venv" / "bin" / "blueprint"), "preview", "--stack", "dev", "--format", "json"],
        cwd=team_program, capture_output=True, text=True, timeout=300).stdout)
    assert offline_dev["summary"]["policyConfig"] == str(team_program / "stacks" / "policy.dev.json")


# Options TypeScript 6.0 deprecates (an error unless `ignoreDeprecations: "6.0"`) and 7.0 removes
# (https://aka.ms/ts6, microsoft/TypeScript#62338 and #62671).
TS6_DEPRECATED_VALUES = {"moduleResolution": {"node", "node10", "classic"}, "module": {"none", "amd", "system", "umd"},
                         "target": {"es3", "es5"}}
TS6_DEPRECATED_OPTIONS = {"baseUrl", "outFile", "downlevelIteration", "ignoreDeprecations"}


def test_the_typescript_examples_tsconfig_uses_no_option_typescript_6_refuses():
    options = json.loads(TSCONFIG.read_text())["compilerOptions"]

    assert not TS6_DEPRECATED_OPTIONS & set(options)
    for option, refused in TS6_DEPRECATED_VALUES.items():
        assert str(options.get(option, "")).lower() not in refused, option
    # the module system the Pulumi Node.js SDK itself defaults to under ts-node with TypeScript >= 4.7
    assert options["module"] == "nodenext"
