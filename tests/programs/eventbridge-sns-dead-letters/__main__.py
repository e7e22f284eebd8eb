"""Order events: a custom bus routes `OrderPlaced` to a fulfilment queue (the rule target retries and has a
DLQ) and an SNS topic fans orders out to a billing queue and an audit function, each subscription with a
redrive queue. The queue policies are written with aws.iam.get_policy_document, as the provider's docs show.
The rule target's DLQ has no policy for EventBridge; the subscriptions' DLQ lets SNS send for this topic."""
import json

import pulumi
import pulumi_aws as aws

bus = aws.cloudwatch.EventBus("orders")
placed = aws.cloudwatch.EventRule(
    "order-placed",
    event_bus_name=bus.name,
    event_pattern=json.dumps({"source": ["shop.orders"], "detail-type": ["OrderPlaced"]}),
)


def queue_with_alarm(name, **kwargs):
    queue = aws.sqs.Queue(name, **kwargs)
    aws.cloudwatch.MetricAlarm(f"{name}-depth", namespace="AWS/SQS", metric_name="ApproximateNumberOfMessagesVisible",
                               dimensions={"QueueName": queue.name}, statistic="Maximum", period=60,
                               evaluation_periods=1, threshold=1, comparison_operator="GreaterThanOrEqualToThreshold")
    return queue


def allow_service(name, queue, service, source_arn):
    document = aws.iam.get_policy_document_output(statements=[{
        "effect": "Allow",
        "principals": [{"type": "Service", "identifiers": [service]}],
        "actions": ["sqs:SendMessage"],
        "resources": [queue.arn],
        "conditions": [{"test": "ArnEquals", "variable": "aws:SourceArn", "values": [source_arn]}],
    }, {
        "effect": "Deny",
        "principals": [{"type": "*", "identifiers": ["*"]}],
        "actions": ["sqs:*"],
        "resources": [queue.arn],
        "conditions": [{"test": "Bool", "variable": "aws:SecureTransport", "values": ["false"]}],
    }])
    aws.sqs.QueuePolicy(name, queue_url=queue.id, policy=document.json)


fulfilment = aws.sqs.Queue("fulfilment", message_retention_seconds=345600)
allow_service("fulfilment-from-events", fulfilment, "events.amazonaws.com", placed.arn)
fulfilment_dlq = queue_with_alarm("fulfilment-dlq", message_retention_seconds=1209600)

aws.cloudwatch.EventTarget(
    "order-placed-fulfilment",
    rule=placed.name,
    event_bus_name=bus.name,
    arn=fulfilment.arn,
    retry_policy={"maximum_event_age_in_seconds": 3600, "maximum_retry_attempts": 10},
    dead_letter_config={"arn": fulfilment_dlq.arn},
)

topic = aws.sns.Topic("orders-topic")
aws.sns.TopicPolicy("orders-topic-tls", arn=topic.arn, policy=topic.arn.apply(lambda arn: json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Deny", "Principal": "*", "Action": "sns:Publish", "Resource": arn,
                   "Condition": {"Bool": {"aws:SecureTransport": "false"}}}],
})))

billing = aws.sqs.Queue("billing", message_retention_seconds=345600)
allow_service("billing-from-sns", billing, "sns.amazonaws.com", topic.arn)
subscriptions_dlq = queue_with_alarm("subscriptions-dlq", message_retention_seconds=1209600)
allow_service("subscriptions-dlq-from-sns", subscriptions_dlq, "sns.amazonaws.com", topic.arn)
redrive = subscriptions_dlq.arn.apply(lambda arn: json.dumps({"deadLetterTargetArn": arn}))

aws.sns.TopicSubscription("billing-sub", topic=topic.arn, protocol="sqs", endpoint=billing.arn,
                          raw_message_delivery=True, redrive_policy=redrive)

audit_role = aws.iam.Role("audit-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicyAttachment("audit-basic", role=audit_role.name,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")
audit_failures = aws.sns.Topic("audit-failures")
aws.iam.RolePolicy("audit-dead-letters", role=audit_role.id, policy=pulumi.Output.json_dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "sns:Publish", "Resource": audit_failures.arn}],
}))
audit = aws.lambda_.Function(
    "audit",
    role=audit_role.arn,
    runtime="python3.12",
    handler="audit.handler",
    code=pulumi.FileArchive("./functions"),
    dead_letter_config={"target_arn": audit_failures.arn},
    logging_config={"log_format": "JSON", "log_group": "/orders/audit"},
)
aws.cloudwatch.LogGroup("audit-logs", name="/orders/audit", retention_in_days=14)
aws.lambda_.Permission("audit-from-sns", action="lambda:InvokeFunction", function=audit.name,
                       principal="sns.amazonaws.com", source_arn=topic.arn)
aws.sns.TopicSubscription("audit-sub", topic=topic.arn, protocol="lambda", endpoint=audit.arn,
                          redrive_policy=redrive)

pulumi.export("bus", bus.name)
