"""S3 uploads invoke a thumbnail function asynchronously (the bucket notification pattern of the Pulumi
examples). The function keeps what it fails in a dead-letter queue, but its role has only the managed
execution policies, and AWSLambdaSQSQueueExecutionRole lets a function read a queue, not send to it.
A second function, for deletions, grants itself sqs:SendMessage on its DLQ and passes."""
import json

import pulumi
import pulumi_aws as aws

bucket = aws.s3.BucketV2("images")


def dead_letter_queue(name):
    queue = aws.sqs.Queue(name, message_retention_seconds=1209600)
    aws.cloudwatch.MetricAlarm(f"{name}-depth", namespace="AWS/SQS", metric_name="ApproximateNumberOfMessagesVisible",
                               dimensions={"QueueName": queue.name}, statistic="Maximum", period=60,
                               evaluation_periods=1, threshold=1, comparison_operator="GreaterThanOrEqualToThreshold")
    return queue


def lambda_role(name, *managed):
    role = aws.iam.Role(name, assume_role_policy=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"},
                       "Action": "sts:AssumeRole"}],
    }))
    for i, policy in enumerate(managed):
        aws.iam.RolePolicyAttachment(f"{name}-managed-{i}", role=role.name, policy_arn=policy)
    aws.iam.RolePolicy(f"{name}-images", role=role.id, policy=pulumi.Output.json_dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"],
                       "Resource": pulumi.Output.concat(bucket.arn, "/*")}],
    }))
    return role


def function(name, role, dlq):
    logs = aws.cloudwatch.LogGroup(f"{name}-logs", name=f"/thumbnails/{name}", retention_in_days=14)
    fn = aws.lambda_.Function(
        name,
        role=role.arn,
        runtime="python3.12",
        handler="thumbnail.handler",
        timeout=30,
        memory_size=512,
        code=pulumi.FileArchive("./handler"),
        dead_letter_config={"target_arn": dlq.arn},
        logging_config={"log_format": "JSON", "log_group": logs.name},
    )
    permission = aws.lambda_.Permission(f"{name}-from-s3", action="lambda:InvokeFunction", function=fn.arn,
                                        principal="s3.amazonaws.com", source_arn=bucket.arn)
    return fn, permission


created_dlq = dead_letter_queue("thumbnail-dlq")
created_role = lambda_role("thumbnail-role",
                           "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
                           "arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole")
thumbnail, thumbnail_permission = function("thumbnail", created_role, created_dlq)

deleted_dlq = dead_letter_queue("cleanup-dlq")
deleted_role = lambda_role("cleanup-role", "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")
aws.iam.RolePolicy("cleanup-dead-letters", role=deleted_role.id, policy=pulumi.Output.json_dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": deleted_dlq.arn}],
}))
cleanup, cleanup_permission = function("cleanup", deleted_role, deleted_dlq)

aws.s3.BucketNotification(
    "images-notification",
    bucket=bucket.id,
    lambda_functions=[
        {"lambda_function_arn": thumbnail.arn, "events": ["s3:ObjectCreated:*"], "filter_prefix": "uploads/"},
        {"lambda_function_arn": cleanup.arn, "events": ["s3:ObjectRemoved:*"], "filter_prefix": "uploads/"},
    ],
    opts=pulumi.ResourceOptions(depends_on=[thumbnail_permission, cleanup_permission]),
)

pulumi.export("bucket", bucket.bucket)
