"""`blueprint preview --strict` keeps the README's word, "exit 2 when something went unchecked": a
check a rule could not run (a value unknown during preview) fails it like a remote component not
expanded, and every report lists what went unchecked; SARIF marks the run incomplete."""

import json
import textwrap
from pathlib import Path

import jsonschema

from integration_blueprint.cli import main
from integration_blueprint.preview.reports.markdown import render_markdown
from integration_blueprint.preview.reports.sarif import to_sarif
from integration_blueprint.preview.reports.text import render_text
from integration_blueprint.preview.run import run_preview

SARIF_SCHEMA = Path(__file__).resolve().parent / "fixtures" / "schemas" / "sarif-schema-2.1.0.json"
# Values known only when deployed: during `pulumi preview` the program hands the engine unknowns, so the
# DLQ rules cannot read the redrive policy (the shape of a program that reads a value a deploy step makes).
PROGRAM = '''
import asyncio
import json

import pulumi
import pulumi_aws as aws


def known_at_deploy(value):
    if not pulumi.runtime.is_dry_run():
        return value
    loop = asyncio.get_event_loop()
    resolved, known = loop.create_future(), loop.create_future()
    resolved.set_result(value)
    known.set_result(False)
    return pulumi.Output(set(), resolved, known)


dlq = aws.sqs.Queue("orders-dlq", message_retention_seconds=1209600)
aws.cloudwatch.MetricAlarm("orders-dlq-depth", namespace="AWS/SQS", metric_name="ApproximateNumberOfMessagesVisible",
                           dimensions={"QueueName": dlq.name}, statistic="Maximum", period=60, evaluation_periods=1,
                           threshold=1, comparison_operator="GreaterThanOrEqualToThreshold")
aws.sqs.Queue("orders", visibility_timeout_seconds=180, redrive_policy=known_at_deploy(
    dlq.arn.apply(lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 5}))))
'''
NOT_RUN = {"sqs-dlq-max-receive-count"}


def write_program(folder: Path) -> Path:
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: known-at-deploy\nruntime: python\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (folder / "__main__.py").write_text(textwrap.dedent(PROGRAM))
    return folder


def test_strict_exits_2_on_checks_not_run_and_every_report_lists_them(tmp_path, capsys, policy_analyzer):
    program = write_program(tmp_path / "app")

    assert main(["preview", "--program", str(program), "--format", "json", "--strict"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert {check["policy"] for check in report["skippedChecks"]} == NOT_RUN
    assert report["summary"]["mandatory"] == 0  # nothing violated: the exit is for what went unchecked
    assert len(report["incomplete"]) == len(NOT_RUN)
    assert all(".redrivePolicy can't be known during preview" in line for line in report["incomplete"])

    lenient = run_preview(program, analyzer=policy_analyzer)
    assert lenient.exit_code == 0 and not lenient.incomplete  # without --strict: reported, not a failure
    assert to_sarif(lenient)["runs"][0]["invocations"][0]["executionSuccessful"] is True

    strict = run_preview(program, analyzer=policy_analyzer, strict=True)
    assert strict.exit_code == 2
    text = render_text(strict)
    assert f"--strict: not fully checked ({len(NOT_RUN)}), so the preview fails:" in text
    assert all(f"check {policy}" in text.split("--strict:")[1] for policy in NOT_RUN)
    markdown = render_markdown(strict)
    assert "not fully checked" in markdown and all(f"check {policy}" in markdown for policy in NOT_RUN)
    sarif = to_sarif(strict)
    jsonschema.validate(sarif, json.loads(SARIF_SCHEMA.read_text()), cls=jsonschema.Draft4Validator)
    invocation = sarif["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    incomplete = invocation["toolExecutionNotifications"][0]
    assert incomplete["level"] == "error" and incomplete["descriptor"]["id"] == "blueprint-preview/incomplete"
    assert all(policy in incomplete["message"]["text"] for policy in NOT_RUN)
