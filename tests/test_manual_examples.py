"""Examples that run: every fenced block of the manual (docs/, and the README, the site's home page)
says on the line above it what it is, and each one that can run offline is run as it says:

    <!-- example: program -->                    a program (Python: recorded by the offline engine;
                                                 TypeScript: previewed with the components' SDK)
    <!-- example: shell in PLACE -->             each command run in PLACE (the repository's project,
                                                 the checkout itself, a team's project, an empty folder or
                                                 a fixture folder such as tests/fixtures/team_records): it
                                                 ran, and judged
    <!-- example: output of `CMD` in PLACE -->   CMD run there (or the block's first line, with "the
                                                 command on its first line"): what the block shows, it printed
    <!-- example: synopsis -->                   every option the usage names is one the command has
    <!-- example: stack file -->                 the stack file given to a team's project, whose preview
                                                 reads it (every suppression it holds matches a finding)
    <!-- example: pre-commit config -->          the hook exists and its arguments are the CLI's
    <!-- example: workflow -->                   a valid GitHub Actions workflow whose blueprint commands parse
    <!-- example: checked by tests/F.py::T -->   that test names this page and asserts what the block shows
    <!-- example: not run (REASON) -->           what it needs that a test cannot have (credentials,
                                                 the Pulumi CLI, the npm registry), or what it is (a diagram)

A block that runs the `blueprint` command (shell, output, stack file) runs in the end-to-end tier
(`make test-slow`): each is a preview or a drill of its own. So does a program marked `, slow` (a
TypeScript program starts Node.js); the rest run in the quick tier."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest
import yaml

from integration_blueprint.cli import build_parser
from integration_blueprint.preview.recording import record_program
from tests.conftest import REGION_CONFIG, REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
FENCE = re.compile(r"^([ \t]*)```(\w*)[ \t]*$")
MARKER = re.compile(r"^[ \t]*<!-- example: (?P<kind>not run|program|shell in|output of|synopsis|stack file|"
                    r"pre-commit config|workflow|checked by)(?P<rest>.*?) -->[ \t]*$")
BIN = Path(sys.executable).parent  # the environment's `blueprint` and `python`
WORKFLOW_SCHEMA = REPO / "tests" / "fixtures" / "schemas" / "github-workflow.json"


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository
    line: int  # of the opening fence
    language: str
    text: str
    kind: str  # "" when the block has no marker
    rest: str

    @property
    def slow(self) -> bool:
        return ", slow" in self.rest

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for page in PAGES:
        lines = page.read_text().split("\n")
        index = 0
        while index < len(lines):
            opening = FENCE.match(lines[index])
            if not opening:
                index += 1
                continue
            indent, language = opening.groups()
            end = next(i for i in range(index + 1, len(lines)) if lines[i].strip() == "```"
                       and lines[i].startswith(indent))
            body = "\n".join(line.removeprefix(indent) for line in lines[index + 1:end]) + "\n"
            marker = MARKER.match(lines[index - 1]) if index else None
            found.append(Block(str(page.relative_to(REPO)), index + 1, language, body,
                               marker["kind"] if marker else "", marker["rest"].strip() if marker else ""))
            index = end + 1
    return found


BLOCKS = blocks()


# The kinds whose blocks each start the `blueprint` command.
COMMAND_KINDS = ("shell in", "output of", "stack file")


def of_kind(*kinds: str) -> list:
    return [pytest.param(block, id=str(block), marks=[pytest.mark.slow] if block.slow or block.kind in COMMAND_KINDS else [])
            for block in BLOCKS if block.kind in kinds]


def test_every_block_of_the_manual_says_how_it_is_run():
    unmarked = [str(block) for block in BLOCKS if not block.kind]
    assert unmarked == [], "a block without `<!-- example: ... -->` on the line above it"
    unexplained = [str(b) for b in BLOCKS if b.kind == "not run" and not re.fullmatch(r"\(.{8,}\)", b.rest)]
    assert unexplained == [], "`not run` says why, in parentheses"
    run = [block for block in BLOCKS if block.kind != "not run"]
    assert len(run) > len(BLOCKS) / 2 and {"program", "shell in", "output of"} <= {b.kind for b in run}


# ---- the places a command runs in ------------------------------------------------------------------

TEAM_PROGRAM = '''import pulumi
import pulumi_aws as aws

from integration_blueprint.components import FifoBillingQueue

billing = FifoBillingQueue("billing", {"consumer_timeout_seconds": 60, "max_receive_count": 5})
audit = aws.sqs.Queue("audit", visibility_timeout_seconds=60, sqs_managed_sse_enabled=False)
pulumi.export("charges_queue", billing.queue_url)
'''


def team_project(folder: Path, stack_file: str = "config:\n  aws:region: eu-west-1\n") -> Path:
    """A team's project as the manual's commands expect it: Pulumi.yaml with its virtualenv .venv
    (the test's own), stacks dev and prod in stacks/, their policy configs, and policy.prod.json beside
    the program (the CI page's --policy-config)."""
    (folder / "stacks").mkdir(parents=True)
    (folder / "Pulumi.yaml").write_text("name: payments\nruntime:\n  name: python\n  options:\n"
                                        "    virtualenv: .venv\nstackConfigDir: stacks\n")
    (folder / "__main__.py").write_text(TEAM_PROGRAM)
    for stack in ("dev", "prod"):
        (folder / "stacks" / f"Pulumi.{stack}.yaml").write_text(stack_file)
        (folder / "stacks" / f"policy.{stack}.json").write_text('{"sqs-queue-encrypted-at-rest": "advisory"}\n')
    (folder / "policy.prod.json").write_text('{"all": "mandatory"}\n')
    (folder / ".venv").symlink_to(Path(sys.prefix))
    return folder


def place(where: str, tmp_path: Path) -> Path:
    """The folder a marker names, made in tmp_path (a fixture folder is copied: nothing is written
    into the repository)."""
    folder = tmp_path / "work"
    if where.startswith("the repository checkout"):  # a command naming the repository's own files, which it only reads
        return REPO
    if where.startswith("the repository"):
        folder.mkdir()
        for name in ("Pulumi.yaml", "__main__.py"):
            shutil.copy(REPO / name, folder / name)
        shutil.copytree(REPO / "stacks", folder / "stacks")
        (folder / ".venv").symlink_to(Path(sys.prefix))
        return folder
    if where.startswith("a team's project"):
        return team_project(folder)
    if where.startswith("an empty folder"):
        folder.mkdir()
        return folder
    fixture = re.match(r"(tests/fixtures/[\w/-]+)", where)
    assert fixture, f"unknown place {where!r}"
    shutil.copytree(REPO / fixture[1], folder, symlinks=True)
    return folder


def commands(text: str) -> list[str]:
    """The block's commands: continuation lines joined, comments and blank lines left out."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [line for line in (ln.split("  #")[0].strip() for ln in joined.splitlines()) if line and not line.startswith("#")]


def run(command: str, folder: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "NO_COLOR": "1"}
    return subprocess.run(["bash", "-e", "-c", command], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=900)


def ran_and_judged(result: subprocess.CompletedProcess, command: str) -> None:
    """Exit 0 (clean) or 1 (the check failed: the command ran and judged); 2 is a command that could
    not run (blueprint's exit codes)."""
    assert result.returncode in (0, 1), f"{command}: exit {result.returncode}\n{result.stderr[-2000:]}"
    assert "usage:" not in result.stderr, result.stderr


# ---- each kind ---------------------------------------------------------------------------------

@pytest.mark.parametrize("block", of_kind("program"))
def test_each_program_runs(block, tmp_path, request, monkeypatch):
    if block.language == "python":
        code = compile(block.text, str(block), "exec")
        recorded = record_program(lambda: exec(code, {"__name__": "__main__"}), config=REGION_CONFIG)
    else:
        assert block.language == "typescript", block
        from tests.test_node_programs import ts_project

        monkeypatch.setenv("PULUMI_NODEJS_TRANSPILE_ONLY", "true")  # the verdicts, not tsc's (tested elsewhere)
        sdk = request.getfixturevalue("typescript_sdk")
        recorded = record_program(ts_project(tmp_path / "app", block.text, sdk=sdk), stack="dev")
    assert any(resource.type.startswith("blueprint:index:") for resource in recorded.resources), block
    assert any(resource.type.startswith("aws:") for resource in recorded.resources), block


@pytest.mark.parametrize("block", of_kind("shell in"))
def test_each_shell_block_runs_where_it_says(block, tmp_path):
    folder = place(block.rest, tmp_path)
    sourced = ""  # what a `. .venv/bin/activate` line sets holds for the block's later commands
    for command in commands(block.text):
        result = run(sourced + command, folder)
        ran_and_judged(result, command)
        if command.startswith(". "):
            sourced += command + "; "


def fragments(text: str) -> list[str]:
    """What a shown output must hold: its text between the abridgements (`...`), white space folded."""
    folded = " ".join(text.split())
    return [part.strip() for part in folded.split("...") if len(part.strip()) > 3]


@pytest.mark.parametrize("block", of_kind("output of"))
def test_each_output_is_what_the_command_prints(block, tmp_path):
    named = re.match(r"`([^`]+)` in (.+)", block.rest)
    if named:
        command, where, shown = named[1], named[2], block.text
    else:
        assert block.rest.startswith("the command on its first line, in "), block
        command, _, shown = block.text.partition("\n")
        where = block.rest.removeprefix("the command on its first line, in ")
    folder = place(where, tmp_path)
    result = run(command, folder)
    ran_and_judged(result, command)
    printed = " ".join((result.stdout + result.stderr).split())
    missing = [part for part in fragments(shown) if part not in printed]
    assert missing == [], f"{block}: not printed by {command}:\n{printed[-3000:]}"


@pytest.mark.slow
def test_the_stack_file_error_the_getting_started_page_shows_is_the_one_the_preview_gives(tmp_path):
    [block] = [b for b in BLOCKS if b.page == "docs/getting-started.md" and "batchSize = 11" in b.text]
    folder = place("the repository", tmp_path)
    dev = folder / "stacks" / "Pulumi.dev.yaml"
    stack = yaml.safe_load(dev.read_text())
    stack["config"]["blueprint:fifoBilling"]["batchSize"] = 11
    dev.write_text(yaml.safe_dump(stack))
    result = run("blueprint preview --stack dev", folder)
    assert result.returncode == 2  # a refused setting: nothing judged
    assert " ".join(block.text.split()) in " ".join(result.stderr.split())


@pytest.mark.parametrize("block", of_kind("synopsis"))
def test_each_synopsis_names_only_options_the_command_has(block, capsys):
    subcommand = blueprint_arguments(commands(block.text)[0])[0]
    with pytest.raises(SystemExit):
        build_parser().parse_args([subcommand, "--help"])
    named = set(re.findall(r"--[a-z][\w-]*", block.text))
    assert named and named <= set(re.findall(r"--[a-z][\w-]*", capsys.readouterr().out)), block


@pytest.mark.parametrize("block", of_kind("stack file"))
def test_each_stack_file_is_read_by_a_preview_and_each_suppression_matches(block, tmp_path):
    stack = yaml.safe_load(block.text)
    stack["config"]["aws:region"] = "eu-west-1"
    folder = team_project(tmp_path / "payments", yaml.safe_dump(stack))
    result = run("blueprint preview --stack dev --json", folder)
    ran_and_judged(result, "blueprint preview --stack dev --json")
    report = json.loads(result.stdout)
    suppressions = report["suppressions"]
    assert len(suppressions) == len(stack["config"].get("blueprint:suppressions", []))
    assert all(not s.get("matchesNothing") and not s["expired"] for s in suppressions), suppressions
    assert {f["policy"] for f in report["suppressed"]} == {s["policy"] for s in stack["config"]["blueprint:suppressions"]}


def blueprint_arguments(line: str) -> list[str] | None:
    words = shlex.split(line)
    for index, word in enumerate(words):
        if word.endswith("blueprint") and word.split("/")[-1] == "blueprint":
            return words[index + 1:]
    return None


@pytest.mark.parametrize("block", of_kind("pre-commit config"))
def test_each_pre_commit_config_names_the_hook_with_arguments_the_cli_takes(block):
    hooks = {hook["id"]: hook for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    for repository in yaml.safe_load(block.text):
        for used in repository["hooks"]:
            hook = hooks[used["id"]]
            arguments = blueprint_arguments(hook["entry"]) + used.get("args", [])
            assert build_parser().parse_args(arguments).run.__name__ == "_run_preview"


@pytest.mark.parametrize("block", of_kind("workflow"))
def test_each_workflow_is_valid_and_its_blueprint_commands_parse(block):
    workflow = yaml.safe_load(block.text)
    workflow.setdefault(True, {"workflow_dispatch": None})  # a job excerpt: the trigger is the team's (`on`)
    workflow["on"] = workflow.pop(True)
    jsonschema.validate(workflow, json.loads(WORKFLOW_SCHEMA.read_text()))
    parsed = 0
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            for line in step.get("run", "").splitlines():
                if (arguments := blueprint_arguments(line)) is not None:
                    build_parser().parse_args(arguments)
                    parsed += 1
    assert parsed, block


@pytest.mark.parametrize("block", of_kind("checked by"))
def test_each_block_checked_by_a_test_is_read_by_that_test(block):
    file_name, test_name = block.rest.split("::")
    tree = ast.parse((REPO / file_name).read_text())
    [test] = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == test_name]
    module = (REPO / file_name).read_text()
    assert Path(block.page).name in module and ("DOC" in ast.unparse(test) or Path(block.page).name in ast.unparse(test))
