"""DistributedMapBatch: a nightly batch over an S3 CSV, rows batched per idempotent Lambda call.

    Scheduler (optional; retry policy, standard DLQ)
        -> Step Functions STANDARD state machine (definition: components/distributed_map_definition.py)
             Map, DISTRIBUTED: reads s3://<input bucket>/<inputKey> (CSV), MaxConcurrency from the
             downstream capacity, tolerated failures, results written to S3
             -> item Lambda (handlers/invoice_enricher.py), Powertools idempotency on DynamoDB
             on States.ExceedToleratedFailureThreshold -> ops queue (standard SQS, own DLQ, alarms)

Start a run with the input {"inputKey": "<input prefix>invoices.csv"}.

The state machine's name is fixed (project-stack-name unless given), so its role can name the
machine's own ARN (child executions need states:StartExecution on it) without depending on the
machine: no dependency cycle.

Public: `DistributedMapBatch`, `DistributedMapBatchArgs`, `SETTINGS` (its settings table, declared
with the definition builder), `validate` (returns `DistributedMapValues`),
`default_state_machine_name`, `PHYSICAL_NAMES`, `INPUT_BUCKET_NAME`, `TYPE`, `COMPONENT`.
"""

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Required, Sequence, cast

import pulumi
import pulumi_aws as aws

from integration_blueprint.components.alarms import queue_depth_alarm, state_machine_alarms
from integration_blueprint.components.distributed_map_definition import (
    INPUT_KEY_FIELD,
    SETTINGS,
    MapSettings,
    RetrySettings,
    build_definition,
    to_json,
)
from integration_blueprint.components.function import PolicyStatementArgs, handler_code, packaged_function
from integration_blueprint.components.iam import SourceCondition, Statement, account_context, service_role
from integration_blueprint.components.naming import PhysicalName, function_names, queue_name, require_fits, schedule_names
from integration_blueprint.components.platform import PlatformArgs, declared, publish, runtime_settings
from integration_blueprint.components.queues import deny_insecure_transport, queue_with_dlq
from integration_blueprint.components.schedules import scheduled_start
from integration_blueprint.components.tables import idempotency_table
from integration_blueprint.components.validation import ComponentArgumentError, is_known, require
from integration_blueprint.core import aws_limits, conventions
from integration_blueprint.handlers.runtime import config as handler_config

__all__ = ["COMPONENT", "DistributedMapBatch", "DistributedMapBatchArgs", "DistributedMapValues", "INPUT_BUCKET_NAME",
           "PHYSICAL_NAMES", "SETTINGS", "TYPE", "default_state_machine_name", "validate"]

TYPE = "blueprint:index:DistributedMapBatch"
COMPONENT = "DistributedMapBatch"



class DistributedMapBatchArgs(PlatformArgs, total=False):
    """The arguments of a DistributedMapBatch; each one's type, default, bounds and reason are its row in
    SETTINGS (docs/components/DistributedMapBatch.md). max_concurrency is required."""

    max_concurrency: Required[pulumi.Input[int]]
    tolerated_failure_percentage: pulumi.Input[float]
    tolerated_failure_count: pulumi.Input[int]
    retry_interval_seconds: pulumi.Input[int]
    retry_backoff_rate: pulumi.Input[float]
    retry_max_attempts: pulumi.Input[int]
    retry_max_delay_seconds: pulumi.Input[int]
    retry_jitter_strategy: pulumi.Input[str]
    csv_headers: pulumi.Input[Sequence[str]]
    max_items_per_batch: pulumi.Input[int]
    child_execution_type: pulumi.Input[str]
    input_bucket_name: pulumi.Input[str]
    input_prefix: pulumi.Input[str]
    write_results: pulumi.Input[bool]
    result_prefix: pulumi.Input[str]
    item_timeout_seconds: pulumi.Input[int]
    item_memory_mb: pulumi.Input[int]
    item_reserved_concurrency: pulumi.Input[int]
    item_code: pulumi.Archive
    item_handler: pulumi.Input[str]
    item_environment: pulumi.Input[Mapping[str, pulumi.Input[str]]]
    item_policy_statements: pulumi.Input[Sequence[pulumi.Input[PolicyStatementArgs]]]
    idempotency_expiry_seconds: pulumi.Input[int]
    state_machine_name: pulumi.Input[str]
    schedule_expression: pulumi.Input[str]
    schedule_timezone: pulumi.Input[str]
    schedule_enabled: pulumi.Input[bool]
    schedule_input_key: pulumi.Input[str]
    scheduler_retry_attempts: pulumi.Input[int]
    scheduler_max_event_age_seconds: pulumi.Input[int]


