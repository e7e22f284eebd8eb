"""Build the virtualenvs of the corpus programs pinned to other SDK versions (`make corpus-venvs`).

A program under tests/programs/ whose expected.json says `"pinned": true` runs in a real virtualenv
with exactly what its requirements.txt pins (an old `pulumi`, pulumi-aws 5 or 6), installed from the
package index by pip, never by a test. Each is built once per distinct requirements.txt, Python
version and uv.lock, in the user's cache (XDG_CACHE_HOME or ~/.cache, blueprint/corpus-venvs/<digest>),
shared by every checkout; pip's own cache keeps the downloads (about 25 MB for the pins the corpus uses).

Everything else a program's pins pull in is installed from the lock where it can be: the program's
requirements.txt decides what it pins, and each other package is constrained to uv.lock's version
(`uv export --frozen --no-hashes --all-extras --no-emit-project`) when that version meets every
requirement on it in the program's resolution. An old SDK's own requirements can conflict with the
lock (pulumi 3.80 and 3.86 pin grpcio 1.56.2 and want protobuf 4 and semver 2; the lock has grpcio
1.85, protobuf 5, semver 3): those packages alone go unconstrained, at what the old SDK requires (the
build prints them), and the rest (PyYAML, six, dill) is the lock's. pip refuses a constraint that
still conflicts: never a silent install of something else.

    python tools/corpus_venvs.py            build what is missing, print each virtualenv
    python tools/corpus_venvs.py --check    exit 1 naming the ones not built
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PROGRAMS_DIR = Path(__file__).resolve().parents[1] / "tests" / "programs"
BUILT_MARK = ".built"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "blueprint" / "corpus-venvs"


def pinned_programs() -> list[Path]:
    return sorted(p.parent for p in PROGRAMS_DIR.glob("*/expected.json")
                  if json.loads(p.read_text()).get("pinned"))


REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "uv.lock"


def venv_for(program: Path, python: str = sys.executable) -> Path:
    """Where the virtualenv for `program`'s requirements.txt lives (built or not): one per
    requirements.txt, Python version and lock (what it is constrained to)."""
    requirements = (program / "requirements.txt").read_text()
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    lock = hashlib.sha256(LOCK.read_bytes()).hexdigest() if LOCK.exists() else ""
    digest = hashlib.sha256(f"{version}\n{requirements}\n{lock}".encode()).hexdigest()[:16]
    return cache_dir() / digest


def is_built(venv: Path) -> bool:
    return (venv / BUILT_MARK).exists()


def locked_versions() -> dict[str, str]:
    """{normalized name: version} of every package uv.lock pins (every extra)."""
    uv = Path(sys.executable).with_name("uv")
    done = subprocess.run([str(uv), "export", "--frozen", "--no-hashes", "--all-extras", "--no-emit-project",
                           "--project", str(REPO)], capture_output=True, text=True, check=True)
    pins = {}
    for line in done.stdout.splitlines():
        requirement = line.split(";")[0].strip()
        if "==" in requirement and not requirement.startswith(("#", "-")):
            name, _, version = requirement.partition("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def lock_constraints(pip: list[str], requirements: Path, locked: dict[str, str]) -> tuple[list[str], list[str]]:
    """(name==version from the lock for each package of the program's resolution that the lock pins
    and whose locked version meets every requirement on it there; the names left unconstrained
    because it does not). The program's own pins (requirements.txt) decide: the lock never
    overrides a requirement, it chooses among what the requirements allow."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        subprocess.run([*pip, "install", "--quiet", "--dry-run", "--ignore-installed", "--report", str(report),
                        "-r", str(requirements)], check=True)
        resolved = json.loads(report.read_text())["install"]
    wanted: dict[str, list[Requirement]] = {}
    for line in requirements.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            requirement = Requirement(line)
            wanted.setdefault(canonicalize_name(requirement.name), []).append(requirement)
    for dist in resolved:
        for text in dist["metadata"].get("requires_dist", []):
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                wanted.setdefault(canonicalize_name(requirement.name), []).append(requirement)
    constrained, conflicting = [], []
    for dist in resolved:
        name = canonicalize_name(dist["metadata"]["name"])
        if name not in locked:
            continue
        if all(r.specifier.contains(locked[name], prereleases=True) for r in wanted.get(name, [])):
            constrained.append(f"{name}=={locked[name]}")
        else:
            conflicting.append(name)
    return sorted(constrained), sorted(conflicting)


def build(program: Path) -> Path:
    venv = venv_for(program)
    if is_built(venv):
        return venv
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
    requirements = program / "requirements.txt"
    constrained, conflicting = lock_constraints(pip, requirements, locked_versions())
    if conflicting:
        print(f"{program.name}: not constrained to uv.lock (its pins require other versions): "
              f"{', '.join(conflicting)}")
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as constraints:
        constraints.write("".join(f"{line}\n" for line in constrained))
        constraints.flush()
        subprocess.run([*pip, "install", "--quiet", "-r", str(requirements), "-c", constraints.name], check=True)
    (venv / BUILT_MARK).write_text(requirements.read_text())
    return venv


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say which are not built")
    args = parser.parse_args()
    missing = []
    for program in pinned_programs():
        if args.check:
            if not is_built(venv_for(program)):
                missing.append(program.name)
            continue
        print(f"{program.name}: {build(program)}")
    if missing:
        print(f"not built (run `make corpus-venvs`): {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
