"""Queues that keep what failed: TLS-only, 14 days, an alarm on the first message."""
import pulumi
import pulumi_aws as aws

FOURTEEN_DAYS = 14 * 24 * 3600
config = pulumi.Config()
alarm_topic = config.require("alarmTopicArn")


def failure_queue(name: str, sender_service: str, source_arn: pulumi.Input[str]) -> aws.sqs.Queue:
    queue = aws.sqs.Queue(name, message_retention_seconds=FOURTEEN_DAYS)
    document = aws.iam.get_policy_document_output(statements=[
        aws.iam.GetPolicyDocumentStatementArgs(
            sid="DenyInsecureTransport", effect="Deny", actions=["sqs:*"], resources=[queue.arn],
            principals=[aws.iam.GetPolicyDocumentStatementPrincipalArgs(type="*", identifiers=["*"])],
            conditions=[aws.iam.GetPolicyDocumentStatementConditionArgs(
                test="Bool", variable="aws:SecureTransport", values=["false"])]),
        aws.iam.GetPolicyDocumentStatementArgs(
            sid="AllowSender", effect="Allow", actions=["sqs:SendMessage"], resources=[queue.arn],
            principals=[aws.iam.GetPolicyDocumentStatementPrincipalArgs(type="Service", identifiers=[sender_service])],
            conditions=[aws.iam.GetPolicyDocumentStatementConditionArgs(
                test="ArnEquals", variable="aws:SourceArn", values=[source_arn])]),
    ])
    aws.sqs.QueuePolicy(f"{name}-policy", queue_url=queue.id, policy=document.json)
    aws.cloudwatch.MetricAlarm(
        f"{name}-depth",
        namespace="AWS/SQS",
        metric_name="ApproximateNumberOfMessagesVisible",
        dimensions={"QueueName": queue.name},
        statistic="Maximum",
        period=60,
        evaluation_periods=1,
        threshold=1,
        comparison_operator="GreaterThanOrEqualToThreshold",
        alarm_actions=[alarm_topic],
    )
    return queue
