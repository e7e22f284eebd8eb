"""Helpers for the tests of code under test in its sandbox (integration_blueprint.containment)."""

from pathlib import Path


def processes_with_argument(marker: str) -> list[int]:
    """The host's processes whose command line holds `marker` (a daemon meant to outlive its sandbox)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found
