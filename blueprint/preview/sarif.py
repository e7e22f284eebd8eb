"""`blueprint preview --format sarif`: the findings as SARIF 2.1.0 for GitHub code scanning.

One rule (reportingDescriptor) per policy of the pack, with its description, its help (remediation
steps) and, where the rule has them, its url, tags and severity; one result per violation, located
at the program file and, where it can be found, the line that declares the resource.

The line comes from the resource's name literal in the program: the first call whose first
argument is that string (`aws.sqs.Queue("orders", ...)`). A resource declared inside a component
or under a computed name is located at its nearest ancestor that the program names literally; a
stack-wide finding at the top of the file. GitHub needs a line for every result (region.startLine).
"""

from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path
from typing import Optional

from integration_blueprint import __version__
from integration_blueprint.preview.recording import load_project
from integration_blueprint.preview.run import Finding, PreviewResult

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
TOOL_NAME = "integration-blueprint-preview"
TOOL_URI = "https://www.pulumi.com/docs/iac/using-pulumi/crossguard/"
_RESULT_LEVELS = {"mandatory": "error", "remediate": "error", "advisory": "warning", "disabled": "none"}
# GitHub ranks security alerts by properties.security-severity: low < 4.0 <= medium < 7.0 <= high
# < 9.0 <= critical (docs.github.com, "SARIF support for code scanning", reportingDescriptor).
_SECURITY_SEVERITY = {"low": "3.0", "medium": "5.5", "high": "8.0", "critical": "9.5"}


def declaration_lines(program_file: Path) -> dict[str, int]:
    """Resource name literal -> the line of the first call that passes it as first argument."""
    try:
        tree = ast.parse(program_file.read_text(), filename=str(program_file))
    except (OSError, SyntaxError, ValueError):
        return {}
    lines: dict[str, int] = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            name = node.args[0].value
            lines[name] = min(node.lineno, lines.get(name, node.lineno))
    return lines


def program_file(result: PreviewResult) -> Optional[Path]:
    program_dir = result.recorded.program_dir
    if program_dir is None:
        return None
    main = program_dir / (load_project(program_dir).get("main") or "__main__.py")
    return main / "__main__.py" if main.is_dir() else main


def _artifact(path: Optional[Path]) -> dict:
    """The file relative to the working directory (the checkout root in CI), as code scanning
    expects; a file outside it keeps its absolute file: URI."""
    if path is None:
        return {"uri": "__main__.py", "uriBaseId": "%SRCROOT%"}
    try:
        return {"uri": path.resolve().relative_to(Path.cwd().resolve()).as_posix(), "uriBaseId": "%SRCROOT%"}
    except ValueError:
        return {"uri": path.resolve().as_uri()}


def _rule_descriptor(result: PreviewResult, name: str) -> dict:
    rule = result.rules[name]
    help_text = rule.remediation or rule.description
    descriptor: dict = {
        "id": rule.name,
        "shortDescription": {"text": rule.description.split(". ")[0].rstrip(".") + "."},
        "fullDescription": {"text": rule.description},
        "help": {"text": help_text,
                 "markdown": help_text + (f"\n\n[{rule.url}]({rule.url})" if rule.url else "")},
        "defaultConfiguration": {"level": _RESULT_LEVELS[result.levels.get(name, rule.level)]},
        "properties": {"tags": sorted({"pulumi-policy", *rule.tags})},
    }
    if rule.url:
        descriptor["helpUri"] = rule.url
    if rule.severity:
        descriptor["properties"]["security-severity"] = _SECURITY_SEVERITY[rule.severity]
    return descriptor


def _line(finding: Finding, result: PreviewResult, lines: dict[str, int]) -> int:
    parents = {r.urn: (r.name, r.parent) for r in result.recorded.resources}
    urn, name = finding.urn, finding.name
    while urn or name:
        if name in lines:
            return lines[name]
        name, urn = parents.get(urn, ("", ""))
    return 1


def _result(finding: Finding, rule_index: int, artifact: dict, line: int) -> dict:
    location: dict = {"physicalLocation": {"artifactLocation": artifact, "region": {"startLine": line}}}
    if finding.urn:
        location["logicalLocations"] = [{"name": finding.name, "fullyQualifiedName": finding.urn,
                                         "kind": "resource"}]
    identity = "\n".join((finding.policy, finding.urn, finding.message)).encode()
    return {
        "ruleId": finding.policy,
        "ruleIndex": rule_index,
        "level": _RESULT_LEVELS[finding.level],
        "message": {"text": finding.message},
        "locations": [location],
        # Stable across runs and edits of unrelated lines: the policy, the resource and what it found.
        "partialFingerprints": {"blueprintFinding/v1": hashlib.sha256(identity).hexdigest()},
    }


def to_sarif(result: PreviewResult) -> dict:
    names = sorted(result.rules)
    index = {name: i for i, name in enumerate(names)}
    path = program_file(result)
    lines = declaration_lines(path) if path is not None else {}
    artifact = _artifact(path)
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": {"name": TOOL_NAME, "informationUri": TOOL_URI, "version": __version__,
                                "rules": [_rule_descriptor(result, name) for name in names]}},
            "automationDetails": {"id": f"blueprint-preview/{result.recorded.stack}/"},
            "results": [_result(f, index[f.policy], artifact, _line(f, result, lines))
                        for f in result.findings()],
        }],
    }


def render_sarif(result: PreviewResult) -> str:
    return json.dumps(to_sarif(result), indent=2)
