"""What the two Kinesis consumer patterns share: the stream (created or existing, optional enhanced
fan-out), the Retry-DLQ / Unrecoverable-DLQ pair, the consumer function with its two mappings, the
alarms, and the checks on their numbers.

    stream --(Kinesis mapping)--> consumer function --(failures)--> Retry-DLQ (delay, visibility)
                                        ^                              |  redrive after maxReceiveCount
                                        +------(SQS mapping)-----------+--> Unrecoverable-DLQ (14 days, alarm)

The two components (idempotent_stream_consumer.py, non_idempotent_stream_consumer.py) differ in the
Kinesis mapping's error handling and in who writes to the Retry-DLQ.

Public (for the two stream components): `StreamConsumerArgs`, `PolicyStatementArgs` (from `function`),
`StreamConsumerOutputs`, `STREAM_SETTINGS`, `validate_common` (returns `Numbers`), the building blocks
`stream_source`, `dlq_pair`, `reference_ledger`, `consumer_function`,
`stream_mapping`, `retry_mapping`, `retry_dlq_statements`, `consumer_alarms`, `stream_outputs`, and
`PHYSICAL_NAMES`, `STREAM_MODES`, `LEDGER_HASH_KEY`.
"""


import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

import pulumi
import pulumi_aws as aws

from integration_blueprint.components.alarms import (
    AlarmActions,
    function_errors_alarm,
    iterator_age_alarm,
    oldest_message_age_alarm,
)
from integration_blueprint.components.function import PackagedFunction, PolicyStatementArgs, handler_code, packaged_function
from integration_blueprint.components.iam import Statement
from integration_blueprint.components.naming import PhysicalName, function_names, queue_name
from integration_blueprint.components.platform import PLATFORM_SETTINGS, PlatformArgs, runtime_settings
from integration_blueprint.components.queues import DeadLetterQueue, consume_statement, queue_with_dlq, sqs_consumer_mapping
from integration_blueprint.components.settings import Setting, SettingsTable, code_settings
from integration_blueprint.components.tables import idempotency_table
from integration_blueprint.components.validation import ComponentArgumentError, is_known, require
from integration_blueprint.core import aws_limits, conventions
from integration_blueprint.handlers.runtime import config as handler_config

__all__ = ["DlqPair", "LEDGER_HASH_KEY", "Numbers", "PHYSICAL_NAMES", "PolicyStatementArgs", "STREAM_MODES",
           "STREAM_SETTINGS", "StreamConsumerArgs", "StreamConsumerOutputs", "StreamSource", "consumer_alarms",
           "consumer_function", "dlq_pair", "reference_ledger", "retry_dlq_statements",
           "retry_mapping", "stream_mapping", "stream_outputs", "stream_source", "validate_common"]

STREAM_MODES = ("ON_DEMAND", "PROVISIONED")
# The reference handler's ledger (per-account balance) lives in a table keyed by account.
LEDGER_HASH_KEY = "account"

