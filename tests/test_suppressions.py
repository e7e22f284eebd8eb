"""Accepting a finding with a reason: a `blueprint: ignore[<policy>] <reason>` comment where the
resource is declared (in the program's language) or an entry in the stack file; a suppressed
mandatory violation no longer fails the run, every suppression is listed with its reason in every
format, an expired one stops suppressing, and one without a reason (or for no policy of the pack)
is refused.
"""

import json
from pathlib import Path

import pytest
from policy_env import SUPPRESSED_QUEUES, suppressing_stack

from integration_blueprint.cli import main
from integration_blueprint.preview import suppressions
from integration_blueprint.preview.engine import RecordedResource
from integration_blueprint.preview.recording import RecordedStack
from integration_blueprint.preview.reports.markdown import render_markdown
from integration_blueprint.preview.reports.sarif import to_sarif
from integration_blueprint.preview.reports.text import render_text
from integration_blueprint.preview.run import run_preview

# Three mandatory violations: the DLQ has no depth alarm and keeps messages no longer than its
# source, and the source redrives after a single receive.
PROGRAM = SUPPRESSED_QUEUES


def write_program(folder: Path, program: str = PROGRAM, expires: str = "2999-12-31") -> Path:
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: accepted\nruntime: python\n")
    (folder / "Pulumi.dev.yaml").write_text(suppressing_stack(expires))
    (folder / "__main__.py").write_text(program)
    return folder


@pytest.fixture(scope="module")
def accepted(tmp_path_factory, policy_analyzer):
    return run_preview(write_program(tmp_path_factory.mktemp("accepted") / "program"), analyzer=policy_analyzer)


def test_suppressed_mandatory_violations_no_longer_fail_the_run(accepted):
    assert accepted.count_violations("mandatory") == 0 and accepted.exit_code == 0
    assert sorted((f.policy, f.name, f.suppression.kind) for f in accepted.suppressed_findings()) == [
        ("dlq-has-depth-alarm", "dlq", "inSource"), ("sqs-dlq-max-receive-count", "orders", "inSource"),
        ("sqs-dlq-retention-exceeds-source", "dlq", "external")]


def test_a_comment_suppresses_on_its_own_line_and_alone_on_the_line_above(accepted):
    lines = {f.policy: f.suppression.line for f in accepted.suppressed_findings()}
    assert lines["dlq-has-depth-alarm"] == 4  # the comment line above `aws.sqs.Queue("dlq")`
    assert lines["sqs-dlq-max-receive-count"] == 6  # the declaring line itself


def test_json_lists_every_suppression_with_its_reason_and_what_it_covered(accepted):
    report = accepted.to_json()
    assert report["summary"]["mandatory"] == 0 and report["summary"]["suppressed"] == 3
    assert {v["policy"] for v in report["violations"] if v["level"] == "mandatory"} == set()
    by_policy = {s["policy"]: s for s in report["suppressions"]}
    assert by_policy["sqs-dlq-max-receive-count"]["reason"] == "no retries (PAY-7)"
    assert by_policy["sqs-dlq-retention-exceeds-source"]["expires"] == "2999-12-31"
    assert all(s["suppressed"] and not s["expired"] for s in report["suppressions"])
    assert {s["suppression"]["reason"] for s in report["suppressed"]} == {s["reason"] for s in report["suppressions"]}


def test_sarif_keeps_each_suppressed_result_with_its_kind_and_justification(accepted):
    results = to_sarif(accepted)["runs"][0]["results"]
    suppressed = {r["ruleId"]: r["suppressions"][0] for r in results if r.get("suppressions")}
    assert suppressed["sqs-dlq-max-receive-count"]["kind"] == "inSource"
    assert suppressed["sqs-dlq-max-receive-count"]["justification"] == "no retries (PAY-7)"
    assert suppressed["sqs-dlq-max-receive-count"]["location"]["physicalLocation"]["region"]["startLine"] == 6
    assert suppressed["sqs-dlq-retention-exceeds-source"]["kind"] == "external"
    assert suppressed["sqs-dlq-retention-exceeds-source"]["justification"] == "the DLQ is drained hourly by the replay job"
    assert len(suppressed) == 3


def test_text_and_markdown_list_the_suppressions_with_their_reasons(accepted):
    text, markdown = render_text(accepted), render_markdown(accepted)
    assert "Suppressed with a reason (3)" in text and "3 suppressed" in text.splitlines()[-1]
    for reason in ("the team's pager watches this DLQ through Datadog (OPS-12)", "no retries (PAY-7)",
                   "the DLQ is drained hourly by the replay job"):
        assert reason in text
        assert reason in markdown
    assert "Accepted with a reason" in markdown and "no mandatory violations" in markdown


