"""Stack keys no code of the program reads: `orders:billingMaxRecieveCount: 8` falls back to the
program's default without a word under the Pulumi CLI; the preview names it, where it is written,
and the key it resembles.

Which code reads a key, by its namespace:
- a provider's (`aws:`, any namespace with an installed `pulumi_<namespace>` SDK): the provider's
  own config keys, as its SDK's config module lists them (`pulumi_aws/config/vars.py`);
- `blueprint:`: the blueprint's sections, judged by stack_sections.py (and by the blueprint's own
  program, which refuses an unknown key itself); `pulumi:`: the CLI's own;
- every other (the project's own, a library's): the program's own source files (Python, TypeScript,
  JavaScript), where a key that is read is named in a string (`config.get_int("maxReceiveCount")`,
  `new pulumi.Config("orders").require("region")`). A key whose name appears in none is read by no
  code of the program; the did-you-mean is the closest name those files do write in a string.
"""

from __future__ import annotations

import difflib
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from integration_blueprint.core.conventions import SUPPRESSIONS_SECTION
from integration_blueprint.preview.project import BUILT, NOT_PROGRAM, own_files

SOURCE_SUFFIXES = (".py", ".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs")
NOT_JUDGED_HERE = {"pulumi", "blueprint"}  # the CLI's own; stack_sections.py judges the blueprint's
_STRING = re.compile(r"""["'`]([A-Za-z_][A-Za-z0-9_.\-]*)["'`]""")
_PROVIDER_KEY = re.compile(r"""__config__\.get(?:_\w+)?\(\s*['"]([A-Za-z0-9_]+)['"]""")


@dataclass(frozen=True)
class UnreadKey:
    key: str  # as written: namespace:name
    file: str  # the stack file (relative to the program)
    line: int
    reader: str  # who would read it: "the program" or the provider's SDK
    guess: Optional[str]  # the key it resembles, namespaced

    def note(self) -> str:
        hint = f" (did you mean {self.guess}?)" if self.guess else ""
        return (f"stack key {self.key} at {self.file}:{self.line} is read by no code of {self.reader}{hint}: "
                "it changes nothing, and the value it was meant to set keeps its default")


def unread_keys(config: Iterable[str], program_dir: Path, stack_file: Path) -> list[UnreadKey]:
    """Every key of the stack's config that no code reads, with where it is written."""
    keys = sorted(k for k in config if ":" in k)
    judged = [k for k in keys if k.split(":", 1)[0] not in NOT_JUDGED_HERE and k != f"blueprint:{SUPPRESSIONS_SECTION}"]
    if not judged:
        return []
    written: Optional[set[str]] = None  # read only when a key no provider reads is judged (a walk of the program)
    lines = _key_lines(stack_file)
    shown = str(stack_file.relative_to(program_dir)) if stack_file.is_relative_to(program_dir) else str(stack_file)
    found = []
    for key in judged:
        namespace, name = key.split(":", 1)
        top = name.split(".", 1)[0]  # a structured key's object, e.g. orders:limits.max
        provider = _provider_keys(namespace)
        if provider is not None:
            if top in provider:
                continue
            known, reader = provider, f"the {namespace} provider (its settings are those of pulumi_{namespace}.config)"
        else:
            written = _strings(program_dir) if written is None else written
            if top in written:
                continue
            known, reader = written, f"the program (its own files name no {top!r})"
        close = difflib.get_close_matches(top, sorted(known), n=1, cutoff=0.75)
        found.append(UnreadKey(key, shown, lines.get(key, 0), reader, f"{namespace}:{close[0]}" if close else None))
    return found


def _provider_keys(namespace: str) -> Optional[set[str]]:
    """The config keys a provider's Python SDK reads, or None when no such provider is installed."""
    if not re.fullmatch(r"[a-z][a-z0-9\-]*", namespace):
        return None
    spec = importlib.util.find_spec(f"pulumi_{namespace.replace('-', '_')}")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        variables = Path(folder) / "config" / "vars.py"
        if variables.is_file():
            return set(_PROVIDER_KEY.findall(variables.read_text(errors="replace")))
    return None


def _strings(program_dir: Path) -> set[str]:
    """Every identifier-like string the program's own source files write."""
    found: set[str] = set()
    for path in own_files(program_dir, SOURCE_SUFFIXES, NOT_PROGRAM | BUILT):
        try:
            found.update(_STRING.findall(path.read_text(errors="replace")))
        except OSError:
            continue
    return found


def _key_lines(stack_file: Path) -> dict[str, int]:
    """The line of each top-level key of the stack file's `config:` (1-based)."""
    try:
        text = stack_file.read_text(errors="replace").splitlines()
    except OSError:
        return {}
    lines: dict[str, int] = {}
    indent: Optional[int] = None
    inside = False
    for number, line in enumerate(text, start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        depth = len(line) - len(line.lstrip())
        if depth == 0:
            inside = stripped.startswith("config:")
            indent = None
            continue
        if not inside:
            continue
        indent = depth if indent is None else indent
        if depth == indent:
            match = re.match(r"""["']?([^"':]+:[^"':\s]+)["']?\s*:""", stripped)
            if match:
                lines.setdefault(match.group(1), number)
    return lines


def origin_of(program_line: str, program_file: Path, config: dict[str, str], stack_file: Path,
              program_dir: Path) -> Optional[str]:
    """Where in the stack file the value at a refused argument's line came from, in words, when the
    line reads a stack key (`config.get_int("maxReceiveCount")`) or names a variable the file
    assigns from one; None when it reads none."""
    names = {key.split(":", 1)[1]: key for key in config if ":" in key}
    key = next((names[s] for s in _STRING.findall(program_line) if s in names), None)
    if key is None:
        try:
            source = program_file.read_text(errors="replace").splitlines()
        except OSError:
            return None
        for variable in re.findall(r"\b([A-Za-z_]\w*)\b", program_line):
            assigned = re.compile(rf"^\s*(?:(?:const|let|var)\s+)?{re.escape(variable)}\s*(?::[^=]+)?=(?!=)")
            for line in source:
                if assigned.match(line):
                    key = next((names[s] for s in _STRING.findall(line) if s in names), None)
                    if key:
                        break
            if key:
                break
    if key is None:
        return None
    shown = str(stack_file.relative_to(program_dir)) if stack_file.is_relative_to(program_dir) else str(stack_file)
    key_line = _key_lines(stack_file).get(key)
    return (f"the value comes from the stack file: {shown}{f':{key_line}' if key_line else ''} ({key}: {config[key]}); "
            "change it there")
