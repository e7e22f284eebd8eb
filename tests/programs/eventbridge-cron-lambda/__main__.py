"""An EventBridge rule triggers the cleanup function. The target has no retry policy or DLQ and the
function no on-failure destination; the webhook secret is passed to the function as a secret."""
import json

import pulumi
import pulumi_aws as aws

config = pulumi.Config()
rate = config.get_int("rateMinutes")
webhook = config.require_secret("slackWebhook")

uploads = aws.s3.BucketV2("uploads")

role = aws.iam.Role("cleanup-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicy("cleanup-bucket", role=role.id, policy=uploads.arn.apply(lambda arn: json.dumps({
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": arn},
        {"Effect": "Allow", "Action": ["s3:DeleteObject"], "Resource": f"{arn}/*"},
    ],
})))

cleanup = aws.lambda_.Function(
    "cleanup",
    role=role.arn,
    runtime="python3.11",
    handler="cleanup.handler",
    timeout=300,
    code=pulumi.FileArchive("./app"),
    environment=aws.lambda_.FunctionEnvironmentArgs(variables={"BUCKET": uploads.bucket, "SLACK_WEBHOOK": webhook}),
    logging_config={"log_format": "JSON", "log_group": "/platform/cleanup"},
)
aws.cloudwatch.LogGroup("cleanup-logs", name="/platform/cleanup", retention_in_days=90)

schedule = aws.cloudwatch.EventRule("cleanup-schedule", schedule_expression=f"rate({rate} minutes)")
aws.cloudwatch.EventTarget("cleanup-target", rule=schedule.name, arn=cleanup.arn)
aws.lambda_.Permission("cleanup-from-events", action="lambda:InvokeFunction", function=cleanup.name,
                       principal="events.amazonaws.com", source_arn=schedule.arn)

pulumi.export("rule", schedule.name)
pulumi.export("function_arn", cleanup.arn)
