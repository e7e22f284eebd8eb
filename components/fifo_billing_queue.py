"""FifoBillingQueue: monthly billing through an SQS FIFO queue, charged exactly once.

    Scheduler (cron, retry policy, standard DLQ)
        -> dispatcher Lambda (enumerates the accounts store, enqueues one charge per employee),
       invoked asynchronously: Lambda retries it, then parks the event in its on-failure queue
        -> FIFO queue (group tenant#month, dedup id = idempotency key, high-throughput mode)
        -> consumer Lambda (ReportBatchItemFailures, conditional ledger write)
        -> FIFO DLQ after maxReceiveCount receives

The same component serves the coordinator/worker shape of long overnight jobs: batch size 1 and a
reserved concurrency on the consumer.

Public: `FifoBillingQueue`, `FifoBillingQueueArgs`, `SETTINGS` (its settings table), `validate`
(returns `FifoBillingNumbers`), `PHYSICAL_NAMES`, `TYPE`, `COMPONENT`.
"""

import json
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence, cast

import pulumi
import pulumi_aws as aws

from integration_blueprint.components.alarms import function_errors_alarm, oldest_message_age_alarm
from integration_blueprint.components.async_invoke import async_invoke_config, async_invoke_settings
from integration_blueprint.components.function import PolicyStatementArgs, handler_code, packaged_function
from integration_blueprint.components.iam import Statement
from integration_blueprint.components.naming import function_names, queue_name, require_fits, schedule_names
from integration_blueprint.components.platform import PLATFORM_SETTINGS, PlatformArgs, declared, publish, runtime_settings
from integration_blueprint.components.queues import consume_statement, queue_with_dlq, sqs_consumer_mapping
from integration_blueprint.components.schedules import scheduled_start
from integration_blueprint.components.settings import (
    SCHEDULE_SETTINGS,
    Setting,
    SettingsTable,
    code_settings,
    schedule_expression_setting,
)
from integration_blueprint.components.tables import idempotency_table
from integration_blueprint.components.validation import is_known, require
from integration_blueprint.core import aws_limits, conventions
from integration_blueprint.handlers.runtime import config as handler_config

__all__ = ["COMPONENT", "FifoBillingNumbers", "FifoBillingQueue", "FifoBillingQueueArgs", "PHYSICAL_NAMES",
           "SETTINGS", "TYPE", "validate"]

TYPE = "blueprint:index:FifoBillingQueue"
COMPONENT = "FifoBillingQueue"