# The settings both stream patterns share (each component's table extends them).
STREAM_SETTINGS = (
    Setting("stream_arn", str, None, pattern=aws_limits.ARN_PATTERN, describe="a Kinesis stream ARN",
            why="an existing stream to consume; unset: the component creates one"),
    Setting("stream_mode", str, "ON_DEMAND", choices=STREAM_MODES, describe="ON_DEMAND or PROVISIONED",
            why="an ON_DEMAND stream scales its own shards"),
    Setting("shard_count", int, None, minimum=1, why="shards of a PROVISIONED stream"),
    Setting("retention_hours", int, aws_limits.KINESIS_RETENTION_DEFAULT_HOURS,
            minimum=aws_limits.KINESIS_RETENTION_MIN_HOURS, maximum=aws_limits.KINESIS_RETENTION_MAX_HOURS,
            why="the stream's retention (state it for an existing stream); every replay re-reads its records from "
                "the stream, so it bounds the replay window"),
    Setting("kms_key_id", str, aws_limits.KINESIS_MANAGED_KMS_KEY,
            pattern=re.escape(aws_limits.KINESIS_MANAGED_KMS_KEY) + r"|arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/.+",
            describe=f"{aws_limits.KINESIS_MANAGED_KMS_KEY} or a KMS key ARN",
            why="the stream's encryption key: the AWS managed key needs no kms: permission; the consumer role is "
                "granted kms:Decrypt on exactly a customer managed key"),
    Setting("enhanced_fan_out", bool, False, why="read through an enhanced fan-out consumer (more than two readers)"),
    Setting("batch_size", int, aws_limits.KINESIS_ESM_BATCH_SIZE_DEFAULT, minimum=aws_limits.KINESIS_ESM_BATCH_SIZE_MIN,
            maximum=aws_limits.KINESIS_ESM_BATCH_SIZE_MAX, why="records per invocation of the consumer"),
    Setting("batching_window_seconds", int, 0, minimum=0, maximum=aws_limits.KINESIS_ESM_BATCHING_WINDOW_MAX_SECONDS,
            why="how long the mapping gathers records before invoking; 0: as soon as records arrive"),
    Setting("parallelization_factor", int, 1, minimum=aws_limits.KINESIS_ESM_PARALLELIZATION_MIN,
            maximum=aws_limits.KINESIS_ESM_PARALLELIZATION_MAX, why="concurrent batches per shard"),
    Setting("starting_position", str, "LATEST", choices=aws_limits.KINESIS_ESM_STARTING_POSITIONS,
            describe="LATEST or TRIM_HORIZON", why="where a new mapping starts reading the stream"),
    Setting("function_timeout_seconds", int, 60, minimum=1, maximum=aws_limits.LAMBDA_TIMEOUT_MAX_SECONDS,
            why="the consumer function's timeout"),
    Setting("memory_mb", int, conventions.LAMBDA_MEMORY_DEFAULT_MB, minimum=aws_limits.LAMBDA_MEMORY_MIN_MB,
            maximum=aws_limits.LAMBDA_MEMORY_MAX_MB, why="the consumer function's memory (and so its CPU share)"),
    Setting("retry_delay_seconds", int, 60, minimum=0, maximum=aws_limits.SQS_DELAY_MAX_SECONDS,
            why="the Retry-DLQ's delay: the wait before the first replay"),
    Setting("retry_visibility_timeout_seconds", int, None, minimum=0,
            maximum=aws_limits.SQS_VISIBILITY_TIMEOUT_MAX_SECONDS, at_least="function_timeout_seconds",
            why="the wait between replays; at least the function timeout, default 6x"),
    Setting("max_receive_count", int, conventions.DEFAULT_MAX_RECEIVE_COUNT,
            minimum=conventions.MIN_SAFE_MAX_RECEIVE_COUNT, maximum=aws_limits.SQS_MAX_RECEIVE_COUNT_MAX,
            why="replays before a record moves to the Unrecoverable-DLQ; 3 or fewer parks a record that hit one "
                "transient error"),
    Setting("retry_batch_size", int, aws_limits.SQS_ESM_BATCH_SIZE_DEFAULT, minimum=1,
            maximum=aws_limits.SQS_ESM_BATCH_SIZE_DEFAULT,
            why="Retry-DLQ messages per invocation; at most 10, as the Retry-DLQ mapping has no batching window"),
    Setting("retry_retention_seconds", int, None, minimum=aws_limits.SQS_RETENTION_MIN_SECONDS,
            maximum=conventions.DLQ_RETENTION_SECONDS - 1,
            why="the Retry-DLQ's retention: shorter than the Unrecoverable-DLQ's 14 days, longer than the replay "
                "window; default: the replay window + 1 hour, at least SQS's 4 days"),
    Setting("iterator_age_alarm_ms", int, None, minimum=1,
            why="the stream's iterator-age alarm, in milliseconds; default: half the stream retention"),
    Setting("retry_dlq_age_alarm_seconds", int, None, minimum=1,
            why="the Retry-DLQ's oldest-message alarm; default: the replay window (a message older than that is "
                "not being replayed)"),
    *code_settings("code", "handler", "consumer"),
)
# The physical names a stream consumer generates from its name (checked against AWS's limits).
PHYSICAL_NAMES = [*function_names("-consumer"), queue_name("-retry-dlq"), queue_name("-unrecoverable-dlq"),
                  PhysicalName("Kinesis stream", "-stream", aws_limits.KINESIS_STREAM_NAME_MAX_LENGTH),
                  PhysicalName("enhanced fan-out consumer", "-consumer", aws_limits.KINESIS_STREAM_CONSUMER_NAME_MAX_LENGTH,
                               auto=False)]

