"""SQS rules: redrive policies, dead-letter queues, and queues that Lambda consumes."""

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from integration_blueprint.core import aws_limits, conventions

from ._links import (
    MAPPING,
    QUEUE,
    REDRIVE_POLICY,
    RedrivesBySource,
    StackIndex,
    fifo,
    fifo_by_name,
    function_timeout,
    label,
    mapping_function,
    mapping_source,
    max_receive_count,
    redrive,
    redrive_owners,
)
from ._policy import rule
from ._values import Unverifiable, config_value, each, each_resource, is_set, number, resource_rule, shown, within

# ---- sqs-dlq-max-receive-count ------------------------------------------------------------------

def _check_max_receive_count(args: ResourceValidationArgs, report: ReportViolation) -> None:
    minimum = config_value(args.get_config(), "minimum", conventions.MIN_SAFE_MAX_RECEIVE_COUNT)
    if args.resource_type == QUEUE and not is_set(args.props, "redrivePolicy"):
        return
    count = max_receive_count(args.props)
    if count < minimum:
        report(f"maxReceiveCount is {shown(count)}; set it to at least {shown(minimum)} so a transient failure "
               "(a throttle, a timeout) does not send a healthy message to the DLQ.", None)
    elif count > aws_limits.SQS_MAX_RECEIVE_COUNT_MAX:
        report(f"maxReceiveCount is {shown(count)}; SQS accepts 1-{aws_limits.SQS_MAX_RECEIVE_COUNT_MAX}.", None)


sqs_dlq_max_receive_count = rule("resource", "sqs-dlq-max-receive-count",
                                 resource_rule(_check_max_receive_count, QUEUE, REDRIVE_POLICY),
                                 config={"minimum": {"type": "integer", "minimum": 1,
                                                     "maximum": aws_limits.SQS_MAX_RECEIVE_COUNT_MAX,
                                                     "default": conventions.MIN_SAFE_MAX_RECEIVE_COUNT}})


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
        visibility = within(number(queue.props, "visibilityTimeoutSeconds", aws_limits.SQS_VISIBILITY_TIMEOUT_DEFAULT_SECONDS),
                            0, aws_limits.SQS_VISIBILITY_TIMEOUT_MAX_SECONDS, f"queue {label(queue)}: visibilityTimeoutSeconds")
        timeout = function_timeout(function)
        window = (within(number(mapping.props, "maximumBatchingWindowInSeconds", 0), 0,
                         aws_limits.KINESIS_ESM_BATCHING_WINDOW_MAX_SECONDS,
                         f"mapping '{mapping.name}': maximumBatchingWindowInSeconds")
                  if with_batching_window else 0)
        required = multiplier * timeout + window
        if visibility < required:
            if required <= aws_limits.SQS_VISIBILITY_TIMEOUT_MAX_SECONDS:
                fix = f"set visibilityTimeoutSeconds to at least {shown(required)}."
            else:  # no visibility timeout SQS accepts is long enough: only the function can give way
                longest = (aws_limits.SQS_VISIBILITY_TIMEOUT_MAX_SECONDS - window) // multiplier
                fix = (f"that needs {shown(required)} s, beyond the {aws_limits.SQS_VISIBILITY_TIMEOUT_MAX_SECONDS} s "
                       f"SQS allows: lower the function's timeout to at most {shown(longest)} s.")
            report(f"queue {label(queue)} has visibilityTimeoutSeconds {shown(visibility)} but function "
                   f"{label(function)} may run {shown(timeout)} s; {advice} {fix}", queue.urn)

    each_resource(index, report, {MAPPING: check})


def _check_covers(args: StackValidationArgs, report: ReportViolation) -> None:
    _visibility_rule(args, report, 1, "a message would reappear and be processed twice while the "
                                      "first invocation still runs:", with_batching_window=False)


def _check_six_times(args: StackValidationArgs, report: ReportViolation) -> None:
    multiplier = config_value(args.get_config(), "multiplier", aws_limits.SQS_VISIBILITY_TO_FUNCTION_TIMEOUT_FACTOR)
    _visibility_rule(args, report, multiplier,
                     f"AWS recommends {shown(multiplier)}x the function timeout plus the batching window "
                     "so retries of throttled invocations do not redeliver the batch:",
                     with_batching_window=True)


sqs_visibility_timeout_covers_function_timeout = rule("stack", "sqs-visibility-timeout-covers-function-timeout", _check_covers)

