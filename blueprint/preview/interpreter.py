"""The Python interpreter a Pulumi program runs under, chosen as the Python language host chooses it
(pulumi/pulumi: sdk/python/cmd/pulumi-language-python/main.go parseOptions and Run,
sdk/python/toolchain/{toolchain,pip,poetry,uv}.go):

- `runtime.options.toolchain` in Pulumi.yaml: `pip`, `poetry` or `uv`; without it (toolchain.Auto,
  ResolveToolchain in toolchain.go), `uv` if a uv.lock is found at or above the program's folder,
  else `poetry` if a poetry.lock is, else `pip`. The lock files choose since CLI v3.227 (pulumi/pulumi
  #22234, March 2026); before, Auto did not exist and pip was the default. One case follows the older
  CLIs on purpose: a project that names `runtime.options.virtualenv` which exists runs there even
  beside a poetry.lock (the author named the environment; a v3.227+ CLI would run poetry's instead,
  which `toolchain: poetry` asks for explicitly). With a uv.lock both CLIs run the named virtualenv.
- pip: `runtime.options.virtualenv` (relative to the project folder) names the virtualenv, which must
  exist; without one, PULUMI_PYTHON_CMD names the interpreter.
- poetry: the environment `poetry env info --path` names for the program's folder.
- uv: `runtime.options.virtualenv`, else UV_PROJECT_ENVIRONMENT, else `.venv` next to uv.lock (or
  pyproject.toml).

Where we differ, on purpose: with nothing named, the language host runs `python3` from PATH; we run
our own interpreter (`sys.executable`), because the gate's environment is where a team's CI installs
what the program imports (the usual `pip install -r requirements.txt integration-blueprint`), and a
`python3` elsewhere on PATH would be a guess. An activated virtualenv that is not ours (VIRTUAL_ENV,
whose `python3` is the one first on PATH) is the exception: that is what the CLI would run. A
poetry or uv environment that already exists is used even when the tool itself is not installed
(the tools only create and sync it; we do not run `uv sync` before each run as the language host does).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

from integration_blueprint.preview.project import ProgramError, load_project, shown

TOOLCHAINS = ("pip", "poetry", "uv")
# How long `poetry env info --path` may take (it reads poetry's config and cache, no network).
POETRY_ENV_TIMEOUT_SECONDS = 30
BIN_DIR = "Scripts" if os.name == "nt" else "bin"
PYTHON_NAME = "python.exe" if os.name == "nt" else "python"


@dataclass(frozen=True)
class Interpreter:
    argv: list[str]  # the command prefix: the program runs as argv + [script, ...]
    chosen_by: str  # why this interpreter, for the output
    toolchain: str  # pip, poetry or uv
    virtualenv: Optional[Path]  # the virtualenv the program runs in, if one was named or found
    project_dir: Path

    def environ(self, base: Mapping[str, str] = os.environ) -> dict[str, str]:
        """The environment the program runs with: the virtualenv activated as the language host
        activates it (toolchain.ActivateVirtualEnv: its bin first on PATH, VIRTUAL_ENV set,
        PYTHONHOME dropped)."""
        if self.virtualenv is None:
            return dict(base)
        environ = {key: value for key, value in base.items() if key.upper() not in ("PYTHONHOME", "VIRTUAL_ENV")}
        path_key = next((key for key in environ if key.upper() == "PATH"), "PATH")
        bin_dir = str(self.virtualenv / BIN_DIR)
        environ[path_key] = f"{bin_dir}{os.pathsep}{environ[path_key]}" if environ.get(path_key) else bin_dir
        environ["VIRTUAL_ENV"] = str(self.virtualenv)
        return environ


def _is_virtualenv(directory: Path) -> bool:
    """toolchain.IsVirtualEnv: a folder with bin/python."""
    return (directory / BIN_DIR / PYTHON_NAME).is_file()


def _search_up(start: Path, name: str) -> Optional[Path]:
    for directory in (start, *start.parents):
        if (directory / name).exists():
            return directory
    return None


def _runtime_options(project: dict) -> dict:
    runtime = project.get("runtime")
    options = runtime.get("options") if isinstance(runtime, dict) else None
    return options if isinstance(options, dict) else {}


def _program_folder(project_dir: Path, project: dict) -> Path:
    """The language host's ProgramDirectory: `main` if it names a folder, else the project folder."""
    main = project_dir / str(project.get("main") or ".")
    return main if main.is_dir() else main.parent


