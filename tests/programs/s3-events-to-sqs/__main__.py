"""S3 -> SQS -> Lambda, done right except for one line: the queue policy lets Principal "*" send
(copied from a forum answer) without tying it to the bucket."""
import json

import pulumi
import pulumi_aws as aws

FOURTEEN_DAYS = 1209600
WORKER_TIMEOUT = 30

landing = aws.s3.Bucket("landing", force_destroy=True)

dlq = aws.sqs.Queue("object-events-dlq", message_retention_seconds=FOURTEEN_DAYS)
aws.cloudwatch.MetricAlarm(
    "object-events-dlq-not-empty",
    namespace="AWS/SQS", metric_name="ApproximateNumberOfMessagesVisible",
    dimensions={"QueueName": dlq.name}, statistic="Sum", period=300, evaluation_periods=1,
    threshold=0, comparison_operator="GreaterThanThreshold")

events = aws.sqs.Queue(
    "object-events",
    visibility_timeout_seconds=6 * WORKER_TIMEOUT,
    redrive_policy=dlq.arn.apply(lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 5})),
)
aws.sqs.QueuePolicy("object-events-policy", queue_url=events.url, policy=events.arn.apply(lambda arn: json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage", "Resource": arn}],
})))
aws.s3.BucketNotification("landing-events", bucket=landing.id, queues=[
    aws.s3.BucketNotificationQueueArgs(queue_arn=events.arn, events=["s3:ObjectCreated:*"])])

role = aws.iam.Role(
    "ingest-role",
    assume_role_policy=aws.iam.get_policy_document(statements=[{
        "actions": ["sts:AssumeRole"],
        "principals": [{"type": "Service", "identifiers": ["lambda.amazonaws.com"]}],
    }]).json,
    managed_policy_arns=[aws.iam.ManagedPolicy.AWS_LAMBDA_SQS_QUEUE_EXECUTION_ROLE],
)
ingest = aws.lambda_.Function("ingest", role=role.arn, runtime="python3.12", handler="app.handler",
                              timeout=WORKER_TIMEOUT, code=pulumi.FileArchive("./consumer"))
aws.cloudwatch.LogGroup("ingest-logs", name=ingest.name.apply(lambda n: f"/aws/lambda/{n}"), retention_in_days=30)
aws.lambda_.EventSourceMapping("ingest-events", event_source_arn=events.arn, function_name=ingest.name,
                               batch_size=10, function_response_types=["ReportBatchItemFailures"])

pulumi.export("bucket", landing.bucket)
pulumi.export("queue", events.url)
