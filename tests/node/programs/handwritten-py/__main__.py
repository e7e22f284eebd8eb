"""Orders: the twin of ../handwritten-ts/index.ts, resource for resource, mistakes included."""

import json

import pulumi
import pulumi_aws as aws

config = pulumi.Config()
retention_days = config.require_int("retentionDays")
HANDLER = "def handler(event, context):\n    return {}\n"

dlq = aws.sqs.Queue("orders-dlq", message_retention_seconds=1209600)
# Mistake: the DLQ has no depth alarm.
queue = aws.sqs.Queue("orders", visibility_timeout_seconds=180,
                      redrive_policy=pulumi.Output.json_dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 5}))

role = aws.iam.Role("consumer-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Action": "sts:AssumeRole", "Principal": {"Service": "lambda.amazonaws.com"}, "Effect": "Allow",
                   "Sid": "AllowAssumeRole"}],
}))
aws.iam.RolePolicyAttachment("consumer-logs", role=role,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")
# Mistake: a wildcard action.
aws.iam.RolePolicy("consumer-access", role=role.id, policy={
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Action": ["sqs:*"], "Resource": queue.arn},
        {"Effect": "Allow", "Action": ["dynamodb:PutItem"], "Resource": "*"},
    ],
})

consumer = aws.lambda_.Function("consumer", role=role.arn, runtime="python3.12", handler="app.handler", timeout=30,
                                code=pulumi.AssetArchive({"app.py": pulumi.StringAsset(HANDLER)}))
aws.cloudwatch.LogGroup("consumer-logs", name=pulumi.Output.concat("/aws/lambda/", consumer.name),
                        retention_in_days=retention_days)
aws.lambda_.EventSourceMapping("consumer-orders", event_source_arn=queue.arn, function_name=consumer.name,
                               batch_size=10, function_response_types=["ReportBatchItemFailures"])

# Mistake: a second function whose log group nobody declares.
aws.lambda_.Function("auditor", role=role.arn, runtime="python3.12", handler="app.handler",
                     code=pulumi.AssetArchive({"app.py": pulumi.StringAsset(HANDLER)}))

# Mistake: the stream is not encrypted at rest.
aws.kinesis.Stream("clicks", shard_count=1, retention_period=24)

aws.dynamodb.Table("ledger", billing_mode="PAY_PER_REQUEST", hash_key="pk", attributes=[{"name": "pk", "type": "S"}],
                   point_in_time_recovery={"enabled": True}, server_side_encryption={"enabled": True})

pulumi.export("queueUrl", queue.url)
pulumi.export("consumerArn", consumer.arn)
