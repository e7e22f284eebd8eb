"""How this package was installed, for a fix command that works whatever the source: from the
index by name, or from the same wheel file, folder or git commit (PEP 610's direct_url.json: an
install from a wheel or a git pin is not found by name on the index)."""

from __future__ import annotations

import json


def install_command(extra: str) -> str:
    """The pip command that adds `extra` to this package as it was installed: from the index by
    name, or from the same wheel file, folder or git commit (PEP 610's direct_url.json), since an
    install from a wheel or a git pin is not found by name on the index."""
    from importlib import metadata

    name = "integration-blueprint"
    try:
        direct = metadata.distribution(name).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        direct = None
    source = json.loads(direct) if direct else {}
    url = source.get("url")
    if not url:
        return f"pip install '{name}[{extra}]'"
    vcs = source.get("vcs_info") or {}
    if vcs:
        url = f"{vcs.get('vcs', 'git')}+{url}@{vcs.get('commit_id') or vcs.get('requested_revision')}"
    elif (source.get("dir_info") or {}).get("editable"):
        return f"pip install -e '{url.removeprefix('file://')}[{extra}]'"
    return f"pip install '{name}[{extra}] @ {url}'"