def resolve_interpreter(project_dir: Path, environ: Mapping[str, str] = os.environ,
                        project: Optional[dict] = None) -> Interpreter:
    """The interpreter the program in `project_dir` (the folder of its Pulumi.yaml) runs under;
    `project` another manifest with the same runtime options (a policy pack's PulumiPolicy.yaml)."""
    project_dir = Path(project_dir).resolve()
    project = load_project(project_dir) if project is None else project
    options, program_dir = _runtime_options(project), _program_folder(project_dir, project)
    virtualenv = options.get("virtualenv")
    if virtualenv is not None and not isinstance(virtualenv, str):
        raise ProgramError("Pulumi.yaml: runtime.options.virtualenv must be a string (a folder, relative to the project)")
    toolchain = options.get("toolchain")
    if toolchain is not None and toolchain not in TOOLCHAINS:
        raise ProgramError(f"Pulumi.yaml: unsupported runtime.options.toolchain {toolchain!r}; "
                           f"the toolchains are {', '.join(TOOLCHAINS)}")
    named = f"runtime.options.toolchain {toolchain} in Pulumi.yaml"
    if toolchain is None:
        for lock, tool in (("uv.lock", "uv"), ("poetry.lock", "poetry")):
            found = _search_up(program_dir, lock)
            if found and tool == "poetry" and virtualenv and _is_virtualenv(project_dir / virtualenv):
                return _pip(project_dir, virtualenv, environ, beside=(
                    f"pip: Pulumi's default toolchain; {shown(found / lock, project_dir)} does not choose poetry for "
                    "a project that names its virtualenv (set `toolchain: poetry` to run poetry's environment)"))
            if found:
                toolchain, named = tool, f"{shown(found / lock, project_dir)} (Pulumi.yaml names no toolchain)"
                break
    if toolchain == "poetry":
        return _poetry(project_dir, program_dir, named)
    if toolchain == "uv":
        return _uv(project_dir, program_dir, virtualenv, named, environ)
    return _pip(project_dir, virtualenv, environ)


def _pip(project_dir: Path, virtualenv: Optional[str], environ: Mapping[str, str], beside: str = "") -> Interpreter:
    if virtualenv:
        path = project_dir / virtualenv
        if not _is_virtualenv(path):
            problem = "does not exist" if not path.exists() else "is not a virtual environment (it has no bin/python)"
            raise ProgramError(f"Pulumi.yaml's runtime.options.virtualenv is {virtualenv!r}, but {path} {problem}; "
                               f"create it: {_create_venv_command(project_dir, virtualenv)}")
        why = f"runtime.options.virtualenv {virtualenv} in Pulumi.yaml" + (f"; {beside}" if beside else "")
        return Interpreter([str(path / BIN_DIR / PYTHON_NAME)], why, "pip", path, project_dir)
    command = environ.get("PULUMI_PYTHON_CMD")
    if command:
        found = shutil.which(command, path=environ.get("PATH"))
        if not found:
            raise ProgramError(f"PULUMI_PYTHON_CMD is {command!r}, which is not on PATH; set it to a Python 3 "
                               "interpreter (a name on PATH or a path), or unset it")
        return Interpreter([found], "PULUMI_PYTHON_CMD", "pip", None, project_dir)
    active = environ.get("VIRTUAL_ENV")
    if active and _is_virtualenv(Path(active)) and Path(active).resolve() != Path(sys.prefix).resolve():
        return Interpreter([str(Path(active) / BIN_DIR / PYTHON_NAME)], "the activated virtualenv (VIRTUAL_ENV)",
                           "pip", Path(active), project_dir)
    return Interpreter([sys.executable], "blueprint's own interpreter (Pulumi.yaml names no virtualenv)",
                       "pip", None, project_dir)


def _create_venv_command(project_dir: Path, virtualenv: str) -> str:
    create = f"python3 -m venv {virtualenv}"
    if (project_dir / "requirements.txt").exists():
        return f"{create} && {virtualenv}/{BIN_DIR}/pip install -r requirements.txt"
    if (project_dir / "pyproject.toml").exists():
        return f"{create} && {virtualenv}/{BIN_DIR}/pip install ."
    return f"{create} && {virtualenv}/{BIN_DIR}/pip install pulumi pulumi-aws (and what else the program imports)"


