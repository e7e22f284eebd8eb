"""`blueprint preview --format markdown`: a pull-request comment.

A verdict line, a table of the violations (every message escaped for GitHub Flavored Markdown, so
`Principal "*"` and `<queue ARN>` read as written), the fix of each policy once, the checks that
could not run during preview, and per component a Mermaid diagram of the links the pack checks:
event source -> function (the event source mapping), function -> on-failure destination, queue ->
DLQ (redrive policy), schedule -> target and DLQ, EventBridge rule -> target, topic -> subscriber,
pipe source -> target, bucket -> notified queue, topic or function, state machine -> the functions
its tasks invoke and the queues or topics it sends to, function -> the queues and topics its
environment names (what it sends to: the dispatcher's charges queue, a consumer's Retry-DLQ). A
resource with a violation is drawn red and marked; a link is drawn red when a policy that judges
that link found a violation on it: on the resource that holds it (a mapping without
ReportBatchItemFailures, a subscription whose queue refuses the topic, the role policy granting a
send) or on either end (a redrive whose DLQ keeps messages shorter than its source, a task whose
function outlasts the state machine's timeout).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

import integration_blueprint.preview.reports.skipped_checks as skipped_checks
from integration_blueprint.preview import wire
from integration_blueprint.preview.recording import RecordedResource, RecordedStack
from integration_blueprint.preview.run import Finding, PreviewResult

MAPPING = "aws:lambda/eventSourceMapping:EventSourceMapping"
QUEUE = "aws:sqs/queue:Queue"
SCHEDULE = "aws:scheduler/schedule:Schedule"
INVOKE_CONFIG = "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig"
EVENT_TARGET = "aws:cloudwatch/eventTarget:EventTarget"
SUBSCRIPTION = "aws:sns/topicSubscription:TopicSubscription"
PIPE = "aws:pipes/pipe:Pipe"
BUCKET_NOTIFICATION = "aws:s3/bucketNotification:BucketNotification"
NOTIFIED = ("queues", "topics", "lambdaFunctions")
FUNCTION = "aws:lambda/function:Function"
STATE_MACHINE = "aws:sfn/stateMachine:StateMachine"
TOPIC = "aws:sns/topic:Topic"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
SENT_TO = (QUEUE, TOPIC)  # what a function or state machine sends messages to
OUTSIDE = ""  # the group of links declared outside any component
MARK = "⚠"


@dataclass(frozen=True)
class Link:
    source: str  # URN
    target: str  # URN
    label: str
    held_by: str  # URN of the resource that declares the link
    kind: str = ""  # a key of JUDGED_BY: which policies judge this link


# The policies that judge each kind of link (their violation on the link's holder or either end is
# the link's verdict); a link of no kind is judged by its holder's violations.
JUDGED_BY: dict[str, frozenset[str]] = {
    "mapping": frozenset({
        "lambda-sqs-esm-reports-batch-item-failures", "lambda-sqs-esm-concurrency-within-reserved",
        "lambda-stream-esm-has-on-failure-destination", "lambda-stream-esm-bounded-retries",
        "lambda-esm-role-can-use-source", "sqs-visibility-timeout-covers-function-timeout",
        "sqs-visibility-timeout-six-times-function-timeout", "sqs-event-source-has-dlq",
        "kinesis-replay-window-within-retention"}),
    "on-failure": frozenset({"lambda-async-invoke-has-on-failure-destination",
                             "lambda-stream-esm-has-on-failure-destination"}),
    "redrive": frozenset({"sqs-dlq-max-receive-count", "sqs-dlq-retention-exceeds-source", "sqs-dlq-type-matches-source"}),
    "schedule": frozenset({"scheduler-target-has-retry-and-dlq", "eventbridge-target-allows-delivery"}),
    "rule-target": frozenset({"eventbridge-target-has-dlq-and-retry-policy", "eventbridge-target-allows-delivery"}),
    "subscription": frozenset({"sns-subscription-has-redrive-policy", "sns-subscription-endpoint-allows-topic"}),
    "pipe": frozenset({"pipe-source-has-dlq-and-bounded-retries"}),
    "notification": frozenset({"s3-notification-target-allows-bucket"}),
    "task": frozenset({"sfn-task-timeout-covers-lambda-timeout"}),
    # a send is what the sender's role allows: the IAM rules judge the role policy that grants it
    "sends": frozenset({"iam-no-wildcard-actions", "iam-no-write-actions-on-all-resources"}),
}


# ---- the links -----------------------------------------------------------------------------

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
        return self.named_in(resource.inputs.get(key))

    def named_in(self, value: Any) -> list[str]:
        """The resources whose ARN, name or URL `value` (a string, or anything holding strings) names."""
        found = [self.by_reference[s] for s in wire.strings(value) if s in self.by_reference]
        return list(dict.fromkeys(found))


def _schedule_links(refers: _Resolver, schedule: RecordedResource) -> list[Link]:
    """A schedule's target and DLQ: by the ARNs it names when they are known, else by its `target`
    property's dependencies (the role set aside, a queue taken for the DLQ)."""
    target = schedule.inputs.get("target") or {}
    invoked = refers.named_in(target.get("arn")) if isinstance(target, dict) else []
    dead = refers.named_in((target.get("deadLetterConfig") or {}).get("arn")) if isinstance(target, dict) else []
    if not invoked and not dead:
        for urn in refers(schedule, "target"):
            kind = refers.by_urn[urn].type
            if kind.startswith("aws:iam/"):
                continue
            (dead if kind == QUEUE else invoked).append(urn)
    return ([Link(schedule.urn, urn, "invokes", schedule.urn, "schedule") for urn in invoked]
            + [Link(schedule.urn, urn, "DLQ", schedule.urn, "schedule") for urn in dead])


