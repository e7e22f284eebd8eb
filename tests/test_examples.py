"""What a team copies works as written: the CI example's jobs run their own steps (the offline job
for real, the `pulumi preview` job's commands up to the CLI, which is not installed here) and both
judge with the same policy config; the TypeScript example's tsconfig.json uses no option
TypeScript 6 refuses."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from integration_blueprint.preview.reports.markdown import code

REPO_ROOT = Path(__file__).resolve().parents[1]
TEAM_PACK = REPO_ROOT / "tests" / "fixtures" / "packs" / "team_python"
# The one place the CI example lists the packs besides the blueprint's (its workflow-level env).
TEAM_PACKS = "policy/team=policy/config/team.json"
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
    """A GITHUB_OUTPUT or GITHUB_ENV file as the runner reads it (NAME=value lines, and NAME<<DELIMITER
    blocks for values of several lines)."""
    values: dict[str, str] = {}
    lines = iter(path.read_text().splitlines())
    for line in lines:
        if "<<" in line and "=" not in line.split("<<", 1)[0]:
            name, delimiter = line.split("<<", 1)
            block = []
            for inner in lines:
                if inner == delimiter:
                    break
                block.append(inner)
            values[name] = "\n".join(block)
        elif line:
            name, value = line.split("=", 1)
            values[name] = value
    return values


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
    # The team's own pack, and its config in a folder of its own (never beside the pack's folder).
    shutil.copytree(TEAM_PACK, folder / "policy" / "team")
    (folder / "policy" / "config").mkdir()
    (folder / "policy" / "config" / "team.json").write_text('{"s3-bucket-versioned": "advisory"}')
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

    # offline-preview: the packs installed (the team's: nothing to install), the sandbox step harmless,
    # every stack previewed once by every pack, its reports written, the worst exit code kept
    assert workflow()["env"]["POLICY_PACKS"] == ""  # the one place a team lists its packs
    installed = run_step(step("offline-preview", "Install the policy packs")["run"], team_program,
                         {"POLICY_PACKS": TEAM_PACKS})
    assert installed.returncode == 0, installed.stderr
    offline = step("offline-preview", "Offline policy preview")
    files["output"].write_text("")
    ran = run_step(offline["run"], team_program, {
        "STACKS": " ".join(stacks), "RUNNER_TEMP": str(runner), "GITHUB_OUTPUT": str(files["output"]),
        "GITHUB_STEP_SUMMARY": str(files["summary"]), "POLICY_PACKS": TEAM_PACKS})
    assert ran.returncode == 0, ran.stderr
    assert "team-data-rules" in files["summary"].read_text()  # the team's pack judged beside ours
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
        expected = team_program / "stacks" / "policy.dev.json" if stack == "dev" else None
        assert set_env["POLICY_CONFIG"] == (str(expected) if expected else ""), stack
        assert (Path(set_env["POLICY_PACK"]) / "PulumiPolicy.yaml").is_file()
        python = set_env["PULUMI_PYTHON_CMD"]
        assert Path(files["path"].read_text().strip()) / "python" == Path(python)
        imports = subprocess.run([python, "-c", "import pulumi_policy, integration_blueprint"], capture_output=True,
                                 text=True, timeout=60)
        assert imports.returncode == 0, imports.stderr
        listed = run_step(step("pulumi-preview", "Install the policy packs")["run"], team_program, {
            "POLICY_PACKS": TEAM_PACKS, "POLICY_PACK": set_env["POLICY_PACK"], "POLICY_CONFIG": set_env["POLICY_CONFIG"],
            "RUNNER_TEMP": str(runner), "GITHUB_ENV": str(files["env"])})
        assert listed.returncode == 0, listed.stderr
        lists = github_file(files["env"])
        packs = expand(pulumi_step["with"]["policyPacks"], {"env.POLICY_PACK_LIST": lists["POLICY_PACK_LIST"]})
        configs = expand(pulumi_step["with"]["policyPackConfigs"],
                         {"env.POLICY_CONFIG_LIST": lists["POLICY_CONFIG_LIST"]}).splitlines()
        assert packs.splitlines() == ["policy/team", set_env["POLICY_PACK"]]  # one config per pack, in order
        assert configs[0] == "policy/config/team.json"
        assert json.loads(Path(configs[1]).read_text()) == ({} if expected is None else json.loads(expected.read_text()))
    offline_dev = json.loads(subprocess.run(
        [str(team_program / ".venv" / "bin" / "blueprint"), "preview", "--stack", "dev", "--format", "json"],
        cwd=team_program, capture_output=True, text=True, timeout=300).stdout)
    assert offline_dev["summary"]["policyConfig"] == str(team_program / "stacks" / "policy.dev.json")


def test_the_sandbox_step_never_fails_the_job_with_or_without_sudo(tmp_path):
    """Runners without the AppArmor key (ubuntu-22.04, containers) or without sudo go on to the preview."""
    script = step("offline-preview", "Let the preview sandbox")["run"]
    no_sudo = tmp_path / "bin"  # a PATH with the shell's tools and no sudo
    no_sudo.mkdir()
    for tool in ("cat", "echo"):
        found = shutil.which(tool)
        assert found
        (no_sudo / tool).symlink_to(found)
    for path in (os.environ["PATH"], str(no_sudo)):
        ran = subprocess.run([shutil.which("bash") or "bash", "-e", "-c", script], env={"PATH": path},
                             capture_output=True, text=True, timeout=60)
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.strip(), "it says what it did"


def test_a_pr_comment_longer_than_githubs_limit_is_cut_with_a_link_to_the_whole_report(tmp_path):
    comment = step("offline-preview", "Comment on the pull request")
    script = "\n".join(line for line in comment["run"].splitlines() if not line.startswith("gh "))
    report = "".join(f"### Stack `s{n}`\n" + "| policy | resource |\n" * 900 for n in range(8))  # about 140,000
    (tmp_path / "preview.md").write_text(report)
    run_url = "https://github.com/acme/payments/actions/runs/1"
    ran = run_step(script, tmp_path, {"RUNNER_TEMP": str(tmp_path), "RUN_URL": run_url})
    assert ran.returncode == 0, ran.stderr
    body = (tmp_path / "comment.md").read_text()
    assert len(report) > 65536 >= len(body)
    assert body.startswith(report[:60000].rsplit("\n", 1)[0]) and run_url in body and "Report cut short" in body
    (tmp_path / "preview.md").write_text("### short\n")
    assert run_step(script, tmp_path, {"RUNNER_TEMP": str(tmp_path), "RUN_URL": run_url}).returncode == 0
    assert (tmp_path / "comment.md").read_text() == "### short\n"  # a report that fits is sent whole


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
