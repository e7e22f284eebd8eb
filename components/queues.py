"""Queue building blocks: the dead-letter queue with its depth alarm, and the redrive policy."""

import json
from dataclasses import dataclass
from typing import Optional, Sequence

import pulumi
import pulumi_aws as aws

from integration_blueprint import conventions
from integration_blueprint.components.alarms import queue_depth_alarm


@dataclass
class DeadLetterQueue:
    queue: aws.sqs.Queue
    depth_alarm: aws.cloudwatch.MetricAlarm


def dead_letter_queue(name: str, *, parent: pulumi.Resource, fifo: bool = False,
                      alarm_actions: Optional[pulumi.Input[Sequence[pulumi.Input[str]]]] = None,
                      description: str = "") -> DeadLetterQueue:
    """A DLQ that keeps messages 14 days (longer than any source) and alarms on the first message.

    A FIFO source needs a FIFO DLQ; Scheduler and stream on-failure destinations need a standard one.
    """
    queue = aws.sqs.Queue(
        name,
        fifo_queue=fifo or None,
        message_retention_seconds=conventions.DLQ_RETENTION_SECONDS,
        sqs_managed_sse_enabled=True,
        opts=pulumi.ResourceOptions(parent=parent),
    )
    alarm = queue_depth_alarm(
        f"{name}-depth", queue=queue, parent=parent, alarm_actions=alarm_actions,
        description=description or f"{name}: a message reached the dead-letter queue; inspect it, fix the cause, then redrive.",
    )
    return DeadLetterQueue(queue=queue, depth_alarm=alarm)


def redrive_policy(dlq_arn: pulumi.Input[str], max_receive_count: int) -> pulumi.Output[str]:
    return pulumi.Output.from_input(dlq_arn).apply(
        lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": max_receive_count}))
