"""`blueprint preview --format sarif`: the findings as SARIF 2.1.0 for GitHub code scanning.

One tool extension (toolComponent) per policy pack of the run, named and versioned as the pack
names itself, with one rule (reportingDescriptor) per policy of that pack: its description, its
help (remediation steps) and, where the rule has them, its url, tags and severity; each result
points at its pack's rule (rule.toolComponent.index, as CodeQL points at its query packs). One
result per violation, located at the user's own line that declared the resource, in whichever
module of the program, as every report locates it (preview/locations.py); a stack-wide finding
points at the top of the main file. GitHub needs a line for every result (region.startLine).

URIs are relative to the repository root (the nearest folder above the file with a `.git`), so
GitHub maps them whatever directory the preview ran in. The category (automationDetails.id) names
the program's folder and the stack, so two programs or two stacks of one repository keep their
own alerts. "Can't run during preview" notes are not results: they go to the run's invocation as
tool execution notifications.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Optional

import integration_blueprint.preview.reports.skipped_checks as skipped_checks
from integration_blueprint import __version__
from integration_blueprint.preview.locations import repository_root
from integration_blueprint.preview.run import UNNAMED_PACK, Finding, PackRun, PreviewResult

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
TOOL_NAME = "integration-blueprint-preview"
TOOL_URI = "https://www.pulumi.com/docs/iac/using-pulumi/crossguard/"
_RESULT_LEVELS = {"mandatory": "error", "remediate": "error", "advisory": "warning", "disabled": "none"}
# GitHub ranks security alerts by properties.security-severity: low < 4.0 <= medium < 7.0 <= high
# < 9.0 <= critical (docs.github.com, "SARIF support for code scanning", reportingDescriptor).
_SECURITY_SEVERITY = {"low": "3.0", "medium": "5.5", "high": "8.0", "critical": "9.5"}


def _artifact(path: Optional[Path]) -> dict:
    """The file relative to its repository's root (else to the working directory), as code
    scanning expects; a file outside both keeps its absolute file: URI."""
    if path is None:
        return {"uri": "__main__.py", "uriBaseId": "%SRCROOT%"}
    path = path.resolve()
    for base in (repository_root(path.parent), Path.cwd().resolve()):
        if base is not None and path.is_relative_to(base):
            return {"uri": path.relative_to(base).as_posix(), "uriBaseId": "%SRCROOT%"}
    return {"uri": path.as_uri()}


def category(result: PreviewResult) -> str:
    """automationDetails.id: "blueprint-preview/<program folder in the repository>/<stack>/"."""
    recorded = result.recorded
    program = recorded.project
    if recorded.program_dir is not None:
        folder = recorded.program_dir.resolve()
        root = repository_root(folder)
        if root is not None and folder != root:
            program = folder.relative_to(root).as_posix()
    return f"blueprint-preview/{program}/{recorded.stack}/"


def _rule_descriptor(result: PreviewResult, pack: PackRun, name: str) -> dict:
    rule = pack.rules[name]
    description = result.shown(rule.description)
    help_text = result.shown(rule.remediation or rule.description)
    descriptor: dict = {
        "id": rule.name,
        "shortDescription": {"text": description.split(". ")[0].rstrip(".") + "."},
        "fullDescription": {"text": description},
        "help": {"text": help_text,
                 "markdown": help_text + (f"\n\n[{rule.url}]({rule.url})" if rule.url else "")},
        "defaultConfiguration": {"level": _RESULT_LEVELS[pack.levels.get(name, rule.level)]},
        "properties": {"tags": sorted({"pulumi-policy", *rule.tags})},
    }
    if rule.url:
        descriptor["helpUri"] = rule.url
    if rule.severity:
        descriptor["properties"]["security-severity"] = _SECURITY_SEVERITY[rule.severity]
    return descriptor


class _Rules:
    """Each pack as a tool extension, and where each (pack, policy) sits: the reference a result
    or a notification makes to its rule."""

    def __init__(self, result: PreviewResult):
        self.extensions: list[dict] = []
        self._where: dict[tuple[str, str], dict] = {}
        for number, pack in enumerate(result.judged_by()):
            names = sorted(pack.rules)
            self.extensions.append({"name": pack.name, "version": pack.version or "0.0.0",
                                    "informationUri": TOOL_URI,
                                    "rules": [_rule_descriptor(result, pack, name) for name in names]})
            if pack is not result.gate:  # each pack's own config, named beside it (the gate reads none)
                self.extensions[-1]["properties"] = {
                    "policyConfig": str(pack.policy_config) if pack.policy_config else None}
            for index, name in enumerate(names):
                self._where.setdefault((pack.name, name), {"id": name, "index": index,
                                                           "toolComponent": {"index": number}})

    def __contains__(self, finding: Finding) -> bool:
        return self._key(finding) in self._where

    def __getitem__(self, finding: Finding) -> dict:
        return self._where[self._key(finding)]

    def _key(self, finding: Finding) -> tuple[str, str]:
        """A finding of a result made from rules alone belongs to its one unnamed pack."""
        return (finding.pack or UNNAMED_PACK, finding.policy)


def _located(finding: Finding) -> tuple[dict, int]:
    """The finding's file and line as code scanning wants them (every result needs a line)."""
    if finding.location is None:
        return _artifact(None), 1
    return _artifact(finding.location.file), max(finding.location.line, 1)


