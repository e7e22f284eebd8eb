"""Invoices queued by billing are mailed by a Lambda function. The archive puts the handler beside
the HTML template that `npm run render-templates` writes into generated/ (not committed)."""
import json

import pulumi
import pulumi_aws as aws

dlq = aws.sqs.Queue("invoices-dlq", message_retention_seconds=1209600, sqs_managed_sse_enabled=True)
invoices = aws.sqs.Queue(
    "invoices",
    visibility_timeout_seconds=180,
    sqs_managed_sse_enabled=True,
    redrive_policy=dlq.arn.apply(lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 5})),
)

role = aws.iam.Role("mailer-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicyAttachment("mailer-sqs", role=role.name,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole")

mailer = aws.lambda_.Function(
    "invoice-mailer",
    role=role.arn,
    runtime="python3.12",
    handler="mailer.handler",
    timeout=30,
    code=pulumi.AssetArchive({
        "mailer.py": pulumi.FileAsset("handlers/mailer.py"),
        "invoice.html": pulumi.FileAsset("generated/invoice.html"),
        "settings.json": pulumi.StringAsset(json.dumps({"from": "billing@example.com"})),
    }),
)
aws.lambda_.EventSourceMapping("invoices-to-mailer", event_source_arn=invoices.arn, function_name=mailer.arn,
                               batch_size=10, function_response_types=["ReportBatchItemFailures"])