def _grant(recorded: RecordedStack, refers: _Resolver, sender: RecordedResource, target: str) -> str:
    """The role policy of `sender`'s role that names `target` (what allows the send), else the sender."""
    roles = set(refers(sender, "role" if sender.type == FUNCTION else "roleArn"))
    for policy in recorded.of_type(ROLE_POLICY):
        if roles & set(refers(policy, "role")) and target in refers(policy, "policy"):
            return policy.urn
    return sender.urn


def _sends(recorded: RecordedStack, refers: _Resolver, sender: RecordedResource, key: str, kind: str) -> list[Link]:
    """What a function's environment or a state machine's definition names: the queues and topics
    it sends to and, for a state machine, the functions its tasks invoke."""
    found = []
    for urn in refers(sender, key):
        target = refers.by_urn[urn]
        if target.type in SENT_TO:
            found.append(Link(sender.urn, urn, "sends to", _grant(recorded, refers, sender, urn), "sends"))
        elif target.type == FUNCTION and kind == "task":
            found.append(Link(sender.urn, urn, "task invokes", sender.urn, "task"))
    return found


def links(recorded: RecordedStack) -> list[Link]:
    refers = _Resolver(recorded)
    found: list[Link] = []
    for resource in recorded.resources:
        if resource.type == MAPPING:
            functions = refers(resource, "functionName")
            for source in refers(resource, "eventSourceArn"):
                found += [Link(source, function, "event source mapping", resource.urn, "mapping")
                          for function in functions]
            for destination in refers(resource, "destinationConfig"):
                found += [Link(function, destination, "on failure", resource.urn, "on-failure") for function in functions]
        elif resource.type == INVOKE_CONFIG:
            for destination in refers(resource, "destinationConfig"):
                found += [Link(function, destination, "on failure", resource.urn, "on-failure")
                          for function in refers(resource, "functionName")]
        elif resource.type == QUEUE:
            found += [Link(resource.urn, dlq, "redrive (DLQ)", resource.urn, "redrive")
                      for dlq in refers(resource, "redrivePolicy")]
        elif resource.type == FUNCTION:
            found += _sends(recorded, refers, resource, "environment", "sends")
        elif resource.type == STATE_MACHINE:
            found += _sends(recorded, refers, resource, "definition", "task")
        elif resource.type == SCHEDULE:
            found += _schedule_links(refers, resource)
        elif resource.type == EVENT_TARGET:
            found += [Link(rule, target, "rule target", resource.urn, "rule-target")
                      for rule in refers(resource, "rule") for target in refers(resource, "arn")]
        elif resource.type == SUBSCRIPTION:
            found += [Link(topic, endpoint, f"subscription ({resource.inputs.get('protocol', '?')})", resource.urn,
                           "subscription")
                      for topic in refers(resource, "topic") for endpoint in refers(resource, "endpoint")]
        elif resource.type == PIPE:
            found += [Link(source, target, f"pipe: {resource.name}", resource.urn, "pipe")
                      for source in refers(resource, "source") for target in refers(resource, "target")]
        elif resource.type == BUCKET_NOTIFICATION:
            found += [Link(bucket, target, "notification", resource.urn, "notification")
                      for bucket in refers(resource, "bucket") for key in NOTIFIED for target in refers(resource, key)]
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

