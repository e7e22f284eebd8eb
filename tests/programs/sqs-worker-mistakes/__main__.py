"""Jobs queue -> worker function. Every classic SQS mistake is here: the queue's visibility timeout
is shorter than the function's timeout, the redrive gives up after one receive, the DLQ keeps
messages no longer than the source and nobody is alarmed, the mapping does not report partial
batch failures, and the function's log group is left to Lambda."""
import json

import pulumi
import pulumi_aws as aws

config = pulumi.Config()
worker_timeout = config.get_int("workerTimeout") or 60

dead_letters = aws.sqs.Queue("jobs-dlq")
jobs = aws.sqs.Queue(
    "jobs",
    visibility_timeout_seconds=30,
    redrive_policy=dead_letters.arn.apply(
        lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1})),
)

role = aws.iam.Role(
    "worker-role",
    assume_role_policy=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                       "Principal": {"Service": "lambda.amazonaws.com"}}],
    }),
    managed_policy_arns=["arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole"],
)

worker = aws.lambda_.Function(
    "worker",
    role=role.arn,
    runtime="python3.12",
    handler="worker.handler",
    timeout=worker_timeout,
    code=pulumi.FileArchive("./src"),
)

aws.lambda_.EventSourceMapping(
    "jobs-to-worker",
    event_source_arn=jobs.arn,
    function_name=worker.arn,
    batch_size=10,
)

pulumi.export("queue_url", jobs.url)