SETTINGS = SettingsTable(COMPONENT, [
    Setting("consumer_timeout_seconds", int, 30, minimum=1, maximum=aws_limits.LAMBDA_TIMEOUT_MAX_SECONDS,
            why="the consumer function's timeout; one charge is a few DynamoDB calls, 30 s leaves room for throttling retries"),
    Setting("visibility_timeout_seconds", int, None, minimum=0, maximum=aws_limits.SQS_VISIBILITY_TIMEOUT_MAX_SECONDS,
            at_least="consumer_timeout_seconds",
            why="the queue's visibility timeout: at least the consumer timeout, so a message never reappears while "
                "it is being charged; default 6x the consumer timeout, as AWS advises"),
    Setting("batch_size", int, aws_limits.SQS_ESM_BATCH_SIZE_DEFAULT, minimum=1,
            maximum=aws_limits.SQS_FIFO_ESM_BATCH_SIZE_MAX,
            why="messages per consumer invocation; Lambda reads at most 10 per batch from a FIFO queue (1 with "
                "reserved_concurrency 1: the coordinator/worker shape)"),
    Setting("max_receive_count", int, conventions.DEFAULT_MAX_RECEIVE_COUNT,
            minimum=conventions.MIN_SAFE_MAX_RECEIVE_COUNT, maximum=aws_limits.SQS_MAX_RECEIVE_COUNT_MAX,
            why="receives before a message moves to the DLQ; 3 or fewer sends messages that hit one transient error "
                "to the DLQ"),
    Setting("message_retention_seconds", int, aws_limits.SQS_RETENTION_DEFAULT_SECONDS,
            minimum=aws_limits.SQS_RETENTION_MIN_SECONDS, maximum=conventions.DLQ_RETENTION_SECONDS - 1,
            why="how long the queue keeps a charge; shorter than the DLQ's 14 days, so the DLQ keeps messages longer"),
    Setting("maximum_concurrency", int, None, minimum=aws_limits.SQS_ESM_MAXIMUM_CONCURRENCY_MIN,
            maximum=aws_limits.SQS_ESM_MAXIMUM_CONCURRENCY_MAX,
            why="the mapping's concurrent invocations; unset: as many as the message groups allow"),
    Setting("reserved_concurrency", int, None, minimum=1,
            why="the consumer's reserved concurrency (1 with batch size 1: the coordinator/worker shape)"),
    Setting("consumer_memory_mb", int, conventions.LAMBDA_MEMORY_DEFAULT_MB, minimum=aws_limits.LAMBDA_MEMORY_MIN_MB,
            maximum=aws_limits.LAMBDA_MEMORY_MAX_MB, why="the consumer function's memory (and so its CPU share)"),
    *async_invoke_settings("dispatcher"),
    Setting("dispatcher_timeout_seconds", int, 300, minimum=1, maximum=aws_limits.LAMBDA_TIMEOUT_MAX_SECONDS,
            why="the dispatcher function's timeout; enumerating the accounts store and enqueueing a month takes "
                "minutes, not seconds"),
    schedule_expression_setting("cron(0 3 1 * ? *)", why="when the dispatcher runs; default 03:00 on the 1st of every month"),
    *SCHEDULE_SETTINGS,
    Setting("ledger_ttl_days", int, conventions.BILLING_LEDGER_TTL_DEFAULT_DAYS, minimum=1,
            why="how long charge rows, and so the duplicate protection, are kept"),
    Setting("accounts_table_arn", str, None, pattern=aws_limits.ARN_PATTERN, describe="a DynamoDB table ARN",
            why="an existing accounts store (pk `tenant`, sk `sk`); unset: the component provisions one"),
    Setting("accounts_table_name", str, None, in_stack=False, why="the name of accounts_table_arn's table"),
    Setting("oldest_message_alarm_seconds", int, 900, minimum=60,
            why="the age of the oldest charge that alarms; a charge waiting 15 minutes means the consumer is stuck "
                "or failing"),
    *code_settings("consumer_code", "consumer_handler", "consumer"),
    *code_settings("dispatcher_code", "dispatcher_handler", "dispatcher"),
], inherited=PLATFORM_SETTINGS.arguments())


# The physical names the component generates from its name (checked against AWS's limits).
PHYSICAL_NAMES = [*function_names("-consumer"), *function_names("-dispatcher"), queue_name("-charges", fifo=True),
                  queue_name("-dlq", fifo=True), *schedule_names(), queue_name("-dispatcher-failed")]


@dataclass(frozen=True)
class FifoBillingNumbers:
    """The effective, checked numbers of a FifoBillingQueue (Outputs stay Outputs)."""

    timeout: pulumi.Input[int]
    batch: pulumi.Input[int]
    receives: pulumi.Input[int]
    visibility: pulumi.Input[int]
    retention: pulumi.Input[int]


class FifoBillingQueueArgs(PlatformArgs, total=False):
    """The arguments of a FifoBillingQueue; each one's type, default, bounds and reason are its row in
    SETTINGS (docs/components/FifoBillingQueue.md)."""

    consumer_timeout_seconds: pulumi.Input[int]
    visibility_timeout_seconds: pulumi.Input[int]
    batch_size: pulumi.Input[int]
    max_receive_count: pulumi.Input[int]
    message_retention_seconds: pulumi.Input[int]
    maximum_concurrency: pulumi.Input[int]
    reserved_concurrency: pulumi.Input[int]
    consumer_memory_mb: pulumi.Input[int]
    dispatcher_timeout_seconds: pulumi.Input[int]
    schedule_expression: pulumi.Input[str]
    schedule_timezone: pulumi.Input[str]
    schedule_enabled: pulumi.Input[bool]
    scheduler_retry_attempts: pulumi.Input[int]
    scheduler_max_event_age_seconds: pulumi.Input[int]
    ledger_ttl_days: pulumi.Input[int]
    accounts_table_name: pulumi.Input[str]
    accounts_table_arn: pulumi.Input[str]
    consumer_code: pulumi.Archive
    consumer_handler: pulumi.Input[str]
    dispatcher_code: pulumi.Archive
    dispatcher_handler: pulumi.Input[str]
    consumer_environment: pulumi.Input[Mapping[str, pulumi.Input[str]]]
    consumer_policy_statements: pulumi.Input[Sequence[pulumi.Input[PolicyStatementArgs]]]
    dispatcher_environment: pulumi.Input[Mapping[str, pulumi.Input[str]]]
    dispatcher_policy_statements: pulumi.Input[Sequence[pulumi.Input[PolicyStatementArgs]]]
    dispatcher_retry_attempts: pulumi.Input[int]
    dispatcher_max_event_age_seconds: pulumi.Input[int]
    oldest_message_alarm_seconds: pulumi.Input[int]


