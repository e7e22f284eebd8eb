"""Fix texts in the program's language: the pack writes its code snippets in Python (the pack does
not know the program's language: the Analyzer interface does not carry it), and a TypeScript or
JavaScript program's report shows them as that program would write them.

    aws.lambda_.Permission(principal='sns.amazonaws.com', source_arn=<topic ARN>)
 -> new aws.lambda.Permission("name", { principal: "sns.amazonaws.com", sourceArn: <topic ARN> })
    f"/aws/lambda/{function.name}"          -> `/aws/lambda/${function.name}`
    ttl={'attribute_name': 'expiration', 'enabled': True}
 -> ttl: { attributeName: "expiration", enabled: true }
    json.dumps({'deadLetterTargetArn': <queue ARN>}) -> JSON.stringify({ deadLetterTargetArn: <queue ARN> })

Each snippet is read with Python's own parser (a `<placeholder>` stands for a value to fill in) and
written out again; a snippet that does not parse is left as written, with `aws.<module>_.` (the
Python SDK's spelling of a module named after a keyword) as `aws.<module>.`.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from functools import lru_cache
from typing import Callable

PYTHON, NODEJS = "python", "nodejs"
_PLACEHOLDER = re.compile(r"<[^<>\n]{1,60}>")
_CALL = re.compile(r"\b(?:aws\.[a-z0-9]+_?\.[A-Z]\w*|json\.dumps)\(")
# Python functions a snippet calls, as TypeScript spells them.
_FUNCTIONS = {"json.dumps": "JSON.stringify"}
_KEYWORD = re.compile(r"(?<![\w.?&=:/-])([a-z][A-Za-z0-9]*(?:_[a-z0-9]+)*)=(?=[{\['\"]|f[\"']|True\b|False\b|None\b)")
_F_STRING = re.compile(r"(?<![\w])f(\"[^\"\n]*\"|'[^'\n]*')")
_KEYWORD_MODULE = re.compile(r"\baws\.([a-z0-9]+)_\.")
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_SNAKE_WORD = re.compile(r"(?<![\w/#-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w/(-])")
# This package's Python names (integration_blueprint.components.alarms.queue_depth_alarm), the
# parenthetical that holds one, and a sentence with what follows it.
_PACKAGE = "integration_blueprint"
_PACKAGE_NAME = re.compile(rf"\b{_PACKAGE}(?:\.\w+)+")
_PARENTHETICAL = re.compile(r"\s*\([^()]*\)")
_SENTENCE = re.compile(r"(?<=[.!?])(?=\s)")
# A quoted string, a template literal or a URL: left as written.
_QUOTED = re.compile(r"(\"[^\"\n]*\"|(?<!\w)'[^'\n]*'(?!\w)|`[^`\n]*`|https?://\S+)")


def in_language(text: str, language: str) -> str:
    """`text` with its Python snippets written in `language` (Pulumi.yaml's runtime)."""
    if language != NODEJS or not text:
        return text
    text = _own_package(text)
    text = _replace_spans(text, _CALL, _call_span, lambda call: call if call.startswith("JSON.") else f"new {call}")
    text = _replace_spans(text, _KEYWORD, _expression_after_equals, str)
    text = _F_STRING.sub(lambda m: _snippet(m.group(0)) or m.group(0), text)
    text = _KEYWORD_MODULE.sub(r"aws.\1.", text)
    for python, typescript in _FUNCTIONS.items():
        text = re.sub(rf"\b{re.escape(python)}\b", typescript, text)
    return _outside_quotes(text, lambda part: _SNAKE_WORD.sub(_property, part))


def _sdk_name(python_name: str):
    """What a TypeScript program calls a name of this Python package: a component is exported by
    the package's TypeScript SDK (`blueprint sdk`, imported as `blueprint`); anything else (a helper
    such as integration_blueprint.components.alarms.queue_depth_alarm) exists in Python only: None."""
    last = python_name.rsplit(".", 1)[-1]
    if python_name.startswith(f"{_PACKAGE}.components.") and last[:1].isupper():
        return f"blueprint.{last}"
    return None


def _own_package(text: str) -> str:
    """This package's Python names as the TypeScript SDK exports them; a Python-only helper is left
    out with the parenthetical (or else the sentence) that names it: a fix text names only what
    the program's SDK has."""
    def python_only(part: str) -> bool:
        return any(_sdk_name(name.group(0)) is None for name in _PACKAGE_NAME.finditer(part))

    text = _PARENTHETICAL.sub(lambda m: "" if python_only(m.group(0)) else m.group(0), text)
    text = "".join(sentence for sentence in _SENTENCE.split(text) if not python_only(sentence))
    return _PACKAGE_NAME.sub(lambda m: _sdk_name(m.group(0)) or m.group(0), text)


def _property(match: re.Match) -> str:
    """A snake_case word in prose is a Python SDK property (`retention_in_days`), unless it names a
    Python module (`policy_sentry`)."""
    word = match.group(0)
    return word if _is_module(word) else camel(word)


@lru_cache(maxsize=None)
def _is_module(word: str) -> bool:
    try:
        return importlib.util.find_spec(word) is not None
    except (ImportError, ValueError):
        return False


def _outside_quotes(text: str, change: Callable[[str], str]) -> str:
    """`change` applied to the text outside quotes (a quoted name or value is the program's own)
    and outside template literals and URLs."""
    parts = _QUOTED.split(text)
    return "".join(part if index % 2 else change(part) for index, part in enumerate(parts))


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest) if rest and head else name


