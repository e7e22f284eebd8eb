"""Kinesis rule: a replayed on-failure queue must finish before the stream forgets the records.

The on-failure record Lambda sends for a stream holds only the batch's metadata (shard, sequence
numbers), not the data; the consumer of that queue reads the records back from the stream. So
every redelivery of that message must happen while the stream still has the records.
"""

from pulumi_policy import ReportViolation, StackValidationArgs

from integration_blueprint.core import aws_limits

from ._links import MAPPING, QUEUE, STREAM, STREAM_CONSUMER, RedrivesBySource, StackIndex, label, mapping_source
from ._policy import rule
from ._values import each, gather, get, number, shown, within
from .lambda_mappings import retry_bounds
from .sqs import retention as retention_of_queue


def _stream_of(index: StackIndex, source):
    if source is not None and source.resource_type == STREAM_CONSUMER:
        return index.follow(source, "streamArn", lambda: get(source.props, "streamArn"), [STREAM])
    return source if source is not None and source.resource_type == STREAM else None


def _check_replay_window(args: StackValidationArgs, report: ReportViolation) -> None:
    index = StackIndex(args.resources)
    mappings = index.of_type(MAPPING)
    redrives = RedrivesBySource(index)
    consumed = set()  # queues a Lambda function reads: those are the replayed ones

    def note_consumed(mapping):
        source = mapping_source(index, mapping)
        if source is not None and source.resource_type == QUEUE:
            consumed.add(source.urn)
    unknown_sources = gather(mappings, note_consumed)

    def check(mapping):
        stream = _stream_of(index, mapping_source(index, mapping))
        if stream is None:
            return
        queue = index.follow(mapping, "destinationConfig",
                             lambda: get(mapping.props, "destinationConfig", "onFailure", "destinationArn"),
                             [QUEUE])
        if queue is None:
            return
        if queue.urn not in consumed:
            if unknown_sources:
                raise unknown_sources[0]  # a mapping we cannot resolve may consume this queue
            return
        retention = within(number(stream.props, "retentionPeriod", aws_limits.KINESIS_RETENTION_DEFAULT_HOURS),
                           aws_limits.KINESIS_RETENTION_MIN_HOURS, aws_limits.KINESIS_RETENTION_MAX_HOURS,
                           f"stream {label(stream)}: retentionPeriod (hours)") * 3600
        _, age = retry_bounds(mapping.props, f"mapping '{mapping.name}':")
        age = max(age, 0)  # -1 (no limit) is the bounded-retries rule's concern
        delay = within(number(queue.props, "delaySeconds", 0), 0, aws_limits.SQS_DELAY_MAX_SECONDS,
                       f"queue {label(queue)}: delaySeconds")
        visibility = within(number(queue.props, "visibilityTimeoutSeconds", aws_limits.SQS_VISIBILITY_TIMEOUT_DEFAULT_SECONDS),
                            0, aws_limits.SQS_VISIBILITY_TIMEOUT_MAX_SECONDS, f"queue {label(queue)}: visibilityTimeoutSeconds")
        link = redrives.of(queue)
        receives = link.max_receive_count() if link is not None else None
        if receives is None:  # no DLQ: SQS redelivers until the message expires
            window = retention_of_queue(queue)
            how = "the queue has no redrive policy, so it is redelivered for its whole retention"
        else:
            window = delay + receives * visibility
            how = f"delay {shown(delay)} s + {shown(receives)} receives x {shown(visibility)} s visibility"
        if age + window > retention:
            report(f"on-failure queue {label(queue)} of mapping '{mapping.name}' replays records of "
                   f"stream {label(stream)} for up to {shown(age + window)} s (record age limit {shown(age)} s, "
                   f"{how}) but the stream keeps records {shown(retention)} s: the last replays would find "
                   f"the records gone. {_replay_fix(retention, receives is None)}", mapping.urn)

    each(mappings, check, report, lambda m: m.urn)


def _replay_fix(retention: float, no_redrive: bool) -> str:
    """Only what the program can still change: a stream already at Kinesis's longest retention
    cannot keep records longer."""
    shorter = ("give the queue a redrive policy (its retention alone is the window now)" if no_redrive else
               "lower the queue's delay, visibility timeout or maxReceiveCount (or maximumRecordAgeInSeconds)")
    if retention >= aws_limits.KINESIS_RETENTION_MAX_HOURS * 3600:
        return (f"The stream already keeps records the {aws_limits.KINESIS_RETENTION_MAX_HOURS} h Kinesis allows at "
                f"most: {shorter}.")
    return f"Raise the stream's retentionPeriod or {shorter}."


kinesis_replay_window_within_retention = rule("stack", "kinesis-replay-window-within-retention", _check_replay_window)

POLICIES = [kinesis_replay_window_within_retention]