# Characters GitHub Flavored Markdown gives a meaning inline (emphasis, code, links, HTML, entities,
# strikethrough, table cells); a backslash makes each of them literal (CommonMark: any ASCII
# punctuation may be escaped).
_MARKDOWN_SPECIAL = "\\`*_[]<>|&~!#"
# Where GFM's autolink extension would start a link (a scheme's colon, `www.`'s dot): escaped, the
# text stays text (cmark-gfm links only an unbroken run of text).
_AUTOLINK = re.compile(r"(?i)\b(?:https?:|ftp:|www\.)")
_SAFE_URL = re.compile(r"https?://[A-Za-z0-9._~:/?#@!$&'*+,;=%-]+")


def escape(text: str) -> str:
    """Plain text as GitHub shows it: every character literal (no emphasis, link, image, HTML or
    comment; a URL not made a link by GFM's autolinks), lines joined with <br>."""
    escaped = "".join(f"\\{c}" if c in _MARKDOWN_SPECIAL else c for c in text.replace("\r", ""))
    escaped = _AUTOLINK.sub(lambda m: m.group(0)[:-1] + "\\" + m.group(0)[-1], escaped)
    return "<br>".join(line.strip() for line in escaped.strip().split("\n"))


def code(text: str) -> str:
    """User-controlled text (a name, a type, a stack) shown as inline code that nothing in it can
    break out of: an HTML <code> element around the escaped text, since a Markdown code span ends
    at a backtick and a table row at a newline or a `|`."""
    return f"<code>{escape(text)}</code>"


def _link(url: Optional[str], text: str) -> str:
    """A link to a rule's documentation, only for a plain http(s) URL (one the pack could not have
    written to break out of the link)."""
    if url and _SAFE_URL.fullmatch(url):
        return f"[{text}](<{url}>)"
    return ""


# Characters kept as they are in a Mermaid label; every other ASCII character (quotes, backticks,
# which start a Markdown label in Mermaid and end the fence around the diagram, `#`, which starts an
# entity code, HTML's `<>&`, controls) is written as Mermaid's entity code `#<decimal>;`.
_LABEL_SAFE = re.compile(r"[A-Za-z0-9 _.,:/()'+=@-]")
_LABEL_NAMED = {'"': "#quot;", "<": "#lt;", ">": "#gt;"}


def _label(text: str) -> str:
    """Text inside a quoted Mermaid label, every character literal (Mermaid renders labels as HTML)."""
    return "".join(c if ord(c) > 0x9f or _LABEL_SAFE.fullmatch(c) else _LABEL_NAMED.get(c, f"#{ord(c)};")
                   for c in text)


def _short_type(type_token: str) -> str:
    """aws:sqs/queue:Queue -> sqs Queue"""
    package, _, rest = type_token.partition(":")
    module = rest.partition("/")[0]
    return f"{module} {rest.rpartition(':')[2]}" if package == "aws" else type_token


