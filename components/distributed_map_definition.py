"""The Distributed Map batch state machine definition, built as data by one pure function.

No Pulumi and no AWS calls here: `build_definition` takes plain values (ARNs, URLs, numbers) and
returns the Amazon States Language document as a dict, so tests can check its shape, feed it to a
Step Functions interpreter, and the component only has to `json.dumps` it inside an `apply`.

Shape (states):

    ProcessInvoices  Map, DISTRIBUTED, STANDARD or EXPRESS children, reads the CSV named by the execution
                     input `{"inputKey": "<key>"}` from the input bucket, MaxConcurrency from
                     downstream capacity, ToleratedFailurePercentage/Count, optional ItemBatcher and
                     ResultWriter. Each child runs EnrichInvoice (lambda:invoke with bounded,
                     jittered retries). Catch States.ExceedToleratedFailureThreshold -> NotifyOps.
    NotifyOps        sqs:sendMessage of the failure context (execution, input key, error, cause)
                     to the ops queue, then
    RunFailed        Fail (InvoiceBatch.ToleratedFailuresExceeded), so the execution still counts
                     in ExecutionsFailed and pages.

Public: `build_definition`, `to_json`, `MapSettings`, `RetrySettings`, `SETTINGS` (the
DistributedMapBatch settings table), and the state and error names: `MAP_STATE`, `ITEM_STATE`,
`NOTIFY_STATE`, `FAIL_STATE`, `RUN_FAILED_ERROR`, `IN_PROGRESS_ERROR`, `INPUT_KEY_FIELD`, `COMPONENT`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from integration_blueprint.components.platform import PLATFORM_SETTINGS
from integration_blueprint.components.settings import (
    REQUIRED,
    SCHEDULE_SETTINGS,
    Setting,
    SettingsTable,
    code_settings,
    schedule_expression_setting,
)
from integration_blueprint.components.validation import ComponentArgumentError, require, require_range
from integration_blueprint.core import aws_limits, conventions
from integration_blueprint.handlers.runtime.retry import TRANSIENT_ERROR_NAME

__all__ = ["COMPONENT", "FAIL_STATE", "INPUT_KEY_FIELD", "IN_PROGRESS_ERROR", "ITEM_STATE", "MAP_STATE",
           "MapSettings", "NOTIFY_STATE", "RUN_FAILED_ERROR", "RetrySettings", "SETTINGS", "build_definition",
           "to_json"]

COMPONENT = "DistributedMapBatch"

MAP_STATE = "ProcessInvoices"
ITEM_STATE = "EnrichInvoice"
NOTIFY_STATE = "NotifyOps"
FAIL_STATE = "RunFailed"
RUN_FAILED_ERROR = "InvoiceBatch.ToleratedFailuresExceeded"
# The execution input names the CSV object: {"inputKey": "incoming/2026-11-22.csv"}.
INPUT_KEY_FIELD = "inputKey"
# The handler raises this (Powertools) when a duplicate row is still being processed by another
# child; it is transient, so the child retries and then gets the stored result.
IN_PROGRESS_ERROR = "IdempotencyAlreadyInProgressError"


S3_PREFIX_PATTERN = r"[^/].*"
S3_PREFIX = "a non-empty S3 key prefix without a leading '/', e.g. 'incoming/'"

# The DistributedMapBatch component's settings (the component and the stack reader use this table;
# the builder checks the values it is given against the same rows).
SETTINGS = SettingsTable(COMPONENT, [
    Setting("max_concurrency", int, REQUIRED, minimum=1, maximum=aws_limits.DISTRIBUTED_MAP_MAX_CONCURRENCY_MAX,
            why="children running at once: set it from what the downstream (DynamoDB, an API, the item function's "
                "reserved concurrency) can take; AWS's default, 0, means up to 10,000 at once"),
    Setting("tolerated_failure_percentage", float, None, minimum=0,
            maximum=aws_limits.DISTRIBUTED_MAP_TOLERATED_FAILURE_PERCENTAGE_MAX,
            why="share of items that may fail before the run fails; default 0 unless a count is given"),
    Setting("tolerated_failure_count", int, None, minimum=0,
            why="number of items that may fail before the run fails"),
    Setting("retry_interval_seconds", int, conventions.SFN_RETRY_INTERVAL_DEFAULT_SECONDS,
            minimum=aws_limits.SFN_RETRY_INTERVAL_MIN_SECONDS, maximum=aws_limits.SFN_RETRY_INTERVAL_MAX_SECONDS,
            why="the wait before an item's first retry of a transient error"),
    Setting("retry_backoff_rate", float, conventions.SFN_RETRY_BACKOFF_RATE_DEFAULT,
            minimum=aws_limits.SFN_RETRY_BACKOFF_RATE_MIN, why="each retry waits this many times longer"),
    Setting("retry_max_attempts", int, conventions.SFN_RETRY_MAX_ATTEMPTS_DEFAULT, minimum=1,
            maximum=aws_limits.SFN_RETRY_MAX_ATTEMPTS_MAX,
            why="attempts of an item after a transient error; 0 (no retries) is refused: transient Lambda errors "
                "would fail items"),
    Setting("retry_max_delay_seconds", int, conventions.SFN_RETRY_MAX_DELAY_DEFAULT_SECONDS,
            minimum=aws_limits.SFN_RETRY_MAX_DELAY_MIN_SECONDS, maximum=aws_limits.SFN_RETRY_MAX_DELAY_MAX_SECONDS,
            at_least="retry_interval_seconds", why="the longest wait between retries; at least the retry interval"),
    Setting("retry_jitter_strategy", str, "FULL", choices=("FULL",),
            why="how retries spread their waits; without jitter, thousands of children retry in lockstep and "
                "stampede the downstream"),
    Setting("csv_headers", list, None, describe="a list of column names",
            why="column names when the CSV has no header row; unset or empty: the first row holds them"),
    Setting("max_items_per_batch", int, None, minimum=1,
            why=f"rows per child (ItemBatcher); unset: {conventions.MAP_ITEMS_PER_BATCH_DEFAULT} with the reference "
                "item handler (Step Functions bills per child: docs/cost.md, `blueprint docs cost`), "
                "one row per child "
                "with item_code (your "
                "handler must read {\"Items\": [...]} to be given batches). A failed child counts all its rows "
                "toward the tolerated failures"),
    Setting("child_execution_type", str, "STANDARD", choices=aws_limits.SFN_EXECUTION_TYPES,
            why="the Map's child executions: STANDARD (billed per transition) or EXPRESS (per request and "
                "duration, at most 5 minutes each: refused where the item timeout and its retries cannot fit)"),
    Setting("input_bucket_name", str, None, pattern=aws_limits.S3_BUCKET_NAME_PATTERN, describe="an S3 bucket name",
            why="an existing input bucket; unset: the component creates one"),
    Setting("input_prefix", str, "incoming/", pattern=S3_PREFIX_PATTERN, describe=S3_PREFIX,
            why="the state machine may read input CSVs only under it"),
    Setting("write_results", bool, True, why="per-item results (failed items included) go to S3"),
    Setting("result_prefix", str, "results/", pattern=S3_PREFIX_PATTERN, describe=S3_PREFIX,
            why="where the per-item results are written (with write_results)"),
    Setting("item_timeout_seconds", int, 30, minimum=1, maximum=aws_limits.LAMBDA_TIMEOUT_MAX_SECONDS,
            why="the item function's timeout; the task's own timeout adds a margin to it"),
    Setting("item_memory_mb", int, conventions.LAMBDA_MEMORY_DEFAULT_MB, minimum=aws_limits.LAMBDA_MEMORY_MIN_MB,
            maximum=aws_limits.LAMBDA_MEMORY_MAX_MB, why="the item function's memory (and so its CPU share)"),
    Setting("item_reserved_concurrency", int, None, minimum=1,
            why="the item function's reserved concurrency; at least max_concurrency"),
    Setting("idempotency_expiry_seconds", int, conventions.INVOICE_IDEMPOTENCY_EXPIRY_DEFAULT_SECONDS, minimum=60,
            why="how long a processed invoice is remembered"),
    Setting("state_machine_name", str, None, pattern=r"[A-Za-z0-9_-]{1,%d}" % aws_limits.SFN_STATE_MACHINE_NAME_MAX_LENGTH,
            describe=f"1-{aws_limits.SFN_STATE_MACHINE_NAME_MAX_LENGTH} letters, digits, '-' or '_'",
            in_stack=False, why="the state machine's fixed name; default: <project>-<stack>-<resource name>"),
    schedule_expression_setting(None, why="when runs start; unset: no schedule (runs are started by hand or by your "
                                          "own trigger)"),
    *SCHEDULE_SETTINGS,
    Setting("schedule_input_key", str, "incoming/invoices.csv", why="the CSV a scheduled run reads (under input_prefix)"),
    *code_settings("item_code", "item_handler", "item"),
], inherited=PLATFORM_SETTINGS.arguments())


@dataclass(frozen=True)
class RetrySettings:
    """The item task's retry policy for transient Lambda errors and task timeouts."""

    interval_seconds: int = SETTINGS.default("retry_interval_seconds")
    backoff_rate: float = SETTINGS.default("retry_backoff_rate")
    max_attempts: int = SETTINGS.default("retry_max_attempts")
    max_delay_seconds: int = SETTINGS.default("retry_max_delay_seconds")
    jitter_strategy: str = SETTINGS.default("retry_jitter_strategy")

    def __post_init__(self):
        SETTINGS["retry_interval_seconds"].check(COMPONENT, self.interval_seconds)
        SETTINGS["retry_backoff_rate"].check(COMPONENT, self.backoff_rate)
        SETTINGS["retry_max_attempts"].check(COMPONENT, self.max_attempts)
        SETTINGS["retry_max_delay_seconds"].check(COMPONENT, self.max_delay_seconds, SETTINGS.lower_bound(
            SETTINGS["retry_max_delay_seconds"], {"retry_interval_seconds": self.interval_seconds}))
        SETTINGS["retry_jitter_strategy"].check(COMPONENT, self.jitter_strategy)

    def retrier(self, errors: Sequence[str]) -> dict:
        return {
            "ErrorEquals": list(errors),
            "IntervalSeconds": int(self.interval_seconds),
            # A float: AWS accepts either, and some ASL parsers (moto/LocalStack) only a decimal.
            "BackoffRate": float(self.backoff_rate),
            "MaxAttempts": int(self.max_attempts),
            "MaxDelaySeconds": int(self.max_delay_seconds),
            "JitterStrategy": self.jitter_strategy,
        }


