"""The lock: every install reads uv.lock, the environment the tests run in is exactly the lock, and a
lock out of date with pyproject.toml stops `make install` with the command that fixes it."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
UV = shutil.which("uv", path=os.path.dirname(sys.executable))
sys.path.insert(0, str(REPO / "tools"))
import compile_bytecode  # noqa: E402  (scripts of tools/, not a package)
import uv_bootstrap  # noqa: E402


def locked_versions() -> dict[str, str]:
    lock = tomllib.loads((REPO / "uv.lock").read_text())
    return {canonicalize_name(p["name"]): p["version"] for p in lock["package"] if "version" in p}


def test_the_lock_is_current_with_pyproject_and_bootstraps_its_own_uv():
    done = subprocess.run([UV, "lock", "--check", "--offline"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (REPO / "tools" / "uv-bootstrap.txt").read_text().endswith(uv_bootstrap.requirement(
        tomllib.loads((REPO / "uv.lock").read_text()))), "tools/uv-bootstrap.txt is stale: run `make lock`"


def test_the_environment_under_test_is_exactly_the_lock():
    locked = locked_versions()
    # (read from site-packages itself: setuptools puts its vendored packages on sys.path once imported)
    site_packages = sysconfig.get_paths()["purelib"]
    installed = {canonicalize_name(d.metadata["Name"]): d.version for d in metadata.distributions(path=[site_packages])}
    # Every locked package this platform needs is installed at its locked version, and nothing else is.
    wrong = {name: (version, locked.get(name)) for name, version in installed.items()
             if name != "integration-blueprint" and locked.get(name) != version}
    assert not wrong, f"installed (version, locked version) differ: {wrong}; run `make install`"
    for name in ("moto", "pulumi", "pulumi-aws", "pulumi-policy", "botocore", "aws-lambda-powertools"):
        assert installed[name] == locked[name]


def test_an_out_of_date_lock_stops_make_install_and_names_make_lock(tmp_path):
    for name in ("Makefile", "uv.lock"):
        shutil.copy(REPO / name, tmp_path / name)
    (tmp_path / "tools").mkdir()
    shutil.copy(REPO / "tools" / "uv-bootstrap.txt", tmp_path / "tools")
    shutil.copy(REPO / "tools" / "compile_bytecode.py", tmp_path / "tools")  # a prerequisite of the install
    pyproject = (REPO / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(pyproject.replace('dependencies = [\n', 'dependencies = [\n    "six>=1.16",\n', 1))
    venv_bin = tmp_path / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(sys.executable)
    (venv_bin / "uv").symlink_to(UV)
    done = subprocess.run(["make", "install"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode != 0
    assert "uv.lock is out of date with pyproject.toml: run `make lock`" in done.stderr
    assert "uv sync" not in done.stdout  # nothing was installed from a re-resolved lock


@pytest.mark.parametrize("imports", ["GATE_AND_PACK", "DRILL"])
def test_the_install_compiled_the_bytecode_of_what_a_preview_and_a_drill_import(imports):
    """uv writes no bytecode and PYTHONDONTWRITEBYTECODE stops anything writing it later, so `make
    install` compiles what the gate, the pack, the program and a drill import (tools/compile_bytecode.py):
    without it each preview and drill compiled them again in each of its processes."""
    listing = ("import sys, json\n" + getattr(compile_bytecode, imports) +
               "\nprint(json.dumps([getattr(m, '__file__', None) for m in list(sys.modules.values())]))")
    done = subprocess.run([sys.executable, "-c", listing], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stderr
    site_packages = sysconfig.get_paths()["purelib"]
    sources = [f for f in json.loads(done.stdout) if f and f.endswith(".py") and f.startswith(site_packages)]
    if imports == "GATE_AND_PACK":  # the pack's entry point, which runpy runs (never imported)
        sources += [importlib.util.find_spec(name).origin for name in compile_bytecode.RUN_AS_MAIN]
    missing = [f for f in sources if not Path(importlib.util.cache_from_source(f)).exists()]
    assert len(sources) > 200 and missing == [], f"{len(missing)} of {len(sources)} without bytecode: run `make install`"