# The shared rows on their own, for the building blocks below (each component validates first).
_COMMON = SettingsTable("StreamConsumer", STREAM_SETTINGS, inherited=PLATFORM_SETTINGS.arguments())


class StreamConsumerArgs(PlatformArgs, total=False):
    """The arguments both stream consumers take; each one's type, default, bounds and reason are its row
    in STREAM_SETTINGS (docs/components/)."""

    stream_arn: pulumi.Input[str]
    stream_mode: pulumi.Input[str]
    shard_count: pulumi.Input[int]
    retention_hours: pulumi.Input[int]
    kms_key_id: pulumi.Input[str]
    enhanced_fan_out: pulumi.Input[bool]
    batch_size: pulumi.Input[int]
    batching_window_seconds: pulumi.Input[int]
    parallelization_factor: pulumi.Input[int]
    starting_position: pulumi.Input[str]
    function_timeout_seconds: pulumi.Input[int]
    memory_mb: pulumi.Input[int]
    retry_delay_seconds: pulumi.Input[int]
    retry_visibility_timeout_seconds: pulumi.Input[int]
    max_receive_count: pulumi.Input[int]
    retry_batch_size: pulumi.Input[int]
    retry_retention_seconds: pulumi.Input[int]
    iterator_age_alarm_ms: pulumi.Input[int]
    retry_dlq_age_alarm_seconds: pulumi.Input[int]
    code: pulumi.Archive
    handler: pulumi.Input[str]
    environment: pulumi.Input[Mapping[str, pulumi.Input[str]]]
    policy_statements: pulumi.Input[Sequence[pulumi.Input[PolicyStatementArgs]]]


@dataclass
class Numbers:
    """The effective, checked numbers of a consumer (values not known yet stay Outputs)."""

    timeout: pulumi.Input[int]
    retention_hours: pulumi.Input[int]
    delay: pulumi.Input[int]
    visibility: pulumi.Input[int]
    receives: pulumi.Input[int]
    retry_retention: pulumi.Input[int]

    def known_replay_window(self) -> Optional[int]:
        """Seconds from a message entering the Retry-DLQ to the end of its last replay, if known now."""
        if is_known(self.delay) and is_known(self.receives) and is_known(self.visibility):
            return self.delay + self.receives * self.visibility
        return None

    @property
    def replay_window(self) -> pulumi.Input[int]:
        known = self.known_replay_window()
        if known is not None:
            return known
        return pulumi.Output.all(self.delay, self.receives, self.visibility).apply(lambda v: v[0] + v[1] * v[2])


