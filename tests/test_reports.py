"""Reports that render (issue 23): markdown as GitHub shows it, Mermaid diagrams Mermaid accepts,
SARIF that code scanning places at the user's own line.

The results are built directly (recorded resources, violations, rules), as the engine and the pack
would give them, so each test says exactly what the report gets; rendering is checked with GitHub's
own Markdown renderer (cmark-gfm, through cmarkgfm) and Mermaid's own parser.
"""

import html
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import cmarkgfm
import pytest
from google.protobuf import struct_pb2

from integration_blueprint.preview.analyzer import Rule, Violation
from integration_blueprint.preview.recording import RecordedResource, RecordedStack
from integration_blueprint.preview.reports.markdown import render_markdown
from integration_blueprint.preview.reports.sarif import to_sarif
from integration_blueprint.preview.reports.text import render_text
from integration_blueprint.preview.run import PreviewResult, run_preview

REPO = Path(__file__).resolve().parents[1]
MERMAID_CHECK = REPO / "tools" / "mermaid" / "parse.mjs"
STACK, PROJECT = "ci", "team-app"


def urn(type_token: str, name: str, parent_type: str = "") -> str:
    types = f"{parent_type}${type_token}" if parent_type else type_token
    return f"urn:pulumi:{STACK}::{PROJECT}::{types}::{name}"


def resource(type_token, name, *, parent="", inputs=None, outputs=None, deps=None, source=("", 0), custom=True):
    return RecordedResource(urn=urn(type_token, name), type=type_token, name=name, custom=custom, parent=parent,
                            inputs=inputs or {}, raw_inputs=struct_pb2.Struct(), dependencies=[],
                            property_dependencies=deps or {}, outputs=outputs or {},
                            source_file=source[0], source_line=source[1])


def rule(name, description="The rule's description.", remediation="Do the fix."):
    return Rule(name=name, description=description, level="mandatory", kind="stack", config_schema={},
                remediation=remediation, url="https://docs.aws.amazon.com/x.html", severity="high", tags=("t",))


def result(resources, violations, rules, program_dir=None):
    recorded = RecordedStack(PROJECT, STACK, program_dir, {}, False, resources)
    return PreviewResult(recorded, violations, None, rules={r.name: r for r in rules})


QUEUE, TOPIC, FUNCTION = "aws:sqs/queue:Queue", "aws:sns/topic:Topic", "aws:lambda/function:Function"
SUBSCRIPTION = "aws:sns/topicSubscription:TopicSubscription"
NASTY = ('allows ["sqs:*"] to Principal "*" (anyone); send to <queue ARN> | not_a_link [x](y) '
         "`code` & ~~struck~~ \\ back *star* _under_")


# ---- markdown as GitHub renders it ----------------------------------------------------------------

class _Cells(HTMLParser):
    """The text of each table cell of rendered HTML, as a reader sees it."""

    def __init__(self):
        super().__init__()
        self.cells, self._open = [], None

    def handle_starttag(self, tag, attrs):
        if tag in ("td", "th"):
            self._open = ""
        elif tag == "br" and self._open is not None:
            self._open += "\n"

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._open is not None:
            self.cells.append(self._open)
            self._open = None

    def handle_data(self, data):
        if self._open is not None:
            self._open += data


