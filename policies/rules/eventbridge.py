"""EventBridge rules: a rule target retries and keeps what it cannot deliver; a pipe from a queue
or a stream keeps what fails and does not retry forever."""

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs
from pulumi_policy.proxy import UnknownValueError

from integration_blueprint.core import aws_limits

from ._links import (
    EVENT_TARGET,
    PIPE,
    QUEUE,
    STREAM_SOURCES,
    TABLE,
    RedrivesBySource,
    StackIndex,
    arn_service,
    fifo_by_name,
    label,
)
from ._policy import rule
from ._values import each_resource, get, given, is_set, resource_rule, shown, whole_number
from .lambda_mappings import retry_bounds, stream_retention_seconds, unbounded_because


def missing_retry_and_dlq(target, where: str, service: str, report: ReportViolation) -> list[str]:
    """Which of the two settings that keep a failed delivery an EventBridge rule target or a Scheduler
    schedule's target (`where`: its path, "" or "target.") lacks: retryPolicy, deadLetterConfig.arn.
    A FIFO dead-letter queue is reported: both deliver only to a standard queue."""
    missing = []
    if not given(target, "retryPolicy"):
        missing.append(f"{where}retryPolicy (maximumRetryAttempts, maximumEventAgeInSeconds)")
    dead_letter = get(target, "deadLetterConfig", default={})
    if not given(dead_letter, "arn"):
        missing.append(f"{where}deadLetterConfig.arn (a standard SQS queue)")
        return missing
    try:
        arn = dead_letter["arn"]
    except UnknownValueError:
        return missing  # set; its ARN (to tell FIFO from standard) comes later
    if isinstance(arn, str) and fifo_by_name(arn):
        report(f"the dead-letter queue {arn} is FIFO; {service} needs a standard queue.", None)
    return missing


def _check_target(args: ResourceValidationArgs, report: ReportViolation) -> None:
    missing = missing_retry_and_dlq(args.props, "", "EventBridge", report)
    if missing:
        report("the rule target has no " + " and no ".join(missing) + ": an event EventBridge cannot "
               f"deliver is {_retried(args.props)} and then dropped with no record of it.", None)


def _retried(props) -> str:
    """How EventBridge retries a target, in the program's own retryPolicy where it has one."""
    if not given(props, "retryPolicy"):
        return (f"retried up to {aws_limits.EVENTBRIDGE_RETRY_ATTEMPTS_MAX} times within "
                f"{aws_limits.EVENTBRIDGE_EVENT_AGE_DEFAULT_SECONDS} s by default")
    try:
        attempts = get(props, "retryPolicy", "maximumRetryAttempts")
        age = get(props, "retryPolicy", "maximumEventAgeInSeconds")
    except UnknownValueError:
        return "retried as its retryPolicy sets"
    attempts = (aws_limits.EVENTBRIDGE_RETRY_ATTEMPTS_MAX if attempts is None
                else whole_number(attempts, "retryPolicy.maximumRetryAttempts"))
    age = (aws_limits.EVENTBRIDGE_EVENT_AGE_DEFAULT_SECONDS if age is None
           else whole_number(age, "retryPolicy.maximumEventAgeInSeconds"))
    if attempts == 0:
        return "not retried (retryPolicy.maximumRetryAttempts 0)"
    return f"retried up to {shown(attempts)} times within {shown(age)} s"


# ---- pipe-source-has-dlq-and-bounded-retries ------------------------------------------------------

def _source_kind(index: StackIndex, pipe):
    source = index.follow(pipe, "source", lambda: get(pipe.props, "source"), [QUEUE, *STREAM_SOURCES])
    if source is not None:
        return source, ("sqs" if source.resource_type == QUEUE else "stream")
    arn = get(pipe.props, "source")
    service = arn_service(arn) if isinstance(arn, str) else None
    return None, {"sqs": "sqs", "kinesis": "stream", "dynamodb": "stream"}.get(service or "")


def _check_pipes(args: StackValidationArgs, report: ReportViolation) -> None:
    index = StackIndex(args.resources)
    redrives = RedrivesBySource(index)

    def check(pipe):
        source, kind = _source_kind(index, pipe)
        if kind == "sqs":
            if source is not None and not is_set(source.props, "redrivePolicy") and redrives.of(source) is None:
                report(f"pipe '{pipe.name}' reads queue {label(source)}, which has no redrive policy: a "
                       "message the pipe cannot process returns until it expires and blocks the rest. "
                       "Give the queue a redrivePolicy to a dead-letter queue.", pipe.urn)
            return
        if kind != "stream":
            return
        arn = get(pipe.props, "source") if source is None else None  # unknown in a first preview: the source decides
        key = "dynamodbStreamParameters" if (source is not None and source.resource_type == TABLE) or (
            isinstance(arn, str) and arn_service(arn) == "dynamodb") else "kinesisStreamParameters"
        parameters = get(pipe.props, "sourceParameters", key, default={})
        problems = []
        if not is_set(get(parameters, "deadLetterConfig", default={}), "arn"):
            problems.append(f"set sourceParameters.{key}.deadLetterConfig.arn (an SQS queue or SNS "
                            "topic: what a pipe's DLQ accepts) so records that exhaust their retries are kept")
        retries, age = retry_bounds(parameters, f"pipe '{pipe.name}': {key}.")
        retention, kept = stream_retention_seconds(index, source, arn)
        why = unbounded_because(retries, age, retention, kept)
        if why:
            problems.append(f"it {why}: set maximumRetryAttempts or a shorter maximumRecordAgeInSeconds")
        if problems:
            report(f"pipe '{pipe.name}' (stream source): " + "; ".join(problems) + ".", pipe.urn)

    each_resource(index, report, {PIPE: check})


eventbridge_target_has_dlq_and_retry_policy = rule("resource", "eventbridge-target-has-dlq-and-retry-policy",
                                                   resource_rule(_check_target, EVENT_TARGET))

pipe_source_has_dlq_and_bounded_retries = rule("stack", "pipe-source-has-dlq-and-bounded-retries", _check_pipes)

POLICIES = [eventbridge_target_has_dlq_and_retry_policy, pipe_source_has_dlq_and_bounded_retries]
