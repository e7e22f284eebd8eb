"""Every rule's messages state only what the program says (issue 40): each number a violation states
about a resource is what that resource sets (or AWS's default where it sets none), written as the
program writes it, and no fix asks for a value the resource already has. Over the every_violation
fixture (every rule, both modes), the programs that show the named mistakes, and, in the end-to-end
tier, every program of the corpus that runs in this environment."""

import json
from pathlib import Path

import pulumi
import pulumi_aws as aws
import pytest
from message_numbers_env import wrong_numbers
from policy_env import SKIPPED, flagged, replay_lane

from integration_blueprint.preview.recording import record_program

FIXTURE = Path(__file__).parent / "fixtures" / "every_violation"
PROGRAMS_DIR = Path(__file__).parent / "programs"


def wrong_in(violations, recorded) -> list[str]:
    return [f"{v.policy}: {problem}\n  {v.message}" for v in violations if SKIPPED not in v.message
            for problem in wrong_numbers(v, recorded.resources)]


@pytest.mark.parametrize("unknowns", [False, True], ids=["known", "unknowns"])
def test_every_rule_on_the_every_violation_fixture_states_the_fixture_numbers(preview, unknowns):
    result = preview(FIXTURE, "test", unknowns=unknowns)
    assert result.violations
    assert wrong_in(result.violations, result.recorded) == []


def test_the_checker_catches_a_number_the_program_does_not_set():
    """The check can fail: a message stating another value, a float's exponent, a fix already applied."""
    class Resource:
        def __init__(self, name, inputs):
            self.name, self.urn, self.inputs = name, f"urn:pulumi:test::p::aws:sqs/queue:Queue::{name}", inputs

    class Said:
        def __init__(self, message, urn):
            self.message, self.urn = message, urn
    dlq = Resource("jobs-dlq", {"messageRetentionSeconds": 1209600})
    jobs = Resource("jobs", {"messageRetentionSeconds": 1209600, "visibilityTimeoutSeconds": 60})
    wrong = Said("DLQ 'jobs-dlq' keeps messages 1.2096e+06 s, not longer than its source 'jobs' (345600 s). "
                 "Set the DLQ's messageRetentionSeconds to 1209600. queue 'jobs' has visibilityTimeoutSeconds 30",
                 dlq.urn)
    problems = " | ".join(wrong_numbers(wrong, [dlq, jobs]))
    assert "'1.2096e+06' is not written" in problems
    assert "says messageRetentionSeconds 345600 where 'jobs-dlq', 'jobs' set messageRetentionSeconds to 1209600" in problems
    assert "offers to set messageRetentionSeconds to 1209600 on 'jobs-dlq'" in problems
    assert "says visibilityTimeoutSeconds 30 where" in problems
    right = Said("DLQ 'jobs-dlq' keeps messages 1209600 s, not longer than its source 'jobs' (1209600 s).", dlq.urn)
    assert wrong_numbers(right, [dlq, jobs]) == []


# ---- the mistakes issue 40 names, as public programs write them ------------------------------------

def zero_retries_no_destination():
    role = aws.iam.Role("dispatch-role", assume_role_policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]}))
    fn = aws.lambda_.Function("dispatch", role=role.arn, runtime="python3.12", handler="app.handler",
                              code=pulumi.AssetArchive({}), timeout=30)
    aws.lambda_.FunctionEventInvokeConfig("dispatch-async", function_name=fn.name, maximum_retry_attempts=0)
    rule = aws.cloudwatch.EventRule("dispatch-hourly", schedule_expression="rate(1 hour)")
    aws.lambda_.Permission("dispatch-from-events", action="lambda:InvokeFunction", function=fn.name,
                           principal="events.amazonaws.com", source_arn=rule.arn)
    aws.cloudwatch.EventTarget("dispatch-target", rule=rule.name, arn=fn.arn,
                               retry_policy={"maximum_retry_attempts": 0, "maximum_event_age_in_seconds": 600})
    schedule_dlq = aws.sqs.Queue("nightly-dlq", message_retention_seconds=1_209_600)
    aws.scheduler.Schedule("nightly", schedule_expression="cron(0 3 * * ? *)", flexible_time_window={"mode": "OFF"},
                           target={"arn": schedule_dlq.arn, "role_arn": role.arn,
                                   "retry_policy": {"maximum_retry_attempts": 0}})
    # a DLQ already at the 14 days SQS allows, behind a source that keeps messages as long
    dlq = aws.sqs.Queue("ledger-dlq", message_retention_seconds=1_209_600)
    aws.sqs.Queue("ledger", message_retention_seconds=1_209_600,
                  redrive_policy=dlq.arn.apply(lambda arn: json.dumps({"deadLetterTargetArn": arn,
                                                                       "maxReceiveCount": 5})))
    # a consumer reserved at 1: no maximumConcurrency (2 at least) fits under it
    jobs = aws.sqs.Queue("jobs", visibility_timeout_seconds=180)
    worker = aws.lambda_.Function("jobs-worker", role=role.arn, runtime="python3.12", handler="app.handler",
                                  code=pulumi.AssetArchive({}), timeout=30, reserved_concurrent_executions=1)
    aws.lambda_.EventSourceMapping("jobs-mapping", event_source_arn=jobs.arn, function_name=worker.name,
                                   function_response_types=["ReportBatchItemFailures"],
                                   scaling_config={"maximum_concurrency": 2})


