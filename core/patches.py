"""Every change this project makes to a third-party library (moto, botocore, werkzeug, pulumi,
pulumi-policy), in one registry.

Each entry names its target, the package and the exact versions it was verified on (a list of
releases, never a range: a release nobody ran the patch's tests on is not verified, however close its
number), and its kind:

- FIX: a correctness fix (or a behaviour the sandbox depends on: time compression, nothing leaving
  the process). On any other installed version it refuses to run (`PatchRefused`, naming the fix,
  the installed version and the verified ones): a fix applied to code it was not checked against
  could change answers silently.
- SPEED: the same answers, less work, with the figure it buys. On any other installed version it is
  skipped with one line on stderr naming the patch and both versions: the run is slower, never
  different.

Adding a release to a package's list below means running the tests of every patch on it (each fix's
test is named in tests/test_patches.py's FIX_TESTS, each speed patch's equivalence test beside it).

Patches apply in a context (`applied`) that undoes them when it ends, attribute for attribute, so a
process that ran a drill gives its later users plain libraries again. An entry is registered with
the `patch` decorator next to the code it replaces; `tests/test_patches.py` checks every entry has an
equivalence test and that `applied` leaves nothing behind.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from packaging.version import InvalidVersion, Version

FIX, SPEED = "fix", "speed"

# The releases each package's patches were verified on (uv.lock installs one of each; pyproject.toml's
# ranges, what a team's install may choose from, hold them all).
# moto 5.2.6: tests/test_drill_outcomes.py (the outcome judge end to end), which failed twice on it under heavy
# load the round before, passed on it on 2026-12-07 (5 passed, load about 10). A virtualenv to try a release
# in goes outside /tmp: a function's sandbox has a /tmp of its own, which hides the runtime's boto3.
MOTO_VERIFIED = ("5.2.5", "5.2.6")
BOTOCORE_VERIFIED = ("1.44.18",)
PULUMI_VERIFIED = ("3.272.0",)
PULUMI_AWS_VERIFIED = ("7.51.1",)
PULUMI_POLICY_VERIFIED = ("1.21.0",)


class PatchRefused(RuntimeError):
    """A correctness fix whose target's installed version is outside the versions it was verified on."""


@dataclass(frozen=True)
class Patch:
    name: str
    target: str  # what it replaces: module.Class.attribute
    package: str  # the distribution the target belongs to
    verified: tuple[str, ...]  # the exact releases it was verified on
    kind: str  # FIX or SPEED
    buys: str  # what it fixes, or the figure it buys
    install: Callable[["Patcher"], None]

    def installed_version(self) -> str:
        return installed_version(self.package)

    def verified_here(self) -> bool:
        installed = Version(self.installed_version())
        return any(installed == Version(version) for version in self.verified)

    def versions(self) -> str:
        """The verified releases as a reader (and pip) writes them: 'moto 5.2.5 or 5.2.6'."""
        return f"{self.package} {' or '.join(self.verified)}"


def installed_version(distribution: str) -> str:
    """`importlib.metadata.version(distribution)`, found as it finds it, without importing it: the
    import (email, zipfile, csv) was 20-40 ms of CPU in each process a preview starts, to read one
    line. The first folder of sys.path that holds a `<name>-*.dist-info` or `.egg-info` of the
    distribution's normalized name (the first in the folder's listing) decides; a dist-info's
    METADATA says its Version. Anything else (an .egg-info, a zip on the path, a dist-info without
    the line, a distribution found nowhere) is importlib.metadata's own to answer."""
    found = _first_metadata_folder(_normalized(distribution))
    version = _metadata_version(os.path.join(found, "METADATA")) if found and found.endswith(".dist-info") else None
    if version is not None:
        return version
    from importlib import metadata

    return metadata.version(distribution)


def _first_metadata_folder(wanted: str) -> str | None:
    """The dist-info or egg-info importlib.metadata's path finder takes for a normalized name; None
    where it would read a zip or find none."""
    for entry in sys.path:
        folder = entry or "."
        if not os.path.isdir(folder):
            if os.path.exists(folder):  # a zip: only importlib.metadata reads inside one
                return None
            continue
        for child in os.listdir(folder):
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")) and _normalized(low.rpartition(".")[0].partition("-")[0]) == wanted:
                return os.path.join(folder, child)
    return None


