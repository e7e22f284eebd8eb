"""Every change this project makes to a third-party library (moto, botocore, werkzeug, pulumi,
pulumi-policy), in one registry.

Each entry names its target, the package and versions it was verified on, and its kind:

- FIX: a correctness fix (or a behaviour the sandbox depends on: time compression, nothing leaving
  the process). Outside its verified versions it refuses to run (`PatchRefused`, naming the versions
  and the fix): a fix applied to code it was not checked against could change answers silently.
- SPEED: the same answers, less work, with the figure it buys. Outside its verified versions it is
  skipped with one line on stderr: the run is slower, never different.

Patches apply in a context (`applied`) that undoes them when it ends, attribute for attribute, so a
process that ran a drill gives its later users plain libraries again. An entry is registered with
the `patch` decorator next to the code it replaces; `tests/test_patches.py` checks every entry has an
equivalence test and that `applied` leaves nothing behind.
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Callable, Iterable, Iterator

from packaging.specifiers import SpecifierSet
from packaging.version import Version

FIX, SPEED = "fix", "speed"

# The series each package's patches were verified on (pyproject.toml pins the emulator's to them).
MOTO_VERIFIED = ">=5.2.5,<5.3"
BOTOCORE_VERIFIED = ">=1.44.5,<1.45"
PULUMI_VERIFIED = ">=3.272,<3.273"
PULUMI_POLICY_VERIFIED = ">=1.21.0,<1.22"


class PatchRefused(RuntimeError):
    """A correctness fix whose target's installed version is outside the versions it was verified on."""


@dataclass(frozen=True)
class Patch:
    name: str
    target: str  # what it replaces: module.Class.attribute
    package: str  # the distribution the target belongs to
    verified: str  # the versions it was verified on (a PEP 440 specifier)
    kind: str  # FIX or SPEED
    buys: str  # what it fixes, or the figure it buys
    install: Callable[["Patcher"], None]

    def installed_version(self) -> str:
        return metadata.version(self.package)

    def verified_here(self) -> bool:
        return SpecifierSet(self.verified).contains(Version(self.installed_version()), prereleases=True)


REGISTRY: dict[str, Patch] = {}


def patch(name: str, *, target: str, package: str, verified: str, kind: str, buys: str):
    """Register the decorated function (which makes its changes through a Patcher) as `name`."""
    if kind not in (FIX, SPEED):
        raise ValueError(f"patch {name}: kind must be {FIX!r} or {SPEED!r}, not {kind!r}")

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
                f"{entry.package} {entry.installed_version()} is installed, but the sandbox's fix {entry.name} "
                f"({entry.buys}; it replaces {entry.target}) was verified on {entry.package}{entry.verified} only; "
                f"install a verified version: pip install '{entry.package}{entry.verified}'")


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
                        print(f"blueprint: speed patch {name} skipped: verified on {entry.package}{entry.verified}, "
                              f"{entry.installed_version()} is installed", file=sys.stderr)
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
