"""Running the policy pack over a small program written in a test: record it (known values, or a
first preview's unknowns), analyse it with the session's real pack, and pick a rule's verdicts."""

from __future__ import annotations

import json

import pulumi_aws as aws

from integration_blueprint.preview.recording import record_program

SKIPPED = "can't run policy"


def analyse(analyzer, program, *, config=None, unknowns=False):
    analyzer.configure(config or {})
    return analyzer.analyze(record_program(program, stack="test", unknowns=unknowns))


def flagged(violations, policy):
    return [v for v in violations if v.policy == policy and SKIPPED not in v.message]


def skipped(violations, policy):
    return [v for v in violations if v.policy == policy and SKIPPED in v.message]


def resource_names(violations):
    return sorted(v.urn.rsplit("::", 1)[-1] for v in violations)


def document(*statements) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def allow(actions, resources="*", **extra) -> dict:
    return {"Effect": "Allow", "Action": actions, "Resource": resources, **extra}


# A program whose queues break three mandatory rules, two of them accepted by comments in its code
# (the DLQ has no depth alarm; the source redrives after a single receive) and the third by its stack
# file (`suppressing_stack`: the DLQ keeps messages no longer than its source).
SUPPRESSED_QUEUES = '''import json
import pulumi_aws as aws

# blueprint: ignore[dlq-has-depth-alarm] the team's pager watches this DLQ through Datadog (OPS-12)
dlq = aws.sqs.Queue("dlq")
aws.sqs.Queue("orders", redrive_policy=dlq.arn.apply(  # blueprint: ignore[sqs-dlq-max-receive-count] no retries (PAY-7)
    lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1})))
'''


def suppressing_stack(expires: str | None = None) -> str:
    """The stack file accepting SUPPRESSED_QUEUES's third finding (until `expires`, if given)."""
    return ("config:\n  aws:region: us-east-1\n  blueprint:suppressions:\n    - resource: dlq\n"
            "      policy: sqs-dlq-retention-exceeds-source\n      reason: the DLQ is drained hourly by the replay job\n"
            + (f"      expires: {expires}\n" if expires else ""))


def replay_lane(stream, retry, fn) -> None:
    """`fn` consumes Kinesis `stream`, sends what fails to the queue `retry` and consumes that queue
    again (to replay from the stream): the mappings "events-mapping" and "events-retry-mapping"."""
    aws.lambda_.EventSourceMapping("events-mapping", event_source_arn=stream.arn, function_name=fn.name,
                                   starting_position="LATEST", maximum_retry_attempts=3,
                                   destination_config={"on_failure": {"destination_arn": retry.arn}})
    aws.lambda_.EventSourceMapping("events-retry-mapping", event_source_arn=retry.arn, function_name=fn.name,
                                   function_response_types=["ReportBatchItemFailures"])
