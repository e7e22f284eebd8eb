"""What the reports may show of a run's values: secrets as `[secret]`, unknowns as `[unknown]`.

The engine knows which values are secret from the SDK's wire format (a value wrapped with the
secret signature: `pulumi.Output.secret`, `Config.require_secret`, a `secure:` config value read
as a secret, an output of a secret input); it records where they sit in each resource's inputs
(`secret_paths`). The policy pack still receives the real values (the analyzer is sent secrets, as
the Pulumi engine sends them with KeepSecrets) and may quote one in a violation message, so every
text a report writes goes through `Redactor.text`, which masks each secret value wherever it
appears, as the Pulumi CLI shows `[secret]`. Config values of secret keys are masked too (a program
that reads one with `require` instead of `require_secret` sends it unmarked).

An unknown value (Pulumi's sentinel, `04da6b54-...`) is shown as `[unknown]`, never as the sentinel.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from integration_blueprint.preview import wire

SECRET = "[secret]"
UNKNOWN = "[unknown]"
# A secret shorter than this is masked only where it stands as a whole word: masking "30" or "prod"
# inside every longer word would make the report unreadable, and a rule quotes a value whole.
SUBSTRING_LENGTH = 6
_WORD = r"[A-Za-z0-9_]"

Path = tuple  # keys and list indices from a resource's inputs down to a value


def secret_paths(value: Any, path: Path = ()) -> list[Path]:
    """Where the secrets sit in a value as the engine holds it (the analyzer's view): the path of
    each secret-wrapped value, as the same path reads the plain value (wire.plain unwraps it)."""
    if isinstance(value, dict):
        if value.get(wire.SIG) == wire.SECRET_SIG:
            return [path]
        if wire.SIG in value:
            return []
        found: list[Path] = []
        for key, item in value.items():
            if isinstance(item, (dict, list)):
                found += secret_paths(item, (*path, key))
        return found
    if isinstance(value, list):
        found = []
        for index, item in enumerate(value):
            if isinstance(item, (dict, list)):
                found += secret_paths(item, (*path, index))
        return found
    return []


def secret_values(resources: Iterable[Any], config: dict[str, str], secret_keys: Iterable[str]) -> list:
    """The values a run holds as secret: each recorded resource's secret inputs (by its
    `secret_paths`) and the config values of secret keys."""
    found = [at(r.inputs, path) for r in resources for path in r.secret_paths]
    return found + [config[key] for key in secret_keys if key in config]


def at(value: Any, path: Path) -> Any:
    for step in path:
        value = value[step]
    return value


def _words(value: Any) -> Iterable[str]:
    """The words a secret value may be quoted as: its strings and numbers, at any depth."""
    for leaf in wire.leaves(value):
        if isinstance(leaf, str):
            yield leaf
        elif isinstance(leaf, (int, float)) and not isinstance(leaf, bool):
            yield str(leaf)


class Redactor:
    """Masks the given secret values (plain values, at any depth) in every text and value shown.

    A stack may hold a secret per resource (thousands): long secrets are found by their first
    SUBSTRING_LENGTH characters in one pass over the text, not by a regex alternation of every
    secret, which costs a pass per secret."""

    def __init__(self, secrets: Iterable[Any] = ()):
        words = {leaf for secret in secrets for leaf in _words(secret)
                 if leaf.strip() and leaf not in (SECRET, UNKNOWN, wire.UNKNOWN)}
        self.words = frozenset(words)
        self._long: dict[str, list[str]] = {}  # first characters -> the secrets that start so, longest first
        short = []
        for word in sorted(words, key=len, reverse=True):
            if len(word) >= SUBSTRING_LENGTH:
                self._long.setdefault(word[:SUBSTRING_LENGTH], []).append(word)
            else:
                short.append(word)
        self._short = re.compile("|".join(f"(?<!{_WORD}){re.escape(word)}(?!{_WORD})" for word in short)) \
            if short else None

    def text(self, text: str) -> str:
        """`text` with every secret as [secret] and the unknown sentinel as [unknown]."""
        if self._long:
            text = self._without_long(text)
        if self._short is not None:
            text = self._short.sub(SECRET, text)
        return text.replace(wire.UNKNOWN, UNKNOWN)

    def _without_long(self, text: str) -> str:
        out, start, index = [], 0, 0
        while index <= len(text) - SUBSTRING_LENGTH:
            for word in self._long.get(text[index:index + SUBSTRING_LENGTH], ()):
                if text.startswith(word, index):
                    out += [text[start:index], SECRET]
                    index = start = index + len(word)
                    break
            else:
                index += 1
        return "".join(out) + text[start:]

    def value(self, value: Any, secret_at: Sequence[Path] = ()) -> Any:
        """A plain value as a report shows it: the values at `secret_at` as [secret], unknowns as
        [unknown], every other string masked by `text`."""
        for path in secret_at:
            if not path:
                return SECRET
        shown = self._shown(value)
        for path in secret_at:
            try:
                parent = at(shown, path[:-1])
                parent[path[-1]] = SECRET
            except (KeyError, IndexError, TypeError):
                continue  # the plain view holds an asset or a shorter value there: nothing to mask
        return shown

    def _shown(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {key: self._shown(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._shown(item) for item in value]
        if isinstance(value, str):
            return UNKNOWN if value == wire.UNKNOWN else self.text(value)
        return value