def test_the_named_messages_say_what_the_program_sets(policy_analyzer):
    policy_analyzer.configure({})
    recorded = record_program(zero_retries_no_destination, stack="test")
    violations = policy_analyzer.analyze(recorded)
    [dropped] = flagged(violations, "lambda-async-invoke-has-on-failure-destination")
    assert "not retried (maximumRetryAttempts 0)" in dropped.message and "2 times" not in dropped.message
    assert "FunctionEventInvokeConfig 'dispatch-async'" in dropped.message  # the config it already has
    [target] = flagged(violations, "eventbridge-target-has-dlq-and-retry-policy")
    assert "not retried (retryPolicy.maximumRetryAttempts 0)" in target.message and "24 hours" not in target.message
    [schedule] = flagged(violations, "scheduler-target-has-retry-and-dlq")
    assert "at its first failure (retryPolicy.maximumRetryAttempts 0: not retried)" in schedule.message
    assert "default retries" not in schedule.message
    [retention] = flagged(violations, "sqs-dlq-retention-exceeds-source")
    assert "keeps messages 1209600 s" in retention.message
    assert "lower the source's messageRetentionSeconds below 1209600" in retention.message
    assert "Set the DLQ's messageRetentionSeconds" not in retention.message
    [concurrency] = flagged(violations, "lambda-sqs-esm-concurrency-within-reserved")
    assert "raise reservedConcurrentExecutions to at least 2" in concurrency.message
    assert "remove the reservation" in concurrency.message and "at most 1" not in concurrency.message
    assert wrong_in(violations, recorded) == []


# ---- the corpus (end-to-end tier) -----------------------------------------------------------------

def _runs_here(name: str) -> bool:
    """A corpus program that records in this environment as it is (no virtualenv of its own, no
    stack references, no folder to start from, not a program that fails)."""
    expected = json.loads((PROGRAMS_DIR / name / "expected.json").read_text())
    yaml_text = (PROGRAMS_DIR / name / "Pulumi.yaml").read_text()
    return ("virtualenv" not in yaml_text and not {"venv", "pinned", "cwd", "stack_references"} & set(expected)
            and all(mode["exit"] != 2 for mode in expected["modes"].values()))


CORPUS = sorted(p.name for p in PROGRAMS_DIR.iterdir() if (p / "expected.json").exists() and _runs_here(p.name))


@pytest.mark.slow
@pytest.mark.parametrize("name", CORPUS)
def test_every_corpus_message_states_the_program_numbers(policy_analyzer, name, monkeypatch):
    expected = json.loads((PROGRAMS_DIR / name / "expected.json").read_text())
    for key in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    for key, value in expected.get("env", {}).items():
        monkeypatch.setenv(key, value.replace("{program}", str(PROGRAMS_DIR / name)))
    policy_analyzer.configure({})
    for unknowns in (False, True):
        recorded = record_program(PROGRAMS_DIR / name, stack=expected["stack"], unknowns=unknowns)
        assert wrong_in(policy_analyzer.analyze(recorded), recorded) == [], unknowns


def consumed_stream_and_queue(*, stream_hours, visibility, receives, function_timeout):
    """A stream whose on-failure queue is consumed again by the same function (a replay lane)."""
    stream = aws.kinesis.Stream("events", shard_count=1, retention_period=stream_hours,
                                encryption_type="KMS", kms_key_id="alias/aws/kinesis")
    dead = aws.sqs.Queue("events-retry-dlq", message_retention_seconds=1_209_600)
    retry = aws.sqs.Queue("events-retry", visibility_timeout_seconds=visibility, redrive_policy=dead.arn.apply(
        lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": receives})))
    fn = aws.lambda_.Function("events-fn", role="arn:aws:iam::123456789012:role/events", runtime="python3.12",
                              handler="app.handler", code=pulumi.AssetArchive({}), timeout=function_timeout)
    replay_lane(stream, retry, fn)


def test_a_fix_beyond_what_aws_accepts_is_not_offered(policy_analyzer):
    # the stream already keeps records the 8760 h Kinesis allows: only the replay lane can shrink
    policy_analyzer.configure({})
    longest = policy_analyzer.analyze(record_program(lambda: consumed_stream_and_queue(
        stream_hours=8760, visibility=43_200, receives=1000, function_timeout=900), stack="test"))
    [replay] = flagged(longest, "kinesis-replay-window-within-retention")
    assert "Raise the stream's retentionPeriod" not in replay.message
    assert "already keeps records the 8760 h Kinesis allows at most" in replay.message
    # six times a 900 s function (here a team's multiplier of 60) is beyond the 43200 s SQS allows
    policy_analyzer.configure({"sqs-visibility-timeout-six-times-function-timeout": {"multiplier": 60}})
    beyond = policy_analyzer.analyze(record_program(lambda: consumed_stream_and_queue(
        stream_hours=24, visibility=900, receives=5, function_timeout=900), stack="test"))
    [visibility] = flagged(beyond, "sqs-visibility-timeout-six-times-function-timeout")
    assert "set visibilityTimeoutSeconds to at least" not in visibility.message
    assert "needs 54000 s, beyond the 43200 s SQS allows: lower the function's timeout to at most 720 s" in \
        visibility.message