def github_html(markdown: str) -> str:
    """GitHub's renderer (cmark-gfm with its table extension); raw HTML kept as GitHub keeps the
    <br> and <sub> the report writes, so a `<queue ARN>` left unescaped would vanish as a tag."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=cmarkgfm.cmark.Options.CMARK_OPT_UNSAFE)


def rendered_cells(markdown: str) -> list[str]:
    parser = _Cells()
    parser.feed(github_html(markdown))
    return parser.cells


def test_a_message_full_of_markdown_characters_reads_on_github_as_written():
    queue = resource(QUEUE, "jobs")
    report = render_markdown(result([queue], [Violation("p", "mandatory", queue.urn, f"The rule's description.\n{NASTY}")],
                                    [rule("p")]))
    cells = rendered_cells(report)
    assert NASTY in cells
    assert cells[:5] == ["level", "policy", "pack", "resource", "finding"]  # one table, five columns: nothing split a row
    assert len(cells) == 10


def test_a_fix_full_of_markdown_characters_reads_on_github_as_written():
    queue = resource(QUEUE, "jobs")
    fix = "Set destination to <queue ARN> with on_failure={'destination': arn} and Principal '*'."
    report = render_markdown(result([queue], [Violation("p", "mandatory", queue.urn, "found")], [rule("p", remediation=fix)]))
    text = html.unescape(re.sub(r"<[^>]+>", "", github_html(report)))
    assert fix in text


def test_preview_notes_are_listed_apart_without_a_fix_and_not_counted():
    mapping = resource("aws:lambda/eventSourceMapping:EventSourceMapping", "jobs-mapping")
    note = ("The rule's description.\ncan't run policy 'p' from policy pack 'pack@v1' during preview: "
            "EventSourceMapping 'jobs-mapping': string value at .eventSourceArn can't be known during preview")
    preview = result([mapping], [Violation("p", "advisory", "", note)], [rule("p")])
    text = render_text(preview)
    assert "0 mandatory and 0 advisory violations, 1 checks not run during preview." in text
    assert "Fix:" not in text and "Advisory policy violations" not in text
    assert "[p] EventSourceMapping 'jobs-mapping': string value at .eventSourceArn can't be known" in text
    markdown = render_markdown(preview)
    assert "no mandatory violations (0 advisory)" in markdown and "How to fix" not in markdown
    assert "1 checks could not run during preview" in markdown
    sarif = to_sarif(preview)["runs"][0]
    assert sarif["results"] == []
    [told] = sarif["invocations"][0]["toolExecutionNotifications"]
    assert told["level"] == "note" and ".eventSourceArn" in told["message"]["text"]


# ---- Mermaid: every link drawn, violations marked, every diagram parsed by Mermaid ------------------

def diagrams(markdown: str) -> list[str]:
    return re.findall(r"```mermaid\n(.*?)```", markdown, re.S)


def delivery_stack():
    topic = resource(TOPIC, "orders", outputs={"arn": "arn:aws:sns:eu-west-1:1:orders"})
    queue = resource(QUEUE, 'copies "<all>"', outputs={"arn": "arn:aws:sqs:eu-west-1:1:copies"})
    fn = resource(FUNCTION, "audit-fn")
    rule_ = resource("aws:cloudwatch/eventRule:EventRule", "nightly")
    bucket = resource("aws:s3/bucket:Bucket", "uploads")
    subscription = resource(SUBSCRIPTION, "orders-to-copies", inputs={"protocol": "sqs"},
                            deps={"topic": [topic.urn], "endpoint": [queue.urn]})
    target = resource("aws:cloudwatch/eventTarget:EventTarget", "nightly-target",
                      deps={"rule": [rule_.urn], "arn": [fn.urn]})
    notification = resource("aws:s3/bucketNotification:BucketNotification", "uploads-notify",
                            deps={"bucket": [bucket.urn], "queues": [queue.urn], "lambdaFunctions": [fn.urn]})
    return [topic, queue, fn, rule_, bucket, subscription, target, notification]


def test_every_delivery_link_is_drawn_and_a_violated_one_is_drawn_red():
    resources = delivery_stack()
    subscription = next(r for r in resources if r.type == SUBSCRIPTION)
    [diagram] = diagrams(render_markdown(result(resources, [Violation("p", "mandatory", subscription.urn, "x")],
                                                [rule("p")])))
    nodes = dict(re.findall(r'(n\d+)\["(?:⚠ )?([^<"]+?)<br/>', diagram))
    edges = re.findall(r'(n\d+) -- "([^"]+)" --> (n\d+)', diagram)
    drawn = {(nodes[a], label, nodes[b]) for a, label, b in edges}
    assert drawn == {
        ("orders", "⚠ subscription (sqs)", "copies #quot;#lt;all#gt;#quot;"),
        ("nightly", "rule target", "audit-fn"),
        ("uploads", "notification", "copies #quot;#lt;all#gt;#quot;"),
        ("uploads", "notification", "audit-fn"),
    }
    red = next(i for i, (_, label, _) in enumerate(edges) if label.startswith("⚠"))
    assert f"linkStyle {red} stroke:#d1242f" in diagram


def drawn_edges(diagram: str) -> dict[tuple[str, str, str], bool]:
    """(source name, label without the mark, target name) -> drawn red."""
    nodes = dict(re.findall(r'(n\d+)\["(?:⚠ )?([^<"]+?)<br/>', diagram))
    edges = re.findall(r'(n\d+) -- "([^"]+)" --> (n\d+)', diagram)
    red = set(next(iter(re.findall(r"linkStyle ([\d,]+) stroke:#d1242f", diagram)), "").split(","))
    return {(nodes[a], label.removeprefix("⚠ "), nodes[b]): str(i) in red for i, (a, label, b) in enumerate(edges)}


STATE_MACHINE, ROLE_POLICY = "aws:sfn/stateMachine:StateMachine", "aws:iam/rolePolicy:RolePolicy"


def sender_stack():
    """A dispatcher that sends to a charges queue (its environment names it, its role policy allows
    it), the queue's redrive to a DLQ, and a state machine whose task invokes an item function and
    whose Catch sends to an ops queue."""
    role = resource("aws:iam/role:Role", "dispatcher-role")
    charges, dlq, ops = resource(QUEUE, "charges"), resource(QUEUE, "charges-dlq"), resource(QUEUE, "ops")
    dispatcher = resource(FUNCTION, "dispatcher", deps={"role": [role.urn], "environment": [charges.urn]})
    grant = resource(ROLE_POLICY, "dispatcher-policy", deps={"role": [role.urn], "policy": [charges.urn]})
    charges = resource(QUEUE, "charges", deps={"redrivePolicy": [dlq.urn]})
    item = resource(FUNCTION, "item")
    machine = resource(STATE_MACHINE, "machine", deps={"definition": [item.urn, ops.urn]})
    return [role, charges, dlq, ops, dispatcher, grant, item, machine]


def test_the_links_policies_judge_between_senders_and_what_they_send_to_are_drawn():
    [diagram] = diagrams(render_markdown(result(sender_stack(), [], [])))
    assert drawn_edges(diagram) == {
        ("dispatcher", "sends to", "charges"): False, ("charges", "redrive (DLQ)", "charges-dlq"): False,
        ("machine", "task invokes", "item"): False, ("machine", "sends to", "ops"): False}


def test_a_link_is_red_exactly_when_a_policy_that_judges_it_found_a_violation():
    resources = sender_stack()
    named = {r.name: r for r in resources}
    violations = [
        # on the redrive's source queue, by a redrive rule: the redrive link is red
        Violation("sqs-dlq-retention-exceeds-source", "mandatory", named["charges"].urn, "x"),
        # on the same queue, by a rule that is not about the link: nothing more turns red
        Violation("sqs-queue-encrypted-at-rest", "mandatory", named["ops"].urn, "x"),
        # on the state machine, by the task timeout rule: its task link is red, its send is not
        Violation("sfn-task-timeout-covers-lambda-timeout", "mandatory", named["machine"].urn, "x"),
        # on the role policy that grants the dispatcher's send: the send is red
        Violation("iam-no-wildcard-actions", "mandatory", named["dispatcher-policy"].urn, "x"),
    ]
    rules = [rule(v.policy) for v in violations]
    [diagram] = diagrams(render_markdown(result(resources, violations, rules)))
    assert drawn_edges(diagram) == {
        ("dispatcher", "sends to", "charges"): True, ("charges", "redrive (DLQ)", "charges-dlq"): True,
        ("machine", "task invokes", "item"): True, ("machine", "sends to", "ops"): False}


@pytest.fixture(scope="module")
def mermaid_parser():
    if not (MERMAID_CHECK.parent / "node_modules" / "mermaid").is_dir() or shutil.which("node") is None:
        pytest.fail("Mermaid's parser is not installed: run `make mermaid` (CI's `make test` does)")
    return MERMAID_CHECK


def mermaid_errors(parser: Path, texts: list[str]) -> list[str]:
    done = subprocess.run(["node", str(parser)], input=json.dumps(texts), capture_output=True, text=True,
                          timeout=120, check=True)
    return json.loads(done.stdout)


@pytest.mark.slow
def test_every_diagram_is_accepted_by_mermaids_own_parser(mermaid_parser):
    resources = delivery_stack()
    texts = diagrams(render_markdown(result(resources, [Violation("p", "mandatory", resources[5].urn, "x")],
                                            [rule("p")])))
    texts += diagrams(render_markdown(result(resources, [], [])))
    texts += diagrams(render_markdown(result(sender_stack(), [], [])))
    assert len(texts) == 3
    assert mermaid_errors(mermaid_parser, texts) == ["", "", ""]
    assert mermaid_errors(mermaid_parser, ['flowchart LR\n    n0["a"] -- "b --> n1'])[0]  # and it can fail


# ---- SARIF at the user's own line ----------------------------------------------------------------

def test_a_result_is_located_at_the_users_line_in_whichever_module_relative_to_the_repository(tmp_path, monkeypatch):
    repo = tmp_path / "team"
    (repo / ".git").mkdir(parents=True)
    program = repo / "infra" / "billing"
    (program / "stacks").mkdir(parents=True)
    (program / "Pulumi.yaml").write_text("name: team-app\nruntime: python\n")
    module = program / "queues.py"
    component = resource("team:index:Billing", "billing", custom=False, source=(str(module), 12))
    child = resource(QUEUE, "billing-charges", parent=component.urn)
    elsewhere = resource(QUEUE, "audit", source=(str(program / "__main__.py"), 40))
    preview = result([component, child, elsewhere],
                     [Violation("p", "mandatory", child.urn, "x"), Violation("p", "mandatory", elsewhere.urn, "y")],
                     [rule("p")], program_dir=program)
    monkeypatch.chdir(tmp_path)  # not the repository root: URIs must not depend on it
    run = to_sarif(preview)["runs"][0]
    located = {r["message"]["text"]: r["locations"][0]["physicalLocation"] for r in run["results"]}
    assert located["x"] == {"artifactLocation": {"uri": "infra/billing/queues.py", "uriBaseId": "%SRCROOT%"},
                            "region": {"startLine": 12}}
    assert located["y"]["artifactLocation"]["uri"] == "infra/billing/__main__.py"
    assert located["y"]["region"]["startLine"] == 40
    assert run["automationDetails"]["id"] == "blueprint-preview/infra/billing/ci/"


def test_a_violation_in_a_programs_own_module_is_located_there_by_the_real_engine(tmp_path, policy_analyzer):
    """Issue 23: everything outside __main__.py used to land on __main__.py:1."""
    (tmp_path / ".git").mkdir()
    program = tmp_path / "services" / "orders"
    (program / "infra").mkdir(parents=True)
    (program / "Pulumi.yaml").write_text("name: orders\nruntime: python\n")
    (program / "Pulumi.test.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (program / "infra" / "__init__.py").write_text("")
    (program / "infra" / "queues.py").write_text(
        "import pulumi_aws as aws\n\n\ndef make():\n"
        "    return aws.sqs.Queue('unencrypted', sqs_managed_sse_enabled=False)\n")
    (program / "__main__.py").write_text("from infra import queues\n\nqueues.make()\n")
    run = to_sarif(run_preview(program, stack="test", analyzer=policy_analyzer))["runs"][0]
    [found] = [r for r in run["results"] if r["ruleId"] == "sqs-queue-encrypted-at-rest"]
    location = found["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "services/orders/infra/queues.py"
    assert location["region"]["startLine"] == 5
    assert run["automationDetails"]["id"] == "blueprint-preview/services/orders/test/"


# ---- user-controlled names cannot restyle the comment or the diagrams (issue 31) --------------------

HOSTILE = ("a`b|c [t](https://evil.example/x) ![i](https://evil.example/p.png) <!-- hidden\n"
           "```\n### ✅ all good\n\"]; click n0 href \"https://evil.example\" %% x")


def hostile_stack():
    component = resource("team:index:Billing", HOSTILE, custom=False)
    queue = resource(QUEUE, HOSTILE + " queue", parent=component.urn, outputs={"arn": "arn:aws:sqs:eu-west-1:1:q"})
    dlq = resource(QUEUE, "dlq`|", parent=component.urn, outputs={"arn": "arn:aws:sqs:eu-west-1:1:dlq"})
    queue.property_dependencies = {"redrivePolicy": [dlq.urn]}
    return [component, queue, dlq]


def test_hostile_names_render_on_github_as_text_without_links_images_comments_or_headings():
    resources = hostile_stack()
    preview = result(resources, [Violation("p", "mandatory", resources[1].urn, f"The rule's description.\n{HOSTILE}")],
                     [rule("p")])
    preview.recorded.stack = HOSTILE
    page = github_html(render_markdown(preview))
    assert not re.search(r'(href|src)="[^"]*evil', page) and "<img" not in page and "<!--" not in page
    assert page.count("<h3>") == 1 and page.count("<table>") == 1
    cells = rendered_cells(render_markdown(preview))
    assert len(cells) == 10  # one header row and one row of five cells: nothing split the row
    assert cells[8].startswith(HOSTILE.split("\n")[0])  # the resource cell: the name as written
    assert len(diagrams(render_markdown(preview))) == 1  # no fence closed early


@pytest.mark.slow
def test_hostile_names_are_accepted_by_mermaids_parser_as_plain_labels(mermaid_parser):
    resources = hostile_stack()
    [diagram] = diagrams(render_markdown(result(resources, [], [])))
    assert mermaid_errors(mermaid_parser, [diagram]) == [""]
    nodes = re.findall(r'^    n\d+\["([^"]*)"\]', diagram, re.M)
    assert len(nodes) == 2 and all(HOSTILE.split("`")[0] in n or n.startswith("dlq") for n in nodes)
    # Every line is a node, a link or a style: the name added no statement (a click, a comment).
    assert all(re.match(r'    (n\d+\[|n\d+ -- |classDef |linkStyle )', line) for line in diagram.splitlines()[1:])
    assert "`" not in diagram and "%%" not in diagram


def test_text_output_escapes_control_characters():
    queue = resource(QUEUE, "jobs\x00\x1b[2J\nFAKE: 0 mandatory\u202e")
    text = render_text(result([queue], [Violation("p", "mandatory", queue.urn, "found \x07 bell")], [rule("p")]))
    assert "jobs\\x00\\x1b[2J\\nFAKE: 0 mandatory\\u202e" in text
    assert not any(char in text for char in "\x00\x1b\x07\u202e")
    assert "\nFAKE" not in text