def judged_violated(link: Link, violated: dict[str, set[str]]) -> bool:
    """The link's verdict: a violation of a policy that judges it, on its holder or either end; a
    link of no kind (or held by a resource of its own) follows its holder's violations."""
    judges = JUDGED_BY.get(link.kind, frozenset())
    if any(judges & violated.get(urn, set()) for urn in {link.held_by, link.source, link.target}):
        return True
    return link.held_by in violated and link.held_by not in (link.source, link.target)


def _diagram(recorded: RecordedStack, group: list[Link], violated: dict[str, set[str]]) -> list[str]:
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
    red = []
    for number, link in enumerate(group):
        held = by_urn[link.held_by]
        broken = judged_violated(link, violated)
        label = link.label if held.type != MAPPING else f"{link.label}: {held.name}"
        lines.append(f'    {ids[link.source]} -- "{_label((MARK + " " if broken else "") + label)}" --> {ids[link.target]}')
        if broken:
            red.append(str(number))
    lines.append("    classDef violation fill:#fde2e1,stroke:#d1242f,color:#6e1b14")
    if red:
        lines.append(f"    linkStyle {','.join(red)} stroke:#d1242f,stroke-width:2px,color:#d1242f")
    lines.append("```")
    return lines


def _verdict(result: PreviewResult) -> str:
    stack = result.recorded.stack
    mandatory, advisory = skipped_checks.count(result, "mandatory"), skipped_checks.count(result, "advisory")
    if result.exit_code == 2:  # --strict, and part of the stack went unchecked
        return (f"### ⚠️ Policy preview of stack {code(stack)}: not fully checked (--strict; see how this preview "
                f"ran), {mandatory} mandatory and {advisory} advisory violations")
    if mandatory:
        return (f"### ❌ Policy preview of stack {code(stack)}: {mandatory} mandatory and {advisory} advisory "
                "violations; the stack may not be deployed")
    return f"### ✅ Policy preview of stack {code(stack)}: no mandatory violations ({advisory} advisory)"


def found(finding: Finding, description: str) -> str:
    """What a violation found: the SDK reports "<description>\n<what it found>"."""
    return finding.message.removeprefix(description).strip() or finding.message


def _row(finding: Finding, description: str, program_dir) -> str:
    where = f"{code(finding.name)}<br><sub>{escape(finding.type)}</sub>" if finding.urn else "(stack)"
    if finding.location is not None:
        where += f"<br><sub>{code(finding.location.shown(program_dir))}</sub>"
    pack = f"{escape(finding.pack)}<br><sub>{escape(finding.pack_version)}</sub>"
    return f"| {finding.level} | {code(finding.policy)} | {pack} | {where} | {escape(found(finding, description))} |"


def _fixes(findings: list[Finding]) -> list[str]:
    """Each violated policy's fix once (a table column would repeat it on every row)."""
    lines = []
    for policy in dict.fromkeys(f.policy for f in findings):
        finding = next(f for f in findings if f.policy == policy)
        docs = _link(finding.url, "docs")
        lines.append(f"- {code(policy)}: {escape(finding.remediation)}{f' ({docs})' if docs else ''}")
    return lines


def _skipped(skipped: list[Finding]) -> list[str]:
    lines = [f"<details><summary>{len(skipped)} checks could not run during preview (a value was unknown "
             "or outside this stack)</summary>", ""]
    for finding in skipped:
        where = f" {code(finding.name)}:" if finding.urn else ""
        lines.append(f"- {code(finding.policy)}{where} {escape(skipped_checks.reason(finding))}")
    return lines + ["", "</details>", ""]