# The physical names the component generates from its name (checked against AWS's limits); the
# state machine's own name is checked on its own (it is fixed, not auto-named).
# The item function's name: the reference handler enriches invoices; the team's code handles items.
REFERENCE_ITEM_SUFFIX, TEAM_ITEM_SUFFIX = "-enricher", "-item"

# The longest of each name the component generates (the reference handler's item function's).
PHYSICAL_NAMES = [*function_names(REFERENCE_ITEM_SUFFIX), PhysicalName("IAM role", "-role", aws_limits.IAM_ROLE_NAME_MAX_LENGTH),
                  queue_name("-ops"), queue_name("-ops-dlq"), *schedule_names()]
INPUT_BUCKET_NAME = PhysicalName("S3 bucket", "-input", aws_limits.S3_BUCKET_NAME_MAX_LENGTH)


def _map_settings(max_concurrency, tolerated_pct, tolerated_count, retry_values: dict,
                  csv_headers, batch, item_timeout, execution_type) -> MapSettings:
    return MapSettings(
        max_concurrency=max_concurrency,
        tolerated_failure_percentage=tolerated_pct,
        tolerated_failure_count=tolerated_count,
        retry=RetrySettings(**retry_values),
        csv_headers=csv_headers,
        max_items_per_batch=batch,
        execution_type=execution_type,
        task_timeout_seconds=item_timeout + conventions.SFN_TASK_TIMEOUT_MARGIN_SECONDS,
    )


def default_state_machine_name(resource_name: str) -> str:
    """`<project>-<stack>-<resource name>`, refused (not cut, which could collide) when too long."""
    name = re.sub(r"[^A-Za-z0-9_-]", "-", f"{pulumi.get_project()}-{pulumi.get_stack()}-{resource_name}")
    limit = aws_limits.SFN_STATE_MACHINE_NAME_MAX_LENGTH
    require(COMPONENT, len(name) <= limit,
            f"the default state machine name {name!r} ({len(name)} characters) is over AWS's limit of {limit}; "
            "give state_machine_name, or use a shorter component name", "state_machine_name")
    return name


@dataclass(frozen=True)
class DistributedMapValues:
    """The effective, checked values of a DistributedMapBatch (Outputs stay Outputs)."""

    max_concurrency: pulumi.Input[int]
    tolerated_pct: Optional[pulumi.Input[float]]
    tolerated_count: Optional[pulumi.Input[int]]
    retry_values: dict[str, Any]
    """RetrySettings' fields."""
    csv_headers: Optional[pulumi.Input[Sequence[str]]]
    batch: Optional[pulumi.Input[int]]
    execution_type: pulumi.Input[str]
    item_timeout: pulumi.Input[int]
    input_prefix: pulumi.Input[str]
    result_prefix: pulumi.Input[str]


