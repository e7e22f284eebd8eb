"""Lambda event source mapping rules: partial batch responses and concurrency for SQS, failure
handling for streams, and a function role that can read the source at all."""

from typing import Optional

from pulumi_policy import ReportViolation, StackValidationArgs

from integration_blueprint.core import aws_limits

from ._links import (
    MAPPING,
    QUEUE,
    STREAM,
    STREAM_CONSUMER,
    TABLE,
    TOPIC,
    StackIndex,
    arn_service,
    label,
    mapping_function,
    mapping_source,
    mapping_source_kind,
)
from ._policy import rule
from ._roles import RoleGrants
from ._values import Malformed, each_resource, get, given, is_set, known, number, plain, shown, whole_number, within

REPORT_BATCH_ITEM_FAILURES = "ReportBatchItemFailures"


def _mappings_of_kind(kind: str, check):
    """A stack check that runs `check(index, mapping, report)` on every mapping whose source is of `kind`."""
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        index = StackIndex(args.resources)

        def check_one(mapping):
            if mapping_source_kind(index, mapping) == kind:
                check(index, mapping, report)
        each_resource(index, report, {MAPPING: check_one})
    return validate


def _check_batch_item_failures(index, mapping, report: ReportViolation) -> None:
    types = plain(get(mapping.props, "functionResponseTypes", default=[]))
    if not isinstance(types, list):
        raise Malformed(f"functionResponseTypes must be a list, got {types!r}")
    if REPORT_BATCH_ITEM_FAILURES in types:
        return
    batch = whole_number(get(mapping.props, "batchSize", default=aws_limits.SQS_ESM_BATCH_SIZE_DEFAULT),
                         f"mapping '{mapping.name}': batchSize")
    window = number(mapping.props, "maximumBatchingWindowInSeconds", 0)
    if batch == 1 and not window:
        return  # a failed batch is the one message that failed: nothing that succeeded is redone
    report(f"SQS mapping '{mapping.name}' (batchSize {shown(batch)}) does not set functionResponseTypes "
           f"[\"{REPORT_BATCH_ITEM_FAILURES}\"]: one failed message makes the whole batch "
           "visible again, so messages that succeeded are processed again.", mapping.urn)


def _check_on_failure(index, mapping, report: ReportViolation) -> None:
    # Being set is what matters: in a first preview the destination's ARN is not known yet.
    on_failure = get(mapping.props, "destinationConfig", "onFailure", default={})
    if not given(on_failure, "destinationArn"):
        report(f"stream mapping '{mapping.name}' has no on-failure destination: records that exhaust "
               "their retries or age are dropped without a trace. Set destinationConfig.onFailure."
               "destinationArn to a standard SQS queue (or SNS topic, S3 bucket).", mapping.urn)


def stream_retention_seconds(index: StackIndex, source, arn) -> tuple:
    """(seconds, what) a stream source keeps records, or (None, "") when this stack cannot say."""
    if source is not None and source.resource_type == STREAM_CONSUMER:
        source = index.follow(source, "streamArn", lambda: get(source.props, "streamArn"), [STREAM])
    if source is not None and source.resource_type == STREAM:
        hours = within(number(source.props, "retentionPeriod", aws_limits.KINESIS_RETENTION_DEFAULT_HOURS),
                       aws_limits.KINESIS_RETENTION_MIN_HOURS, aws_limits.KINESIS_RETENTION_MAX_HOURS,
                       f"stream {label(source)}: retentionPeriod (hours)")
        return hours * 3600, f"stream {label(source)} keeps records {shown(hours)} h"
    if (source is not None and source.resource_type == TABLE) or (isinstance(arn, str) and arn_service(arn) == "dynamodb"):
        hours = aws_limits.DYNAMODB_STREAM_RETENTION_HOURS
        return hours * 3600, f"DynamoDB streams keep records {hours} h"
    return None, ""


def retry_bounds(props, what: str) -> tuple:
    """(maximumRetryAttempts, maximumRecordAgeInSeconds) of a stream mapping or pipe, checked
    against the ranges AWS accepts (-1 means no limit for both)."""
    retries = within(whole_number(get(props, "maximumRetryAttempts", default=aws_limits.KINESIS_ESM_RETRY_ATTEMPTS_DEFAULT),
                                  f"{what} maximumRetryAttempts"),
                     0, aws_limits.KINESIS_ESM_RETRY_ATTEMPTS_MAX, f"{what} maximumRetryAttempts", also=(-1,))
    age = within(whole_number(get(props, "maximumRecordAgeInSeconds", default=aws_limits.KINESIS_ESM_RECORD_AGE_DEFAULT),
                              f"{what} maximumRecordAgeInSeconds"),
                 aws_limits.KINESIS_ESM_RECORD_AGE_MIN_SECONDS, aws_limits.KINESIS_ESM_RECORD_AGE_MAX_SECONDS,
                 f"{what} maximumRecordAgeInSeconds", also=(-1,))
    return retries, age