def _suppressed(result: PreviewResult) -> list[str]:
    """Every suppression with its reason, so a reviewer sees what was accepted and why."""
    if not result.suppressions:
        return []
    covered = {f.suppression: f for f in result.suppressed_findings()}
    unmatched = set(result.unmatched_suppressions())
    lines = [f"**Accepted with a reason** ({len(result.suppressed_findings())} suppressed, not counted)", "",
             "| policy | resource | reason | where |", "| --- | --- | --- | --- |"]
    for entry in result.suppressions:
        finding = covered.get(entry)
        resource = finding.name if finding else entry.resource.rsplit("::", 1)[-1] or "(no resource)"
        why = f" (suppresses nothing: {entry.matches_nothing()})" if entry in unmatched \
            else "" if finding else " (suppresses nothing)"
        lines.append(f"| `{entry.policy}` | {escape(resource)} | {escape(entry.reason)} | "
                     f"{escape(entry.describe(result.today) + why)} |")
    return lines + [""]


def _notes(result: PreviewResult) -> list[str]:
    """"How this preview ran": what it could not do as the real engine would (lookups answered by
    invention, components not expanded, managed policies not judged, ...)."""
    notes = result.notes()
    if not notes:
        return []
    return (["<details><summary>How this preview ran (offline)</summary>", ""]
            + [f"- {escape(note)}" for note in notes] + ["", "</details>", ""])


def _relative(text: str, program_dir) -> str:
    """Paths inside the program's folder as a reviewer reads them in the repository: relative to it
    (a PR comment shows the runner's checkout path otherwise)."""
    return text.replace(f"{program_dir}/", "") if program_dir is not None else text


def _failure(result: PreviewResult) -> str:
    """What failed, where and how to fix it, for a run that could not judge the program."""
    failure, recorded = result.failure, result.recorded
    assert failure is not None
    lines = [f"### ⚠️ Policy preview of stack {code(recorded.stack)} could not run: {escape(failure.title)}", "",
             f"Nothing of {code(recorded.project)} was judged (exit 2).", "",
             f"**What failed:** {escape(_relative(result.masked(failure.message), recorded.program_dir))}", ""]
    if failure.where:
        lines += [f"**Where:** {code(_relative(failure.where, recorded.program_dir))}", ""]
    lines += [f"**How to fix:** {escape(failure.fix)}", ""]
    return "\n".join(lines)


def render_markdown(result: PreviewResult) -> str:
    if result.failure is not None:
        return _failure(result)
    recorded, findings, skipped = result.recorded, skipped_checks.violations(result), skipped_checks.skipped(result)
    # One pack: its config here; several: each pack's own, on the next line (never the first's for all).
    config = "" if len(result.packs) > 1 else (
        f"; policy config: {code(result.policy_config.name if result.policy_config else 'pack defaults')}")
    lines = [_verdict(result), "",
             f"{len(recorded.resources)} resources of {code(recorded.project)}{config}"
             f"{'; outputs unknown, as in a first preview' if recorded.unknowns else ''}.", ""]
    if len(result.packs) > 1:
        lines += ["Policy packs: " + ", ".join(
            f"{escape(pack.name)} {escape(pack.version)} (config "
            f"{code(pack.policy_config.name if pack.policy_config else 'pack defaults')})" for pack in result.packs), ""]
    if result.incomplete:
        lines += ["**Not checked (--strict fails on each):**", ""]
        lines += [f"- {escape(line)}" for line in result.unchecked()] + [""]
    if findings:
        lines += ["| level | policy | pack | resource | finding |", "| --- | --- | --- | --- | --- |"]
        lines += [_row(f, result.shown(rule.description) if (rule := result.rule(f.pack, f.policy)) else "",
                       result.recorded.program_dir)
                  for f in findings]
        lines += ["", "**How to fix**", "", *_fixes(findings), ""]
    if skipped:
        lines += _skipped(skipped)
    lines += _suppressed(result)
    lines += _notes(result)
    violated: dict[str, set[str]] = {}
    for finding in findings:
        if finding.urn:
            violated.setdefault(finding.urn, set()).add(finding.policy)
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
            lines.append(f"**{code(by_urn[component].name)}** ({escape(by_urn[component].type)})")
        lines += ["", *_diagram(recorded, groups[component], violated), ""]
    return "\n".join(lines).rstrip() + "\n"
