"""CloudWatch rule: every dead-letter queue alarms on its first message."""

from pulumi_policy import ReportViolation, StackValidationArgs
from pulumi_policy.proxy import UnknownValueError

from integration_blueprint.core import conventions

from ._links import ALARM, MAPPING, QUEUE, SCHEDULE, RedrivesBySource, StackIndex, label, mapping_source
from ._policy import rule
from ._values import each, gather, get, is_set, number, plain

DEPTH_METRIC = "ApproximateNumberOfMessagesVisible"


def _fires_at_one(alarm) -> bool:
    threshold = number(alarm.props, "threshold", None)
    operator = get(alarm.props, "comparisonOperator")
    if threshold is None:
        return False
    target = conventions.DLQ_DEPTH_ALARM_THRESHOLD
    # Fires at the first message and not before: a depth >= 0 (or > -1) alarm is in ALARM on an empty
    # queue too, so it tells nobody anything.
    return ((operator == "GreaterThanOrEqualToThreshold" and 0 < threshold <= target)
            or (operator == "GreaterThanThreshold" and 0 <= threshold < target))


def _depth_metric(metric) -> bool:
    return (isinstance(metric, dict) and metric.get("namespace") == "AWS/SQS"
            and metric.get("metricName") == DEPTH_METRIC)


def _watched_queues(index: StackIndex, alarm) -> list:
    """The queues whose depth the alarm watches: its own metric, or the depth metrics its
    metricQueries return (directly, or through the expression the alarm returns)."""
    if not _fires_at_one(alarm):
        return []
    if get(alarm.props, "namespace") == "AWS/SQS" and get(alarm.props, "metricName") == DEPTH_METRIC:
        return [index.follow(alarm, "dimensions", lambda: get(alarm.props, "dimensions", "QueueName"), [QUEUE])]
    queries = plain(get(alarm.props, "metricQueries", default=[]))
    if not isinstance(queries, list):
        return []
    queries = [q for q in queries if isinstance(q, dict)]
    returned = [q for q in queries if q.get("returnData")] or queries[:1]
    expressions = " ".join(str(q.get("expression", "")) for q in returned)
    watched = [q["metric"] for q in queries if _depth_metric(q.get("metric"))
               and (q in returned or str(q.get("id", "")) in expressions)]
    queues = []
    for metric in watched:
        name = (metric.get("dimensions") or {}).get("QueueName")
        if isinstance(name, str):
            queues.append(index.lookup(name, [QUEUE]))
    if watched and not any(queues):
        # names not known yet: the queues that fed metricQueries are the ones watched
        queues = [d for d in alarm.property_dependencies.get("metricQueries", []) if d.resource_type == QUEUE]
    return queues


def _schedule_dlq(index: StackIndex, schedule):
    dead_letter = get(schedule.props, "target", "deadLetterConfig", default={})
    if not is_set(dead_letter, "arn"):
        return None
    try:
        return index.lookup(dead_letter["arn"], [QUEUE])
    except UnknownValueError:
        # `target` also holds the target's ARN, which may be a queue too: the dependencies
        # identify the DLQ only when exactly one queue fed `target`.
        return index.follow(schedule, "target", lambda: dead_letter["arn"], [QUEUE])


def _dead_letter_queues(index: StackIndex):
    """Queues used as DLQs (redrive targets, stream on-failure destinations, Scheduler DLQs), and
    the unknowns met finding them.

    A retry stage is not one of them: a queue a function consumes and that redrives to a DLQ of its
    own (the Kinesis patterns' Retry-DLQ) replays its messages automatically, so a message there is
    routine, not an incident; what it cannot replay lands in its own DLQ, which must alarm."""
    found = {}
    redrives = RedrivesBySource(index)
    retry_stages = set()

    def add(queue):
        if queue is not None:
            found[queue.urn] = queue

    def note_consumed(mapping):
        queue = mapping_source(index, mapping)
        if queue is not None and queue.urn in redrives.by_source:
            retry_stages.add(queue.urn)

    unknowns = gather(index.of_type(MAPPING), note_consumed)
    unknowns += gather(redrives.by_source.values(), lambda link: add(link.dlq(index)))
    unknowns += gather(index.of_type(MAPPING), lambda m: add(index.follow(
        m, "destinationConfig", lambda: get(m.props, "destinationConfig", "onFailure", "destinationArn"), [QUEUE])))
    unknowns += gather(index.of_type(SCHEDULE), lambda s: add(_schedule_dlq(index, s)))
    return [q for urn, q in found.items() if urn not in retry_stages], unknowns


def _check(args: StackValidationArgs, report: ReportViolation) -> None:
    index = StackIndex(args.resources)
    covered: set[str] = set()
    unknown_alarms = gather(index.of_type(ALARM), lambda a: covered.update(
        q.urn for q in _watched_queues(index, a) if q is not None))
    dlqs, unknown_dlqs = _dead_letter_queues(index)

    def check(dlq):
        if dlq.urn in covered:
            return
        if unknown_alarms:
            raise unknown_alarms[0]  # an alarm we cannot read yet may watch this queue
        report(f"dead-letter queue {label(dlq)} has no CloudWatch alarm on {DEPTH_METRIC} >= "
               f"{conventions.DLQ_DEPTH_ALARM_THRESHOLD}: messages would sit there unnoticed until they "
               "expire. Add a MetricAlarm (namespace AWS/SQS, dimension QueueName) with threshold 1 "
               "and GreaterThanOrEqualToThreshold (integration_blueprint.components.alarms.queue_depth_alarm "
               "makes one).", dlq.urn)

    each(dlqs, check, report, lambda q: q.urn)
    if unknown_dlqs:
        raise unknown_dlqs[0]


dlq_has_depth_alarm = rule("stack", "dlq-has-depth-alarm", _check, text_values={"DEPTH_METRIC": DEPTH_METRIC})

POLICIES = [dlq_has_depth_alarm]
