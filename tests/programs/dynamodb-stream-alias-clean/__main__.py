"""Ledger table stream -> `live` alias of the projector, done by the book: the mapping bisects,
retries three times, gives up on records older than an hour and sends them to a queue that alarms.
The role is scoped to the stream and the queue. A false-alarm guard."""
import json

import pulumi
import pulumi_aws as aws

config = pulumi.Config()

ledger = aws.dynamodb.Table(
    "ledger",
    attributes=[aws.dynamodb.TableAttributeArgs(name="account", type="S"),
                aws.dynamodb.TableAttributeArgs(name="entry", type="S")],
    hash_key="account",
    range_key="entry",
    billing_mode="PAY_PER_REQUEST",
    stream_enabled=True,
    stream_view_type="NEW_IMAGE",
    server_side_encryption=aws.dynamodb.TableServerSideEncryptionArgs(enabled=True),
    point_in_time_recovery=aws.dynamodb.TablePointInTimeRecoveryArgs(enabled=True),
)

failed = aws.sqs.Queue("projection-failures", message_retention_seconds=1209600)
aws.sqs.QueuePolicy("projection-failures-tls", queue_url=failed.id, policy=failed.arn.apply(lambda arn: json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Deny", "Principal": "*", "Action": "sqs:*", "Resource": arn,
                   "Condition": {"Bool": {"aws:SecureTransport": "false"}}}],
})))
aws.cloudwatch.MetricAlarm(
    "projection-failures-visible", namespace="AWS/SQS", metric_name="ApproximateNumberOfMessagesVisible",
    dimensions={"QueueName": failed.name}, statistic="Maximum", period=60, evaluation_periods=1, threshold=1,
    comparison_operator="GreaterThanOrEqualToThreshold", alarm_actions=[config.require("alarmTopicArn")])

role = aws.iam.Role("projector-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicyAttachment("projector-logs", role=role.name,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")
aws.iam.RolePolicy("projector-stream", role=role.id, policy=pulumi.Output.all(
    stream=ledger.stream_arn, queue=failed.arn).apply(lambda arns: json.dumps({
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Resource": arns["stream"], "Action": [
                "dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"]},
            {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": arns["queue"]},
        ],
    })))

projector = aws.lambda_.Function("projector", role=role.arn, runtime="python3.12", handler="project.handler",
                                 publish=True, timeout=30, code=pulumi.FileArchive("./src"))
aws.cloudwatch.LogGroup("projector-logs", name=projector.name.apply(lambda n: f"/aws/lambda/{n}"),
                        retention_in_days=90)
live = aws.lambda_.Alias("projector-live", function_name=projector.name, function_version=projector.version)

aws.lambda_.EventSourceMapping(
    "ledger-to-projector",
    event_source_arn=ledger.stream_arn,
    function_name=live.arn,
    starting_position="TRIM_HORIZON",
    batch_size=100,
    bisect_batch_on_function_error=True,
    maximum_retry_attempts=3,
    maximum_record_age_in_seconds=3600,
    destination_config={"on_failure": {"destination_arn": failed.arn}},
)

pulumi.export("live_version", live.function_version)
pulumi.export("live_arn", live.arn)
