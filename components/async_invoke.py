"""The asynchronous-invocation settings of a function something invokes asynchronously (Scheduler,
EventBridge, SNS, S3): bounded retries and event age, and an on-failure destination that pages.

A schedule's retry policy and DLQ cover only the delivery to Lambda. Once Lambda has accepted the
event, a failing function is retried by Lambda itself (twice by default) and the event is then
dropped unless the function has an on-failure destination. This module gives it one: a standard
queue (Lambda's destination for async invocations may not be FIFO) with a depth alarm at 1, and the
function role's permission to send to it (Lambda sends the record with the function's role).
"""

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from integration_blueprint.components.alarms import AlarmActions
from integration_blueprint.components.function import PackagedFunction
from integration_blueprint.components.iam import Statement, policy_document
from integration_blueprint.components.queues import DeadLetterQueue, dead_letter_queue
from integration_blueprint.components.settings import Setting
from integration_blueprint.core import aws_limits, conventions


@dataclass
class AsyncInvokeConfig:
    config: aws.lambda_.FunctionEventInvokeConfig
    on_failure: DeadLetterQueue


def async_invoke_settings(prefix: str) -> list[Setting]:
    """The settings rows `<prefix>_retry_attempts` and `<prefix>_max_event_age_seconds` of a
    component whose `<prefix>` function is invoked asynchronously."""
    return [
        Setting(f"{prefix}_retry_attempts", int, conventions.ASYNC_RETRY_ATTEMPTS_DEFAULT, minimum=0,
                maximum=aws_limits.LAMBDA_ASYNC_RETRY_ATTEMPTS_MAX,
                why="Lambda retries an asynchronous invocation at most twice"),
        Setting(f"{prefix}_max_event_age_seconds", int, conventions.ASYNC_EVENT_AGE_DEFAULT_SECONDS,
                minimum=aws_limits.LAMBDA_ASYNC_EVENT_AGE_MIN_SECONDS, maximum=aws_limits.LAMBDA_ASYNC_EVENT_AGE_MAX_SECONDS,
                why="how long Lambda keeps retrying a failed invocation before it parks the event"),
    ]


def async_invoke_config(name: str, *, parent: pulumi.Resource, function: PackagedFunction,
                        retry_attempts: pulumi.Input[int] = conventions.ASYNC_RETRY_ATTEMPTS_DEFAULT,
                        max_event_age_seconds: pulumi.Input[int] = conventions.ASYNC_EVENT_AGE_DEFAULT_SECONDS,
                        alarm_actions: AlarmActions = None, description: str = "") -> AsyncInvokeConfig:
    """`function`'s FunctionEventInvokeConfig with an on-failure queue (`<name>-failed`)."""
    on_failure = dead_letter_queue(
        f"{name}-failed", parent=parent, fifo=False, alarm_actions=alarm_actions,
        description=description or (f"{name}: an asynchronous invocation failed every retry; the message holds "
                                    "the original event (requestPayload): fix the cause, then redrive it."))
    send = aws.iam.RolePolicy(
        f"{name}-on-failure-policy", role=function.role.id,
        policy=policy_document([Statement(["sqs:SendMessage"], [on_failure.queue.arn])]),
        opts=pulumi.ResourceOptions(parent=parent))
    config = aws.lambda_.FunctionEventInvokeConfig(
        f"{name}-async",
        function_name=function.function.name,
        maximum_retry_attempts=retry_attempts,
        maximum_event_age_in_seconds=max_event_age_seconds,
        destination_config={"on_failure": {"destination": on_failure.queue.arn}},
        # Lambda checks the role may send to the destination when the config is created.
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[send]))
    return AsyncInvokeConfig(config=config, on_failure=on_failure)