def unbounded_because(retries, age, retention, kept: str) -> str:
    """Why a stream consumer's retries are not bounded in practice, or "" when they are."""
    if retries != -1:
        return ""
    if age == -1:
        return ("retries a failing batch until the record expires (maximumRetryAttempts and "
                "maximumRecordAgeInSeconds are both -1, the defaults)")
    if retention is not None and age >= retention:
        return (f"bounds retries only by maximumRecordAgeInSeconds {shown(age)}, which is at or beyond the "
                f"source's retention ({kept}, {shown(retention)} s), so it bounds nothing")
    return ""


def _check_bounded(index, mapping, report: ReportViolation) -> None:
    retries, age = retry_bounds(mapping.props, f"mapping '{mapping.name}':")
    if retries != -1 or age == -1:  # decided without the source's retention (which may be unknown)
        why = unbounded_because(retries, age, None, "")
    else:
        source = mapping_source(index, mapping)
        # The ARN is read only when the stack holds no source: in a first preview a table's stream
        # ARN is unknown, but the mapping's source is still the table it depends on.
        arn = get(mapping.props, "eventSourceArn") if source is None else None
        retention, kept = stream_retention_seconds(index, source, arn)
        why = unbounded_because(retries, age, retention, kept)
    if why:
        report(f"stream mapping '{mapping.name}' {why}: one poison record blocks its shard until it "
               f"expires. Set maximumRetryAttempts (0-{aws_limits.KINESIS_ESM_RETRY_ATTEMPTS_MAX}) or a "
               f"maximumRecordAgeInSeconds ({aws_limits.KINESIS_ESM_RECORD_AGE_MIN_SECONDS}-"
               f"{aws_limits.KINESIS_ESM_RECORD_AGE_MAX_SECONDS}) shorter than the retention.", mapping.urn)


# ---- lambda-sqs-esm-concurrency-within-reserved -------------------------------------------------

def _check_concurrency(index, mapping, report: ReportViolation) -> None:
    function = mapping_function(index, mapping)
    if function is None:
        return
    reserved = whole_number(get(function.props, "reservedConcurrentExecutions", default=-1),
                            f"function {label(function)}: reservedConcurrentExecutions")
    if reserved < 0:
        return  # unreserved: the account's pool, not a fixed ceiling below the poller
    maximum = get(mapping.props, "scalingConfig", "maximumConcurrency")
    if maximum is not None:
        maximum = within(whole_number(maximum, f"mapping '{mapping.name}': scalingConfig.maximumConcurrency"),
                         aws_limits.SQS_ESM_MAXIMUM_CONCURRENCY_MIN, aws_limits.SQS_ESM_MAXIMUM_CONCURRENCY_MAX,
                         f"mapping '{mapping.name}': scalingConfig.maximumConcurrency")
    if maximum is not None and maximum <= reserved:
        return
    how = (f"no scalingConfig.maximumConcurrency (the poller scales up to "
           f"{aws_limits.SQS_ESM_MAXIMUM_CONCURRENCY_MAX} concurrent invocations)" if maximum is None
           else f"scalingConfig.maximumConcurrency {shown(maximum)}")
    if reserved < aws_limits.SQS_ESM_MAXIMUM_CONCURRENCY_MIN:
        # no maximumConcurrency fits: AWS accepts none below its minimum
        fix = (f"No maximumConcurrency fits under it (AWS accepts {aws_limits.SQS_ESM_MAXIMUM_CONCURRENCY_MIN}-"
               f"{aws_limits.SQS_ESM_MAXIMUM_CONCURRENCY_MAX}): raise reservedConcurrentExecutions to at least "
               f"{aws_limits.SQS_ESM_MAXIMUM_CONCURRENCY_MIN} and set maximumConcurrency to at most that, or remove "
               "the reservation.")
    else:
        fix = (f"Set scalingConfig.maximumConcurrency to at most {shown(reserved)} (or raise the reserved "
               "concurrency above it).")
    report(f"SQS mapping '{mapping.name}' has {how} but function {label(function)} has reserved "
           f"concurrency {shown(reserved)}: the poller's throttled invocations return the messages to the "
           "queue, each throttle consumes a receive, and healthy messages reach the DLQ after "
           f"maxReceiveCount. {fix}", mapping.urn)


# ---- lambda-esm-role-can-use-source -------------------------------------------------------------

SQS_READ = ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes")
KINESIS_READ = ("kinesis:DescribeStream", "kinesis:DescribeStreamSummary", "kinesis:GetRecords",
                "kinesis:GetShardIterator", "kinesis:ListShards")
