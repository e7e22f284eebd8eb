"""`blueprint preview --format text|json`.

Every format reads the same `PreviewResult.findings()`: violations joined with their resource and
their rule's metadata (remediation, url, severity, tags), sorted the same way.

Text goes to a terminal or a CI log, so every line is written with its control characters escaped
(`\x00`, `\x1b`, a newline inside a name as `\n`, bidirectional overrides as `\u202e`): a name
or a message cannot clear the screen, colour the log or forge a line of the report.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

import integration_blueprint.preview.reports.skipped_checks as skipped_checks
from integration_blueprint.preview.run import LEVELS, Finding, PreviewResult

# C0 and C1 controls (a tab kept), DEL, and the bidirectional controls that reorder what a line shows.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r"}
# Lines of the program's own output shown in text (JSON keeps all of it).
PROGRAM_OUTPUT_LINES = 50


def _escape(match: re.Match) -> str:
    char = match.group(0)
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def printable(line: str) -> str:
    """One line of text output with every control character written as an escape."""
    return _CONTROL.sub(_escape, line)


def program_output_lines(result: PreviewResult) -> list[str]:
    """What the program printed, each stream's last PROGRAM_OUTPUT_LINES lines, secrets masked."""
    lines = []
    for stream in ("stdout", "stderr"):
        text = getattr(result.recorded, stream).rstrip("\n")
        if not text:
            continue
        printed = result.masked(text).split("\n")
        last = f", last {PROGRAM_OUTPUT_LINES} lines" if len(printed) > PROGRAM_OUTPUT_LINES else ""
        lines += ["", f"Program output ({stream}{last}):"]
        lines += [f"  | {line}" for line in printed[-PROGRAM_OUTPUT_LINES:]]
    return lines


def _failure_text(result: PreviewResult) -> str:
    failure = result.failure
    assert failure is not None
    lines = [f"Preview of stack '{result.recorded.stack}' of {result.recorded.program_dir or result.recorded.project} "
             f"could not run: {failure.title}.", ""]
    lines += [f"  {line}" for line in result.masked(failure.message).split("\n")]
    if failure.where:
        lines += ["", f"Where: {failure.where}"]
    lines += [f"Fix: {failure.fix}", *program_output_lines(result), "", "Nothing was judged: exit 2."]
    return "\n".join(printable(line) for line in lines)


def render_text(result: PreviewResult) -> str:
    if result.failure is not None:
        return _failure_text(result)
    recorded = result.recorded
    by_urn = recorded.by_urn()
    children = defaultdict(list)
    for resource in recorded.resources:
        parent = resource.parent if resource.parent in by_urn else ""
        children[parent].append(resource)

    lines = [f"Previewing stack '{recorded.stack}' of {recorded.program_dir or recorded.project}"
             f"{' (outputs unknown, as in a first preview)' if recorded.unknowns else ''}",
             f"Policy config: {result.policy_config or '(pack defaults)'}"]
    if len(result.packs) > 1:  # each pack with its own config instead
        lines[-1:] = [f"Policy pack: {pack.name} {pack.version} ({pack.directory}), config "
                      f"{pack.policy_config or '(pack defaults)'}" for pack in result.packs]
    elif result.packs:
        lines.append(f"Policy pack: {result.packs[0].name} {result.packs[0].version} ({result.packs[0].directory})")
    lines += ["", "Resources:"]

    def tree(parent: str, depth: int) -> None:
        for resource in children.get(parent, []):
            lines.append(f"{'    ' * depth}+ {resource.type}  {resource.name}")
            tree(resource.urn, depth + 1)
    tree("", 1)

    found_violations = skipped_checks.violations(result)
    for level in LEVELS:
        found = [f for f in found_violations if f.level == level]
        if not found:
            continue
        lines += ["", f"{level.capitalize()} policy violations ({len(found)}):"]
        for finding in found:
            where = f"{finding.name} ({finding.type})" if finding.urn else "(stack)"
            lines.append(f"  [{finding.policy}] {where}{located(result, finding)}")
            lines += [f"      {line}" for line in finding.message.split("\n") if line.strip()]
            lines.append(f"      Policy pack: {finding.pack} {finding.pack_version}")
            rule = result.rule(finding.pack, finding.policy)
            if rule is not None and rule.remediation:  # else the description above says the fix
                lines.append(f"      Fix: {finding.remediation}")
            if finding.url:
                lines.append(f"      See: {finding.url}")
    lines += _suppressed_lines(result)
    skipped = skipped_checks.skipped(result)
    if skipped:
        lines += ["", f"Not checked during preview ({len(skipped)}): a value was unknown or outside this stack"]
        for finding in skipped:
            where = f" {finding.name} ({finding.type}):" if finding.urn else ""
            lines.append(f"  [{finding.policy}]{where} {skipped_checks.reason(finding)}")
    notes = result.notes()
    if notes:
        lines += ["", "How this preview ran (offline):"] + [f"  - {note}" for note in notes]
    lines += program_output_lines(result)
    if result.incomplete:
        unchecked = result.unchecked()
        lines += ["", f"--strict: not fully checked ({len(unchecked)}), so the preview fails:"]
        lines += [f"  - {line}" for line in unchecked]
    lines += ["", f"{len(recorded.resources)} resources, {skipped_checks.count(result, 'mandatory')} mandatory and "
                  f"{skipped_checks.count(result, 'advisory')} advisory violations"
                  + (f", {len(skipped)} checks not run during preview" if skipped else "")
                  + (f", {len(result.suppressed_findings())} suppressed" if result.suppressed_findings() else "")
                  + (": the stack may not be deployed." if result.exit_code else ".")]
    return "\n".join(printable(line) for line in lines)


def located(result: PreviewResult, finding: Finding) -> str:
    """" at <file>:<line>" where the user's code declared the finding's resource (the file relative
    to the program's folder), or nothing when the run has no file to point at."""
    if finding.location is None:
        return ""
    return f" at {finding.location.shown(result.recorded.program_dir)}"


def _suppressed_lines(result: PreviewResult) -> list[str]:
    """The violations accepted with a reason, and the suppressions that no longer suppress anything."""
    lines = []
    suppressed = result.suppressed_findings()
    if suppressed:
        lines += ["", f"Suppressed with a reason ({len(suppressed)}): not counted"]
        for finding in suppressed:
            accepted = finding.suppression
            assert accepted is not None
            lines += [f"  [{finding.policy}] {finding.name} ({finding.type}, {finding.level}){located(result, finding)}: "
                      f"{accepted.reason}",
                      f"      {accepted.describe(result.today)}"]
    unmatched = result.unmatched_suppressions()
    if unmatched:
        lines += ["", f"Suppressions that match no finding ({len(unmatched)}): they suppress nothing"]
        lines += [f"  [{entry.policy}] {entry.matches_nothing()} (reason given: {entry.reason})" for entry in unmatched]
    idle = [entry for entry in result.suppressions if entry.expired(result.today)]
    if idle:
        lines += ["", f"Expired suppressions ({len(idle)}): they suppress nothing any more"]
        lines += [f"  [{entry.policy}] {entry.resource}: {entry.reason} ({entry.describe(result.today)})" for entry in idle]
    return lines


def render_json(result: PreviewResult) -> str:
    return json.dumps(result.to_json(), indent=2, default=str)