def validate(args: FifoBillingQueueArgs) -> FifoBillingNumbers:
    """The effective numbers, or a ComponentArgumentError that names the argument and the fix."""
    SETTINGS.check(args)  # unknown arguments and values outside their rows (visibility >= timeout too)
    timeout = SETTINGS.value(args, "consumer_timeout_seconds")
    visibility = SETTINGS.value(args, "visibility_timeout_seconds")
    if visibility is None and is_known(timeout):
        visibility = timeout * aws_limits.SQS_VISIBILITY_TO_FUNCTION_TIMEOUT_FACTOR
    given_name, given_arn = args.get("accounts_table_name"), args.get("accounts_table_arn")
    require(COMPONENT, (given_name is None) == (given_arn is None),
            "give both accounts_table_name and accounts_table_arn (the role is scoped to the ARN), or neither",
            "accounts_table_arn" if given_arn is None else "accounts_table_name")
    for code_arg, handler_arg in (("consumer_code", "consumer_handler"), ("dispatcher_code", "dispatcher_handler")):
        require(COMPONENT, args.get(code_arg) is None or args.get(handler_arg) is not None,
                f"{code_arg} is given without {handler_arg}; name the handler in your code (module.function)",
                handler_arg)
    return FifoBillingNumbers(timeout=timeout, batch=SETTINGS.value(args, "batch_size"),
                              receives=SETTINGS.value(args, "max_receive_count"), visibility=visibility,
                              retention=SETTINGS.value(args, "message_retention_seconds"))