KINESIS_FAN_OUT = ("kinesis:SubscribeToShard", "kinesis:DescribeStreamConsumer")
DYNAMODB_STREAM_READ = ("dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator",
                        "dynamodb:ListStreams")
SEND_TO = {"sqs": "sqs:SendMessage", "sns": "sns:Publish", "s3": "s3:PutObject"}


def _arn_of(resource, fallback) -> Optional[str]:
    if resource is None:
        return fallback if isinstance(fallback, str) else None
    def read(key: str):
        return lambda: get(resource.props, key)
    for key in ("streamArn", "arn") if resource.resource_type == TABLE else ("arn",):
        value = known(read(key))
        if value is not None:
            return value
    return None


def _needs(index: StackIndex, mapping) -> list[tuple[str, str, Optional[str]]]:
    """(what, action, resource ARN or None) the mapping's role must be allowed."""
    arn = known(lambda: get(mapping.props, "eventSourceArn"))
    source = mapping_source(index, mapping)
    service = (arn_service(arn) if isinstance(arn, str) else None) or {
        QUEUE: "sqs", STREAM: "kinesis", STREAM_CONSUMER: "kinesis", TABLE: "dynamodb"}.get(
        getattr(source, "resource_type", ""))
    needs = []
    if service == "sqs":
        needs += [("its source queue", a, _arn_of(source, arn)) for a in SQS_READ]
    elif service == "kinesis" and (getattr(source, "resource_type", "") == STREAM_CONSUMER
                                    or (isinstance(arn, str) and "/consumer/" in arn)):
        needs += [("its stream consumer", a, _arn_of(source, arn)) for a in KINESIS_FAN_OUT]
        stream = index.follow(source, "streamArn", lambda: get(source.props, "streamArn"), [STREAM]) if source else None
        needs += [("the consumer's stream", a, _arn_of(stream, None)) for a in KINESIS_READ]
    elif service == "kinesis":
        needs += [("its source stream", a, _arn_of(source, arn)) for a in KINESIS_READ]
    elif service == "dynamodb":
        needs += [("its source table stream", a, _arn_of(source, arn)) for a in DYNAMODB_STREAM_READ]
    destination = known(lambda: get(mapping.props, "destinationConfig", "onFailure", "destinationArn"))
    service = arn_service(destination) if destination else None
    if destination is None and is_set(get(mapping.props, "destinationConfig", "onFailure", default={}), "destinationArn"):
        target = index.follow(mapping, "destinationConfig", lambda: None, [QUEUE, TOPIC])
        service = {QUEUE: "sqs", TOPIC: "sns"}.get(getattr(target, "resource_type", ""))
    if service in SEND_TO:
        needs.append(("its on-failure destination", SEND_TO[service], destination))
    return needs


def _check_role(args: StackValidationArgs, report: ReportViolation) -> None:
    index = StackIndex(args.resources)
    grants = RoleGrants(index)

    def check(mapping):
        function = mapping_function(index, mapping)
        if function is None:
            return
        role = grants.role_of(function)
        if role is None:
            return  # a role from outside the stack: its policies are not here to read
        missing = [(what, action) for what, action, arn in _needs(index, mapping)
                   if not grants.allows(role, action, arn)]
        if missing:
            listed = "; ".join(f"{action} on {what}" for what, action in missing)
            report(f"function {label(function)}'s role {label(role)} is not allowed {listed}: AWS refuses "
                   f"to create mapping '{mapping.name}' (the role must be able to read its source and "
                   "send to its on-failure destination). Add these actions, on those ARNs, to the role's policy.",
                   mapping.urn)

    each_resource(index, report, {MAPPING: check})


lambda_sqs_esm_reports_batch_item_failures = rule("stack", "lambda-sqs-esm-reports-batch-item-failures",
                                                  _mappings_of_kind("sqs", _check_batch_item_failures))

lambda_stream_esm_has_on_failure_destination = rule("stack", "lambda-stream-esm-has-on-failure-destination",
                                                    _mappings_of_kind("stream", _check_on_failure))

lambda_stream_esm_bounded_retries = rule("stack", "lambda-stream-esm-bounded-retries",
                                         _mappings_of_kind("stream", _check_bounded))

lambda_sqs_esm_concurrency_within_reserved = rule("stack", "lambda-sqs-esm-concurrency-within-reserved",
                                                  _mappings_of_kind("sqs", _check_concurrency))

lambda_esm_role_can_use_source = rule("stack", "lambda-esm-role-can-use-source", _check_role)

POLICIES = [
    lambda_sqs_esm_reports_batch_item_failures,
    lambda_stream_esm_has_on_failure_destination,
    lambda_stream_esm_bounded_retries,
    lambda_sqs_esm_concurrency_within_reserved,
    lambda_esm_role_can_use_source,
]
