"""SQS rules: redrive policies, dead-letter queues, and queues that Lambda consumes."""

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from integration_blueprint import aws_limits, conventions

from ._links import (
    MAPPING,
    QUEUE,
    REDRIVE_POLICY,
    RedrivesBySource,
    StackIndex,
    fifo,
    label,
    mapping_function,
    mapping_source,
    max_receive_count,
    redrive,
    redrive_owners,
)
from ._values import config_value, each, is_set, number, resource_rule

# ---- sqs-dlq-max-receive-count ------------------------------------------------------------------

def _check_max_receive_count(args: ResourceValidationArgs, report: ReportViolation) -> None:
    minimum = config_value(args.get_config(), "minimum", conventions.MIN_SAFE_MAX_RECEIVE_COUNT)
    if args.resource_type == QUEUE and not is_set(args.props, "redrivePolicy"):
        return
    count = max_receive_count(args.props)
    if count < minimum:
        report(f"maxReceiveCount is {count:g}; set it to at least {minimum:g} so a transient failure "
               "(a throttle, a timeout) does not send a healthy message to the DLQ.", None)
    elif count > aws_limits.SQS_MAX_RECEIVE_COUNT_MAX:
        report(f"maxReceiveCount is {count:g}; SQS accepts 1-{aws_limits.SQS_MAX_RECEIVE_COUNT_MAX}.", None)


sqs_dlq_max_receive_count = ResourceValidationPolicy(
    name="sqs-dlq-max-receive-count",
    description=(f"A redrive policy's maxReceiveCount must be at least the configured minimum "
                 f"(default {conventions.MIN_SAFE_MAX_RECEIVE_COUNT}): set maxReceiveCount in the "
                 "queue's redrivePolicy or the RedrivePolicy resource."),
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(properties={"minimum": {
        "type": "integer", "minimum": 1, "maximum": aws_limits.SQS_MAX_RECEIVE_COUNT_MAX,
        "default": conventions.MIN_SAFE_MAX_RECEIVE_COUNT}}),
    validate=resource_rule(_check_max_receive_count, QUEUE, REDRIVE_POLICY),
)


# ---- visibility timeout vs the consuming function's timeout ---------------------------------------

def _consumer(index: StackIndex, mapping):
    """(queue, function) when `mapping` feeds a queue of this stack to a function of this stack."""
    queue = mapping_source(index, mapping)
    if queue is None or queue.resource_type != QUEUE:
        return None
    function = mapping_function(index, mapping)
    return None if function is None else (queue, function)


def _visibility_rule(args: StackValidationArgs, report: ReportViolation, multiplier: float,
                     advice: str, with_batching_window: bool) -> None:
    index = StackIndex(args.resources)

    def check(mapping):
        found = _consumer(index, mapping)
        if found is None:
            return
        queue, function = found
        visibility = number(queue.props, "visibilityTimeoutSeconds", aws_limits.SQS_VISIBILITY_TIMEOUT_DEFAULT_SECONDS)
        timeout = number(function.props, "timeout", aws_limits.LAMBDA_TIMEOUT_DEFAULT_SECONDS)
        window = number(mapping.props, "maximumBatchingWindowInSeconds", 0) if with_batching_window else 0
        required = multiplier * timeout + window
        if visibility < required:
            report(f"queue {label(queue)} has visibilityTimeoutSeconds {visibility:g} but function "
                   f"{label(function)} may run {timeout:g} s; {advice} "
                   f"set visibilityTimeoutSeconds to at least {required:g}.", queue.urn)

    each(index.of_type(MAPPING), check, report, lambda m: m.urn)


def _check_covers(args: StackValidationArgs, report: ReportViolation) -> None:
    _visibility_rule(args, report, 1, "a message would reappear and be processed twice while the "
                                      "first invocation still runs:", with_batching_window=False)


def _check_six_times(args: StackValidationArgs, report: ReportViolation) -> None:
    multiplier = config_value(args.get_config(), "multiplier", aws_limits.SQS_VISIBILITY_TO_FUNCTION_TIMEOUT_FACTOR)
    _visibility_rule(args, report, multiplier,
                     f"AWS recommends {multiplier:g}x the function timeout plus the batching window "
                     "so retries of throttled invocations do not redeliver the batch:",
                     with_batching_window=True)


sqs_visibility_timeout_covers_function_timeout = StackValidationPolicy(
    name="sqs-visibility-timeout-covers-function-timeout",
    description=("A queue consumed by a Lambda function needs visibilityTimeoutSeconds >= the "
                 f"function's timeout (defaults: {aws_limits.SQS_VISIBILITY_TIMEOUT_DEFAULT_SECONDS} s and "
                 f"{aws_limits.LAMBDA_TIMEOUT_DEFAULT_SECONDS} s): raise the queue's visibility timeout."),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_check_covers,
)