def validate_common(settings: SettingsTable, args: Mapping[str, Any]) -> Numbers:
    """Refuse what AWS or this blueprint does not allow; return the effective numbers."""
    component = settings.component
    settings.check(args)  # unknown arguments and values outside their rows
    given = args.get("stream_arn")
    if given is not None:
        for arg in ("stream_mode", "shard_count", "kms_key_id"):
            require(component, args.get(arg) is None,
                    f"{arg} describes a stream the component creates; it cannot be set with stream_arn "
                    "(configure the existing stream where it is defined)", arg)
    mode = settings.value(args, "stream_mode")
    if mode == "PROVISIONED" and given is None:
        require(component, args.get("shard_count") is not None, "stream_mode=PROVISIONED needs shard_count",
                "shard_count")
    elif args.get("shard_count") is not None:
        raise ComponentArgumentError(f"{component}: shard_count is only for stream_mode=PROVISIONED "
                                     "(an ON_DEMAND stream scales its own shards)", "shard_count")
    timeout = settings.value(args, "function_timeout_seconds")
    delay = settings.value(args, "retry_delay_seconds")
    receives = settings.value(args, "max_receive_count")
    visibility = settings.value(args, "retry_visibility_timeout_seconds")
    if visibility is None and is_known(timeout):
        visibility = timeout * aws_limits.SQS_VISIBILITY_TO_FUNCTION_TIMEOUT_FACTOR
    if is_known(visibility) and is_known(timeout) and visibility < timeout:
        raise ComponentArgumentError(
            f"{component}: retry_visibility_timeout_seconds={visibility} is less than function_timeout_seconds="
            f"{timeout}; a replay would reappear while still running. Use at least {timeout} "
            f"(AWS recommends {timeout * aws_limits.SQS_VISIBILITY_TO_FUNCTION_TIMEOUT_FACTOR}).",
            "retry_visibility_timeout_seconds")
    require(component, args.get("code") is None or args.get("handler") is not None,
            "code is given without handler; name the handler in your code (module.function)", "handler")
    numbers = Numbers(timeout=timeout, retention_hours=settings.value(args, "retention_hours"), delay=delay,
                      visibility=visibility, receives=receives, retry_retention=0)
    known = numbers.known_replay_window()
    retry_retention = settings.value(args, "retry_retention_seconds")
    if retry_retention is None:
        retry_retention = aws_limits.SQS_RETENTION_DEFAULT_SECONDS
        if known is not None:
            retry_retention = max(retry_retention, known + 3600)
    if known is not None and is_known(retry_retention) and known >= retry_retention:
        raise ComponentArgumentError(
            f"{component}: the replay window (retry_delay_seconds {delay} + max_receive_count {receives} x "
            f"retry_visibility_timeout_seconds {visibility} = {known} s) does not end inside "
            f"retry_retention_seconds={retry_retention}; the Retry-DLQ would delete a message before its last "
            "replay and it would never reach the Unrecoverable-DLQ. Shorten the window or raise the retention "
            f"(at most {conventions.DLQ_RETENTION_SECONDS - 1}).", "retry_retention_seconds")
    numbers.retry_retention = retry_retention
    return numbers


@dataclass
class StreamSource:
    stream_arn: pulumi.Output[str]
    stream_name: pulumi.Output[str]
    mapping_source_arn: pulumi.Output[str]  # the stream, or its enhanced fan-out consumer
    consumer_arn: Optional[pulumi.Output[str]]
    read_statements: list[Statement]


def stream_source(name: str, args: StreamConsumerArgs, numbers: Numbers, parent: pulumi.Resource) -> StreamSource:
    """The stream (created encrypted, or the given one), its optional EFO consumer, and the
    least-privilege statements to read it."""
    child = pulumi.ResourceOptions(parent=parent)
    if args.get("stream_arn") is not None:
        arn = pulumi.Output.from_input(args["stream_arn"])
        stream_name = arn.apply(lambda a: a.split("/", 1)[-1])
    else:
        mode = _COMMON.value(args, "stream_mode")
        stream = aws.kinesis.Stream(
            f"{name}-stream",
            retention_period=numbers.retention_hours,
            stream_mode_details={"stream_mode": mode},
            shard_count=args.get("shard_count") if mode == "PROVISIONED" else None,
            encryption_type="KMS",
            kms_key_id=_COMMON.value(args, "kms_key_id"),
            opts=child,
        )
        arn, stream_name = stream.arn, stream.name
    statements = [Statement(["kinesis:DescribeStream", "kinesis:DescribeStreamSummary", "kinesis:GetRecords",
                             "kinesis:GetShardIterator", "kinesis:ListShards"], [arn])]
    kms = args.get("kms_key_id")
    if kms is not None and kms != aws_limits.KINESIS_MANAGED_KMS_KEY:
        statements.append(Statement(["kms:Decrypt"], [kms]))
    consumer_arn = None
    source = arn
    if args.get("enhanced_fan_out"):
        consumer = aws.kinesis.StreamConsumer(f"{name}-efo", stream_arn=arn, name=f"{name}-consumer", opts=child)
        consumer_arn = consumer.arn
        source = consumer.arn
        statements.append(Statement(["kinesis:SubscribeToShard", "kinesis:DescribeStreamConsumer"], [consumer.arn]))
    return StreamSource(stream_arn=arn, stream_name=stream_name, mapping_source_arn=source,
                        consumer_arn=consumer_arn, read_statements=statements)


