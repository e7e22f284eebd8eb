"""Violations and "can't run during preview" notes, told apart for every report.

A rule that meets an unknown value (a first preview, `--unknowns`) or a fact its stack cannot show
is reported by the policy SDK as an advisory diagnostic, "can't run policy '<rule>' from policy pack
'<pack>' during preview: <what was unknown>". That is not a violation: the reports list it apart,
with the resource and the value that was unknown, without a fix, and do not count it as advisory.
"""

from __future__ import annotations

from integration_blueprint.preview.run import Finding, PreviewResult

NOTE_PREFIX = "can't run policy '"
NOTE_REASON = " during preview: "


def is_skipped(finding: Finding) -> bool:
    return any(line.startswith(NOTE_PREFIX) for line in finding.message.splitlines())


def reason(finding: Finding) -> str:
    """What could not be known ("EventSourceMapping 'jobs': string value at .eventSourceArn can't be
    known during preview"), without the SDK's preamble and the rule's description."""
    line = next(line for line in finding.message.splitlines() if line.startswith(NOTE_PREFIX))
    return line.partition(NOTE_REASON)[2] or line


def violations(result: PreviewResult) -> list[Finding]:
    return [f for f in result.findings() if not is_skipped(f)]


def skipped(result: PreviewResult) -> list[Finding]:
    return [f for f in result.findings() if is_skipped(f)]


def count(result: PreviewResult, level: str) -> int:
    """Violations at `level`; skipped checks are not counted."""
    return sum(1 for f in violations(result) if f.level == level)
