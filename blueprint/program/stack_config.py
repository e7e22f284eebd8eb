"""The blueprint program's stack configuration: one typed reader, one section per pattern.

Stack files (stacks/Pulumi.<stack>.yaml) hold one object per section, for example

    blueprint:fifoBilling:
      enabled: true
      batchSize: 10

Every value is checked here, before any resource is declared: a wrong or missing value fails the
preview with the full key, what it got and what is allowed, and unknown keys (typos) are refused.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Optional

import pulumi

from integration_blueprint import aws_limits, conventions

NAMESPACE = "blueprint"
_MISSING = object()


class StackConfigError(pulumi.RunError):
    """A stack config value is missing or wrong. Printed without a traceback by the Pulumi CLI."""


class Section:
    """One config object (e.g. `blueprint:fifoBilling`) with typed, range-checked getters."""

    def __init__(self, name: str, values: Optional[dict], source: str = "stacks/Pulumi.<stack>.yaml"):
        self.name = name
        self.values = dict(values or {})
        self.source = source
        self.read: set[str] = set()

    @classmethod
    def from_pulumi(cls, name: str) -> "Section":
        config = pulumi.Config(NAMESPACE)
        raw = config.get(name)
        if raw is None:
            return cls(name, {})
        try:
            values = json.loads(raw)
        except json.JSONDecodeError:
            values = raw
        if not isinstance(values, dict):
            raise StackConfigError(f"{NAMESPACE}:{name} must be an object of settings, got {raw!r}")
        return cls(name, values)

    def key(self, key: str) -> str:
        return f"{NAMESPACE}:{self.name}.{key}"

    def _fail(self, key: str, got: Any, allowed: str) -> StackConfigError:
        return StackConfigError(f"{self.key(key)} = {got!r} is not allowed: {allowed}. "
                                f"Fix it in {self.source}.")

    def _get(self, key: str, default: Any) -> Any:
        self.read.add(key)
        value = self.values.get(key, _MISSING)
        if value is _MISSING or value is None:
            if default is _MISSING:
                raise StackConfigError(f"{self.key(key)} is required but not set. Set it in {self.source}.")
            return default
        return value

    def integer(self, key: str, default: Any = _MISSING, *, minimum: Optional[int] = None,
                maximum: Optional[int] = None, why: str = "") -> Optional[int]:
        value = self._get(key, default)
        if value is None:
            return None
        allowed = "a whole number" + (f" from {minimum}" if minimum is not None else "") + \
                  (f" to {maximum}" if maximum is not None else "") + (f" ({why})" if why else "")
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
                value = int(value)
            else:
                raise self._fail(key, value, allowed)
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            raise self._fail(key, value, allowed)
        return value

    def boolean(self, key: str, default: Any = _MISSING) -> bool:
        value = self._get(key, default)
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if not isinstance(value, bool):
            raise self._fail(key, value, "true or false")
        return value

    def number(self, key: str, default: Any = _MISSING, *, minimum: Optional[float] = None,
               maximum: Optional[float] = None, why: str = "") -> Optional[float]:
        """A whole or decimal number (e.g. a percentage or a backoff rate), returned as float."""
        value = self._get(key, default)
        if value is None:
            return None
        allowed = "a number" + (f" from {minimum}" if minimum is not None else "") + \
                  (f" to {maximum}" if maximum is not None else "") + (f" ({why})" if why else "")
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise self._fail(key, value, allowed) from None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise self._fail(key, value, allowed)
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            raise self._fail(key, value, allowed)
        return float(value)

    def string(self, key: str, default: Any = _MISSING, *, choices: Optional[Iterable[str]] = None,
               pattern: Optional[str] = None, describe: str = "") -> Optional[str]:
        value = self._get(key, default)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise self._fail(key, value, describe or "a non-empty string")
        if choices is not None and value not in choices:
            raise self._fail(key, value, "one of " + ", ".join(sorted(choices)))
        if pattern is not None and not re.fullmatch(pattern, value):
            raise self._fail(key, value, describe or f"a string matching {pattern}")
        return value

    def string_list(self, key: str, default: Any = _MISSING, *, pattern: Optional[str] = None,
                    describe: str = "") -> list[str]:
        value = self._get(key, default)
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self._fail(key, value, describe or "a list of strings")
        if pattern is not None:
            for item in value:
                if not re.fullmatch(pattern, item):
                    raise self._fail(key, item, describe or f"strings matching {pattern}")
        return list(value)

    def finish(self) -> None:
        """Refuse keys nobody read: they are typos or settings this blueprint does not have."""
        unknown = sorted(set(self.values) - self.read)
        if unknown:
            raise StackConfigError(
                f"{NAMESPACE}:{self.name} has unknown keys {', '.join(unknown)}; allowed keys are "
                f"{', '.join(sorted(self.read))}. Fix it in {self.source}.")


ARN_PATTERN = r"arn:aws[a-z-]*:[a-z0-9-]+:[a-z0-9-]*:\d{12}:.+"


SCHEDULE_PATTERN = r"(cron\(\S+( \S+){5}\)|rate\(\d+ \w+\)|at\(\S+\))"
SCHEDULE_DESCRIPTION = "a Scheduler expression: cron(min hour dom month dow year), rate(...) or at(...)"


def platform_settings() -> dict:
    """`blueprint:platform`: what every pattern of the stack shares."""
    section = Section.from_pulumi("platform")
    result = {
        "alarm_actions": section.string_list("alarmActions", [], pattern=ARN_PATTERN,
                                             describe="a list of SNS topic ARNs"),
        "log_retention_days": section.integer("logRetentionDays", conventions.LOG_RETENTION_DEFAULT_DAYS,
                                              minimum=1),
        "powertools_layer_version": section.integer("powertoolsLayerVersion",
                                                    conventions.POWERTOOLS_LAYER_VERSION_DEFAULT, minimum=1),
        "protect_data": section.boolean("protectData", True),
    }
    if result["log_retention_days"] not in aws_limits.LOG_RETENTION_ALLOWED_DAYS:
        raise StackConfigError(
            f"{section.key('logRetentionDays')} = {result['log_retention_days']} is not a retention "
            f"CloudWatch Logs accepts; use one of {', '.join(map(str, aws_limits.LOG_RETENTION_ALLOWED_DAYS))}.")
    section.finish()
    return result


def fifo_billing_args(platform: dict) -> Optional[dict]:
    """`blueprint:fifoBilling` -> FifoBillingQueueArgs, or None when the stack disables it."""
    from integration_blueprint.components.fifo_billing_queue import FifoBillingQueueArgs

    section = Section.from_pulumi("fifoBilling")
    if not section.boolean("enabled", False):
        section.values = {k: v for k, v in section.values.items() if k == "enabled"}
        return None
    timeout = section.integer("consumerTimeoutSeconds", 30, minimum=1, maximum=aws_limits.LAMBDA_TIMEOUT_MAX_SECONDS)
    args = FifoBillingQueueArgs(
        consumer_timeout_seconds=timeout,
        batch_size=section.integer("batchSize", aws_limits.SQS_ESM_BATCH_SIZE_DEFAULT, minimum=1,
                                   maximum=aws_limits.SQS_FIFO_ESM_BATCH_SIZE_MAX, why="FIFO batch limit"),
        max_receive_count=section.integer("maxReceiveCount", conventions.DEFAULT_MAX_RECEIVE_COUNT,
                                          minimum=conventions.MIN_SAFE_MAX_RECEIVE_COUNT,
                                          maximum=aws_limits.SQS_MAX_RECEIVE_COUNT_MAX),
        visibility_timeout_seconds=section.integer(
            "visibilityTimeoutSeconds", timeout * aws_limits.SQS_VISIBILITY_TO_FUNCTION_TIMEOUT_FACTOR,
            minimum=timeout, maximum=aws_limits.SQS_VISIBILITY_TIMEOUT_MAX_SECONDS,
            why="at least the consumer timeout"),
        message_retention_seconds=section.integer(
            "messageRetentionSeconds", aws_limits.SQS_RETENTION_DEFAULT_SECONDS,
            minimum=aws_limits.SQS_RETENTION_MIN_SECONDS, maximum=conventions.DLQ_RETENTION_SECONDS - 1,
            why="shorter than the DLQ's 14 days"),
        maximum_concurrency=section.integer("maximumConcurrency", None,
                                            minimum=aws_limits.SQS_ESM_MAXIMUM_CONCURRENCY_MIN,
                                            maximum=aws_limits.SQS_ESM_MAXIMUM_CONCURRENCY_MAX),
        reserved_concurrency=section.integer("reservedConcurrency", None, minimum=1),
        oldest_message_alarm_seconds=section.integer("oldestMessageAlarmSeconds", 900, minimum=60),
        schedule_expression=section.string("schedule", "cron(0 3 1 * ? *)",
                                           pattern=SCHEDULE_PATTERN, describe=SCHEDULE_DESCRIPTION),
        schedule_timezone=section.string("scheduleTimezone", "UTC"),
        schedule_enabled=section.boolean("scheduleEnabled", True),
        scheduler_retry_attempts=section.integer("schedulerRetryAttempts", conventions.SCHEDULER_RETRY_ATTEMPTS_DEFAULT,
                                                 minimum=0, maximum=aws_limits.SCHEDULER_RETRY_ATTEMPTS_MAX),
        scheduler_max_event_age_seconds=section.integer(
            "schedulerMaxEventAgeSeconds", conventions.SCHEDULER_EVENT_AGE_DEFAULT_SECONDS,
            minimum=aws_limits.SCHEDULER_EVENT_AGE_MIN_SECONDS, maximum=aws_limits.SCHEDULER_EVENT_AGE_MAX_SECONDS),
        ledger_ttl_days=section.integer("ledgerTtlDays", conventions.BILLING_LEDGER_TTL_DEFAULT_DAYS, minimum=1),
        alarm_actions=platform["alarm_actions"],
        log_retention_days=platform["log_retention_days"],
        powertools_layer_version=platform["powertools_layer_version"],
        protect_data=platform["protect_data"],
    )
    accounts = section.string("accountsTableArn", None, pattern=ARN_PATTERN, describe="a DynamoDB table ARN")
    if accounts:
        args["accounts_table_arn"] = accounts
        args["accounts_table_name"] = accounts.rsplit("/", 1)[-1]
    section.finish()
    return args


def distributed_map_args(platform: dict) -> Optional[dict]:
    """`blueprint:distributedMap` -> DistributedMapBatchArgs, or None when the stack disables it."""
    from integration_blueprint.components.distributed_map_batch import (
        DEFAULT_INPUT_PREFIX,
        DEFAULT_ITEM_TIMEOUT_SECONDS,
        DEFAULT_RESULT_PREFIX,
        DEFAULT_SCHEDULE_INPUT_KEY,
        DistributedMapBatchArgs,
    )

    section = Section.from_pulumi("distributedMap")
    if not section.boolean("enabled", False):
        section.values = {k: v for k, v in section.values.items() if k == "enabled"}
        return None
    args = DistributedMapBatchArgs(
        # Required on purpose: the only right value comes from the downstream's capacity.
        max_concurrency=section.integer("maxConcurrency", minimum=1,
                                        maximum=aws_limits.DISTRIBUTED_MAP_MAX_CONCURRENCY_MAX,
                                        why="children at once; derive it from the downstream capacity"),
        retry_interval_seconds=section.integer(
            "retryIntervalSeconds", conventions.SFN_RETRY_INTERVAL_DEFAULT_SECONDS,
            minimum=aws_limits.SFN_RETRY_INTERVAL_MIN_SECONDS, maximum=aws_limits.SFN_RETRY_INTERVAL_MAX_SECONDS),
        retry_backoff_rate=section.number("retryBackoffRate", conventions.SFN_RETRY_BACKOFF_RATE_DEFAULT,
                                          minimum=aws_limits.SFN_RETRY_BACKOFF_RATE_MIN),
        retry_max_attempts=section.integer("retryMaxAttempts", conventions.SFN_RETRY_MAX_ATTEMPTS_DEFAULT,
                                           minimum=1, maximum=aws_limits.SFN_RETRY_MAX_ATTEMPTS_MAX),
        retry_max_delay_seconds=section.integer(
            "retryMaxDelaySeconds", conventions.SFN_RETRY_MAX_DELAY_DEFAULT_SECONDS,
            minimum=aws_limits.SFN_RETRY_MAX_DELAY_MIN_SECONDS, maximum=aws_limits.SFN_RETRY_MAX_DELAY_MAX_SECONDS),
        item_timeout_seconds=section.integer("itemTimeoutSeconds", DEFAULT_ITEM_TIMEOUT_SECONDS, minimum=1,
                                             maximum=aws_limits.LAMBDA_TIMEOUT_MAX_SECONDS),
        item_memory_mb=section.integer("itemMemoryMb", conventions.LAMBDA_MEMORY_DEFAULT_MB, minimum=128,
                                       maximum=10_240),
        input_prefix=section.string("inputPrefix", DEFAULT_INPUT_PREFIX),
        write_results=section.boolean("writeResults", True),
        result_prefix=section.string("resultPrefix", DEFAULT_RESULT_PREFIX),
        idempotency_expiry_seconds=section.integer(
            "idempotencyExpirySeconds", conventions.INVOICE_IDEMPOTENCY_EXPIRY_DEFAULT_SECONDS, minimum=60),
        alarm_actions=platform["alarm_actions"],
        log_retention_days=platform["log_retention_days"],
        powertools_layer_version=platform["powertools_layer_version"],
        protect_data=platform["protect_data"],
    )
    optional = {
        # Unset both: no failed item is tolerated. Set both: the run fails past either threshold.
        "tolerated_failure_percentage": section.number(
            "toleratedFailurePercentage", None, minimum=0,
            maximum=aws_limits.DISTRIBUTED_MAP_TOLERATED_FAILURE_PERCENTAGE_MAX),
        "tolerated_failure_count": section.integer("toleratedFailureCount", None, minimum=0),
        "item_reserved_concurrency": section.integer("itemReservedConcurrency", None, minimum=1),
        "max_items_per_batch": section.integer("maxItemsPerBatch", None, minimum=1),
        # Empty: the CSV's first row holds the column names.
        "csv_headers": section.string_list("csvHeaders", []) or None,
        "input_bucket_name": section.string("inputBucketName", None,
                                            pattern=r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]",
                                            describe="an S3 bucket name"),
    }
    args.update({k: v for k, v in optional.items() if v is not None})
    # No `schedule`: runs are started by hand (or by the team's own trigger).
    schedule = dict(
        schedule_expression=section.string("schedule", None,
                                           pattern=SCHEDULE_PATTERN, describe=SCHEDULE_DESCRIPTION),
        schedule_timezone=section.string("scheduleTimezone", "UTC"),
        schedule_enabled=section.boolean("scheduleEnabled", True),
        schedule_input_key=section.string("scheduleInputKey", DEFAULT_SCHEDULE_INPUT_KEY),
        scheduler_retry_attempts=section.integer(
            "schedulerRetryAttempts", conventions.SCHEDULER_RETRY_ATTEMPTS_DEFAULT, minimum=0,
            maximum=aws_limits.SCHEDULER_RETRY_ATTEMPTS_MAX),
        scheduler_max_event_age_seconds=section.integer(
            "schedulerMaxEventAgeSeconds", conventions.SCHEDULER_EVENT_AGE_DEFAULT_SECONDS,
            minimum=aws_limits.SCHEDULER_EVENT_AGE_MIN_SECONDS, maximum=aws_limits.SCHEDULER_EVENT_AGE_MAX_SECONDS),
    )
    if schedule["schedule_expression"] is not None:
        args.update(schedule)
    section.finish()
    return args


def _stream_consumer_args(section: Section, platform: dict) -> dict:
    """The settings both Kinesis consumer patterns share (`blueprint:idempotentStream`,
    `blueprint:nonIdempotentStream`). Unset keys are left to the component's defaults."""
    from integration_blueprint.components.kinesis_consumer import STREAM_MODES

    timeout = section.integer("functionTimeoutSeconds", None, minimum=1, maximum=aws_limits.LAMBDA_TIMEOUT_MAX_SECONDS)
    optional = {
        "stream_arn": section.string("streamArn", None, pattern=ARN_PATTERN, describe="a Kinesis stream ARN"),
        "stream_mode": section.string("streamMode", None, choices=STREAM_MODES),
        "shard_count": section.integer("shardCount", None, minimum=1),
        "retention_hours": section.integer("retentionHours", None, minimum=aws_limits.KINESIS_RETENTION_MIN_HOURS,
                                           maximum=aws_limits.KINESIS_RETENTION_MAX_HOURS),
        "kms_key_id": section.string("kmsKeyId", None),
        "enhanced_fan_out": section.boolean("enhancedFanOut", False),
        "batch_size": section.integer("batchSize", None, minimum=aws_limits.KINESIS_ESM_BATCH_SIZE_MIN,
                                      maximum=aws_limits.KINESIS_ESM_BATCH_SIZE_MAX),
        "batching_window_seconds": section.integer("batchingWindowSeconds", None, minimum=0,
                                                   maximum=aws_limits.KINESIS_ESM_BATCHING_WINDOW_MAX_SECONDS),
        "parallelization_factor": section.integer("parallelizationFactor", None,
                                                  minimum=aws_limits.KINESIS_ESM_PARALLELIZATION_MIN,
                                                  maximum=aws_limits.KINESIS_ESM_PARALLELIZATION_MAX),
        "starting_position": section.string("startingPosition", None, choices=aws_limits.KINESIS_ESM_STARTING_POSITIONS),
        "function_timeout_seconds": timeout,
        "memory_mb": section.integer("memoryMb", None, minimum=128, maximum=10240),
        "retry_delay_seconds": section.integer("retryDelaySeconds", None, minimum=0, maximum=aws_limits.SQS_DELAY_MAX_SECONDS),
        "retry_visibility_timeout_seconds": section.integer(
            "retryVisibilityTimeoutSeconds", None, minimum=timeout or 0,
            maximum=aws_limits.SQS_VISIBILITY_TIMEOUT_MAX_SECONDS, why="at least the function timeout"),
        "max_receive_count": section.integer("maxReceiveCount", None, minimum=conventions.MIN_SAFE_MAX_RECEIVE_COUNT,
                                             maximum=aws_limits.SQS_MAX_RECEIVE_COUNT_MAX),
        "retry_batch_size": section.integer("retryBatchSize", None, minimum=1, maximum=aws_limits.SQS_ESM_BATCH_SIZE_DEFAULT),
        "retry_retention_seconds": section.integer("retryRetentionSeconds", None, minimum=aws_limits.SQS_RETENTION_MIN_SECONDS,
                                                   maximum=conventions.DLQ_RETENTION_SECONDS - 1),
        "iterator_age_alarm_ms": section.integer("iteratorAgeAlarmMs", None, minimum=1),
        "retry_dlq_age_alarm_seconds": section.integer("retryDlqAgeAlarmSeconds", None, minimum=1),
    }
    args = {k: v for k, v in optional.items() if v is not None}
    args.update(alarm_actions=platform["alarm_actions"], log_retention_days=platform["log_retention_days"],
                powertools_layer_version=platform["powertools_layer_version"], protect_data=platform["protect_data"])
    return args


