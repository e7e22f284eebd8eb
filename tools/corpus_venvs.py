"""Build the virtualenvs of the corpus programs pinned to other SDK versions (`make corpus-venvs`).

A program under tests/programs/ whose expected.json says `"pinned": true` runs in a real virtualenv
with exactly what its requirements.txt pins (an old `pulumi`, pulumi-aws 5 or 6), installed from the
package index by pip, never by a test. Each is built once per distinct requirements.txt and Python
version, in the user's cache (XDG_CACHE_HOME or ~/.cache, blueprint/corpus-venvs/<digest>), shared by
every checkout; pip's own cache keeps the downloads (about 25 MB for the pins the corpus uses).

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
from pathlib import Path

PROGRAMS_DIR = Path(__file__).resolve().parents[1] / "tests" / "programs"
BUILT_MARK = ".built"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "blueprint" / "corpus-venvs"


def pinned_programs() -> list[Path]:
    return sorted(p.parent for p in PROGRAMS_DIR.glob("*/expected.json")
                  if json.loads(p.read_text()).get("pinned"))


def venv_for(program: Path, python: str = sys.executable) -> Path:
    """Where the virtualenv for `program`'s requirements.txt lives (built or not)."""
    requirements = (program / "requirements.txt").read_text()
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    digest = hashlib.sha256(f"{version}\n{requirements}".encode()).hexdigest()[:16]
    return cache_dir() / digest


def is_built(venv: Path) -> bool:
    return (venv / BUILT_MARK).exists()


def build(program: Path) -> Path:
    venv = venv_for(program)
    if is_built(venv):
        return venv
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "-r", str(program / "requirements.txt")], check=True)
    (venv / BUILT_MARK).write_text((program / "requirements.txt").read_text())
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
