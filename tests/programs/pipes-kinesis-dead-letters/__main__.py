"""Clickstream: an EventBridge pipe reads a Kinesis stream and sends each record to a queue. Records the
pipe gives up on (3 retries) go to a dead-letter queue, but the pipe's role, written from the pipes
guide's target example, may send only to the target queue."""
import json

import pulumi
import pulumi_aws as aws

current = aws.get_caller_identity()

stream = aws.kinesis.Stream("clicks", shard_count=1, retention_period=48, encryption_type="KMS",
                            kms_key_id="alias/aws/kinesis")
target = aws.sqs.Queue("clicks-enriched", message_retention_seconds=345600)
dlq = aws.sqs.Queue("clicks-pipe-dlq", message_retention_seconds=1209600)
aws.cloudwatch.MetricAlarm("clicks-pipe-dlq-depth", namespace="AWS/SQS", metric_name="ApproximateNumberOfMessagesVisible",
                           dimensions={"QueueName": dlq.name}, statistic="Maximum", period=60, evaluation_periods=1,
                           threshold=1, comparison_operator="GreaterThanOrEqualToThreshold")

role = aws.iam.Role("clicks-pipe-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "pipes.amazonaws.com"}, "Action": "sts:AssumeRole",
                   "Condition": {"StringEquals": {"aws:SourceAccount": current.account_id}}}],
}))
aws.iam.RolePolicy("clicks-pipe-source", role=role.id, policy=pulumi.Output.json_dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow",
                   "Action": ["kinesis:DescribeStream", "kinesis:DescribeStreamSummary", "kinesis:GetRecords",
                              "kinesis:GetShardIterator", "kinesis:ListShards", "kinesis:ListStreams",
                              "kinesis:SubscribeToShard"],
                   "Resource": stream.arn}],
}))
aws.iam.RolePolicy("clicks-pipe-target", role=role.id, policy=pulumi.Output.json_dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": ["sqs:SendMessage"], "Resource": target.arn}],
}))

aws.pipes.Pipe(
    "clicks-pipe",
    role_arn=role.arn,
    source=stream.arn,
    target=target.arn,
    source_parameters={
        "kinesis_stream_parameters": {
            "starting_position": "TRIM_HORIZON",
            "batch_size": 100,
            "maximum_retry_attempts": 3,
            "dead_letter_config": {"arn": dlq.arn},
        },
    },
)