def validate(args: DistributedMapBatchArgs) -> DistributedMapValues:
    """The effective values, or a ComponentArgumentError that names the argument and the fix."""
    SETTINGS.check(args)  # unknown arguments, max_concurrency left out, values outside their rows
    tolerated_count = args.get("tolerated_failure_count")
    tolerated_pct = args.get("tolerated_failure_percentage")
    if tolerated_pct is None and tolerated_count is None:
        tolerated_pct = 0.0
    values = DistributedMapValues(
        max_concurrency=SETTINGS.value(args, "max_concurrency"),
        tolerated_pct=tolerated_pct,
        tolerated_count=tolerated_count,
        retry_values={
            "interval_seconds": SETTINGS.value(args, "retry_interval_seconds"),
            "backoff_rate": SETTINGS.value(args, "retry_backoff_rate"),
            "max_attempts": SETTINGS.value(args, "retry_max_attempts"),
            "max_delay_seconds": SETTINGS.value(args, "retry_max_delay_seconds"),
            "jitter_strategy": SETTINGS.value(args, "retry_jitter_strategy"),
        },
        csv_headers=args.get("csv_headers"),
        # The cheap shape by default for the reference handler; a team's handler is given batches
        # only when it asks (its code must read {"Items": [...]}).
        batch=args.get("max_items_per_batch",
                       conventions.MAP_ITEMS_PER_BATCH_DEFAULT if args.get("item_code") is None else None),
        execution_type=SETTINGS.value(args, "child_execution_type"),
        item_timeout=SETTINGS.value(args, "item_timeout_seconds"),
        input_prefix=SETTINGS.value(args, "input_prefix"),
        result_prefix=SETTINGS.value(args, "result_prefix"),
    )
    plain = [values.max_concurrency, values.tolerated_pct, values.tolerated_count,
             *values.retry_values.values(), values.batch, values.item_timeout, values.execution_type]
    if all(v is None or is_known(v) for v in plain) and not hasattr(values.csv_headers, "apply"):
        # Raises now, before any resource.
        _map_settings(values.max_concurrency, values.tolerated_pct, values.tolerated_count, values.retry_values,
                      values.csv_headers, values.batch, values.item_timeout, values.execution_type)
    reserved = args.get("item_reserved_concurrency")
    if is_known(reserved) and is_known(values.max_concurrency) and values.max_concurrency > reserved:
        raise ComponentArgumentError(
            f"{COMPONENT}: max_concurrency={values.max_concurrency} is above "
            f"item_reserved_concurrency={reserved}; the extra children would be throttled and burn "
            f"their retries. Use max_concurrency <= {reserved} or raise the reserved concurrency.", "max_concurrency")
    if args.get("schedule_expression") is not None:
        key = SETTINGS.value(args, "schedule_input_key")
        if is_known(key) and is_known(values.input_prefix):
            require(COMPONENT, isinstance(key, str) and key.startswith(values.input_prefix),
                    f"schedule_input_key={key!r} is outside input_prefix={values.input_prefix!r}; the state "
                    "machine may only read under the input prefix", "schedule_input_key")
    require(COMPONENT, args.get("item_code") is None or args.get("item_handler") is not None,
            "item_code is given without item_handler; name the handler in your code (module.function)", "item_handler")
    return values