@dataclass(frozen=True)
class MapSettings:
    """What a stack chooses; every value is checked on construction."""

    max_concurrency: int
    tolerated_failure_percentage: Optional[float] = 0.0
    tolerated_failure_count: Optional[int] = None
    retry: RetrySettings = field(default_factory=RetrySettings)
    csv_headers: Optional[Sequence[str]] = None  # None: the CSV's first row holds the headers
    max_items_per_batch: Optional[int] = None  # None: one row per child (no ItemBatcher)
    execution_type: str = "STANDARD"  # the children's: STANDARD or EXPRESS
    task_timeout_seconds: int = aws_limits.LAMBDA_TIMEOUT_DEFAULT_SECONDS + conventions.SFN_TASK_TIMEOUT_MARGIN_SECONDS

    def __post_init__(self):
        # 0 (or leaving MaxConcurrency out) means "up to 10,000 children at once": never what a
        # downstream database or API can take, so it must be set from its capacity.
        SETTINGS["max_concurrency"].check(COMPONENT, self.max_concurrency)
        require(COMPONENT, self.tolerated_failure_percentage is not None or self.tolerated_failure_count is not None,
                "set tolerated_failure_percentage or tolerated_failure_count (0 = no failed item tolerated)",
                "tolerated_failure_percentage")
        SETTINGS["tolerated_failure_percentage"].check(COMPONENT, self.tolerated_failure_percentage)
        SETTINGS["tolerated_failure_count"].check(COMPONENT, self.tolerated_failure_count)
        if self.tolerated_failure_count is not None:
            require(COMPONENT, float(self.tolerated_failure_count).is_integer(),
                    f"tolerated_failure_count={self.tolerated_failure_count!r} must be a whole number",
                    "tolerated_failure_count")
        if self.csv_headers is not None:
            require(COMPONENT, len(self.csv_headers) > 0 and all(isinstance(h, str) and h for h in self.csv_headers),
                    f"csv_headers={self.csv_headers!r} must be a non-empty list of column names, "
                    "or left out when the CSV's first row holds them", "csv_headers")
        SETTINGS["max_items_per_batch"].check(COMPONENT, self.max_items_per_batch)
        SETTINGS["child_execution_type"].check(COMPONENT, self.execution_type)
        if self.execution_type == "EXPRESS":
            longest = self.longest_child_seconds()
            require(COMPONENT, longest <= aws_limits.SFN_EXPRESS_MAX_DURATION_SECONDS,
                    f"child_execution_type=EXPRESS: a child may run {longest:.0f} s (task timeout "
                    f"{self.task_timeout_seconds} s x {1 + 2 * self.retry.max_attempts} attempts plus the retry waits), "
                    f"over EXPRESS's {aws_limits.SFN_EXPRESS_MAX_DURATION_SECONDS} s limit; lower item_timeout_seconds "
                    "or retry_max_attempts, or use STANDARD", "child_execution_type")

    def longest_child_seconds(self) -> float:
        """The longest a child can run: every attempt of both retriers (transient errors, and an
        invoice still in progress elsewhere) at the task timeout, plus their longest waits."""
        retry = self.retry
        waits = sum(min(retry.interval_seconds * retry.backoff_rate ** k, retry.max_delay_seconds)
                    for k in range(int(retry.max_attempts)))
        return (1 + 2 * retry.max_attempts) * self.task_timeout_seconds + 2 * waits
        require_range(COMPONENT, "task_timeout_seconds", self.task_timeout_seconds, 1)
        if not isinstance(self.retry, RetrySettings):
            raise ComponentArgumentError(f"{COMPONENT}: retry must be RetrySettings, got {self.retry!r}")