# ---- finding the snippets ----------------------------------------------------------------------

def _closing(text: str, start: int) -> int:
    """The index after the bracket that closes the one before `start` (or -1), skipping strings."""
    depth, quote, index = 1, "", start
    while index < len(text):
        char = text[index]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return -1


def _call_span(text: str, match: re.Match) -> int:
    return _closing(text, match.end())


def _expression_after_equals(text: str, match: re.Match) -> int:
    """The end of the Python value after `name=`: a bracketed value, a string or a literal word."""
    start = match.end()
    char = text[start]
    if char in "{[":
        return _closing(text, start + 1)
    if char == "f":
        start += 1
        char = text[start]
    if char in "'\"":
        end = text.find(char, start + 1)
        return end + 1 if end > 0 else -1
    word = re.match(r"True|False|None", text[start:])
    return start + word.end() if word else -1


def _replace_spans(text: str, pattern: re.Pattern, span_end: Callable[[str, re.Match], int],
                   wrap: Callable[[str], str]) -> str:
    out, position = [], 0
    for match in pattern.finditer(text):
        if match.start() < position:
            continue  # inside a snippet already written out
        end = span_end(text, match)
        if end < 0:
            continue
        written = _snippet(text[match.start():end])
        if written is None:
            continue
        out += [text[position:match.start()], wrap(written)]
        position = end
    return "".join(out) + text[position:]


# ---- writing a snippet as TypeScript --------------------------------------------------------------

def _snippet(code: str):
    """A Python snippet as TypeScript, or None when it does not parse."""
    placeholders: dict[str, str] = {}

    def hold(match: re.Match) -> str:
        name = f"__placeholder{len(placeholders)}__"
        placeholders[name] = match.group(0)
        return name

    held = _PLACEHOLDER.sub(hold, code)
    keyword = re.match(r"([A-Za-z_]\w*)=(?!=)", held)
    try:
        if keyword:
            tree = ast.parse(held[keyword.end():], mode="eval").body
        else:
            tree = ast.parse(held, mode="eval").body
    except (SyntaxError, ValueError):
        return None
    written = _Writer(placeholders).write(tree)
    return f"{camel(keyword.group(1))}: {written}" if keyword else written


class _Writer:
    def __init__(self, placeholders: dict[str, str]):
        self.placeholders = placeholders

    def write(self, node: ast.AST) -> str:
        if isinstance(node, ast.Constant):
            return self._constant(node.value)
        if isinstance(node, ast.Name):
            return self.placeholders.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            return f"{self.write(node.value)}.{camel(node.attr)}"
        if isinstance(node, (ast.List, ast.Tuple)):
            return "[" + ", ".join(self.write(item) for item in node.elts) + "]"
        if isinstance(node, ast.Dict):
            pairs = [f"{self._key(key)}: {self.write(value)}" for key, value in zip(node.keys, node.values)
                     if key is not None]
            return "{ " + ", ".join(pairs) + " }" if pairs else "{}"
        if isinstance(node, ast.JoinedStr):
            return "`" + "".join(self._template_part(part) for part in node.values) + "`"
        if isinstance(node, ast.Call):
            return self._call(node)
        return ast.unparse(node)

    def _constant(self, value) -> str:
        if value is Ellipsis:
            return "..."
        if value is None:
            return "undefined"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return json.dumps(value)
        return repr(value)

    def _key(self, key: ast.AST) -> str:
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            name = camel(key.value) if re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)+", key.value) else key.value
            return name if _IDENTIFIER.fullmatch(name) else json.dumps(name)
        return f"[{self.write(key)}]"

    def _template_part(self, part: ast.AST) -> str:
        if isinstance(part, ast.Constant):
            return str(part.value).replace("\\", "\\\\").replace("`", "\\`").replace("${", "\\${")
        if isinstance(part, ast.FormattedValue):
            return "${" + self.write(part.value) + "}"
        return ""

    def _call(self, node: ast.Call) -> str:
        function = self.write(node.func)
        function = _FUNCTIONS.get(function, function)
        arguments = [self.write(argument) for argument in node.args]
        options = [f"{camel(k.arg)}: {self.write(k.value)}" for k in node.keywords if k.arg]
        if function.startswith("aws."):  # a resource: new aws.x.Y("name", { args })
            name = arguments.pop(0) if arguments else '"name"'
            return f'{function}({name}, {{ {", ".join(options)} }})' if options else f"{function}({name})"
        if options:
            arguments.append("{ " + ", ".join(options) + " }")
        return f"{function}({', '.join(arguments)})"
