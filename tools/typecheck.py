"""Run mypy over the installed namespace as it is laid out in this repository.

The distribution maps `integration_blueprint` onto several top-level folders (pyproject's
[tool.setuptools.package-dir]); mypy finds modules by folder, not through setuptools' editable
import hook, so this builds the namespace as a tree of symlinks under build/typecheck and checks it
by package name, then checks tests and benchmarks against it. Exit status is mypy's.
"""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TREE = REPO / "build" / "typecheck"


def link_tree() -> None:
    mapping = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    root = TREE / "integration_blueprint"
    root.mkdir(parents=True, exist_ok=True)
    for entry in (REPO / mapping["integration_blueprint"]).iterdir():
        if entry.name != "__pycache__":
            _link(root / entry.name, entry)
    for package, folder in mapping.items():
        if package != "integration_blueprint":
            _link(TREE / Path(*package.split(".")), REPO / folder)


def _link(link: Path, target: Path) -> None:
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(target)


if __name__ == "__main__":
    link_tree()
    env = {**os.environ, "MYPYPATH": str(TREE)}
    command = [sys.executable, "-m", "mypy", "--explicit-package-bases", "-p", "integration_blueprint"]
    sys.exit(subprocess.call(command, cwd=REPO, env=env))
