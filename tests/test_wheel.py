"""The package as teams install it: the policy pack travels inside it, self-contained and at the
package's version, and (marked `wheel`) a wheel built from this repository works from a fresh
virtualenv outside it.

The `wheel` tests build the wheel once, install it with its dependencies into a new virtualenv (pip
takes them from its cache or the package index, as for any team) and run the installed `blueprint`
command and policy pack from a team's own program folder. They take a minute or two; skip them
locally with `pytest -m "not wheel"`. `make test` and CI run them.
"""

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import pulumi_aws as aws
import pytest
import yaml
from google.protobuf import empty_pb2, struct_pb2
from node_packages import install_node_modules
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc
from team_folders import write_team_program

from integration_blueprint import __version__
from integration_blueprint.preview.recording import record_program

REPO = Path(__file__).resolve().parents[1]
PACK = REPO / "policies"
NODE_PROGRAMS = REPO / "tests" / "node" / "programs"
PACK_NAME = "integration-blueprint"
DISTRIBUTION = "integration-blueprint"
# What the wheel is built from: the repository less what is not source.
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__",
                                    ".pytest_cache", ".mypy_cache", ".ruff_cache")
START_TIMEOUT_SECONDS = 120


def requirement_lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


# ---- the pack folder, in the checkout ------------------------------------------------------------

def test_the_pack_and_its_requirements_carry_the_package_version():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert pyproject["project"]["dynamic"] == ["version"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "integration_blueprint.__version__"}
    assert yaml.safe_load((PACK / "PulumiPolicy.yaml").read_text())["version"] == __version__
    assert requirement_lines(PACK / "requirements.txt") == [f"{DISTRIBUTION}=={__version__}"]


def test_the_pack_folder_names_nothing_outside_itself():
    """`pulumi policy publish` uploads the folder alone: no path requirement, no virtualenv beside it."""
    runtime = yaml.safe_load((PACK / "PulumiPolicy.yaml").read_text())["runtime"]
    assert runtime["name"] == "python" and "virtualenv" not in runtime.get("options", {})
    for line in requirement_lines(PACK / "requirements.txt"):
        assert not line.startswith((".", "/", "-e", "file:")) and "@" not in line, line


def test_the_running_pack_reports_the_package_version(policy_analyzer):
    assert (policy_analyzer.info.name, policy_analyzer.info.version) == (PACK_NAME, __version__)

    def program():  # in a first preview the DLQ's ARN, and so the redrive policy, is unknown
        dlq = aws.sqs.Queue("orders-dlq")
        aws.sqs.Queue("orders", redrive_policy=dlq.arn.apply(
            lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 5})))

    policy_analyzer.configure()
    violations = policy_analyzer.analyze(record_program(program, unknowns=True))
    # The SDK's own message for a value the preview cannot know names the pack and its version.
    named = [v.message for v in violations if f"'{PACK_NAME}@v" in v.message]
    assert named and all(f"'{PACK_NAME}@v{__version__}' during preview" in message for message in named)


# ---- the wheel, installed into a fresh virtualenv ------------------------------------------------

