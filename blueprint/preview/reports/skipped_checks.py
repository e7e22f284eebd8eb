"""Violations and "can't run during preview" notes, told apart for every report.

A rule that meets an unknown value (a first preview, `--unknowns`) or a fact its stack cannot show
is reported by the policy SDK as an advisory diagnostic, "can't run policy '<rule>' from policy pack
'<pack>' during preview: <what was unknown>". That is not a violation: the reports list it apart,
with the resource and the value that was unknown, without a fix, and do not count it as advisory.
(The telling apart lives on run.Finding, which the JSON report uses too.)
"""

from __future__ import annotations

from integration_blueprint.preview.run import NOTE_PREFIX, Finding, PreviewResult

__all__ = ["NOTE_PREFIX", "count", "is_skipped", "reason", "skipped", "violations"]


def is_skipped(finding: Finding) -> bool:
    return finding.skipped


def reason(finding: Finding) -> str:
    """What could not be known ("EventSourceMapping 'jobs': string value at .eventSourceArn can't be
    known during preview"), without the SDK's preamble and the rule's description."""
    return finding.skip_reason


def violations(result: PreviewResult) -> list[Finding]:
    return result.violation_findings()


def skipped(result: PreviewResult) -> list[Finding]:
    return result.skipped_findings()


def count(result: PreviewResult, level: str) -> int:
    """Violations at `level`; skipped checks are not counted."""
    return result.count_violations(level)
