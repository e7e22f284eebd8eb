"""Where the user's own code declared each resource: the file and line every report points at (text,
markdown, JSON, SARIF) and the line a `blueprint: ignore[...]` comment must be on (suppressions.py).

The engine records, for each resource, the program's innermost frame that registered it
(`source_file`, `source_line`); a resource a component declares (in an installed package) is
located at its nearest ancestor the user's code declared. Inside a helper of the user's that
declares many resources (`def queue(name): return aws.sqs.Queue(name, ...)`) that frame is the
helper's line; the call that passes this resource's name literal (`queue("orders")`, in the main
file or the helper's module) says which one. Names are unique per type only (a queue and a function
may both be `refunds`), so a name is joined with its resource's type: a call at the engine's line
that passes the name wins, then the one call of the resource's class (`aws.sqs.Queue(...)` for
`aws:sqs/queue:Queue`) passing it, then the one call passing it at all; where that leaves more
than one, the engine's line stands.

A recording without the engine's lines (an older engine) falls back to the program's main file and
the first call passing the name, joined the same way; a stack-wide finding points at the main file.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from integration_blueprint.preview.project import load_project


@dataclass(frozen=True)
class Call:
    """A call in the program whose first argument is a string literal (a resource's name, perhaps)."""
    name: str
    callee: str  # the called name's last part: `Queue` for aws.sqs.Queue(...), `queue` for queue(...)
    line: int
    end_line: int


@dataclass(frozen=True)
class Location:
    file: Path
    line: int  # 0: the file as a whole (a stack-wide finding)

    def shown(self, base: Optional[Path]) -> str:
        """`file:line`, the file relative to `base` when it is inside it."""
        path = self.file
        if base is not None and path.is_relative_to(base):
            path = path.relative_to(base)
        return f"{path}:{self.line}" if self.line else str(path)


def calls(path: Path) -> list[Call]:
    """Every call in a Python file whose first argument is a string literal; none for a file that
    is not Python (a TypeScript program's lines are the engine's own)."""
    try:
        tree = ast.parse(path.read_text(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            func = node.func
            callee = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            found.append(Call(node.args[0].value, callee, node.lineno, node.end_lineno or node.lineno))
    return sorted(found, key=lambda call: call.line)


def type_class(type_token: str) -> str:
    """The class a type token names: `Queue` for aws:sqs/queue:Queue, `FifoBillingQueue` for
    blueprint:index:FifoBillingQueue."""
    return type_token.rsplit(":", 1)[-1]


def repository_root(path: Path) -> Optional[Path]:
    """The nearest folder at or above `path` holding `.git` (a folder, or a file in a worktree)."""
    for folder in [path, *path.parents]:
        if (folder / ".git").exists():
            return folder
    return None


def main_file(program_dir: Optional[Path]) -> Optional[Path]:
    """The program's main Python file (Pulumi.yaml's `main`, else __main__.py)."""
    if program_dir is None:
        return None
    try:
        main = program_dir / (load_project(program_dir).get("main") or "__main__.py")
    except Exception:  # noqa: BLE001 - no readable project file: no main file to point at
        return None
    return main / "__main__.py" if main.is_dir() else main


class Locator:
    """Where each resource of a recording (RecordedStack) was declared by the user's code."""

    def __init__(self, recorded):
        self.by_urn = recorded.by_urn()
        program_dir = Path(recorded.program_dir).resolve() if recorded.program_dir else None
        self.program_dir = program_dir
        self.main = main_file(program_dir)
        self._calls: dict[Path, list[Call]] = {}
        self._users_files: dict[str, bool] = {}
        self.home = (repository_root(program_dir) or program_dir) if program_dir else None

    def users(self, source_file: str) -> bool:
        """A file of the user's program (not an installed package's module)."""
        if source_file not in self._users_files:
            path = Path(source_file).resolve()
            self._users_files[source_file] = "site-packages" not in path.parts and (
                self.home is None or path.is_relative_to(self.home))
        return self._users_files[source_file]

    def calls_in(self, path: Path) -> list[Call]:
        if path not in self._calls:
            self._calls[path] = calls(path)
        return self._calls[path]

    def declared(self, urn: str):
        """The resource itself or its nearest ancestor the user's code declared (with the engine's
        line), or None."""
        while urn in self.by_urn:
            resource = self.by_urn[urn]
            if resource.source_file and resource.source_line > 0 and self.users(resource.source_file):
                return resource
            urn = resource.parent
        return None

    def __call__(self, urn: str) -> Optional[Location]:
        """Where the resource `urn` was declared; the main file (line 0) for a stack-wide finding;
        None when the program has no file to point at."""
        resource = self.declared(urn)
        if resource is not None:
            path, line = Path(resource.source_file), resource.source_line
            # The call that spans the engine's line and passes the name: its first line (where a
            # suppression comment goes), the innermost when calls nest.
            spanning = [c.line for c in self.calls_in(path) if c.name == resource.name and c.line <= line <= c.end_line]
            if spanning:
                return Location(path, max(spanning))
            for file in dict.fromkeys(p for p in (self.main, path) if p is not None):
                lines = self._by_name(self.calls_in(file), resource.name, resource.type)
                if len(lines) == 1:
                    return Location(file, lines[0])
            return Location(path, line)
        if self.main is None:
            return None
        # No engine line in the chain: the main file's call passing the name of the resource or an ancestor.
        while urn in self.by_urn:
            resource = self.by_urn[urn]
            lines = self._by_name(self.calls_in(self.main), resource.name, resource.type)
            if lines:
                return Location(self.main, lines[0])
            urn = resource.parent
        return Location(self.main, 0)

    @staticmethod
    def _by_name(found: list[Call], name: str, type_token: str) -> list[int]:
        """The lines of the calls passing `name` that declare this type, else of every call passing it."""
        named = [c for c in found if c.name == name]
        typed = [c for c in named if c.callee == type_class(type_token)]
        return sorted({c.line for c in typed or named})