def _poetry(project_dir: Path, program_dir: Path, named: str) -> Interpreter:
    poetry = shutil.which("poetry")
    if poetry:
        try:
            answer = subprocess.run([poetry, "env", "info", "--path"], cwd=program_dir, capture_output=True,
                                    text=True, timeout=POETRY_ENV_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            answer = None
        path = Path(answer.stdout.strip()) if answer and answer.returncode == 0 and answer.stdout.strip() else None
        if path is None or not _is_virtualenv(path):
            raise ProgramError(f"{named} selects poetry, but poetry has no environment for "
                               f"{shown(program_dir, project_dir) if program_dir != project_dir else 'the project'}; "
                               f"create it: (cd {program_dir} && poetry install)")
        return Interpreter([str(path / BIN_DIR / PYTHON_NAME)], f"poetry's environment; {named}", "poetry",
                           path, project_dir)
    # Without poetry, the environment poetry would use if it exists: `.venv` next to pyproject.toml
    # (poetry takes an in-project .venv whenever there is one).
    pyproject = _search_up(program_dir, "pyproject.toml") or program_dir
    in_project = pyproject / ".venv"
    if _is_virtualenv(in_project):
        return Interpreter([str(in_project / BIN_DIR / PYTHON_NAME)],
                           f"poetry's in-project {shown(in_project, project_dir)}; {named}; poetry is not on PATH",
                           "poetry", in_project, project_dir)
    raise ProgramError(f"{named} selects poetry, but `poetry` is not on PATH and there is no "
                       f"{shown(in_project, project_dir)}; install poetry (pipx install poetry) and run "
                       f"`poetry install` in {pyproject}, or set `toolchain: pip` in Pulumi.yaml's runtime options")


def _uv(project_dir: Path, program_dir: Path, virtualenv: Optional[str], named: str,
        environ: Mapping[str, str]) -> Interpreter:
    uv_project = _search_up(program_dir, "uv.lock") or _search_up(program_dir, "pyproject.toml") or program_dir
    if virtualenv:
        path, how = project_dir / virtualenv, f"runtime.options.virtualenv {virtualenv} in Pulumi.yaml"
    elif environ.get("UV_PROJECT_ENVIRONMENT"):
        path, how = uv_project / environ["UV_PROJECT_ENVIRONMENT"], "UV_PROJECT_ENVIRONMENT"
    else:
        path, how = uv_project / ".venv", f"uv's {shown(uv_project / '.venv', project_dir)}"
    if _is_virtualenv(path):
        return Interpreter([str(path / BIN_DIR / PYTHON_NAME)], f"{how}; {named}", "uv", path, project_dir)
    tool = "" if shutil.which("uv", path=environ.get("PATH")) else \
        "`uv` is not on PATH: install it (pipx install uv, or https://docs.astral.sh/uv/) and "
    raise ProgramError(f"{named} selects uv, but {path} ({how}) is not a virtual environment; "
                       f"{tool}create it: (cd {uv_project} && uv sync)")


def missing_module_hint(module: str, interpreter: Interpreter) -> str:
    """What to tell the user when the program fails with ModuleNotFoundError for `module`."""
    top = module.partition(".")[0]
    # Pulumi's packages follow one naming rule (module pulumi_aws is package pulumi-aws).
    package = top.replace("_", "-") if top.startswith("pulumi_") else None
    project_dir = interpreter.project_dir
    has_requirements = (project_dir / "requirements.txt").exists()
    has_pyproject = (project_dir / "pyproject.toml").exists()
    python = interpreter.argv[0]
    if interpreter.toolchain in ("poetry", "uv"):
        sync, add = ("poetry install", "poetry add") if interpreter.toolchain == "poetry" else ("uv sync", "uv add")
        install = (f"`{sync}` in {project_dir} (and `{add} {package or '<the package>'}` if pyproject.toml does "
                   "not list it)") if has_pyproject else f"`{add} {package or '<the package>'}` in {project_dir}"
    elif has_requirements:
        install = f"`{python} -m pip install -r {project_dir / 'requirements.txt'}`" + \
            ("" if package is None else f" (add {package} to requirements.txt if it is not there)")
    elif has_pyproject:
        install = f"`{python} -m pip install {project_dir}`"
    else:
        install = f"`{python} -m pip install {package or '<the package that provides ' + top + '>'}`"
    where = "" if interpreter.virtualenv is not None else \
        "; or name the program's own virtualenv in Pulumi.yaml (runtime.options.virtualenv) to run it there"
    return (f"the program imports {module}, which is not installed for {python} ({interpreter.chosen_by}): "
            f"install it with {install}{where}")