class FifoBillingQueue(pulumi.ComponentResource):
    """Monthly billing through an SQS FIFO queue, charged exactly once: a scheduled dispatcher enqueues
    one charge per employee (group tenant#month, explicit deduplication ids), an idempotent consumer
    writes each charge once to a ledger, and a FIFO DLQ with an alarm parks what keeps failing."""

    queue_url: pulumi.Output[str]
    """URL of the FIFO queue of charges."""
    queue_arn: pulumi.Output[str]
    """ARN of the FIFO queue of charges."""
    dlq_url: pulumi.Output[str]
    """URL of the FIFO DLQ a charge moves to after max_receive_count receives."""
    dlq_arn: pulumi.Output[str]
    """ARN of the FIFO DLQ."""
    consumer_function_name: pulumi.Output[str]
    """Name of the consumer function (charges one message each)."""
    consumer_function_arn: pulumi.Output[str]
    """ARN of the consumer function."""
    dispatcher_function_name: pulumi.Output[str]
    """Name of the dispatcher function (enqueues a month's charges)."""
    dispatcher_function_arn: pulumi.Output[str]
    """ARN of the dispatcher function."""
    schedule_arn: pulumi.Output[str]
    """ARN of the EventBridge Scheduler schedule that starts the dispatcher."""
    scheduler_dlq_url: pulumi.Output[str]
    """URL of the queue where Scheduler parks a start it could not deliver."""
    dispatcher_failed_queue_url: pulumi.Output[str]
    """URL of the queue where Lambda parks a dispatch that failed every retry (redrive it with `blueprint redrive dispatch`)."""
    ledger_table_name: pulumi.Output[Optional[str]]
    """Name of the reference consumer's ledger table: one row per charge, which is also its idempotency
    claim (unset with consumer_handler: the team's code keeps its own)."""
    accounts_table_name: pulumi.Output[Optional[str]]
    """Name of the accounts store (given, or provisioned for the reference handlers; unset when both
    functions run the team's code and none is given)."""
    consumer_role_name: pulumi.Output[str]
    """Name of the consumer function's role: attach your own policies to it (`aws.iam.RolePolicy`)."""
    consumer_role_arn: pulumi.Output[str]
    """ARN of the consumer function's role."""
    dispatcher_role_name: pulumi.Output[str]
    """Name of the dispatcher function's role: attach your own policies to it (`aws.iam.RolePolicy`)."""
    dispatcher_role_arn: pulumi.Output[str]
    """ARN of the dispatcher function's role."""

    def __init__(self, name: str, args: FifoBillingQueueArgs = None,  # type: ignore[assignment]  # Pulumi schema inference reads this annotation; Optional[...] breaks it
                 opts: Optional[pulumi.ResourceOptions] = None):
        args = cast(FifoBillingQueueArgs, declared(self, TYPE, name, args, opts, SETTINGS))  # as its rows parse it
        numbers = validate(args)
        require_fits(COMPONENT, name, PHYSICAL_NAMES)
        settings = runtime_settings(args)
        alarm_actions = args.get("alarm_actions")
        protect = args.get("protect_data", True)
        charges = queue_with_dlq(
            f"{name}-charges", parent=self, dlq_name=f"{name}-dlq", fifo=True, max_receive_count=numbers.receives,
            alarm_actions=alarm_actions,
            dlq_description=f"{name}: a charge failed {numbers.receives} times and is parked "
                            "in the billing DLQ; fix the cause, then redrive it.",
            content_based_deduplication=False,  # the dispatcher sends explicit deduplication ids
            deduplication_scope="messageGroup",  # high-throughput FIFO
            fifo_throughput_limit="perMessageGroupId",
            visibility_timeout_seconds=numbers.visibility,
            message_retention_seconds=numbers.retention,
        )
        queue, dlq = charges.queue, charges.dlq

        # The ledger is the reference consumer's; the accounts store is the billing run's, given by the
        # team or provisioned while a reference handler reads it. A function running the team's code
        # gets only what the team gave (the accounts store it named, consumer_environment,
        # consumer_policy_statements): no table of the reference handlers, no variable naming one.
        reference_consumer = args.get("consumer_handler") is None
        reference_dispatcher = args.get("dispatcher_handler") is None
        accounts_given = args.get("accounts_table_name") is not None
        accounts_name: Optional[pulumi.Input[str]] = None
        accounts_arn: Optional[pulumi.Input[str]] = None
        if accounts_given:
            accounts_name, accounts_arn = args["accounts_table_name"], args["accounts_table_arn"]
        elif reference_consumer or reference_dispatcher:
            accounts = idempotency_table(f"{name}-accounts", parent=self, hash_key="tenant", range_key="sk",
                                         ttl_attribute="ttl", protect=protect)
            accounts_name, accounts_arn = accounts.name, accounts.arn
        ledger = idempotency_table(f"{name}-ledger", parent=self, hash_key="pk", range_key="sk",
                                   ttl_attribute="ttl", protect=protect) if reference_consumer else None

        def accounts_for(reference: bool, action: str) -> tuple[dict[str, pulumi.Input[str]], list[Statement]]:
            """The accounts store's variable and grant for a function that reads it."""
            if accounts_name is None or accounts_arn is None or not (reference or accounts_given):
                return {}, []
            return {handler_config.ACCOUNTS_TABLE_NAME: accounts_name}, [Statement([action], [accounts_arn])]

        consumer_environment, consumer_statements = accounts_for(reference_consumer, "dynamodb:GetItem")
        consumer_environment[handler_config.POWERTOOLS_SERVICE_NAME] = f"{name}-consumer"
        consumer_statements.insert(0, consume_statement(queue))
        if ledger is not None:
            consumer_environment.update({
                handler_config.LEDGER_TABLE_NAME: ledger.name,
                handler_config.LEDGER_TTL_DAYS: pulumi.Output.from_input(
                    SETTINGS.value(args, "ledger_ttl_days")).apply(str)})
            consumer_statements.insert(1, Statement(["dynamodb:PutItem"], [ledger.arn]))
        consumer = packaged_function(
            f"{name}-consumer", parent=self, settings=settings,
            runs=handler_code(COMPONENT, args, "integration_blueprint.handlers.reference.billing_consumer.lambda_handler",
                              "consumer_"),
            timeout=numbers.timeout,
            memory_size=SETTINGS.value(args, "consumer_memory_mb"),
            reserved_concurrency=args.get("reserved_concurrency"),
            environment=consumer_environment,
            statements=consumer_statements,
        )
        sqs_consumer_mapping(f"{name}-consumer-mapping", parent=self, consumed=queue, function=consumer.function,
                             batch_size=numbers.batch, maximum_concurrency=args.get("maximum_concurrency"))

        dispatcher_environment, dispatcher_statements = accounts_for(reference_dispatcher, "dynamodb:Scan")
        dispatcher_environment.update({handler_config.CHARGE_QUEUE_URL: queue.url,
                                       handler_config.POWERTOOLS_SERVICE_NAME: f"{name}-dispatcher"})
        dispatcher_statements.append(Statement(["sqs:SendMessage"], [queue.arn]))
        dispatcher = packaged_function(
            f"{name}-dispatcher", parent=self, settings=settings,
            runs=handler_code(COMPONENT, args, "integration_blueprint.handlers.reference.billing_dispatcher.lambda_handler",
                              "dispatcher_"),
            timeout=SETTINGS.value(args, "dispatcher_timeout_seconds"),
            environment=dispatcher_environment,
            statements=dispatcher_statements,
        )
        dispatch = async_invoke_config(
            f"{name}-dispatcher", parent=self, function=dispatcher,
            retry_attempts=SETTINGS.value(args, "dispatcher_retry_attempts"),
            max_event_age_seconds=SETTINGS.value(args, "dispatcher_max_event_age_seconds"), alarm_actions=alarm_actions,
            description=f"{name}: a billing run failed every retry and was not completed; the message's "
                        "requestPayload holds the run's input (the month): fix the cause, then "
                        "`blueprint redrive dispatch` (safe to repeat: charges are deduplicated).")
        scheduled = scheduled_start(
            f"{name}-schedule", parent=self, target_arn=dispatcher.function.arn,
            start_action="lambda:InvokeFunction",
            # The scheduled time, not the clock, decides the billing month: a retried run bills
            # the same month.
            input=json.dumps({"scheduled_time": "<aws.scheduler.scheduled-time>"}),
            expression=SETTINGS.value(args, "schedule_expression"),
            timezone=SETTINGS.value(args, "schedule_timezone"),
            enabled=SETTINGS.value(args, "schedule_enabled"),
            retry_attempts=SETTINGS.value(args, "scheduler_retry_attempts"),
            max_event_age_seconds=SETTINGS.value(args, "scheduler_max_event_age_seconds"), alarm_actions=alarm_actions,
            dlq_description=f"{name}: the billing run could not be started after all retries; start the "
                            "dispatcher by hand with {\"month\": \"YYYY-MM\"} (safe to repeat).")

        oldest_message_age_alarm(
            f"{name}-charges-oldest-message", queue=queue, parent=self, alarm_actions=alarm_actions,
            threshold_seconds=SETTINGS.value(args, "oldest_message_alarm_seconds"))
        function_errors_alarm(f"{name}-consumer-errors", function=consumer.function, parent=self,
                              alarm_actions=alarm_actions)
        function_errors_alarm(f"{name}-dispatcher-errors", function=dispatcher.function, parent=self,
                              alarm_actions=alarm_actions)

        # The children, typed, for a team to extend (as AWS Solutions Constructs expose theirs):
        # subscribe an alarm to a queue, attach a policy to a role, read a table's stream.
        self.queue: aws.sqs.Queue = queue
        self.dlq: aws.sqs.Queue = dlq.queue
        self.consumer_function: aws.lambda_.Function = consumer.function
        self.consumer_role: aws.iam.Role = consumer.role
        self.dispatcher_function: aws.lambda_.Function = dispatcher.function
        self.dispatcher_role: aws.iam.Role = dispatcher.role
        self.ledger_table: Optional[aws.dynamodb.Table] = ledger  # None: the consumer is the team's code
        self.schedule: aws.scheduler.Schedule = scheduled.schedule
        publish(self, {
            "consumer_role_name": consumer.role.name, "consumer_role_arn": consumer.role.arn,
            "dispatcher_role_name": dispatcher.role.name, "dispatcher_role_arn": dispatcher.role.arn,
            "queue_url": queue.url, "queue_arn": queue.arn, "dlq_url": dlq.queue.url, "dlq_arn": dlq.queue.arn,
            "consumer_function_name": consumer.function.name, "consumer_function_arn": consumer.function.arn,
            "dispatcher_function_name": dispatcher.function.name, "dispatcher_function_arn": dispatcher.function.arn,
            "schedule_arn": scheduled.schedule.arn, "scheduler_dlq_url": scheduled.dlq.queue.url,
            "dispatcher_failed_queue_url": dispatch.on_failure.queue.url,
            "ledger_table_name": pulumi.Output.from_input(ledger.name if ledger is not None else None),
            "accounts_table_name": pulumi.Output.from_input(accounts_name),
        })