sqs_visibility_timeout_six_times_function_timeout = StackValidationPolicy(
    name="sqs-visibility-timeout-six-times-function-timeout",
    description=("A queue consumed by a Lambda function should have a visibility timeout of at least "
                 f"{aws_limits.SQS_VISIBILITY_TO_FUNCTION_TIMEOUT_FACTOR}x the function timeout plus the "
                 "mapping's batching window (AWS's recommendation): raise visibilityTimeoutSeconds."),
    enforcement_level=EnforcementLevel.ADVISORY,
    config_schema=PolicyConfigSchema(properties={"multiplier": {
        "type": "number", "minimum": 1,
        "default": aws_limits.SQS_VISIBILITY_TO_FUNCTION_TIMEOUT_FACTOR}}),
    validate=_check_six_times,
)


# ---- dead-letter queue vs its source ---------------------------------------------------------

def _redrive_pairs(args: StackValidationArgs, report: ReportViolation, check_pair) -> None:
    index = StackIndex(args.resources)

    def check(owner):
        link = redrive(index, owner)
        dlq = link.dlq(index)
        if link.source is not None and dlq is not None:
            check_pair(link.source, dlq)

    each(redrive_owners(index), check, report, lambda owner: owner.urn)


def _check_retention(args: StackValidationArgs, report: ReportViolation) -> None:
    def check_pair(source, dlq):
        kept = number(dlq.props, "messageRetentionSeconds", aws_limits.SQS_RETENTION_DEFAULT_SECONDS)
        source_kept = number(source.props, "messageRetentionSeconds", aws_limits.SQS_RETENTION_DEFAULT_SECONDS)
        if kept <= source_kept:
            report(f"DLQ {label(dlq)} keeps messages {kept:g} s, not longer than its source "
                   f"{label(source)} ({source_kept:g} s): a message keeps its original enqueue time, "
                   "so it would expire in the DLQ before anyone sees it. Set the DLQ's "
                   f"messageRetentionSeconds to {conventions.DLQ_RETENTION_SECONDS}.", dlq.urn)
    _redrive_pairs(args, report, check_pair)


def _check_type(args: StackValidationArgs, report: ReportViolation) -> None:
    def check_pair(source, dlq):
        if fifo(source) != fifo(dlq):
            kinds = {True: "FIFO", False: "standard"}
            report(f"source {label(source)} is a {kinds[fifo(source)]} queue but its DLQ "
                   f"{label(dlq)} is {kinds[fifo(dlq)]}; SQS requires the same type: make the DLQ "
                   f"{kinds[fifo(source)]}.", source.urn)
    _redrive_pairs(args, report, check_pair)


sqs_dlq_retention_exceeds_source = StackValidationPolicy(
    name="sqs-dlq-retention-exceeds-source",
    description=("A dead-letter queue must keep messages longer than its source queue (both default "
                 f"to {aws_limits.SQS_RETENTION_DEFAULT_SECONDS} s): set the DLQ's messageRetentionSeconds "
                 f"to {conventions.DLQ_RETENTION_SECONDS}."),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_check_retention,
)

sqs_dlq_type_matches_source = StackValidationPolicy(
    name="sqs-dlq-type-matches-source",
    description=("A FIFO queue needs a FIFO dead-letter queue and a standard queue a standard one: "
                 "set fifoQueue on the DLQ to match its source."),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_check_type,
)


# ---- sqs-event-source-has-dlq ---------------------------------------------------------------

def _check_has_dlq(args: StackValidationArgs, report: ReportViolation) -> None:
    index = StackIndex(args.resources)
    redrives = RedrivesBySource(index)

    def check(mapping):
        found = _consumer(index, mapping)
        if found is None:
            return
        queue, function = found
        if is_set(queue.props, "redrivePolicy") or redrives.of(queue) is not None:
            return
        report(f"queue {label(queue)} is consumed by function {label(function)} but has no redrive "
               "policy: a message that always fails is retried until it expires and blocks the "
               "consumer. Give the queue a redrivePolicy (or a RedrivePolicy resource) to a "
               "dead-letter queue.", queue.urn)

    each(index.of_type(MAPPING), check, report, lambda m: m.urn)


sqs_event_source_has_dlq = StackValidationPolicy(
    name="sqs-event-source-has-dlq",
    description=("A queue consumed by a Lambda function needs a redrive policy to a dead-letter queue: "
                 "set redrivePolicy on the queue or add an aws.sqs.RedrivePolicy."),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_check_has_dlq,
)

POLICIES = [
    sqs_dlq_max_receive_count,
    sqs_visibility_timeout_covers_function_timeout,
    sqs_visibility_timeout_six_times_function_timeout,
    sqs_dlq_retention_exceeds_source,
    sqs_dlq_type_matches_source,
    sqs_event_source_has_dlq,
]
