"""Programs nobody here wrote (tests/programs/, see its README): each is previewed by the installed
CLI as a team's CI runs it, in both modes, and must get exactly the verdicts its expected.json gives.

expected.json: {"stack", optional "env" (variables set for the run), "cwd" (a subfolder to run from,
without --program, as `pulumi` finds the project by walking up), "venv_paths" (folders installed
only into the program's own virtualenv), "modes": {"known" | "unknowns": {"exit", "violations":
[{policy, resource, level}] (the exact set, "can't run policy" notes aside), optional "cannot_run":
[{policy, resource}] (notes a first preview must give), "not_expanded" (component types reported
as not expanded), "error_contains", "error_excludes", "error_at" ("<file>:<line>" of the program),
"resources_min"}}}.

With `--strict`, a program with components that are not expanded must fail (exit 2) naming them.

A program whose Pulumi.yaml names a virtualenv is copied to a temporary folder and gets that
virtualenv built offline (no pip: a .pth file points at this environment's site-packages for
pulumi and pulumi_aws, and at the program's `venv_paths`), as `pip install -r requirements.txt`
would leave it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import corpus_venvs  # noqa: E402 - tools/ holds the fixture builder `make corpus-venvs` runs

PROGRAMS_DIR = Path(__file__).parent / "programs"
BLUEPRINT = Path(sys.executable).parent / "blueprint"
MODES = ("known", "unknowns")
CANNOT_RUN = "can't run policy"
# A CI runner's own AWS settings must not leak into a program's region.
REGION_VARIABLES = ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE")
PREVIEW_TIMEOUT_SECONDS = 120

# The end-to-end tier (`make test-slow`, `make test-all`); `-m corpus` runs only these.
pytestmark = [pytest.mark.slow, pytest.mark.corpus]

PROGRAMS = sorted(p.name for p in PROGRAMS_DIR.iterdir() if (p / "expected.json").exists())


def expected_of(name: str) -> dict:
    return json.loads((PROGRAMS_DIR / name / "expected.json").read_text())


def project_virtualenv(program: Path) -> str | None:
    """The virtualenv the program runs in: the one its Pulumi.yaml names, else the one its
    toolchain finds (expected.json's "venv": uv's or poetry's `.venv`)."""
    runtime = yaml.safe_load((program / "Pulumi.yaml").read_text()).get("runtime")
    options = runtime.get("options", {}) if isinstance(runtime, dict) else {}
    return options.get("virtualenv") or expected_of(program.name).get("venv")


def with_virtualenv(source: Path, tmp_path: Path, venv_paths: list[str]) -> Path:
    """A copy of the program with its virtualenv: built offline, or, for a program pinned to other
    SDK versions, the one `make corpus-venvs` built from its requirements.txt."""
    program = tmp_path / source.name
    shutil.copytree(source, program, ignore=shutil.ignore_patterns(project_virtualenv(source), "__pycache__"))
    venv = program / project_virtualenv(source)
    if expected_of(source.name).get("pinned"):
        built = corpus_venvs.venv_for(source)
        if not corpus_venvs.is_built(built):
            pytest.skip(f"{source.name} runs in pinned SDK versions: run `make corpus-venvs` first")
        venv.symlink_to(built, target_is_directory=True)
        return program
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    [site_packages] = venv.glob("lib/python*/site-packages")
    paths = [sysconfig.get_paths()["purelib"], *(str(program / p) for p in venv_paths)]
    (site_packages / "corpus.pth").write_text("\n".join(paths) + "\n")
    return program


def run_preview(name: str, mode: str, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess:
    expected = expected_of(name)
    program = PROGRAMS_DIR / name
    if project_virtualenv(program):
        program = with_virtualenv(program, tmp_path, expected.get("venv_paths", []))
    command = [str(BLUEPRINT), "preview", "--stack", expected["stack"], "--format", "json"]
    if "cwd" in expected:
        cwd = program / expected["cwd"]
    else:
        cwd, command = tmp_path, [*command, "--program", str(program)]
    if mode == "unknowns":
        command.append("--unknowns")
    command += flags
    env = {k: v for k, v in os.environ.items() if k not in REGION_VARIABLES}
    # "{program}" in a value is the program's folder (a CI job's PYTHONPATH entry inside the checkout).
    env.update({key: value.replace("{program}", str(program)) for key, value in expected.get("env", {}).items()})
    for name_and_file in expected.get("stack_references", []):  # NAME=FILE, FILE relative to the program
        reference, _, file = name_and_file.partition("=")
        command += ["--stack-reference", f"{reference}={program / file}"]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=PREVIEW_TIMEOUT_SECONDS)


def not_expanded_report(report: dict) -> str:
    """Whatever the report says about components it did not expand (a key naming it, anywhere)."""
    found = []

    def walk(value):
        if isinstance(value, dict):
            for key, item in value.items():
                if "expand" in key.lower():
                    found.append(json.dumps(item))
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
    walk(report)
    return " ".join(found)


def test_the_corpus_holds_enough_programs():
    assert len(PROGRAMS) >= 25, PROGRAMS


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", PROGRAMS)
def test_program_preview_gives_the_expected_verdicts(name, mode, tmp_path):
    want = expected_of(name)["modes"][mode]
    done = run_preview(name, mode, tmp_path)
    output = f"exit {done.returncode}\nstdout: {done.stdout[-3000:]}\nstderr: {done.stderr[-3000:]}"
    assert done.returncode == want["exit"], output
    for text in want.get("error_contains", []):
        assert text in done.stderr, output
    for text in want.get("error_excludes", []):
        assert text not in done.stderr, output
    if "error_at" in want:
        assert want["error_at"] in done.stderr, output
    if want["exit"] == 2:
        return
    report = json.loads(done.stdout)
    # Checks that could not run during preview are listed apart from the violations.
    notes = {(v["policy"], v["name"]) for v in report["skippedChecks"]}
    assert not any(v["message"].startswith(CANNOT_RUN) for v in report["violations"]), output
    verdicts = {(v["policy"], v["name"], v["level"]) for v in report["violations"]}
    assert verdicts == {(v["policy"], v["resource"], v["level"]) for v in want["violations"]}, output
    missing_notes = {(n["policy"], n["resource"]) for n in want.get("cannot_run", [])} - notes
    assert not missing_notes, output
    assert report["summary"]["resources"] >= want.get("resources_min", 1), output
    said = not_expanded_report(report)
    for component_type in want.get("not_expanded", []):
        assert component_type in said, f"{component_type} not reported as not expanded\n{output}"


NOT_EXPANDING = [name for name in PROGRAMS if expected_of(name)["modes"]["known"].get("not_expanded")]


@pytest.mark.parametrize("name", NOT_EXPANDING)
def test_strict_preview_fails_on_a_component_it_did_not_expand(name, tmp_path):
    """`--strict`: a component whose children were not checked fails the gate (exit 2), naming it."""
    done = run_preview(name, "known", tmp_path, "--strict")
    said = done.stdout + done.stderr
    assert done.returncode == 2, f"exit {done.returncode}\n{said[-3000:]}"
    for component_type in expected_of(name)["modes"]["known"]["not_expanded"]:
        assert component_type in said, said[-3000:]


def test_each_expected_error_location_is_a_raise_or_a_declaration_in_the_program():
    """An `error_at` names the line of the program's own `raise`, or of the resource declaration the
    engine refused (an archive it could not read): kept true when the file is edited."""
    for name in PROGRAMS:
        for want in expected_of(name)["modes"].values():
            if "error_at" in want:
                path, line = want["error_at"].rsplit(":", 1)
                source = (PROGRAMS_DIR / name / path).read_text().splitlines()[int(line) - 1].lstrip()
                declaration = re.match(r"(\w+ = )?[\w.]+\.[A-Z]\w*\($", source)
                assert source.startswith("raise ") or declaration, (name, want["error_at"])
