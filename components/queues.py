"""Queue building blocks: an encrypted queue, the dead-letter queue with its depth alarm, a queue that
redrives to such a DLQ, and a function consuming a queue (mapping and the actions it needs).

Every queue refuses requests without TLS (a queue policy) and is encrypted at rest.

Public: `deny_insecure_transport`, `queue`, `DeadLetterQueue`, `dead_letter_queue`, `QueueWithDlq`, `queue_with_dlq`,
`redrive_policy`, `SQS_CONSUME_ACTIONS`, `consume_statement`, `sqs_consumer_mapping`.
"""

import json
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import pulumi
import pulumi_aws as aws

from integration_blueprint.components.alarms import AlarmActions, queue_depth_alarm
from integration_blueprint.components.iam import Statement
from integration_blueprint.core import conventions

__all__ = ["SQS_CONSUME_ACTIONS", "DeadLetterQueue", "QueueWithDlq", "consume_statement", "dead_letter_queue",
           "deny_insecure_transport", "queue", "queue_with_dlq", "redrive_policy", "sqs_consumer_mapping"]

# What a Lambda event source mapping needs on its queue (and what the function's role gets):
# https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html#events-sqs-permissions
SQS_CONSUME_ACTIONS = ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes",
                       "sqs:ChangeMessageVisibility")


def deny_insecure_transport(service: str, resources: Sequence[str]) -> str:
    """A resource policy that refuses every request not sent over TLS (`aws:SecureTransport`
    false), the default of AWS Solutions Constructs' queues, topics and buckets:
    https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-security-best-practices.html"""
    return json.dumps({"Version": "2012-10-17", "Statement": [{
        "Sid": "DenyInsecureTransport", "Effect": "Deny", "Principal": "*", "Action": f"{service}:*",
        "Resource": list(resources) if len(resources) > 1 else resources[0],
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
    }]})


def queue(name: str, *, parent: pulumi.Resource, **settings: Any) -> aws.sqs.Queue:
    """A queue encrypted at rest (SSE-SQS) that refuses requests without TLS (its queue policy
    `<name>-tls-only`), with `settings` (aws.sqs.Queue arguments)."""
    opts = pulumi.ResourceOptions(parent=parent)
    created = aws.sqs.Queue(name, sqs_managed_sse_enabled=True, **settings, opts=opts)
    aws.sqs.QueuePolicy(f"{name}-tls-only", queue_url=created.url,
                        policy=created.arn.apply(lambda arn: deny_insecure_transport("sqs", [arn])), opts=opts)
    return created


@dataclass
class DeadLetterQueue:
    queue: aws.sqs.Queue
    depth_alarm: aws.cloudwatch.MetricAlarm


def dead_letter_queue(name: str, *, parent: pulumi.Resource, fifo: bool = False,
                      alarm_actions: AlarmActions = None, description: str = "") -> DeadLetterQueue:
    """A DLQ that keeps messages 14 days (longer than any source) and alarms on the first message.

    A FIFO source needs a FIFO DLQ; Scheduler and stream on-failure destinations need a standard one.
    """
    dlq = queue(name, parent=parent, fifo_queue=fifo or None, message_retention_seconds=conventions.DLQ_RETENTION_SECONDS)
    alarm = queue_depth_alarm(
        f"{name}-depth", queue=dlq, parent=parent, alarm_actions=alarm_actions,
        description=description or f"{name}: a message reached the dead-letter queue; inspect it, fix the cause, then redrive.",
    )
    return DeadLetterQueue(queue=dlq, depth_alarm=alarm)


def redrive_policy(dlq_arn: pulumi.Input[str], max_receive_count: pulumi.Input[int]) -> pulumi.Output[str]:
    return pulumi.Output.all(dlq_arn, max_receive_count).apply(
        lambda v: json.dumps({"deadLetterTargetArn": v[0], "maxReceiveCount": v[1]}))


@dataclass
class QueueWithDlq:
    queue: aws.sqs.Queue
    dlq: DeadLetterQueue


def queue_with_dlq(name: str, *, parent: pulumi.Resource, dlq_name: str, max_receive_count: pulumi.Input[int],
                   dlq_description: str, fifo: bool = False, alarm_actions: AlarmActions = None,
                   **settings: Any) -> QueueWithDlq:
    """Queue `name` that moves a message after `max_receive_count` receives to `dlq_name`, a
    dead-letter queue of the same kind (FIFO or standard) with its depth alarm."""
    dlq = dead_letter_queue(dlq_name, parent=parent, fifo=fifo, alarm_actions=alarm_actions,
                            description=dlq_description)
    source = queue(name, parent=parent, fifo_queue=fifo or None,
                   redrive_policy=redrive_policy(dlq.queue.arn, max_receive_count), **settings)
    return QueueWithDlq(queue=source, dlq=dlq)


def consume_statement(consumed: aws.sqs.Queue) -> Statement:
    return Statement(SQS_CONSUME_ACTIONS, [consumed.arn])


def sqs_consumer_mapping(name: str, *, parent: pulumi.Resource, consumed: aws.sqs.Queue,
                         function: aws.lambda_.Function, batch_size: pulumi.Input[int],
                         maximum_concurrency: Optional[pulumi.Input[int]] = None) -> aws.lambda_.EventSourceMapping:
    """`function` consumes `consumed`, reporting failed messages one by one (ReportBatchItemFailures)
    so one bad message does not return its whole batch to the queue."""
    return aws.lambda_.EventSourceMapping(
        name,
        event_source_arn=consumed.arn,
        function_name=function.arn,
        batch_size=batch_size,
        function_response_types=["ReportBatchItemFailures"],
        scaling_config=None if maximum_concurrency is None else {"maximum_concurrency": maximum_concurrency},
        opts=pulumi.ResourceOptions(parent=parent),
    )
