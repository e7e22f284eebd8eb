"""The interpreter a Pulumi Python program runs under, chosen as the Python language host chooses it:
Pulumi.yaml's virtualenv and toolchain, PULUMI_PYTHON_CMD, lock files; errors that name the fix; the
hint for a module the program cannot import. Virtualenvs are real (`python -m venv --without-pip`)."""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from integration_blueprint.preview.interpreter import BIN_DIR, missing_module_hint, resolve_interpreter
from integration_blueprint.preview.project import ProgramError

# A PATH with this interpreter and no poetry or uv on it (the project's own virtualenv has uv, which
# installs it from the lock, so the PATH is a folder of its own holding only a link to python).
_PYTHON_ONLY = Path(tempfile.mkdtemp(prefix="python-only-"))
atexit.register(shutil.rmtree, _PYTHON_ONLY, ignore_errors=True)  # one per test process, gone with it
for _name in ("python", "python3"):
    (_PYTHON_ONLY / _name).symlink_to(sys.executable)
PATH_WITHOUT_TOOLS = {"PATH": str(_PYTHON_ONLY)}


def write_project(root: Path, runtime_options: str = "", **files: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    options = f"  options:\n{textwrap.indent(textwrap.dedent(runtime_options), '    ')}" if runtime_options else ""
    (root / "Pulumi.yaml").write_text(f"name: shop\nruntime:\n  name: python\n{options}")
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def make_venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return path


def run(interpreter, code: str) -> str:
    """What `code` prints when run as the program would be: the chosen argv, its environment."""
    return subprocess.run([*interpreter.argv, "-c", code], env=interpreter.environ({"PATH": os.environ["PATH"]}),
                          capture_output=True, text=True, check=True).stdout.strip()


def test_the_virtualenv_pulumi_yaml_names_runs_the_program(tmp_path):
    root = write_project(tmp_path, "virtualenv: venv\n")
    venv = make_venv(root / "venv")
    interpreter = resolve_interpreter(root, {})
    assert interpreter.virtualenv == venv
    assert (interpreter.toolchain, interpreter.chosen_by) == ("pip", "runtime.options.virtualenv venv in Pulumi.yaml")
    prefix, virtual_env, first_on_path = run(
        interpreter, "import os, sys; print(sys.prefix); print(os.environ['VIRTUAL_ENV']); "
                     "print(os.environ['PATH'].split(os.pathsep)[0])").splitlines()
    assert Path(prefix).resolve() == venv.resolve()
    assert (virtual_env, first_on_path) == (str(venv), str(venv / BIN_DIR))


@pytest.mark.parametrize("files, install", [
    ({"requirements.txt": "pulumi\n"}, "venv/bin/pip install -r requirements.txt"),
    ({"pyproject.toml": "[project]\nname = 'shop'\n"}, "venv/bin/pip install ."),
])
def test_a_named_virtualenv_that_does_not_exist_says_how_to_create_it(tmp_path, files, install):
    root = write_project(tmp_path, "virtualenv: venv\n", **files)
    with pytest.raises(ProgramError) as error:
        resolve_interpreter(root, {})
    assert str(error.value) == (f"Pulumi.yaml's runtime.options.virtualenv is 'venv', but {root / 'venv'} does not "
                                f"exist; create it: python3 -m venv venv && {install}")


def test_a_named_virtualenv_folder_without_python_is_not_a_virtualenv(tmp_path):
    root = write_project(tmp_path, "virtualenv: venv\n")
    (root / "venv").mkdir()
    with pytest.raises(ProgramError, match=r"is not a virtual environment \(it has no bin/python\); create it"):
        resolve_interpreter(root, {})


def test_pulumi_python_cmd_names_the_interpreter_when_no_virtualenv_is_named(tmp_path):
    root = write_project(tmp_path)
    interpreter = resolve_interpreter(root, {"PULUMI_PYTHON_CMD": sys.executable})
    assert (interpreter.argv, interpreter.chosen_by) == ([sys.executable], "PULUMI_PYTHON_CMD")
    with pytest.raises(ProgramError, match=r"PULUMI_PYTHON_CMD is 'python2.4', which is not on PATH; set it to"):
        resolve_interpreter(root, {"PULUMI_PYTHON_CMD": "python2.4", **PATH_WITHOUT_TOOLS})


def test_with_nothing_named_the_program_runs_in_our_interpreter_or_the_activated_virtualenv(tmp_path):
    root = write_project(tmp_path)
    ours = resolve_interpreter(root, {})
    assert (ours.argv, ours.virtualenv) == ([sys.executable], None)
    assert ours.chosen_by == "blueprint's own interpreter (Pulumi.yaml names no virtualenv)"
    activated = make_venv(tmp_path / "team-venv")
    theirs = resolve_interpreter(root, {"VIRTUAL_ENV": str(activated)})
    assert (theirs.virtualenv, theirs.chosen_by) == (activated, "the activated virtualenv (VIRTUAL_ENV)")


def test_a_uv_project_runs_in_its_dot_venv(tmp_path):
    root = write_project(tmp_path, "toolchain: uv\n", **{"pyproject.toml": "[project]\nname = 'shop'\n"})
    venv = make_venv(root / ".venv")
    interpreter = resolve_interpreter(root, PATH_WITHOUT_TOOLS)
    assert (interpreter.toolchain, interpreter.virtualenv) == ("uv", venv)
    assert interpreter.chosen_by == "uv's .venv; runtime.options.toolchain uv in Pulumi.yaml"


def test_a_uv_lock_selects_uv_and_the_named_virtualenv_wins(tmp_path):
    root = write_project(tmp_path, "virtualenv: envs/main\n", **{"uv.lock": "version = 1\n"})
    venv = make_venv(root / "envs" / "main")
    interpreter = resolve_interpreter(root, PATH_WITHOUT_TOOLS)
    assert (interpreter.toolchain, interpreter.virtualenv) == ("uv", venv)
    assert interpreter.chosen_by == ("runtime.options.virtualenv envs/main in Pulumi.yaml; "
                                     "uv.lock (Pulumi.yaml names no toolchain)")


def test_uv_absent_and_no_environment_says_to_install_uv_and_sync(tmp_path):
    root = write_project(tmp_path, "toolchain: uv\n")
    with pytest.raises(ProgramError) as error:
        resolve_interpreter(root, PATH_WITHOUT_TOOLS)
    assert str(error.value) == (f"runtime.options.toolchain uv in Pulumi.yaml selects uv, but {root / '.venv'} "
                                "(uv's .venv) is not a virtual environment; `uv` is not on PATH: install it (pipx "
                                f"install uv, or https://docs.astral.sh/uv/) and create it: (cd {root} && uv sync)")


def test_poetry_absent_and_no_environment_says_to_install_poetry(tmp_path):
    root = write_project(tmp_path, **{"poetry.lock": "", "pyproject.toml": "[tool.poetry]\nname = 'shop'\n"})
    with pytest.raises(ProgramError) as error:
        resolve_interpreter(root, PATH_WITHOUT_TOOLS)
    assert str(error.value) == ("poetry.lock (Pulumi.yaml names no toolchain) selects poetry, but `poetry` is not on "
                                "PATH and there is no .venv; install poetry (pipx install poetry) and run "
                                f"`poetry install` in {root}, or set `toolchain: pip` in Pulumi.yaml's runtime "
                                "options")


def test_a_poetry_lock_beside_a_named_virtualenv_runs_the_named_virtualenv_with_pip(tmp_path):
    root = write_project(tmp_path, "virtualenv: venv\n", **{"poetry.lock": "", "pyproject.toml": "[tool.poetry]\n"})
    venv = make_venv(root / "venv")
    interpreter = resolve_interpreter(root, PATH_WITHOUT_TOOLS)
    assert (interpreter.toolchain, interpreter.virtualenv) == ("pip", venv)
    assert interpreter.chosen_by.startswith("runtime.options.virtualenv venv in Pulumi.yaml; pip: Pulumi's default "
                                            "toolchain; poetry.lock does not choose poetry")


def test_a_poetry_lock_beside_a_named_virtualenv_that_does_not_exist_selects_poetry(tmp_path):
    root = write_project(tmp_path, "virtualenv: venv\n", **{"poetry.lock": "", "pyproject.toml": "[tool.poetry]\n"})
    with pytest.raises(ProgramError, match="poetry.lock .Pulumi.yaml names no toolchain. selects poetry"):
        resolve_interpreter(root, PATH_WITHOUT_TOOLS)


def test_poetry_absent_uses_the_in_project_venv_poetry_would_use(tmp_path):
    root = write_project(tmp_path, "toolchain: poetry\n", **{"pyproject.toml": "[tool.poetry]\nname = 'shop'\n"})
    venv = make_venv(root / ".venv")
    interpreter = resolve_interpreter(root, PATH_WITHOUT_TOOLS)
    assert (interpreter.toolchain, interpreter.virtualenv) == ("poetry", venv)


@pytest.mark.parametrize("options, message", [
    ("toolchain: conda\n", "Pulumi.yaml: unsupported runtime.options.toolchain 'conda'; the toolchains are pip, "
                           "poetry, uv"),
    ("virtualenv: [venv]\n", "Pulumi.yaml: runtime.options.virtualenv must be a string"),
])
def test_runtime_options_the_language_host_refuses_are_refused(tmp_path, options, message):
    with pytest.raises(ProgramError, match=message.replace("(", r"\(").replace("[", r"\[")):
        resolve_interpreter(write_project(tmp_path, options), {})


def test_the_missing_module_hint_names_the_module_the_interpreter_and_the_install_command(tmp_path):
    root = write_project(tmp_path, "virtualenv: venv\n", **{"requirements.txt": "pulumi\npulumi-aws\n"})
    make_venv(root / "venv")
    interpreter = resolve_interpreter(root, {})
    python = interpreter.argv[0]
    assert missing_module_hint("pulumi_awsx.ec2", interpreter) == (
        f"the program imports pulumi_awsx.ec2, which is not installed for {python} (runtime.options.virtualenv venv "
        f"in Pulumi.yaml): install it with `{python} -m pip install -r {root / 'requirements.txt'}` (add pulumi-awsx "
        "to requirements.txt if it is not there)")


def test_the_missing_module_hint_without_a_virtualenv_offers_to_name_one(tmp_path):
    hint = missing_module_hint("requests", resolve_interpreter(write_project(tmp_path), {}))
    assert hint == (f"the program imports requests, which is not installed for {sys.executable} (blueprint's own "
                    f"interpreter (Pulumi.yaml names no virtualenv)): install it with `{sys.executable} -m pip "
                    "install <the package that provides requests>`; or name the program's own virtualenv in "
                    "Pulumi.yaml (runtime.options.virtualenv) to run it there")


def test_the_missing_module_hint_for_uv_and_poetry_uses_their_commands(tmp_path):
    root = write_project(tmp_path, "toolchain: uv\n", **{"pyproject.toml": "[project]\nname = 'shop'\n"})
    make_venv(root / ".venv")
    assert f"install it with `uv sync` in {root} (and `uv add pulumi-random`" in missing_module_hint(
        "pulumi_random", resolve_interpreter(root, PATH_WITHOUT_TOOLS))
