"""Every report points at the user's own line for each finding, joined by the resource's type and
name (names are unique per type only: a queue, a role and a function may all be `refunds`); a
suppression comment works on the line a finding points at, and one that matches no finding is
reported in every format. A Python function whose handler is not in its archive is a mandatory
finding at that line."""

from pathlib import Path

import pytest

from integration_blueprint.preview.reports.markdown import code, render_markdown
from integration_blueprint.preview.reports.sarif import to_sarif
from integration_blueprint.preview.reports.text import render_text
from integration_blueprint.preview.run import run_preview

PROGRAM = '''import json

import pulumi
import pulumi_aws as aws

TRUST = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                    "Principal": {"Service": "lambda.amazonaws.com"}}]})

dlq = aws.sqs.Queue("refunds-dlq", message_retention_seconds=1209600)
redrive = dlq.arn.apply(lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1}))
queue = aws.sqs.Queue("refunds", redrive_policy=redrive)  # blueprint: ignore[lambda-log-group-has-retention] Datadog
role = aws.iam.Role("refunds", assume_role_policy=TRUST)
# blueprint: ignore[lambda-log-group-has-retention] the platform ships these logs (OBS-3)
aws.lambda_.Function(
    "refunds",
    role=role.arn, runtime="python3.12", handler="refund.handler", timeout=30,
    code=pulumi.FileArchive("./app"))

# blueprint: ignore[sqs-dlq-max-receive-count] left over from a queue deleted last year
'''


def line_of(text: str, program: str = PROGRAM) -> int:
    return next(number for number, line in enumerate(program.splitlines(), start=1) if text in line)


@pytest.fixture(scope="module")
def refunds(tmp_path_factory, policy_analyzer):
    folder = tmp_path_factory.mktemp("refunds") / "program"
    (folder / "app").mkdir(parents=True)
    (folder / "Pulumi.yaml").write_text("name: refunds\nruntime: python\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (folder / "__main__.py").write_text(PROGRAM)
    (folder / "app" / "refunds.py").write_text("def handler(event, context):\n    return event\n")
    return run_preview(folder, analyzer=policy_analyzer)


def _finding(result, policy):
    [found] = [f for f in result.findings() if f.policy == policy]
    return found


def test_a_function_named_like_a_queue_is_located_at_its_own_call(refunds):
    function_line, queue_line = line_of("aws.lambda_.Function("), line_of('aws.sqs.Queue("refunds",')
    handler = _finding(refunds, "lambda-handler-in-archive")
    receives = _finding(refunds, "sqs-dlq-max-receive-count")

    assert (handler.type, handler.name, handler.location.line) == ("aws:lambda/function:Function", "refunds",
                                                                  function_line)
    assert (receives.type, receives.location.line) == ("aws:sqs/queue:Queue", queue_line)
    assert handler.location.file.name == receives.location.file.name == "__main__.py"


def test_a_missing_handler_is_a_mandatory_finding_naming_the_module_it_meant(refunds):
    handler = _finding(refunds, "lambda-handler-in-archive")

    assert handler.level == "mandatory" and handler.suppression is None and refunds.exit_code == 1
    assert "module 'refund' is not in the function's archive (refund.py) (did you mean 'refunds'?)" in handler.message
    assert "Runtime.ImportModuleError" in handler.message


def test_a_comment_on_the_functions_line_suppresses_its_finding_and_one_on_the_queues_line_does_not(refunds):
    retention = _finding(refunds, "lambda-log-group-has-retention")

    assert retention.suppression is not None
    assert retention.suppression.line == line_of("the platform ships these logs")
    unmatched = {entry.line: entry.matches_nothing() for entry in refunds.unmatched_suppressions()}
    assert set(unmatched) == {line_of("] Datadog"), line_of("left over from a queue")}
    assert unmatched[line_of("] Datadog")].endswith(
        "refunds has no lambda-log-group-has-retention finding (is the comment on another resource's line?)")
    assert "is on no resource's declaring line" in unmatched[line_of("left over from a queue")]


def test_every_format_gives_each_finding_its_file_and_line_and_names_the_suppressions_matching_nothing(refunds):
    function_line = line_of("aws.lambda_.Function(")
    text, markdown = render_text(refunds), render_markdown(refunds)
    report, sarif = refunds.to_json(), to_sarif(refunds)

    assert (f"[lambda-handler-in-archive] refunds (aws:lambda/function:Function) at __main__.py:{function_line}"
            in text)
    assert "Suppressions that match no finding (2): they suppress nothing" in text
    assert code(f"__main__.py:{function_line}") in markdown and markdown.count("suppresses nothing: comment at") == 2
    [violation] = [v for v in report["violations"] if v["policy"] == "lambda-handler-in-archive"]
    assert (Path(violation["file"]).name, violation["line"]) == ("__main__.py", function_line)
    assert sorted(s["matchesNothing"] for s in report["suppressions"]) == [False, True, True]
    run = sarif["runs"][0]
    [result] = [r for r in run["results"] if r["ruleId"] == "lambda-handler-in-archive"]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == function_line
    warnings = [n for n in run["invocations"][0]["toolExecutionNotifications"] if n["level"] == "warning"]
    assert sorted(n["locations"][0]["physicalLocation"]["region"]["startLine"] for n in warnings) == [
        line_of("] Datadog"), line_of("left over from a queue")]
    assert "lambda-handler-in-archive" in {rule["id"] for pack in run["tool"]["extensions"] for rule in pack["rules"]}