def _result(finding: Finding, rule: dict, artifact: dict, line: int) -> dict:
    location: dict = {"physicalLocation": {"artifactLocation": artifact, "region": {"startLine": line}}}
    if finding.urn:
        location["logicalLocations"] = [{"name": finding.name, "fullyQualifiedName": finding.urn,
                                         "kind": "resource"}]
    identity = "\n".join((finding.policy, finding.urn, finding.message)).encode()
    return {
        "ruleId": finding.policy,
        "rule": rule,
        "level": _RESULT_LEVELS[finding.level],
        "message": {"text": finding.message},
        "locations": [location],
        # Stable across runs and edits of unrelated lines: the policy, the resource and what it found.
        "partialFingerprints": {"blueprintFinding/v1": hashlib.sha256(identity).hexdigest()},
    }


def _suppressed(sarif_result: dict, finding: Finding) -> dict:
    """A violation accepted with a reason: a result with its suppression (kind inSource for a
    comment in the program, external for the stack's config), which code scanning shows as dismissed."""
    accepted = finding.suppression
    assert accepted is not None
    suppression: dict = {"kind": accepted.kind, "status": "accepted", "justification": accepted.reason}
    if accepted.line:
        suppression["location"] = {"physicalLocation": {"artifactLocation": _artifact(Path(accepted.file)),
                                                        "region": {"startLine": accepted.line}}}
    return {**sarif_result, "suppressions": [suppression]}


def _notification(finding: Finding, rule: dict) -> dict:
    where = f"{finding.name} ({finding.type}): " if finding.urn else ""
    return {"level": "note", "message": {"text": f"{finding.policy}: {where}{skipped_checks.reason(finding)}"},
            "associatedRule": rule}


def _failure_notification(result: PreviewResult) -> dict:
    """Why the run could not judge the program, at the program's file:line when it is known."""
    failure = result.failure
    assert failure is not None
    notification: dict = {"level": "error", "message": {
        "text": f"{failure.title}: {result.masked(failure.message)}\nHow to fix: {failure.fix}"},
        "descriptor": {"id": f"blueprint-preview/{failure.kind}"}}
    if failure.part:  # the gate's own failure: which part of it
        notification["properties"] = {"part": failure.part}
    if failure.file:
        notification["locations"] = [{"physicalLocation": {"artifactLocation": _artifact(Path(failure.file)),
                                                           "region": {"startLine": max(failure.line, 1)}}}]
    return notification


def _unmatched_notification(entry) -> dict:
    """A suppression that matched no finding: a warning at the comment (or the stack file)."""
    notification: dict = {"level": "warning", "message": {"text": f"suppression of {entry.policy} matches no "
                                                                  f"finding: {entry.matches_nothing()}"},
                           "descriptor": {"id": "blueprint-preview/suppression-matches-nothing"}}
    if entry.line:
        notification["locations"] = [{"physicalLocation": {"artifactLocation": _artifact(Path(entry.file)),
                                                           "region": {"startLine": entry.line}}}]
    return notification


def _invocation(result: PreviewResult, index: _Rules) -> dict:
    """The run: whether it could judge the program (a failed run, and under --strict a run that
    left something unchecked, is `executionSuccessful: false`,
    which code scanning records as an unsuccessful analysis without closing the category's
    alerts), the checks that could not run during preview and how the preview ran, as tool
    execution notifications."""
    notifications = [_notification(f, index[f]) for f in skipped_checks.skipped(result) if f in index]
    notifications += [{"level": "note", "message": {"text": note}} for note in result.notes()]
    notifications += [_unmatched_notification(entry) for entry in result.unmatched_suppressions()]
    if result.failure is not None:
        notifications.insert(0, _failure_notification(result))
    if result.incomplete:
        unchecked = result.unchecked()
        notifications.insert(0, {"level": "error", "descriptor": {"id": "blueprint-preview/incomplete"}, "message": {
            "text": f"--strict: the run is incomplete, {len(unchecked)} things were not checked:\n"
                    + "\n".join(f"- {line}" for line in unchecked)}})
    return {"executionSuccessful": result.failure is None and not result.incomplete,
            "toolExecutionNotifications": notifications}


def to_sarif(result: PreviewResult) -> dict:
    index = _Rules(result)
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": {"name": TOOL_NAME, "informationUri": TOOL_URI, "version": __version__},
                     "extensions": index.extensions},
            "automationDetails": {"id": category(result)},
            "invocations": [_invocation(result, index)],
            "results": [_result(f, index[f], *_located(f)) for f in skipped_checks.violations(result)]
            + [_suppressed(_result(f, index[f], *_located(f)), f) for f in result.suppressed_findings()],
        }],
    }


def render_sarif(result: PreviewResult) -> str:
    return json.dumps(to_sarif(result), indent=2)