def idempotent_stream_args(platform: dict) -> Optional[dict]:
    """`blueprint:idempotentStream` -> IdempotentStreamConsumerArgs, or None when the stack disables it.
    The component checks the numbers against each other (replay window vs retention)."""
    from integration_blueprint.components.idempotent_stream_consumer import IdempotentStreamConsumerArgs

    section = Section.from_pulumi("idempotentStream")
    if not section.boolean("enabled", False):
        section.values = {k: v for k, v in section.values.items() if k == "enabled"}
        return None
    args = IdempotentStreamConsumerArgs(**_stream_consumer_args(section, platform))
    optional = {
        "maximum_retry_attempts": section.integer("maximumRetryAttempts", None, minimum=1,
                                                  maximum=aws_limits.KINESIS_ESM_RETRY_ATTEMPTS_MAX),
        "maximum_record_age_seconds": section.integer("maximumRecordAgeSeconds", None,
                                                      minimum=aws_limits.KINESIS_ESM_RECORD_AGE_MIN_SECONDS,
                                                      maximum=aws_limits.KINESIS_ESM_RECORD_AGE_MAX_SECONDS),
        "idempotency_key_jmespath": section.string("idempotencyKeyJmespath", None),
        "idempotency_ttl_seconds": section.integer("idempotencyTtlSeconds", None, minimum=1),
    }
    args.update({k: v for k, v in optional.items() if v is not None})
    section.finish()
    return args


def non_idempotent_stream_args(platform: dict) -> Optional[dict]:
    """`blueprint:nonIdempotentStream` -> NonIdempotentStreamConsumerArgs, or None when disabled."""
    from integration_blueprint.components.non_idempotent_stream_consumer import NonIdempotentStreamConsumerArgs

    section = Section.from_pulumi("nonIdempotentStream")
    if not section.boolean("enabled", False):
        section.values = {k: v for k, v in section.values.items() if k == "enabled"}
        return None
    args = NonIdempotentStreamConsumerArgs(**_stream_consumer_args(section, platform))
    section.finish()
    return args
