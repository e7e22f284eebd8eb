"""Invoices enriched nightly by the blueprint's DistributedMapBatch through its generated SDK; an
EventBridge Scheduler schedule written by hand starts it, with retries and a DLQ that alarms."""
import json

import pulumi
import pulumi_aws as aws
import pulumi_blueprint as blueprint

config = pulumi.Config()

invoices = blueprint.DistributedMapBatch("invoices", blueprint.DistributedMapBatchArgs(
    max_concurrency=config.require_int("maxConcurrency"),
    tolerated_failure_percentage=5,
    csv_headers=["invoice_id", "region", "billing_date", "amount"],
))

schedule_dlq = aws.sqs.Queue("nightly-dlq", message_retention_seconds=1209600)
aws.sqs.QueuePolicy("nightly-dlq-tls-only", queue_url=schedule_dlq.id, policy=schedule_dlq.arn.apply(
    lambda arn: json.dumps({"Version": "2012-10-17", "Statement": [{
        "Sid": "DenyInsecureTransport", "Effect": "Deny", "Principal": "*", "Action": "sqs:*",
        "Resource": arn, "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]})))
aws.cloudwatch.MetricAlarm(
    "nightly-dlq-depth", namespace="AWS/SQS", metric_name="ApproximateNumberOfMessagesVisible",
    dimensions={"QueueName": schedule_dlq.name}, statistic="Maximum", period=60, evaluation_periods=1,
    threshold=1, comparison_operator="GreaterThanOrEqualToThreshold")

scheduler_role = aws.iam.Role("nightly-scheduler", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "scheduler.amazonaws.com"}, "Action": "sts:AssumeRole"}]}))
aws.iam.RolePolicy("nightly-scheduler-start", role=scheduler_role.id, policy=pulumi.Output.json_dumps({
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Action": "states:StartExecution", "Resource": invoices.state_machine_arn},
        {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": schedule_dlq.arn},
    ]}))

aws.scheduler.Schedule(
    "nightly",
    schedule_expression="cron(30 2 * * ? *)",
    flexible_time_window={"mode": "OFF"},
    target={
        "arn": invoices.state_machine_arn,
        "role_arn": scheduler_role.arn,
        "input": json.dumps({"inputKey": "incoming/invoices.csv"}),
        "retry_policy": {"maximum_retry_attempts": 3, "maximum_event_age_in_seconds": 3600},
        "dead_letter_config": {"arn": schedule_dlq.arn},
    },
)

pulumi.export("state_machine", invoices.state_machine_arn)
pulumi.export("upload_to", invoices.input_bucket_name.apply(lambda bucket: f"s3://{bucket}/incoming/"))
