"""Where a refused component argument is written: the line of its key in the program's own source,
not the line of the call that declared the component (a call over twenty lines is fixed at the key).

A component refuses every argument of a call at once, one line each, naming the argument as the
calling language spells it: `FifoBillingQueue: batch_size=11 is not allowed: ...` (Python),
`FifoBillingQueue: maxReceiveCount=2 is not allowed: ...` (through the plugin), `... is required`,
`unknown argument 'x'`, `unknown input 'x'`. `refusals_at_keys` places each such line at its key:
in Python the key of the dict literal in the call (ast), in TypeScript or JavaScript the `key:` inside
the call's brackets. Where no key is written there (the args are a variable, a required argument
left out) the call's line stands.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Optional

_REFUSED_KEY = re.compile(r"\b[A-Z]\w*: (?:(?P<key>[A-Za-z_]\w*)(?:=| is required| must )|"
                          r"unknown (?:argument|input) '(?P<unknown>[A-Za-z_]\w*)')")
_OPENING, _CLOSING = "({[", ")}]"


def refused_key(refusal: str) -> Optional[str]:
    """The argument a refusal line names, if it names one."""
    found = _REFUSED_KEY.search(refusal)
    return (found["key"] or found["unknown"]) if found else None


def refusals_at_keys(message: str, file: str, line: int) -> list[tuple[str, int]]:
    """Each line of a component's refusal `message` (raised by the call at `file`:`line`) with the
    line of the key it names, in the order they are written."""
    try:
        source = Path(file).read_text()
    except (OSError, UnicodeDecodeError):
        source = ""
    found = []
    for refusal in (part for part in message.split("\n") if part.strip()):
        key = refused_key(refusal)
        at = (key_line(source, line, key, python=file.endswith(".py")) if key and source else None) or line
        found.append((refusal, at))
    return sorted(found, key=lambda pair: pair[1])


def key_line(source: str, line: int, key: str, *, python: bool) -> Optional[int]:
    """The line of `key` written as an argument key in the call at `line` of `source`."""
    return _python_key_line(source, line, key) if python else _bracketed_key_line(source, line, key)


def _python_key_line(source: str, line: int, key: str) -> Optional[int]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and node.lineno <= line <= (node.end_lineno or node.lineno)]
    for call in sorted(calls, key=lambda node: (node.end_lineno or node.lineno) - node.lineno):
        for part in [*call.args, *(keyword.value for keyword in call.keywords)]:
            for node in ast.walk(part):
                if isinstance(node, ast.Dict):
                    for written in node.keys:
                        if isinstance(written, ast.Constant) and written.value == key:
                            return written.lineno
    return None


def _bracketed_key_line(source: str, line: int, key: str) -> Optional[int]:
    """TypeScript or JavaScript: `key:` (quoted or not) in the object the call at `line` is given,
    `new Component("name", { key: ... })`: inside its parentheses and one level of braces (not in
    an object nested in it)."""
    lines = source.splitlines(keepends=True)
    if not 1 <= line <= len(lines):
        return None
    text = "".join(lines[line - 1:])
    depth, depths = 0, []
    for char in text:
        if char in _CLOSING:
            depth -= 1
        depths.append(depth)
        if char in _OPENING:
            depth += 1
        if depth == 0 and char in _CLOSING:
            break
    for written in re.finditer(rf"(?<![\w$.])([\"']?){re.escape(key)}\1\s*:", text[:len(depths)]):
        if depths[written.start()] == 2:
            return line + text[:written.start()].count("\n")
    return None
