"""Whether a violation's numbers are the program's: every number a message states as a fact about a
resource ("visibilityTimeoutSeconds 30", "may run 60 s", "reserved concurrency 1", "retried 2
times") must be what that resource sets, or AWS's default where it sets nothing; a number is written
as the program writes it (1209600, never 1.2096e+06 or 60.0); and a fix never asks for a value the
resource already has.

A fact must hold for one of the resources the message names ('orders-dlq') or the one it is on, or
for a resource that names one of them (an invoke config naming its function); a fix is checked
against the resource the violation is on.
Numbers in ranges, fixes and limits ("AWS accepts 1-1000", "at least 360") are not facts.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

from integration_blueprint.core import aws_limits
from integration_blueprint.preview import wire

# property -> what AWS assumes when a resource does not set it (every value a rule may have used)
DEFAULTS: dict[str, set[float]] = {
    "visibilityTimeoutSeconds": {aws_limits.SQS_VISIBILITY_TIMEOUT_DEFAULT_SECONDS},
    "messageRetentionSeconds": {aws_limits.SQS_RETENTION_DEFAULT_SECONDS},
    "timeout": {aws_limits.LAMBDA_TIMEOUT_DEFAULT_SECONDS},
    "TimeoutSeconds": {aws_limits.SFN_TASK_TIMEOUT_DEFAULT_SECONDS},
    "maximumRetryAttempts": {aws_limits.KINESIS_ESM_RETRY_ATTEMPTS_DEFAULT, aws_limits.LAMBDA_ASYNC_RETRY_ATTEMPTS_DEFAULT,
                             aws_limits.SCHEDULER_RETRY_ATTEMPTS_MAX},
    "maximumRecordAgeInSeconds": {aws_limits.KINESIS_ESM_RECORD_AGE_DEFAULT},
    "batchSize": {aws_limits.SQS_ESM_BATCH_SIZE_DEFAULT, aws_limits.KINESIS_ESM_BATCH_SIZE_DEFAULT},
    "delaySeconds": {0},
}
# phrases that state a property's value in words
PHRASES = [
    (re.compile(r"keeps messages (-?\d+) s"), "messageRetentionSeconds"),
    (re.compile(r"'[^']+' \((-?\d+) s\)"), "messageRetentionSeconds"),
    (re.compile(r"may run (-?\d+) s"), "timeout"),
    (re.compile(r"reserved concurrency (-?\d+)"), "reservedConcurrentExecutions"),
    (re.compile(r"times out after (-?\d+) s"), "TimeoutSeconds"),
    (re.compile(r"retried (-?\d+) times"), "maximumRetryAttempts"),
    (re.compile(r"\b(?:is )?(not) retried"), "maximumRetryAttempts"),
]
# "visibilityTimeoutSeconds 30", "maxReceiveCount is 1", "scalingConfig.maximumConcurrency 5"
PROPERTY_VALUE = re.compile(r"\b((?:[a-z]+[A-Z]\w*\.)*[a-zA-Z]*[a-z][A-Z]\w*|timeout|batchSize) (?:is )?"
                            r"(-?\d+(?:\.\d+)?)\b(?![-.\d])")
# "Set the DLQ's messageRetentionSeconds to 1209600": a fix that names a value
FIX = re.compile(r"[Ss]et (?:the [\w' ]+?'s |its )?((?:[a-z]+[A-Z]\w*\.)*[a-z]+[A-Z]\w*) to (-?\d+)\b(?![-\d])")
BADLY_WRITTEN = re.compile(r"\b\d+(?:\.\d+)?e[+-]?\d+\b|\b\d+\.0\b")
NAMED = re.compile(r"'([^']+)'")


def values_of(value: Any, key: str) -> list[float]:
    """Every number set for `key` anywhere in `value` (JSON documents held as strings included)."""
    found: list[float] = []
    if isinstance(value, str) and value[:1] in "{[":
        try:
            value = json.loads(value)
        except ValueError:
            return found
    if isinstance(value, dict):
        for k, item in value.items():
            if k == key and isinstance(item, (int, float, str)) and not isinstance(item, bool):
                try:
                    found.append(float(item))
                except ValueError:
                    pass
            found += values_of(item, key)
    elif isinstance(value, list):
        for item in value:
            found += values_of(item, key)
    return found


class Stack:
    def __init__(self, resources: Iterable):
        self.resources = list(resources)
        self.by_name = {r.name: r for r in self.resources}
        self.by_urn = {r.urn: r for r in self.resources}

    def related(self, resource) -> list:
        """The resource and those whose inputs name it (its invoke config, its redrive policy)."""
        def mentions(other) -> bool:
            return any(resource.name in text for text in wire.strings(other.inputs))
        return [resource] + [r for r in self.resources if r is not resource and mentions(r)]


def _named(stack: Stack, text: str, own) -> list:
    """The resources the message names (by their logical names), and the one it is on."""
    named = [stack.by_name[m.group(1)] for m in NAMED.finditer(text) if m.group(1) in stack.by_name]
    return ([own] if own is not None else []) + [r for r in named if r is not own]


def _written(value: float) -> str:
    return str(int(value)) if value.is_integer() else str(value)


def _stated(text: str):
    """(position, property, value) for every fact the text states."""
    for pattern, prop in PHRASES:
        for match in pattern.finditer(text):
            value = 0.0 if match.group(1) == "not" else float(match.group(1))
            yield match.start(1), prop, value
    for match in PROPERTY_VALUE.finditer(text):
        before = text[max(0, match.start() - 12):match.start()]
        if re.search(r"\b(to|least|most|below|above|than)\s*$", before):
            continue  # a value the fix asks for
        yield match.start(2), match.group(1).rsplit(".", 1)[-1], float(match.group(2))


def wrong_numbers(violation, resources: Iterable) -> list[str]:
    """What in `violation`'s message contradicts the resources it names; [] when nothing does. The
    SDK sends the rule's description, a newline, then what the rule reported: only that is read."""
    stack = Stack(resources)
    text = violation.message.split("\n", 1)[-1]
    problems = [f"{m.group(0)!r} is not written as a program writes it" for m in BADLY_WRITTEN.finditer(text)]
    own = stack.by_urn.get(violation.urn)
    named = _named(stack, text, own)
    if not named:
        return problems  # resources outside the stack: nothing here to check the numbers against
    related = [r for resource in named for r in stack.related(resource)]
    for _, prop, value in _stated(text):
        set_values = [v for r in related for v in values_of(r.inputs, prop)]
        where = ", ".join(f"'{r.name}'" for r in named)
        if set_values:
            if value not in set_values:
                problems.append(f"says {prop} {_written(value)} where {where} set {prop} to "
                                f"{', '.join(map(_written, set_values))}")
        elif value not in DEFAULTS.get(prop, set()):
            problems.append(f"says {prop} {_written(value)} where {where} set no {prop} "
                            f"(AWS's default: {', '.join(map(_written, sorted(DEFAULTS.get(prop, set())))) or 'none'})")
    if own is not None:  # a fix is for the resource the violation is on
        for match in FIX.finditer(text):
            prop, value = match.group(1).rsplit(".", 1)[-1], float(match.group(2))
            if value in values_of(own.inputs, prop):
                problems.append(f"offers to set {prop} to {_written(value)} on '{own.name}', which already sets it")
    return problems
