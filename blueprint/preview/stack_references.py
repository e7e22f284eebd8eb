"""Another stack's outputs, for a program's `pulumi.StackReference`, read from where a team keeps
them offline.

Under `pulumi preview` the engine reads a referenced stack's outputs from the backend. Offline, in
this order:

1. `--stack-reference NAME=FILE` on the command line;
2. a file per referenced stack in the project: `stack-references/<name>.json`, the name as the
   program writes it (`acme/network/prod` -> `stack-references/acme/network/prod.json`);
3. a local (file://) backend's state: PULUMI_BACKEND_URL, else Pulumi.yaml's `backend.url`, holds
   `.pulumi/stacks/<project>/<stack>.json` (or the older `.pulumi/stacks/<stack>.json`), plain or
   gzipped (pulumi/pulumi pkg/backend/diy: the project-scoped layout since CLI 3.61).

A file is any of: `pulumi stack output --json [--show-secrets]` (the outputs as one object), `pulumi
stack export` (a deployment) or a state checkpoint; the outputs are those of its
`pulumi:pulumi:Stack` resource. A secret the file holds encrypted (a state file's ciphertext) reads
as a placeholder marked secret, as secret config does. A reference none of these has is unread:
its outputs are unknown (the program runs on, `apply` on them is skipped, as in a first preview)
and the report says so; `--strict` fails the preview on it.
"""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Union
from urllib.parse import unquote, urlparse

from integration_blueprint.preview.project import SECRET_PLACEHOLDER, ProgramError

FOLDER = "stack-references"
ROOT_STACK_TYPE = "pulumi:pulumi:Stack"
_SIG = "4dabf18193072939515e22adb298388d"
_SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
# `pulumi stack output --json` without --show-secrets prints a secret as this string.
_HIDDEN_SECRET = "[secret]"


@dataclass(frozen=True)
class StackOutputs:
    """A referenced stack's outputs as read: plain values, the names of the secret ones, and where."""
    name: str
    outputs: dict
    secret_names: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class Unread:
    name: str
    reason: str


@dataclass
class StackReferences:
    """Where this preview reads referenced stacks from, and what it read (for the report)."""
    project: str
    program_dir: Path
    given: Mapping[str, Path] = field(default_factory=dict)
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    backend_url: str = ""
    read: list[Union[StackOutputs, Unread]] = field(default_factory=list)
    declared: dict[str, tuple[str, int]] = field(default_factory=dict)  # name -> the program's file and line

    def lookup(self, name: str, declared: tuple[str, int] = ("", 0)) -> Union[StackOutputs, Unread]:
        """The outputs of the stack `name` (as the program wrote it), or why they could not be read."""
        found = next((entry for entry in self.read if entry.name == name), None)
        if found is None:
            found = self._find(name)
            self.read.append(found)
            self.declared.setdefault(name, declared)
        return found

    def _find(self, name: str) -> Union[StackOutputs, Unread]:
        tried = []
        candidates: list[tuple[Path, str]] = []
        if name in self.given:
            candidates.append((Path(self.given[name]), f"--stack-reference {name}"))
        candidates.append((self.program_dir / FOLDER / f"{name}.json", ""))
        backend = self.environ.get("PULUMI_BACKEND_URL") or self.backend_url
        state_dir = _local_backend_dir(backend, self.program_dir)
        if state_dir is not None:
            candidates += [(path, "") for path in _state_files(state_dir, name, self.project)]
        for path, how in candidates:
            shown = os.path.relpath(path, self.program_dir) if path.is_absolute() else str(path)
            if path.is_file():
                return StackOutputs(name, *_outputs_of(path, shown), source=how or shown)
            if how:  # a file named on the command line must exist
                raise ProgramError(f"--stack-reference {name}={path}: {path} does not exist")
            tried.append(shown)
        backend_note = "" if state_dir is not None else (
            "; or point PULUMI_BACKEND_URL at a local (file://) backend that holds the stack")
        return Unread(name, f"none of {', '.join(tried)} exists: write the stack's outputs there (`pulumi stack "
                            f"output --json --stack {name} > {tried[0]}`) or pass --stack-reference {name}=<file>"
                            f"{backend_note}")

    def unread(self) -> list[Unread]:
        return [entry for entry in self.read if isinstance(entry, Unread)]

    def notes(self) -> list[str]:
        """One line per reference, for "How this preview ran"."""
        lines = []
        for entry in self.read:
            where = self.declared.get(entry.name, ("", 0))
            at = f" (at {where[0]}:{where[1]})" if where[0] else ""
            if isinstance(entry, StackOutputs):
                lines.append(f"stack reference {entry.name}{at} read from {entry.source}")
            else:
                lines.append(f"stack reference {entry.name}{at} could not be read offline: its outputs are unknown, "
                             f"so what the program makes of them was not checked; {entry.reason}")
        return lines

    def missing_output_hint(self, key: str) -> Optional[tuple[str, str, int]]:
        """For a program that failed with KeyError `key`: (what to tell, file, line) when a stack
        reference it read has no such output (require_output raises it inside the SDK)."""
        for entry in self.read:
            if isinstance(entry, StackOutputs) and key not in entry.outputs:
                file, line = self.declared.get(entry.name, ("", 0))
                known = ", ".join(sorted(entry.outputs)) or "none"
                return (f"stack reference {entry.name} (read from {entry.source}) has no output {key!r}; its "
                        f"outputs are: {known}", file, line)
        return None