def test_an_expired_suppression_stops_suppressing_and_is_listed_as_expired(tmp_path, policy_analyzer):
    result = run_preview(write_program(tmp_path / "program", expires="2020-01-31"), analyzer=policy_analyzer)
    assert [(f.policy, f.name) for f in result.violation_findings() if f.level == "mandatory"] == [
        ("sqs-dlq-retention-exceeds-source", "dlq")]
    assert result.exit_code == 1
    assert "Expired suppressions (1)" in render_text(result) and "expired 2020-01-31" in render_text(result)
    assert [s["expired"] for s in result.to_json()["suppressions"] if s["kind"] == "external"] == [True]


@pytest.mark.parametrize("comment, complaint", [
    ("# blueprint: ignore[dlq-has-depth-alarm]", "gives no reason"),
    ("# blueprint: ignore[dlq-has-depth-alarms] watched elsewhere", "did you mean 'dlq-has-depth-alarm'?"),
    ("# blueprint: ignore[] watched elsewhere", "names no policy"),
])
def test_a_comment_without_a_reason_or_a_known_policy_is_refused(tmp_path, capsys, comment, complaint):
    program = write_program(tmp_path / "program", PROGRAM.replace(
        "# blueprint: ignore[dlq-has-depth-alarm] the team's pager watches this DLQ through Datadog (OPS-12)", comment))
    assert main(["preview", "--program", str(program)]) == 2
    error = capsys.readouterr().err
    assert complaint in error and f"{program / '__main__.py'}:4" in error


def test_a_stack_entry_without_a_reason_is_refused(tmp_path, capsys):
    program = write_program(tmp_path / "program")
    stack = program / "Pulumi.dev.yaml"
    stack.write_text(stack.read_text().replace("      reason: the DLQ is drained hourly by the replay job\n", ""))
    assert main(["preview", "--program", str(program)]) == 2
    assert "blueprint:suppressions[0]: a suppression needs a `reason`" in capsys.readouterr().err


def test_a_typescript_program_s_comment_uses_its_own_comment_syntax(tmp_path):
    source = tmp_path / "index.ts"
    source.write_text('import * as aws from "@pulumi/aws";\n'
                      '// blueprint: ignore[dlq-has-depth-alarm] watched by the platform team\n'
                      'const dlq = new aws.sqs.Queue("dlq");\n'
                      'const jobs = new aws.sqs.Queue("jobs"); # blueprint: ignore[dlq-has-depth-alarm] not TypeScript\n')

    def declared(name: str, line: int) -> RecordedResource:
        return RecordedResource(urn=f"urn:pulumi:dev::p::aws:sqs/queue:Queue::{name}", type="aws:sqs/queue:Queue",
                                name=name, custom=True, parent="", inputs={}, raw_inputs=None, dependencies=[],
                                property_dependencies={}, source_file=str(source), source_line=line)

    recorded = RecordedStack(project="p", stack="dev", program_dir=tmp_path, unknowns=False,
                             config={"blueprint:suppressions": json.dumps([])},
                             resources=[declared("dlq", 3), declared("jobs", 4)], language="nodejs")

    found = suppressions.collect(recorded, {"dlq-has-depth-alarm"}, None)
    assert [(s.resource.rsplit("::", 1)[-1], s.reason, s.line) for s in found] == [
        ("dlq", "watched by the platform team", 2)]


def test_a_reason_full_of_markdown_characters_reads_on_github_as_written(tmp_path, policy_analyzer):
    import html

    import cmarkgfm

    nasty = "ok | `tick` [link](https://example.com) ![t](https://example.com/t.png) <!-- *x* _y_"
    program = write_program(tmp_path / "program", PROGRAM.replace("the team's pager watches this DLQ through "
                                                                  "Datadog (OPS-12)", nasty))
    rendered = cmarkgfm.github_flavored_markdown_to_html(render_markdown(run_preview(program, analyzer=policy_analyzer)),
                                                         options=cmarkgfm.cmark.Options.CMARK_OPT_UNSAFE)
    table = rendered[rendered.index("Accepted with a reason"):]
    row = next(line for line in table.split("<tr>") if "dlq-has-depth-alarm" in line)
    assert row.count("<td>") == 4  # the reason's `|` split nothing
    assert "<a " not in table.split("</table>")[0] and "<img" not in table.split("</table>")[0]
    assert nasty in html.unescape(row.replace("<code>", "`").replace("</code>", "`"))
