"""Write tools/uv-bootstrap.txt: the uv that uv.lock itself locks, with the hashes of its files, for
`pip install --require-hashes` (`make install` brings uv into a new virtualenv this way, before uv
can read the lock). Run by `make lock`; tests/test_lock.py checks the two agree.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "uv.lock"
BOOTSTRAP = ROOT / "tools" / "uv-bootstrap.txt"


def requirement(lock: dict) -> str:
    """`uv==<version>` with a --hash for every file of that version the lock lists."""
    (uv,) = [package for package in lock["package"] if package["name"] == "uv"]
    files = uv.get("wheels", []) + ([uv["sdist"]] if "sdist" in uv else [])
    hashes = sorted(entry["hash"] for entry in files)
    return " \\\n    ".join([f"uv=={uv['version']}"] + [f"--hash={digest}" for digest in hashes]) + "\n"


def main() -> int:
    text = "# Written by tools/uv_bootstrap.py from uv.lock (make lock): do not edit.\n" + \
        requirement(tomllib.loads(LOCK.read_text()))
    BOOTSTRAP.write_text(text)
    version = text.splitlines()[1].split()[0]
    print(f"{BOOTSTRAP.relative_to(ROOT)}: {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