class DistributedMapBatch(pulumi.ComponentResource):
    """A batch over an S3 CSV, one idempotent Lambda call per row: a Step Functions Distributed Map with
    bounded concurrency, retries with full jitter and a tolerated failure threshold; a run that
    exceeds it notifies the ops queue. Start a run with the input {"inputKey": "<input prefix>x.csv"}."""

    state_machine_arn: pulumi.Output[str]
    """ARN of the state machine (start a run with the input key of a CSV under input_prefix)."""
    state_machine_name: pulumi.Output[str]
    """Name of the state machine."""
    input_bucket_name: pulumi.Output[str]
    """Name of the bucket the input CSVs are read from (given or created)."""
    ops_queue_url: pulumi.Output[str]
    """URL of the ops queue: one message per run that exceeded its tolerated failures."""
    ops_queue_arn: pulumi.Output[str]
    """ARN of the ops queue."""
    ops_dlq_url: pulumi.Output[str]
    """URL of the ops queue's DLQ."""
    item_function_name: pulumi.Output[str]
    """Name of the item function (one call per row or batch of rows): `<name>-enricher` running the
    reference handler, `<name>-item` running yours."""
    item_function_arn: pulumi.Output[str]
    """ARN of the item function."""
    idempotency_table_name: pulumi.Output[str]
    """Name of the item function's idempotency table."""
    invoice_ledger_table_name: pulumi.Output[Optional[str]]
    """Name of the reference handler's invoice ledger (one row per invoice); unset with item_handler
    (the team's code keeps its own)."""
    log_group_name: pulumi.Output[str]
    """Name of the state machine's log group."""
    schedule_arn: pulumi.Output[Optional[str]]
    """ARN of the schedule that starts runs; None without schedule_expression."""
    item_role_name: pulumi.Output[str]
    """Name of the item function's role: attach your own policies to it (`aws.iam.RolePolicy`)."""
    item_role_arn: pulumi.Output[str]
    """ARN of the item function's role."""

    def __init__(self, name: str, args: DistributedMapBatchArgs,
                 opts: Optional[pulumi.ResourceOptions] = None):
        args = cast(DistributedMapBatchArgs, declared(self, TYPE, name, args, opts, SETTINGS))  # as its rows parse it
        values = validate(args)
        creates_bucket = args.get("input_bucket_name") is None
        require_fits(COMPONENT, name, PHYSICAL_NAMES + ([INPUT_BUCKET_NAME] if creates_bucket else []))
        settings = runtime_settings(args)
        alarm_actions = args.get("alarm_actions")
        protect = args.get("protect_data", True)
        write_results = SETTINGS.value(args, "write_results")
        child = pulumi.ResourceOptions(parent=self)

        sm_name = args.get("state_machine_name") or default_state_machine_name(name)
        where = account_context()
        sm_arn = where.arn("states", pulumi.Output.concat("stateMachine:", sm_name))
        executions_arn = where.arn("states", pulumi.Output.concat("execution:", sm_name, ":*"))

        # --- input bucket ---
        if args.get("input_bucket_name") is not None:
            bucket_name = pulumi.Output.from_input(args["input_bucket_name"])
        else:
            bucket_name = self._input_bucket(name).bucket
        bucket_arn = pulumi.Output.format("arn:{0}:s3:::{1}", where.partition, bucket_name)

        # --- ops queue: one message per run that exceeded its tolerated failures ---
        ops = queue_with_dlq(
            f"{name}-ops", parent=self, dlq_name=f"{name}-ops-dlq", max_receive_count=conventions.DEFAULT_MAX_RECEIVE_COUNT,
            alarm_actions=alarm_actions,
            dlq_description=f"{name}: an ops notification was received {conventions.DEFAULT_MAX_RECEIVE_COUNT} "
                            "times without being handled; read it and redrive it to the ops queue.",
            message_retention_seconds=conventions.DLQ_RETENTION_SECONDS - 1)  # the DLQ keeps longer
        ops_queue, ops_dlq = ops.queue, ops.dlq
        queue_depth_alarm(
            f"{name}-ops-depth", queue=ops_queue, parent=self, alarm_actions=alarm_actions,
            description=f"{name}: a batch run exceeded its tolerated item failures; the message names the "
                        "execution and input. Inspect the failed items in the results prefix, fix, re-run.")

        # --- item function and its tables ---
        # The Powertools idempotency table is the pattern's (any item handler is idempotent on its
        # business key); the invoice ledger and the `-enricher` name are the reference handler's.
        idempotency = idempotency_table(f"{name}-idempotency", parent=self, protect=protect)
        expiry = SETTINGS.value(args, "idempotency_expiry_seconds")
        environment: dict[str, pulumi.Input[str]] = {
            handler_config.IDEMPOTENCY_TABLE_NAME: idempotency.name,
            handler_config.IDEMPOTENCY_EXPIRY_SECONDS: pulumi.Output.from_input(expiry).apply(str)}
        statements = [
            # What Powertools' DynamoDBPersistenceLayer calls.
            Statement(["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"],
                      [idempotency.arn])]
        ledger: Optional[aws.dynamodb.Table] = None
        if args.get("item_handler") is None:
            # One row per invoice (written once, conditionally); a customer's total is a Query.
            # Ledger rows never expire; the TTL attribute is simply never set on them.
            ledger = idempotency_table(f"{name}-invoice-ledger", parent=self, hash_key="customer_id",
                                       range_key="invoice_key", ttl_attribute="expires_at", protect=protect)
            environment[handler_config.INVOICE_LEDGER_TABLE_NAME] = ledger.name
            statements.append(Statement(["dynamodb:PutItem"], [ledger.arn]))
            item_name, formerly = f"{name}{REFERENCE_ITEM_SUFFIX}", None
        else:
            # Named for the team's code; aliased, so a stack deployed with the former name keeps
            # its function, role and log group (CHANGELOG).
            item_name, formerly = f"{name}{TEAM_ITEM_SUFFIX}", f"{name}{REFERENCE_ITEM_SUFFIX}"
        environment[handler_config.POWERTOOLS_SERVICE_NAME] = item_name
        item = packaged_function(
            item_name, parent=self, settings=settings,
            runs=handler_code(COMPONENT, args, "integration_blueprint.handlers.reference.invoice_enricher.lambda_handler",
                              "item_"),
            timeout=values.item_timeout,
            memory_size=SETTINGS.value(args, "item_memory_mb"),
            reserved_concurrency=args.get("item_reserved_concurrency"),
            environment=environment,
            statements=statements,
            formerly=formerly,
        )

        # --- state machine ---
        log_group = aws.cloudwatch.LogGroup(
            f"{name}-logs", name=pulumi.Output.concat(aws_limits.SFN_LOG_GROUP_PREFIX, sm_name),
            retention_in_days=settings.log_retention_days, opts=child)
        statements = [
            # Distributed Map children are executions of this same machine.
            Statement(["states:StartExecution"], [sm_arn]),
            # A standard execution ARN; parliament also asks for the express format, a false alarm
            # (tests/test_field_validators.py).
            Statement(["states:DescribeExecution", "states:StopExecution"], [executions_arn]),
            Statement(["s3:GetObject"], [pulumi.Output.format("{0}/{1}*", bucket_arn, values.input_prefix)]),
            Statement(["lambda:InvokeFunction"], [item.function.arn, item.function.arn.apply(lambda a: f"{a}:*")]),
            Statement(["sqs:SendMessage"], [ops_queue.arn]),
            # CloudWatch Logs delivery and X-Ray do not support resource-level permissions:
            # https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html#cloudwatch-iam-policy
            Statement(["logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery",
                       "logs:DeleteLogDelivery", "logs:ListLogDeliveries", "logs:PutResourcePolicy",
                       "logs:DescribeResourcePolicies", "logs:DescribeLogGroups"], ["*"]),
            Statement(["xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules",
                       "xray:GetSamplingTargets"], ["*"]),
        ]
        if write_results:
            statements.append(Statement(
                ["s3:PutObject", "s3:GetObject", "s3:ListMultipartUploadParts", "s3:AbortMultipartUpload"],
                [pulumi.Output.format("{0}/{1}*", bucket_arn, values.result_prefix)]))
        # Step Functions may assume the role for this machine only (its ARN is known from the fixed
        # name before the machine exists).
        # https://docs.aws.amazon.com/step-functions/latest/dg/procedure-create-iam-role.html
        access = service_role(name, parent=self, service="states.amazonaws.com", statements=statements,
                              source=SourceCondition(account=where.account, arn=sm_arn))

        definition = pulumi.Output.all(
            function_arn=item.function.arn, bucket=bucket_name, queue_url=ops_queue.url,
            max_concurrency=values.max_concurrency, tolerated_pct=values.tolerated_pct,
            tolerated_count=values.tolerated_count, retry_values=values.retry_values,
            csv_headers=values.csv_headers, batch=values.batch, item_timeout=values.item_timeout,
            execution_type=values.execution_type, result_prefix=values.result_prefix, write_results=write_results,
        ).apply(lambda v: to_json(build_definition(
            function_arn=v["function_arn"], input_bucket=v["bucket"], ops_queue_url=v["queue_url"],
            settings=_map_settings(v["max_concurrency"], v["tolerated_pct"], v["tolerated_count"],
                                   v["retry_values"], v["csv_headers"], v["batch"], v["item_timeout"],
                                   v["execution_type"]),
            result_prefix=v["result_prefix"] if v["write_results"] else None)))
        machine = aws.sfn.StateMachine(
            f"{name}-machine",
            name=sm_name,
            type="STANDARD",
            role_arn=access.role.arn,
            definition=definition,
            logging_configuration={
                "level": "ERROR",
                "log_destination": log_group.arn.apply(lambda a: f"{a}:*"),
                # Execution data holds invoice rows (customer data); failed items are found in
                # the results prefix instead.
                "include_execution_data": False,
            },
            tracing_configuration={"enabled": True},
            # Step Functions checks the role can deliver logs when the machine is created.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[access.policy]),
        )
        state_machine_alarms(name, state_machine_arn=machine.arn, parent=self, alarm_actions=alarm_actions)

        schedule_arn: pulumi.Output[Optional[str]] = pulumi.Output.from_input(None)
        if args.get("schedule_expression") is not None:
            key = SETTINGS.value(args, "schedule_input_key")
            scheduled = scheduled_start(
                f"{name}-schedule", parent=self, target_arn=machine.arn, start_action="states:StartExecution",
                input=pulumi.Output.from_input(key).apply(lambda k: json.dumps({INPUT_KEY_FIELD: k})),
                expression=args["schedule_expression"], timezone=SETTINGS.value(args, "schedule_timezone"),
                enabled=SETTINGS.value(args, "schedule_enabled"),
                retry_attempts=SETTINGS.value(args, "scheduler_retry_attempts"),
                max_event_age_seconds=SETTINGS.value(args, "scheduler_max_event_age_seconds"), alarm_actions=alarm_actions,
                dlq_description=f"{name}: the nightly run could not be started after all retries; start the "
                                "state machine by hand with the input in this message (safe to repeat: "
                                "processed invoices are skipped).")
            schedule_arn = scheduled.schedule.arn

        # The children, typed, for a team to extend (as AWS Solutions Constructs expose theirs).
        self.state_machine: aws.sfn.StateMachine = machine
        self.ops_queue: aws.sqs.Queue = ops_queue
        self.item_function: aws.lambda_.Function = item.function
        self.item_role: aws.iam.Role = item.role
        publish(self, {
            "item_role_name": item.role.name, "item_role_arn": item.role.arn,
            "state_machine_arn": machine.arn, "state_machine_name": machine.name, "input_bucket_name": bucket_name,
            "ops_queue_url": ops_queue.url, "ops_queue_arn": ops_queue.arn, "ops_dlq_url": ops_dlq.queue.url,
            "item_function_name": item.function.name, "item_function_arn": item.function.arn,
            "idempotency_table_name": idempotency.name,
            "invoice_ledger_table_name": pulumi.Output.from_input(ledger.name if ledger is not None else None),
            "log_group_name": log_group.name, "schedule_arn": schedule_arn,
        })

    def _input_bucket(self, name: str) -> aws.s3.Bucket:
        """Versioned (an overwritten nightly file can be recovered), encrypted, never public, TLS only."""
        child = pulumi.ResourceOptions(parent=self)
        bucket = aws.s3.Bucket(f"{name}-input", opts=child)
        aws.s3.BucketVersioning(f"{name}-input-versioning", bucket=bucket.id,
                                versioning_configuration={"status": "Enabled"}, opts=child)
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{name}-input-encryption", bucket=bucket.id,
            rules=[{"apply_server_side_encryption_by_default": {"sse_algorithm": "AES256"}}], opts=child)
        public_access = aws.s3.BucketPublicAccessBlock(
            f"{name}-input-public-access", bucket=bucket.id, block_public_acls=True, block_public_policy=True,
            ignore_public_acls=True, restrict_public_buckets=True, opts=child)
        # Every request without TLS is refused (a Deny is not a public policy, so the block allows it).
        aws.s3.BucketPolicy(
            f"{name}-input-tls-only", bucket=bucket.id,
            policy=bucket.arn.apply(lambda arn: deny_insecure_transport("s3", [arn, f"{arn}/*"])),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[public_access]))
        return bucket