@dataclass
class DlqPair:
    retry: aws.sqs.Queue
    unrecoverable: DeadLetterQueue


def dlq_pair(name: str, numbers: Numbers, parent: pulumi.Resource, alarm_actions: AlarmActions,
             unrecoverable_description: str) -> DlqPair:
    # No depth alarm on the Retry-DLQ: a message there is routine (replays are automatic), and
    # paging on it would page on every failed record. Its age alarm catches replays that stall;
    # the Unrecoverable-DLQ alarms on its first message.
    pair = queue_with_dlq(f"{name}-retry-dlq", parent=parent, dlq_name=f"{name}-unrecoverable-dlq",
                          max_receive_count=numbers.receives, alarm_actions=alarm_actions,
                          dlq_description=unrecoverable_description, delay_seconds=numbers.delay,
                          visibility_timeout_seconds=numbers.visibility,
                          message_retention_seconds=numbers.retry_retention)
    return DlqPair(retry=pair.queue, unrecoverable=pair.dlq)


def reference_ledger(name: str, args: StreamConsumerArgs, parent: pulumi.Resource) -> Optional[aws.dynamodb.Table]:
    """The reference handler's per-account balances, when no handler of your own is given."""
    if args.get("handler") is not None:
        return None
    return idempotency_table(f"{name}-ledger", parent=parent, hash_key=LEDGER_HASH_KEY,
                             protect=args.get("protect_data", True))


def consumer_function(name: str, args: StreamConsumerArgs, numbers: Numbers, parent: pulumi.Resource, *,
                      component: str, default_handler: str, environment: Mapping[str, pulumi.Input[str]],
                      statements: list[Statement], ledger: Optional[aws.dynamodb.Table]) -> PackagedFunction:
    env = dict(environment)
    statements = list(statements)
    if ledger is not None:
        env[handler_config.LEDGER_TABLE_NAME] = ledger.name
        statements.append(Statement(["dynamodb:UpdateItem", "dynamodb:GetItem"], [ledger.arn]))
    env.setdefault(handler_config.POWERTOOLS_SERVICE_NAME, f"{name}-consumer")
    return packaged_function(
        f"{name}-consumer", parent=parent, settings=runtime_settings(args),
        runs=handler_code(component, args, default_handler),
        timeout=numbers.timeout, memory_size=_COMMON.value(args, "memory_mb"),
        environment=env, statements=statements,
    )


def retry_mapping(name: str, args: StreamConsumerArgs, function: PackagedFunction, retry: aws.sqs.Queue,
                  parent: pulumi.Resource) -> aws.lambda_.EventSourceMapping:
    """The same function consumes the Retry-DLQ, reporting failed messages one by one."""
    return sqs_consumer_mapping(f"{name}-retry-mapping", parent=parent, consumed=retry, function=function.function,
                                batch_size=_COMMON.value(args, "retry_batch_size"))


def stream_mapping(name: str, args: StreamConsumerArgs, source: StreamSource, function: PackagedFunction,
                   parent: pulumi.Resource, **error_handling: Any) -> aws.lambda_.EventSourceMapping:
    """The function reads the stream (or its EFO consumer) with the component's batching settings;
    `error_handling` is what differs between the two patterns (bisect, retries, destination)."""
    return aws.lambda_.EventSourceMapping(
        f"{name}-stream-mapping",
        event_source_arn=source.mapping_source_arn,
        function_name=function.function.arn,
        batch_size=_COMMON.value(args, "batch_size"),
        maximum_batching_window_in_seconds=_COMMON.value(args, "batching_window_seconds"),
        parallelization_factor=_COMMON.value(args, "parallelization_factor"),
        starting_position=_COMMON.value(args, "starting_position"),
        **error_handling,
        opts=pulumi.ResourceOptions(parent=parent),
    )