def _normalized(name: str) -> str:
    """A distribution's name as importlib.metadata compares them (its Prepared.normalize)."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _metadata_version(path: str) -> str | None:
    """The Version header of a METADATA file (its headers end at the first empty line)."""
    try:
        with open(path, encoding="utf-8") as file:
            for line in file:
                if not line.strip():
                    return None
                name, colon, value = line.partition(":")
                if colon and name.strip().lower() == "version":
                    return value.strip()
    except OSError:
        return None
    return None


REGISTRY: dict[str, Patch] = {}


def patch(name: str, *, target: str, package: str, verified: tuple[str, ...], kind: str, buys: str):
    """Register the decorated function (which makes its changes through a Patcher) as `name`."""
    if kind not in (FIX, SPEED):
        raise ValueError(f"patch {name}: kind must be {FIX!r} or {SPEED!r}, not {kind!r}")
    if isinstance(verified, str) or not verified:
        raise ValueError(f"patch {name}: verified must list the exact releases it was verified on, not {verified!r}")
    for version in verified:
        try:
            Version(version)
        except InvalidVersion:
            raise ValueError(f"patch {name}: verified names {version!r}, not one release "
                             f"(a range is never verified: list each release the patch's tests ran on)") from None

    def register(install: Callable[[Patcher], None]) -> Callable[[Patcher], None]:
        if name in REGISTRY and REGISTRY[name].install.__qualname__ != install.__qualname__:
            raise ValueError(f"two patches are named {name}")
        REGISTRY[name] = Patch(name, target, package, verified, kind, buys, install)
        return install

    return register


_MISSING = object()


class Patcher:
    """Makes one patch's changes and remembers what each replaced, to put it back."""

    def __init__(self) -> None:
        self._replaced: list[tuple[Any, str, Any]] = []

    def replace(self, owner: Any, name: str, value: Any) -> Any:
        """Set `owner.name` to `value` (a class's own attribute: an inherited one is put back by
        deleting the override). Returns what `owner.name` was before, as it reads."""
        own = vars(owner)
        before = own.get(name, _MISSING)
        current = getattr(owner, name, None)
        setattr(owner, name, value)
        self._replaced.append((owner, name, before))
        return current

    def undo(self) -> None:
        for owner, name, before in reversed(self._replaced):
            if before is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, before)
        self._replaced.clear()


_lock = threading.RLock()
_active: dict[str, Patcher] = {}  # patches applied now, by name
_announced: set[str] = set()  # speed patches already reported as skipped (once per process)


def active() -> set[str]:
    """The names of the patches applied now."""
    return set(_active)


def check(names: Iterable[str]) -> None:
    """Raise PatchRefused if a correctness fix among `names` is outside its verified versions."""
    for name in names:
        entry = REGISTRY[name]
        if entry.kind == FIX and not entry.verified_here():
            raise PatchRefused(
                f"{entry.package} {entry.installed_version()} is installed, but the fix {entry.name} "
                f"({entry.buys}; it replaces {entry.target}) was verified on {entry.versions()} only; "
                f"install a verified version: pip install '{entry.package}=={entry.verified[-1]}'")


# Speed patches to leave out, comma-separated, in every process that inherits it: how
# benchmarks/drill_speed.py --without measures what one buys, and the tests compare answers.
WITHOUT_VARIABLE = "BLUEPRINT_PATCHES_WITHOUT"


@contextmanager
def applied(names: Iterable[str]) -> Iterator[None]:
    """The named patches applied for the block, then undone (a patch already applied by an
    enclosing block is left to it), except the speed patches WITHOUT_VARIABLE names."""
    names = list(names)
    left_out = {name for name in os.environ.get(WITHOUT_VARIABLE, "").split(",") if name}
    for name in left_out & set(names):
        if REGISTRY[name].kind != SPEED:
            raise ValueError(f"{WITHOUT_VARIABLE}: {name} is not a speed patch: only those can be left out")
    check(names)
    mine: list[str] = []
    with _lock:
        try:
            for name in names:
                entry = REGISTRY[name]
                if name in _active or name in left_out:
                    continue
                if not entry.verified_here():  # a speed patch: the run is slower, never different
                    if name not in _announced:
                        _announced.add(name)
                        print(f"blueprint: speed patch {name} skipped: verified on {entry.versions()}, "
                              f"{entry.package} {entry.installed_version()} is installed", file=sys.stderr)
                    continue
                patcher = Patcher()
                try:
                    entry.install(patcher)
                except BaseException:
                    patcher.undo()
                    raise
                _active[name] = patcher
                mine.append(name)
        except BaseException:
            _undo(mine)
            raise
    try:
        yield
    finally:
        with _lock:
            _undo(mine)


def _undo(names: list[str]) -> None:
    for name in reversed(names):
        _active.pop(name).undo()
