"""Every refusing component of a Python program, not only the first.

A Python component checks its arguments when it is constructed and raises: the program stops at the
first call that refuses, as it does under `pulumi preview` (a TypeScript program's components are
constructed remotely, so each refusal arrives on its own). After such a stop, the program's other
calls of the blueprint's components are checked here from their source, as the component would
check them: every literal argument (a value computed at run time, an Output or a variable, is
left to the component), each refusal at the line of its key. A call whose arguments are not a
dict literal (a variable, `**spread`) is not checked.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from integration_blueprint.preview.argument_lines import refusals_at_keys
from integration_blueprint.preview.project import own_python_files


class _RunTime:
    """An argument known only when the program runs: the component checks it then (is_known: False)."""

    def apply(self, *_args: Any) -> None:  # an Output's shape, which settings.is_known looks for
        return None


def other_refusals(program_dir: Path, refused_at: tuple[str, int]) -> list[tuple[str, str, int]]:
    """(refusal, file, line) for each refusal of a component call of the program other than the one
    spanning `refused_at` (file, line: the call that stopped the program), in file and line order."""
    from integration_blueprint.components.reference import COMPONENTS
    from integration_blueprint.components.validation import ComponentArgumentError

    tables = {component.__name__: table for component, table in COMPONENTS.items()}
    found = []
    for path in own_python_files(program_dir):
        try:
            tree = ast.parse(path.read_text(errors="replace"), filename=str(path))
        except (SyntaxError, ValueError):
            continue
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call) or len(call.args) < 2 or not isinstance(call.args[1], ast.Dict):
                continue
            table, written = tables.get(_called(call)), call.args[1]
            stopped = str(path) == refused_at[0] and call.lineno <= refused_at[1] <= (call.end_lineno or call.lineno)
            if table is None or stopped or any(key is None for key in written.keys):  # None: a **spread
                continue
            args = {_literal(key): _literal(value) for key, value in zip(written.keys, written.values) if key is not None}
            if not all(isinstance(key, str) for key in args):
                continue
            try:
                table.check(args)
            except ComponentArgumentError as refused:
                found += [(text, str(path), line) for text, line in refusals_at_keys(str(refused), str(path), call.lineno)]
    return found


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return _RunTime()