def consumer_alarms(name: str, args: StreamConsumerArgs, numbers: Numbers, function: PackagedFunction,
                    retry: aws.sqs.Queue, parent: pulumi.Resource) -> None:
    alarm_actions = args.get("alarm_actions")
    hours = numbers.retention_hours
    half_retention_ms: pulumi.Input[int] = (
        hours * 3600 * 1000 // 2 if is_known(hours)
        else pulumi.Output.from_input(numbers.retention_hours).apply(lambda h: h * 3600 * 1000 // 2))
    iterator_age_alarm(f"{name}-iterator-age", function=function.function, parent=parent, alarm_actions=alarm_actions,
                       threshold_ms=args.get("iterator_age_alarm_ms") or half_retention_ms)
    oldest_message_age_alarm(f"{name}-retry-dlq-oldest-message", queue=retry, parent=parent,
                             alarm_actions=alarm_actions,
                             threshold_seconds=args.get("retry_dlq_age_alarm_seconds") or numbers.replay_window)
    function_errors_alarm(f"{name}-consumer-errors", function=function.function, parent=parent,
                          alarm_actions=alarm_actions)


def retry_dlq_statements(dlqs: DlqPair) -> list[Statement]:
    """The function consumes the Retry-DLQ and sends to it: the stream mapping's on-failure records
    (pattern 1) or the failed records the handler inserts (pattern 2)."""
    return [consume_statement(dlqs.retry), Statement(["sqs:SendMessage"], [dlqs.retry.arn])]


class StreamConsumerOutputs:
    """The outputs both stream consumer components publish (a mixin: Pulumi's schema inference
    reads annotations through the class's MRO)."""

    stream_arn: pulumi.Output[str]
    """ARN of the stream consumed (given or created)."""
    stream_name: pulumi.Output[str]
    """Name of the stream consumed."""
    stream_consumer_arn: pulumi.Output[Optional[str]]
    """ARN of the enhanced fan-out consumer; None without enhanced_fan_out."""
    retry_dlq_url: pulumi.Output[str]
    """URL of the Retry-DLQ: failed records wait there between replays."""
    retry_dlq_arn: pulumi.Output[str]
    """ARN of the Retry-DLQ."""
    unrecoverable_dlq_url: pulumi.Output[str]
    """URL of the Unrecoverable-DLQ: records that failed every replay (it alarms)."""
    unrecoverable_dlq_arn: pulumi.Output[str]
    """ARN of the Unrecoverable-DLQ."""
    function_name: pulumi.Output[str]
    """Name of the consumer function."""
    function_arn: pulumi.Output[str]
    """ARN of the consumer function."""
    ledger_table_name: pulumi.Output[Optional[str]]
    """The reference handler's ledger; None with a handler of your own."""
    function_role_name: pulumi.Output[str]
    """Name of the consumer function's role: attach your own policies to it (`aws.iam.RolePolicy`)."""
    function_role_arn: pulumi.Output[str]
    """ARN of the consumer function's role."""

    def expose_children(self, dlqs: "DlqPair", function: PackagedFunction) -> None:
        """The children, typed, for a team to extend (as AWS Solutions Constructs expose theirs)."""
        self.retry_dlq: aws.sqs.Queue = dlqs.retry
        self.unrecoverable_dlq: aws.sqs.Queue = dlqs.unrecoverable.queue
        self.function: aws.lambda_.Function = function.function
        self.function_role: aws.iam.Role = function.role


def stream_outputs(source: StreamSource, dlqs: DlqPair, function: PackagedFunction) -> dict[str, pulumi.Input[Any]]:
    """The outputs both stream consumer components publish."""
    return {
        "stream_arn": source.stream_arn, "stream_name": source.stream_name,
        "stream_consumer_arn": pulumi.Output.from_input(source.consumer_arn),
        "retry_dlq_url": dlqs.retry.url, "retry_dlq_arn": dlqs.retry.arn,
        "unrecoverable_dlq_url": dlqs.unrecoverable.queue.url, "unrecoverable_dlq_arn": dlqs.unrecoverable.queue.arn,
        "function_name": function.function.name, "function_arn": function.function.arn,
        "function_role_name": function.role.name, "function_role_arn": function.role.arn,
    }