sqs_visibility_timeout_six_times_function_timeout = rule("stack", "sqs-visibility-timeout-six-times-function-timeout",
                                                         _check_six_times, config={"multiplier": {
                                                             "type": "number", "minimum": 1,
                                                             "default": aws_limits.SQS_VISIBILITY_TO_FUNCTION_TIMEOUT_FACTOR}})


# ---- dead-letter queue vs its source ---------------------------------------------------------

def retention(queue) -> float:
    kept = number(queue.props, "messageRetentionSeconds", aws_limits.SQS_RETENTION_DEFAULT_SECONDS)
    return within(kept, aws_limits.SQS_RETENTION_MIN_SECONDS, aws_limits.SQS_RETENTION_MAX_SECONDS,
                  f"queue {label(queue)}: messageRetentionSeconds")


def _redrive_pairs(args: StackValidationArgs, report: ReportViolation, check_pair) -> None:
    """`check_pair(source, dlq, dlq_arn)` for every redrive whose source is in this stack; `dlq` is
    None when the DLQ is a queue outside the stack (then `dlq_arn` is its ARN)."""
    index = StackIndex(args.resources)

    def check(owner):
        link = redrive(index, owner)
        dlq = link.dlq(index)
        if link.source is None:
            return
        if dlq is not None:
            check_pair(link.source, dlq, None)
        elif link.dlq_arn():
            check_pair(link.source, None, link.dlq_arn())

    each(redrive_owners(index), check, report, lambda owner: owner.urn)


def _check_retention(args: StackValidationArgs, report: ReportViolation) -> None:
    def check_pair(source, dlq, dlq_arn):
        source_kept = retention(source)
        if dlq is None:
            raise Unverifiable(f"the DLQ {dlq_arn} of queue {label(source)} is outside this stack: "
                               f"check by hand that it keeps messages longer than {shown(source_kept)} s")
        kept = retention(dlq)
        if kept > source_kept:
            return
        if fifo(source):
            why = ("AWS's best practice for every DLQ (a FIFO queue resets a message's enqueue time "
                   "when it moves to the DLQ, so here the DLQ's own retention is all the time anyone has)")
        else:
            why = "a message keeps its original enqueue time, so it would expire in the DLQ before anyone sees it"
        if kept >= aws_limits.SQS_RETENTION_MAX_SECONDS:
            # the DLQ already keeps messages as long as SQS allows: only the source can give way
            fix = (f"The DLQ already keeps messages the {aws_limits.SQS_RETENTION_MAX_SECONDS} s SQS allows at most: "
                   f"lower the source's messageRetentionSeconds below {shown(kept)}.")
        else:
            fix = f"Set the DLQ's messageRetentionSeconds to {conventions.DLQ_RETENTION_SECONDS}."
        report(f"DLQ {label(dlq)} keeps messages {shown(kept)} s, not longer than its source "
               f"{label(source)} ({shown(source_kept)} s): {why}. {fix}", dlq.urn)
    _redrive_pairs(args, report, check_pair)


def _check_type(args: StackValidationArgs, report: ReportViolation) -> None:
    def check_pair(source, dlq, dlq_arn):
        dlq_fifo = fifo(dlq) if dlq is not None else fifo_by_name(dlq_arn)
        if fifo(source) != dlq_fifo:
            kinds = {True: "FIFO", False: "standard"}
            target = label(dlq) if dlq is not None else dlq_arn
            report(f"source {label(source)} is a {kinds[fifo(source)]} queue but its DLQ "
                   f"{target} is {kinds[dlq_fifo]}; SQS requires the same type: make the DLQ "
                   f"{kinds[fifo(source)]}.", source.urn)
    _redrive_pairs(args, report, check_pair)


sqs_dlq_retention_exceeds_source = rule("stack", "sqs-dlq-retention-exceeds-source", _check_retention)

sqs_dlq_type_matches_source = rule("stack", "sqs-dlq-type-matches-source", _check_type)


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

    each_resource(index, report, {MAPPING: check})


sqs_event_source_has_dlq = rule("stack", "sqs-event-source-has-dlq", _check_has_dlq)

POLICIES = [
    sqs_dlq_max_receive_count,
    sqs_visibility_timeout_covers_function_timeout,
    sqs_visibility_timeout_six_times_function_timeout,
    sqs_dlq_retention_exceeds_source,
    sqs_dlq_type_matches_source,
    sqs_event_source_has_dlq,
]
