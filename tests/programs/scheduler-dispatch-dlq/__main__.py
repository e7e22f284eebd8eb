"""A nightly payroll dispatch: EventBridge Scheduler invokes a dispatcher function, which enqueues one
message per tenant. The schedule retries and keeps what it gives up on in a dead-letter queue, but its
execution role may only invoke the function; the function's own failures go to an on-failure queue its
role may not send to, and the function is not retried by Lambda (maximum_retry_attempts=0)."""
import json

import pulumi
import pulumi_aws as aws

config = pulumi.Config()
cron = config.require("cron")

work = aws.sqs.Queue("payroll-work", visibility_timeout_seconds=360, message_retention_seconds=345600)
schedule_dlq = aws.sqs.Queue("payroll-schedule-dlq", message_retention_seconds=1209600)
failed_runs = aws.sqs.Queue("payroll-failed-runs", message_retention_seconds=1209600)

for name, queue in (("schedule-dlq", schedule_dlq), ("failed-runs", failed_runs)):
    aws.cloudwatch.MetricAlarm(
        f"payroll-{name}-depth",
        namespace="AWS/SQS",
        metric_name="ApproximateNumberOfMessagesVisible",
        dimensions={"QueueName": queue.name},
        statistic="Maximum",
        period=60,
        evaluation_periods=1,
        threshold=1,
        comparison_operator="GreaterThanOrEqualToThreshold",
    )

lambda_role = aws.iam.Role("dispatch-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicyAttachment("dispatch-basic", role=lambda_role.name,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")
aws.iam.RolePolicy("dispatch-enqueue", role=lambda_role.id, policy=pulumi.Output.json_dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": ["sqs:SendMessage"], "Resource": work.arn}],
}))

dispatcher = aws.lambda_.Function(
    "dispatch",
    role=lambda_role.arn,
    runtime="python3.12",
    handler="dispatch.handler",
    timeout=60,
    code=pulumi.FileArchive("./app"),
    environment={"variables": {"WORK_QUEUE_URL": work.url}},
    logging_config={"log_format": "JSON", "log_group": "/payroll/dispatch"},
)
aws.cloudwatch.LogGroup("dispatch-logs", name="/payroll/dispatch", retention_in_days=30)

aws.lambda_.FunctionEventInvokeConfig(
    "dispatch-async",
    function_name=dispatcher.name,
    maximum_retry_attempts=0,
    destination_config={"on_failure": {"destination": failed_runs.arn}},
)

scheduler_role = aws.iam.Role("scheduler-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "scheduler.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicy("scheduler-invoke", role=scheduler_role.id, policy=pulumi.Output.json_dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "lambda:InvokeFunction", "Resource": dispatcher.arn}],
}))

aws.scheduler.Schedule(
    "payroll-nightly",
    schedule_expression=cron,
    schedule_expression_timezone="Europe/Dublin",
    flexible_time_window={"mode": "OFF"},
    target={
        "arn": dispatcher.arn,
        "role_arn": scheduler_role.arn,
        "input": json.dumps({"tenants": ["acme", "globex"]}),
        "retry_policy": {"maximum_retry_attempts": 3, "maximum_event_age_in_seconds": 3600},
        "dead_letter_config": {"arn": schedule_dlq.arn},
    },
)

pulumi.export("dispatcher", dispatcher.name)