def _local_backend_dir(url: str, program_dir: Path) -> Optional[Path]:
    """The folder of a `file://` backend URL (`file://~` is the home folder, a relative path is the
    project's), None for any other backend."""
    if not url.startswith("file://"):
        return None
    path = unquote(urlparse(url).path) if url.startswith("file:///") else url[len("file://"):]
    path = os.path.expanduser(path)
    return (program_dir / path).resolve() if not os.path.isabs(path) else Path(path)


def _state_files(state_dir: Path, name: str, project: str) -> list[Path]:
    """Where a DIY backend keeps stack `name`'s state: `stack`, `project/stack` or
    `organization/project/stack` (organization is always `organization` there)."""
    parts = name.split("/")
    stack, stack_project = parts[-1], parts[-2] if len(parts) >= 2 else project
    stacks = state_dir / ".pulumi" / "stacks"
    return [stacks / stack_project / f"{stack}.json", stacks / stack_project / f"{stack}.json.gz",
            stacks / f"{stack}.json", stacks / f"{stack}.json.gz"]


def _outputs_of(path: Path, shown: str) -> tuple[dict, tuple[str, ...]]:
    raw = path.read_bytes()
    try:
        document = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    except (ValueError, OSError) as exc:
        raise ProgramError(f"{shown}: not a stack's outputs, export or state (JSON): {exc}") from None
    if not isinstance(document, dict):
        raise ProgramError(f"{shown}: a stack's outputs are a JSON object")
    deployment = document.get("deployment") or (document.get("checkpoint") or {}).get("latest")
    if isinstance(deployment, dict) or "checkpoint" in document:
        resources = (deployment or {}).get("resources") or []
        root = next((r for r in resources if isinstance(r, dict) and r.get("type") == ROOT_STACK_TYPE), None)
        document = (root or {}).get("outputs") or {}
    outputs, secrets = {}, []
    for key, value in document.items():
        plain, secret = _plain(value)
        outputs[key] = plain
        if secret:
            secrets.append(key)
    return outputs, tuple(secrets)


def _plain(value: Any) -> tuple[Any, bool]:
    """(value, whether it is secret) of a state's property value."""
    if isinstance(value, dict) and value.get(_SIG) == _SECRET_SIG:
        if "plaintext" in value:
            try:
                return json.loads(value["plaintext"]), True
            except ValueError:
                return value["plaintext"], True
        return SECRET_PLACEHOLDER, True  # encrypted by the stack's secrets provider: not offline
    if value == _HIDDEN_SECRET:
        return SECRET_PLACEHOLDER, True
    if isinstance(value, dict):
        items = {key: _plain(item) for key, item in value.items()}
        return {key: item for key, (item, _) in items.items()}, any(secret for _, secret in items.values())
    if isinstance(value, list):
        items_list = [_plain(item) for item in value]
        return [item for item, _ in items_list], any(secret for _, secret in items_list)
    return value, False