@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Iterator[Path]:
    """The wheel, built once per session as a team builds it from a checkout (`pip wheel <checkout>`),
    which the build leaves as it was: no build/, no *.egg-info (tools/build_backend.py)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    def tree() -> list[Path]:  # (Python may cache the backend's bytecode beside it, as for any module it imports)
        return sorted(path.relative_to(source) for path in source.rglob("*") if "__pycache__" not in path.parts)
    before = tree()
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(work / "dist"), str(source)])
    (built,) = (work / "dist").glob("integration_blueprint-*.whl")
    assert tree() == before
    yield built
    shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="session")
def venv(wheel, tmp_path_factory) -> Iterator[Path]:
    """A new virtualenv outside the repository with the wheel and its dependencies installed, as pip
    installs them for a team (the wheel's ranges), held to the versions the lock says were tested
    (uv.lock exported as pip constraints)."""
    team = tmp_path_factory.mktemp("team")
    venv = team / "venv"
    constraints = team / "constraints.txt"
    uv = shutil.which("uv", path=os.path.dirname(sys.executable))
    assert uv, "uv is not in the project's virtualenv: run `make install`"
    run([uv, "export", "--project", str(REPO), "--frozen", "--all-extras", "--no-emit-project", "--no-hashes",
         "--no-header", "--quiet", "--output-file", str(constraints)])
    run([sys.executable, "-m", "venv", str(venv)])
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-compile", "--disable-pip-version-check",
         "--constraint", str(constraints), str(wheel)])
    yield venv
    shutil.rmtree(venv, ignore_errors=True)  # half a gigabyte, mostly pulumi-aws


def run(command: list[str]) -> None:
    done = subprocess.run(command, env=clean_env(), capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr[-3000:]}"


def clean_env(venv: Path | None = None) -> dict[str, str]:
    """The environment of a shell with `venv` activated (none: no virtualenv at all)."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(REPO))]
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        path.insert(0, str(venv / "bin"))
    env["PATH"] = os.pathsep.join(path)
    return env


TEAM_PROGRAM = '''
"""A team's own program: its own components/ and handlers/ folders, one blueprint component, and
a queue + function + mapping written by hand with the classic mistakes."""

import pulumi
import pulumi_aws as aws

from components.naming import PREFIX
from integration_blueprint.components import FifoBillingQueue

FifoBillingQueue(f"{PREFIX}-billing", {"consumer_timeout_seconds": 30})

# Default 30 s visibility under a 60 s function, no DLQ, no ReportBatchItemFailures.
orders = aws.sqs.Queue(f"{PREFIX}-orders")
handler = aws.lambda_.Function(f"{PREFIX}-orders-fn", role="arn:aws:iam::123456789012:role/team",
                               runtime="python3.12", handler="app.handler", timeout=60,
                               code=pulumi.FileArchive("./handlers"))
aws.lambda_.EventSourceMapping(f"{PREFIX}-orders-mapping", event_source_arn=orders.arn,
                               function_name=handler.name)
'''
HAND_WRITTEN_MISTAKES = {
    "sqs-visibility-timeout-covers-function-timeout", "sqs-visibility-timeout-six-times-function-timeout",
    "sqs-event-source-has-dlq", "lambda-sqs-esm-reports-batch-item-failures",
    # The pack's second edition also sees that the function logs to a group that never expires and
    # that the queue accepts requests without TLS (advisory).
    "lambda-log-group-has-retention", "queue-topic-policy-denies-insecure-transport",
}


@pytest.fixture(scope="session")
def team_program(tmp_path_factory) -> Path:
    program = tmp_path_factory.mktemp("team") / "app"
    program.mkdir()
    write_team_program(program, "def handler(event, context):\n    return {}\n")
    (program / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (program / "__main__.py").write_text(TEAM_PROGRAM)
    return program


def installed_cli(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(venv / "bin" / "blueprint"), *args], cwd=cwd, env=clean_env(venv),
                          capture_output=True, text=True, timeout=600)


@pytest.mark.wheel
def test_the_wheel_holds_the_policy_pack_and_nothing_of_the_checkout(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    pack = "integration_blueprint/policies/"
    assert {f"{pack}PulumiPolicy.yaml", f"{pack}__main__.py", f"{pack}requirements.txt",
            f"{pack}rules/__init__.py"} <= names
    plugin = "integration_blueprint/plugin/"  # the component package the engine starts for other languages
    assert {f"{plugin}PulumiPlugin.yaml", f"{plugin}__main__.py", f"{plugin}provider.py",
            f"{plugin}typescript_sdk.py"} <= names
    docs = "integration_blueprint/docs/"  # the guides the CLI points to (`blueprint docs <topic>`)
    manual = {f"{docs}{page.name}" for page in (REPO / "docs").glob("*.md")}  # every page of the manual
    assert {f"{docs}drill.md", f"{docs}gate.md", f"{docs}rules.md"} <= manual <= names
    assert {name.split("/")[0] for name in names} == {"integration_blueprint",
                                                      f"integration_blueprint-{__version__}.dist-info"}


@pytest.mark.wheel
def test_the_installed_cli_prints_the_guides_it_points_to_without_the_repository(venv, team_program):
    for topic, page in (("drill", "docs/drill.md"), ("deploying", "docs/deploying.md"), ("readme", "README.md"),
                        ("gate", "docs/gate.md"), ("rules", "docs/rules.md")):
        shown = installed_cli(venv, "docs", topic, cwd=team_program)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.strip() == (REPO / page).read_text().strip(), topic


@pytest.mark.wheel
def test_the_installed_cli_previews_a_team_program_with_the_installed_pack(venv, team_program):
    version = installed_cli(venv, "--version", cwd=team_program)
    assert version.stdout.strip() == f"blueprint {__version__}"
    pack = Path(installed_cli(venv, "policy", "path", cwd=team_program).stdout.strip())
    assert pack.is_relative_to(venv) and (pack / "PulumiPolicy.yaml").is_file()

    preview = installed_cli(venv, "preview", "--program", str(team_program), "--stack", "dev", "--json",
                            cwd=team_program)

    assert preview.returncode == 1, preview.stderr
    report = json.loads(preview.stdout)
    by_urn = {r["urn"]: r for r in report["resources"]}
    flagged = {(by_urn[v["urn"]]["name"] if v["urn"] else "(stack)", v["policy"]) for v in report["violations"]}
    assert {policy for name, policy in flagged if name.startswith("team-orders")} == HAND_WRITTEN_MISTAKES
    component_resources = {name for name, _ in flagged if name.startswith("team-billing")}
    mandatory_on_component = [v for v in report["violations"] if v["level"] == "mandatory"
                              and v["urn"] and by_urn[v["urn"]]["name"] in component_resources]
    assert mandatory_on_component == []
    # The team's own handlers/ became its function's code; the component's code is ours.
    function = next(r for r in report["resources"] if r["name"] == "team-orders-fn")
    assert function["inputs"]["code"]["path"] == "./handlers"


def stderr_text(stderr) -> str:
    stderr.seek(0)
    return stderr.read().decode(errors="replace")[-3000:]


@pytest.mark.wheel
def test_the_installed_pack_starts_as_the_pulumi_cli_starts_it(venv):
    """pulumi-language-python runs a policy pack as `python -u -m pulumi.policy <engine> <pack>` in
    the pack's folder and reads the port from its first line; then the engine asks over gRPC."""
    pack = Path(installed_cli(venv, "policy", "path", cwd=venv).stdout.strip())
    env = dict(clean_env(venv), PULUMI_PROJECT="team-app", PULUMI_STACK="dev", PULUMI_DRY_RUN="true")
    stderr = tempfile.TemporaryFile()
    started = time.monotonic()
    process = subprocess.Popen([str(venv / "bin" / "python"), "-u", "-m", "pulumi.policy", "127.0.0.1:0", str(pack)],
                               cwd=pack, env=env, stdout=subprocess.PIPE, stderr=stderr)
    assert process.stdout is not None
    try:
        ready, _, _ = select.select([process.stdout], [], [], START_TIMEOUT_SECONDS)
        line = process.stdout.readline() if ready else b""
        assert line.strip().isdigit(), f"the pack printed {line!r}, not its port: {stderr_text(stderr)}"
        with grpc.insecure_channel(f"127.0.0.1:{int(line)}") as channel:
            analyzer = analyzer_pb2_grpc.AnalyzerStub(channel)
            info = analyzer.GetAnalyzerInfo(empty_pb2.Empty(), timeout=60)
            print(f"installed pack answered GetAnalyzerInfo {time.monotonic() - started:.1f} s after its start")
            assert (info.name, info.version) == (PACK_NAME, __version__)
            analyzer.ConfigureStack(analyzer_pb2.AnalyzerStackConfigureRequest(
                project="team-app", stack="dev", dry_run=True), timeout=60)
            properties = struct_pb2.Struct()
            properties.update({"redrivePolicy": json.dumps({"deadLetterTargetArn": "arn:aws:sqs:eu-west-1:1:dlq",
                                                            "maxReceiveCount": 1})})
            response = analyzer.Analyze(analyzer_pb2.AnalyzeRequest(
                type="aws:sqs/queue:Queue", name="orders", properties=properties,
                urn="urn:pulumi:dev::team-app::aws:sqs/queue:Queue::orders"), timeout=60)
    finally:
        process.terminate()
        process.wait(timeout=10)
        stderr.close()
    (diagnostic,) = response.diagnostics
    assert (diagnostic.policyName, diagnostic.policyPackName, diagnostic.policyPackVersion) == (
        "sqs-dlq-max-receive-count", PACK_NAME, __version__)
    assert diagnostic.enforcementLevel == analyzer_pb2.MANDATORY



TYPED_TEAM_PROGRAM = '''
import pulumi_aws as aws

from integration_blueprint.components import (DistributedMapBatch, FifoBillingQueue, IdempotentStreamConsumer,
                                              PlatformArgs)

FifoBillingQueue("payroll", {"schedule_enable": False, "batch_size": 10})
DistributedMapBatch("invoices", {"tolerated_failure_percentage": 5})
IdempotentStreamConsumer("orders", {"batch_size": "10"})

# What a team does right: shared settings typed once and spread, a child resource extended.
platform: PlatformArgs = {"alarm_actions": ["arn:aws:sns:eu-west-1:123456789012:oncall"], "log_retention_days": 30}
billing = FifoBillingQueue("billing", {**platform, "batch_size": 5})
role: aws.iam.Role = billing.consumer_role
'''
# Type-check the team's program against the installed package, not the libraries under it (pulumi-aws
# alone takes minutes to analyse).
TEAM_MYPY_CONFIG = """[mypy]
ignore_missing_imports = True
[mypy-pulumi_aws.*,boto3.*,botocore.*,moto.*,policy_sentry.*,aws_lambda_powertools.*]
follow_imports = skip
"""


@pytest.mark.wheel
def test_the_installed_package_is_typed_so_mypy_finds_a_misspelled_key_and_a_wrong_type(wheel, venv, tmp_path):
    assert "integration_blueprint/py.typed" in zipfile.ZipFile(wheel).namelist()
    assert "integration_blueprint/examples/policy-preview.yml" in zipfile.ZipFile(wheel).namelist()  # blueprint init
    (tmp_path / "__main__.py").write_text(TYPED_TEAM_PROGRAM)
    (tmp_path / "mypy.ini").write_text(TEAM_MYPY_CONFIG)
    # mypy reads the team's virtualenv (PEP 561: an installed package is type-checked only with py.typed).
    checked = subprocess.run([sys.executable, "-m", "mypy", "--python-executable", str(venv / "bin" / "python"),
                              "--config-file", "mypy.ini", "--no-incremental", "__main__.py"],
                             cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=600)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert 'Extra key "schedule_enable" for TypedDict "FifoBillingQueueArgs"' in checked.stdout
    assert 'Missing key "max_concurrency" for TypedDict "DistributedMapBatchArgs"' in checked.stdout
    assert 'Incompatible types (expression has type "str", TypedDict item "batch_size" has type' in checked.stdout
    # exactly the three mistakes: the spread platform settings and the typed child type-check
    assert checked.stdout.count("error:") == 3, checked.stdout


COMPONENT_TYPES = {f"blueprint:index:{name}" for name in (
    "FifoBillingQueue", "IdempotentStreamConsumer", "NonIdempotentStreamConsumer", "DistributedMapBatch")}


@pytest.mark.wheel
def test_the_wheel_and_the_sdk_tarball_preview_a_typescript_and_a_python_program_of_the_four_components(
        venv, tmp_path):
    """A TypeScript team with neither the Pulumi CLI nor this repository: the installed `blueprint`
    writes the SDK, `npm pack` makes the tarball, `npm install <tarball>` puts it into a fresh
    project, and the installed CLI previews the program (type-checked against the SDK's
    declarations), its components constructed by the plugin inside the wheel; the Python twin
    previews from the same virtualenv, with the same resources."""
    sdk = tmp_path / "sdk"
    assert installed_cli(venv, "sdk", "--language", "typescript", "--out", str(sdk), cwd=tmp_path).returncode == 0
    packed = subprocess.run(["npm", "pack", "--json", "--pack-destination", str(tmp_path), str(sdk)],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert packed.returncode == 0, packed.stderr
    tarball = tmp_path / json.loads(packed.stdout)[0]["filename"]

    typescript = tmp_path / "ts-team"
    shutil.copytree(NODE_PROGRAMS / "components-ts", typescript)
    (typescript / "package.json").write_text('{"name": "ts-team", "private": true, "main": "index.ts"}\n')
    (typescript / "tsconfig.json").write_text(
        (typescript / "tsconfig.json").read_text().replace('"noCheck": true', '"noCheck": false'))
    # --legacy-peer-deps: @pulumi/pulumi is the program's own (linked below from the pinned fixtures),
    # so npm needs no registry here.
    installed = subprocess.run(["npm", "install", "--offline", "--no-audit", "--no-fund", "--legacy-peer-deps",
                                str(tarball)], cwd=typescript, capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    install_node_modules(typescript)
    python = tmp_path / "py-team"
    shutil.copytree(NODE_PROGRAMS / "components-py", python)

    reports = {}
    for program in (typescript, python):
        preview = installed_cli(venv, "preview", "--program", str(program), "--stack", "dev", "--json",
                                "--strict", cwd=program)
        assert preview.returncode in (0, 1), preview.stderr
        reports[program.name] = json.loads(preview.stdout)

    for report in reports.values():
        assert {r["type"] for r in report["resources"]} >= COMPONENT_TYPES
    resources = {name: {(r["type"], r["name"]) for r in report["resources"]} for name, report in reports.items()}
    assert resources["ts-team"] == resources["py-team"] and len(resources["ts-team"]) > 40
    assert reports["ts-team"]["summary"] == reports["py-team"]["summary"]
