"""An EventBridge Scheduler schedule that starts a target, with the retry policy and dead-letter
queue every schedule in this blueprint must have, and a role that may start only that target.

Public: `scheduled_start` (returns `ScheduledStart`), `SCHEDULE_GROUP`. The schedule's settings rows
are in `settings` (`SCHEDULE_SETTINGS`).
"""

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_aws as aws

from integration_blueprint.components.alarms import AlarmActions
from integration_blueprint.components.iam import SourceCondition, Statement, account_context, service_role
from integration_blueprint.components.queues import DeadLetterQueue, dead_letter_queue
from integration_blueprint.core import conventions

__all__ = ["SCHEDULE_GROUP", "ScheduledStart", "scheduled_start"]

# Schedules are created in the account's default group (the Schedule's group_name is not set).
SCHEDULE_GROUP = "default"


@dataclass
class ScheduledStart:
    schedule: aws.scheduler.Schedule
    dlq: DeadLetterQueue


def scheduled_start(name: str, *, parent: pulumi.Resource, target_arn: pulumi.Input[str], start_action: str,
                    input: pulumi.Input[str], expression: pulumi.Input[str], timezone: pulumi.Input[str],
                    enabled: pulumi.Input[bool] = True, retry_attempts: Optional[pulumi.Input[int]] = None,
                    max_event_age_seconds: Optional[pulumi.Input[int]] = None,
                    alarm_actions: AlarmActions = None, dlq_description: str = "") -> ScheduledStart:
    """`start_action` is the one IAM action the schedule needs on the target, e.g.
    `lambda:InvokeFunction` or `states:StartExecution`. Scheduler only accepts a standard-queue DLQ."""
    dlq = dead_letter_queue(f"{name}-dlq", parent=parent, fifo=False, alarm_actions=alarm_actions,
                            description=dlq_description)
    # Scheduler assumes the role for schedules of this account's default group only (the group's
    # ARN, not the schedule's: the schedule needs the role first).
    # https://docs.aws.amazon.com/scheduler/latest/UserGuide/setting-up.html#setting-up-execution-role
    where = account_context()
    access = service_role(name, parent=parent, service="scheduler.amazonaws.com",
                          statements=[Statement([start_action], [target_arn]),
                                      Statement(["sqs:SendMessage"], [dlq.queue.arn])],
                          source=SourceCondition(account=where.account,
                                                 arn=where.arn("scheduler", f"schedule-group/{SCHEDULE_GROUP}")))
    schedule = aws.scheduler.Schedule(
        name,
        schedule_expression=expression,
        schedule_expression_timezone=timezone,
        state=pulumi.Output.from_input(enabled).apply(lambda on: "ENABLED" if on else "DISABLED"),
        flexible_time_window={"mode": "OFF"},
        target={
            "arn": target_arn,
            "role_arn": access.role.arn,
            "input": input,
            "retry_policy": {
                "maximum_retry_attempts": conventions.SCHEDULER_RETRY_ATTEMPTS_DEFAULT
                if retry_attempts is None else retry_attempts,
                "maximum_event_age_in_seconds": conventions.SCHEDULER_EVENT_AGE_DEFAULT_SECONDS
                if max_event_age_seconds is None else max_event_age_seconds,
            },
            "dead_letter_config": {"arn": dlq.queue.arn},
        },
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[access.policy]),
    )
    return ScheduledStart(schedule=schedule, dlq=dlq)