def _reader_config(settings: MapSettings) -> dict:
    if settings.csv_headers is None:
        return {"InputType": "CSV", "CSVHeaderLocation": "FIRST_ROW"}
    return {"InputType": "CSV", "CSVHeaderLocation": "GIVEN", "CSVHeaders": list(settings.csv_headers)}


def _item_task(function_arn: str, settings: MapSettings) -> dict:
    return {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke",
        "Parameters": {"FunctionName": function_arn, "Payload.$": "$"},
        "OutputPath": "$.Payload",
        "TimeoutSeconds": int(settings.task_timeout_seconds),
        "Retry": [
            # TransientServiceError: an AWS call the handler still saw throttled or failing after
            # its own retries within its time budget; a later attempt is the right answer.
            settings.retry.retrier([*aws_limits.SFN_LAMBDA_TRANSIENT_ERRORS, "States.Timeout", TRANSIENT_ERROR_NAME]),
            settings.retry.retrier([IN_PROGRESS_ERROR]),
        ],
        # No Catch: a validation error fails the child, which counts toward the tolerated failures.
        "End": True,
    }


def build_definition(*, function_arn: str, input_bucket: str, ops_queue_url: str,
                     settings: MapSettings, result_bucket: Optional[str] = None,
                     result_prefix: Optional[str] = None,
                     comment: str = "Invoice enrichment over an S3 CSV (Distributed Map)") -> dict[str, Any]:
    """The ASL document (a dict). `result_prefix` turns on the ResultWriter (in `result_bucket`,
    default the input bucket) so failed items can be found after the run."""
    for arg, value in (("function_arn", function_arn), ("input_bucket", input_bucket),
                       ("ops_queue_url", ops_queue_url)):
        require(COMPONENT, isinstance(value, str) and bool(value), f"{arg} must be a non-empty string, got {value!r}")
    if not isinstance(settings, MapSettings):
        raise ComponentArgumentError(f"{COMPONENT}: settings must be MapSettings, got {settings!r}")

    map_state: dict[str, Any] = {
        "Type": "Map",
        "Label": "InvoiceMap",
        "ItemReader": {
            "Resource": "arn:aws:states:::s3:getObject",
            "ReaderConfig": _reader_config(settings),
            "Parameters": {"Bucket": input_bucket, "Key.$": f"$.{INPUT_KEY_FIELD}"},
        },
        "ItemProcessor": {
            "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": settings.execution_type},
            "StartAt": ITEM_STATE,
            "States": {ITEM_STATE: _item_task(function_arn, settings)},
        },
        "MaxConcurrency": int(settings.max_concurrency),
        "Catch": [{
            "ErrorEquals": [aws_limits.DISTRIBUTED_MAP_TOLERATED_FAILURE_ERROR],
            # Keep the execution input (the CSV key) next to the error for the ops message.
            "ResultPath": "$.failure",
            "Next": NOTIFY_STATE,
        }],
        "End": True,
    }
    if settings.tolerated_failure_percentage is not None:
        # Always a decimal (2 -> 2.0): AWS accepts both, moto's (LocalStack's) ASL grammar only
        # parses ToleratedFailurePercentage as a decimal NUMBER and rejects a bare integer.
        # asl-validator 4.0.0 wants an integer: a false alarm for a fractional percentage, which
        # the Step Functions API types as a float (tests/test_field_validators.py).
        map_state["ToleratedFailurePercentage"] = float(settings.tolerated_failure_percentage)
    if settings.tolerated_failure_count is not None:
        map_state["ToleratedFailureCount"] = int(settings.tolerated_failure_count)
    if settings.max_items_per_batch is not None:
        map_state["ItemBatcher"] = {"MaxItemsPerBatch": int(settings.max_items_per_batch),
                                    "MaxInputBytesPerBatch": aws_limits.DISTRIBUTED_MAP_ITEM_BATCHER_MAX_INPUT_BYTES}
    if result_prefix is not None:
        require(COMPONENT, isinstance(result_prefix, str) and bool(result_prefix),
                f"result_prefix={result_prefix!r} must be a non-empty S3 prefix, or None for no ResultWriter")
        map_state["ResultWriter"] = {
            "Resource": "arn:aws:states:::s3:putObject",
            "Parameters": {"Bucket": result_bucket or input_bucket, "Prefix": result_prefix},
        }
        # The results live in S3; the state output only carries the manifest location, which
        # keeps the execution far below the 256 KiB payload limit however large the CSV.

    return {
        "Comment": comment,
        "StartAt": MAP_STATE,
        "States": {
            MAP_STATE: map_state,
            NOTIFY_STATE: {
                "Type": "Task",
                "Resource": "arn:aws:states:::sqs:sendMessage",
                "Parameters": {
                    "QueueUrl": ops_queue_url,
                    "MessageBody": {
                        "execution.$": "$$.Execution.Id",
                        "inputKey.$": f"$.{INPUT_KEY_FIELD}",
                        "error.$": "$.failure.Error",
                        "cause.$": "$.failure.Cause",
                    },
                },
                "ResultPath": None,
                "Next": FAIL_STATE,
            },
            FAIL_STATE: {
                "Type": "Fail",
                # Not "States.…": the ASL spec reserves that prefix for Step Functions' own errors.
                "Error": RUN_FAILED_ERROR,
                "Cause": "More items failed than the run tolerates; the ops queue has the details.",
            },
        },
    }


def to_json(definition: dict) -> str:
    """Stable JSON (sorted keys) so an unchanged definition never shows a diff."""
    return json.dumps(definition, sort_keys=True)
