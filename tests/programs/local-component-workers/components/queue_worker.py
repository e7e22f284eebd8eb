"""The team's queue worker: a queue with a DLQ that alarms, and a function draining it."""
import json
from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_aws as aws

FOURTEEN_DAYS = 14 * 24 * 3600


@dataclass
class QueueWorkerArgs:
    code_dir: str
    handler: str
    timeout: int = 30
    max_receive_count: int = 5
    alarm_topic_arn: Optional[str] = None


class QueueWorker(pulumi.ComponentResource):
    queue_url: pulumi.Output[str]

    def __init__(self, name: str, args: QueueWorkerArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("acme:messaging:QueueWorker", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        dlq = aws.sqs.Queue(f"{name}-dlq", message_retention_seconds=FOURTEEN_DAYS, opts=child)
        queue = aws.sqs.Queue(
            f"{name}-queue",
            visibility_timeout_seconds=6 * args.timeout,
            redrive_policy=dlq.arn.apply(lambda arn: json.dumps(
                {"deadLetterTargetArn": arn, "maxReceiveCount": args.max_receive_count})),
            opts=child,
        )
        aws.cloudwatch.MetricAlarm(
            f"{name}-dlq-depth",
            namespace="AWS/SQS", metric_name="ApproximateNumberOfMessagesVisible",
            dimensions={"QueueName": dlq.name}, statistic="Maximum", period=60, evaluation_periods=1,
            threshold=1, comparison_operator="GreaterThanOrEqualToThreshold",
            alarm_actions=[args.alarm_topic_arn] if args.alarm_topic_arn else [],
            opts=child,
        )

        role = aws.iam.Role(f"{name}-role", assume_role_policy={
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"},
                           "Action": "sts:AssumeRole"}],
        }, opts=child)
        aws.iam.RolePolicyAttachment(f"{name}-logs", role=role.name,
                                     policy_arn=aws.iam.ManagedPolicy.AWS_LAMBDA_BASIC_EXECUTION_ROLE, opts=child)
        aws.iam.RolePolicy(f"{name}-consume", role=role.id, policy={
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Resource": queue.arn, "Action": [
                "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]}],
        }, opts=child)

        function = aws.lambda_.Function(
            f"{name}-fn", role=role.arn, runtime="python3.12", handler=args.handler, timeout=args.timeout,
            code=pulumi.FileArchive(args.code_dir), opts=child)
        aws.cloudwatch.LogGroup(f"{name}-logs", name=function.name.apply(lambda n: f"/aws/lambda/{n}"),
                                retention_in_days=30, opts=child)
        aws.lambda_.EventSourceMapping(
            f"{name}-mapping", event_source_arn=queue.arn, function_name=function.arn, batch_size=5,
            function_response_types=["ReportBatchItemFailures"], opts=child)

        self.queue_url = queue.url
        self.register_outputs({"queue_url": queue.url})
