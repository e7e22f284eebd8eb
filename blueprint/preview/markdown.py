"""`blueprint preview --format markdown`: a pull-request comment.

A verdict line, a table of the violations, and per component a Mermaid diagram of the links the
pack checks: event source -> function (the event source mapping), function -> on-failure
destination, queue -> DLQ (redrive policy), schedule -> target and schedule -> DLQ. A resource
with a violation is drawn red and marked; so is a link held by a resource with a violation (a
mapping without ReportBatchItemFailures, say).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from integration_blueprint.preview.recording import RecordedResource, RecordedStack
from integration_blueprint.preview.run import Finding, PreviewResult

MAPPING = "aws:lambda/eventSourceMapping:EventSourceMapping"
QUEUE = "aws:sqs/queue:Queue"
SCHEDULE = "aws:scheduler/schedule:Schedule"
INVOKE_CONFIG = "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig"
OUTSIDE = ""  # the group of links declared outside any component
MARK = "⚠"


@dataclass(frozen=True)
class Link:
    source: str  # URN
    target: str  # URN
    label: str
    held_by: str  # URN of the resource that declares the link


# ---- the links -----------------------------------------------------------------------------

def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


class _Resolver:
    """Which resources a property refers to: through its property dependencies (known even when
    ARNs are not), else by matching the ARNs, names and URLs it holds (a hand-written program
    may pass plain strings)."""

    def __init__(self, recorded: RecordedStack):
        self.by_urn = recorded.by_urn()
        self.by_reference: dict[str, str] = {}
        for resource in recorded.resources:
            for key in ("arn", "name", "url"):
                value = resource.outputs.get(key)
                if isinstance(value, str) and value:
                    self.by_reference.setdefault(value, resource.urn)

    def __call__(self, resource: RecordedResource, key: str) -> list[str]:
        urns = [u for u in resource.property_dependencies.get(key, []) if u in self.by_urn]
        if urns:
            return urns
        found = [self.by_reference[s] for s in _strings(resource.inputs.get(key)) if s in self.by_reference]
        return list(dict.fromkeys(found))


def links(recorded: RecordedStack) -> list[Link]:
    refers = _Resolver(recorded)
    found: list[Link] = []
    for resource in recorded.resources:
        if resource.type == MAPPING:
            functions = refers(resource, "functionName")
            for source in refers(resource, "eventSourceArn"):
                found += [Link(source, function, "event source mapping", resource.urn) for function in functions]
            for destination in refers(resource, "destinationConfig"):
                found += [Link(function, destination, "on failure", resource.urn) for function in functions]
        elif resource.type == INVOKE_CONFIG:
            for destination in refers(resource, "destinationConfig"):
                found += [Link(function, destination, "on failure", resource.urn)
                          for function in refers(resource, "functionName")]
        elif resource.type == QUEUE:
            found += [Link(resource.urn, dlq, "redrive (DLQ)", resource.urn)
                      for dlq in refers(resource, "redrivePolicy")]
        elif resource.type == SCHEDULE:
            for urn in refers(resource, "target"):
                kind = refers.by_urn[urn].type
                if kind == QUEUE:
                    found.append(Link(resource.urn, urn, "DLQ", resource.urn))
                elif not kind.startswith("aws:iam/"):
                    found.append(Link(resource.urn, urn, "invokes", resource.urn))
    # In URN order, not registration order: the same program draws the same diagram every run.
    return sorted(set(found), key=lambda link: (link.held_by, link.source, link.target, link.label))


def component_of(recorded: RecordedStack, urn: str) -> str:
    """The outermost component that holds `urn` (OUTSIDE if none)."""
    by_urn = recorded.by_urn()
    outermost = OUTSIDE
    resource = by_urn.get(urn)
    while resource is not None:
        if not resource.custom:
            outermost = resource.urn
        resource = by_urn.get(resource.parent)
    return outermost


# ---- rendering ---------------------------------------------------------------------------------

def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\r", "").replace("\n", "<br>").strip()


def _label(text: str) -> str:
    return text.replace('"', "#quot;")


def _short_type(type_token: str) -> str:
    """aws:sqs/queue:Queue -> sqs Queue"""
    package, _, rest = type_token.partition(":")
    module = rest.partition("/")[0]
    return f"{module} {rest.rpartition(':')[2]}" if package == "aws" else type_token


def _diagram(recorded: RecordedStack, group: list[Link], violated: set[str]) -> list[str]:
    by_urn = recorded.by_urn()
    ids: dict[str, str] = {}
    lines = ["```mermaid", "flowchart LR"]
    for link in group:
        for urn in (link.source, link.target):
            if urn not in ids:
                ids[urn] = f"n{len(ids)}"
                resource = by_urn[urn]
                mark = f"{MARK} " if urn in violated else ""
                style = ":::violation" if urn in violated else ""
                lines.append(f'    {ids[urn]}["{_label(mark + resource.name)}<br/>'
                             f'{_label(_short_type(resource.type))}"]{style}')
    for link in group:
        held = by_urn[link.held_by]
        mark = f"{MARK} " if link.held_by in violated and link.held_by not in (link.source, link.target) else ""
        label = link.label if held.type != MAPPING else f"{link.label}: {held.name}"
        lines.append(f'    {ids[link.source]} -- "{_label(mark + label)}" --> {ids[link.target]}')
    lines += ["    classDef violation fill:#fde2e1,stroke:#d1242f,color:#6e1b14", "```"]
    return lines


def _verdict(result: PreviewResult) -> str:
    stack, mandatory, advisory = result.recorded.stack, result.count("mandatory"), result.count("advisory")
    if mandatory:
        return (f"### ❌ Policy preview of stack `{stack}`: {mandatory} mandatory and {advisory} advisory "
                "violations; the stack may not be deployed")
    return f"### ✅ Policy preview of stack `{stack}`: no mandatory violations ({advisory} advisory)"


def _row(finding: Finding, description: str) -> str:
    # The SDK reports "<description>\n<what it found>"; the table shows what it found.
    detail = finding.message.removeprefix(description).strip() or finding.message
    fix = _cell(finding.remediation) + (f" ([docs]({finding.url}))" if finding.url else "")
    where = f"`{finding.name}`<br><sub>{finding.type}</sub>" if finding.urn else "(stack)"
    return f"| {finding.level} | `{finding.policy}` | {where} | {_cell(detail)} | {fix} |"


def render_markdown(result: PreviewResult) -> str:
    recorded, findings = result.recorded, result.findings()
    lines = [_verdict(result), "",
             f"{len(recorded.resources)} resources of `{recorded.project}`; policy config: "
             f"`{result.policy_config.name if result.policy_config else 'pack defaults'}`"
             f"{'; outputs unknown, as in a first preview' if recorded.unknowns else ''}.", ""]
    if findings:
        lines += ["| level | policy | resource | finding | fix |", "| --- | --- | --- | --- | --- |"]
        lines += [_row(f, result.rules[f.policy].description if f.policy in result.rules else "") for f in findings]
        lines.append("")
    violated = {f.urn for f in findings if f.urn}
    groups: dict[str, list[Link]] = {}
    for link in links(recorded):
        groups.setdefault(component_of(recorded, link.held_by), []).append(link)
    if groups:
        lines += ["#### Links the policy pack checks", ""]
    by_urn = recorded.by_urn()
    for component in sorted(groups, key=lambda urn: (urn == OUTSIDE, urn)):
        if component == OUTSIDE:
            lines.append("**Resources outside components**")
        else:
            lines.append(f"**`{by_urn[component].name}`** ({by_urn[component].type})")
        lines += ["", *_diagram(recorded, groups[component], violated), ""]
    return "\n".join(lines).rstrip() + "\n"
