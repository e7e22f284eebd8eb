"""Invoice events: bus -> rule -> function. The target retries and parks undeliverable events, the
function parks events it failed on, both queues alarm. A false-alarm guard: nothing to report."""
import json

import pulumi
import pulumi_aws as aws
from queues import failure_queue

bus = aws.cloudwatch.EventBus("invoices")
rule = aws.cloudwatch.EventRule(
    "invoice-issued",
    event_bus_name=bus.name,
    event_pattern=json.dumps({"source": ["billing.invoices"], "detail-type": ["InvoiceIssued"]}),
)

role = aws.iam.Role("on-invoice-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicyAttachment("on-invoice-logs", role=role.name,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")

on_invoice = aws.lambda_.Function(
    "on-invoice",
    role=role.arn,
    runtime="python3.12",
    handler="on_invoice.handler",
    timeout=30,
    code=pulumi.FileArchive("./handlers"),
)
aws.cloudwatch.LogGroup("on-invoice-logs", name=on_invoice.name.apply(lambda n: f"/aws/lambda/{n}"),
                        retention_in_days=30)

undeliverable = failure_queue("invoice-events-undeliverable", "events.amazonaws.com", rule.arn)
failed = failure_queue("invoice-events-failed", "lambda.amazonaws.com", on_invoice.arn)

aws.iam.RolePolicy("on-invoice-park-failures", role=role.id, policy=failed.arn.apply(lambda arn: json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": arn}],
})))

aws.cloudwatch.EventTarget(
    "on-invoice",
    rule=rule.name,
    event_bus_name=bus.name,
    arn=on_invoice.arn,
    retry_policy={"maximum_retry_attempts": 8, "maximum_event_age_in_seconds": 3600},
    dead_letter_config={"arn": undeliverable.arn},
)
aws.lambda_.Permission("on-invoice-from-events", action="lambda:InvokeFunction", function=on_invoice.name,
                       principal="events.amazonaws.com", source_arn=rule.arn)
aws.lambda_.FunctionEventInvokeConfig(
    "on-invoice-async",
    function_name=on_invoice.name,
    maximum_retry_attempts=2,
    destination_config={"on_failure": {"destination": failed.arn}},
)

pulumi.export("bus", bus.name)
