"""The package's build backend: setuptools' own, run on a copy of the sources in a temporary folder.

setuptools writes `build/` and `<name>.egg-info/` beside the sources it builds (pypa/setuptools#5134),
so `pip wheel <checkout>` or `python -m build` left them in a team's checkout, and a stale
`build/lib` puts modules deleted since into the next wheel. Every hook that builds or reads
metadata runs on a copy; an editable install (`pip install -e .`, `make install`) runs on the
checkout itself, which it points at.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from setuptools import build_meta as _setuptools

# What a build never reads: version control, virtualenvs, caches, Node.js packages, earlier builds.
_NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__",
                                     ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", "node_modules")

# Editable installs point at the checkout: setuptools' hooks as they are.
build_editable = _setuptools.build_editable
get_requires_for_build_editable = _setuptools.get_requires_for_build_editable
prepare_metadata_for_build_editable = _setuptools.prepare_metadata_for_build_editable


@contextmanager
def _in_a_copy() -> Iterator[None]:
    """The working directory is a copy of the sources for the duration (hook paths are absolute)."""
    sources, before = Path.cwd(), os.getcwd()
    with tempfile.TemporaryDirectory(prefix="integration-blueprint-build-") as scratch:
        copy = Path(scratch) / "sources"
        shutil.copytree(sources, copy, ignore=_NOT_SOURCE, symlinks=True)
        os.chdir(copy)
        try:
            yield
        finally:
            os.chdir(before)


def get_requires_for_build_wheel(config_settings=None):
    with _in_a_copy():
        return _setuptools.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_sdist(config_settings=None):
    with _in_a_copy():
        return _setuptools.get_requires_for_build_sdist(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    with _in_a_copy():
        return _setuptools.prepare_metadata_for_build_wheel(os.path.abspath(metadata_directory), config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    wheel_directory = os.path.abspath(wheel_directory)
    metadata_directory = os.path.abspath(metadata_directory) if metadata_directory else None
    with _in_a_copy():
        return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    sdist_directory = os.path.abspath(sdist_directory)
    with _in_a_copy():
        return _setuptools.build_sdist(sdist_directory, config_settings)
