"""Topic -> queue (with a queue policy tied to the topic) and topic -> function. Neither subscription
has a redrive policy and the function has no on-failure destination: SNS and Lambda drop what they
cannot deliver or process."""
import json

import pulumi
import pulumi_aws as aws

topic = aws.sns.Topic("orders")
queue = aws.sqs.Queue("order-audit", message_retention_seconds=1209600)

aws.sqs.QueuePolicy(
    "order-audit-from-topic",
    queue_url=queue.id,
    policy=pulumi.Output.all(queue.arn, topic.arn).apply(lambda arns: json.dumps({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Service": "sns.amazonaws.com"},
            "Action": "sqs:SendMessage",
            "Resource": arns[0],
            "Condition": {"ArnEquals": {"aws:SourceArn": arns[1]}},
        }],
    })),
)
aws.sns.TopicSubscription("order-audit", topic=topic.arn, protocol="sqs", endpoint=queue.arn,
                          raw_message_delivery=True)

role = aws.iam.Role("notify-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicyAttachment("notify-logs", role=role,
                             policy_arn=aws.iam.ManagedPolicy.AWS_LAMBDA_BASIC_EXECUTION_ROLE)

notify = aws.lambda_.Function(
    "notify",
    role=role.arn,
    runtime="python3.12",
    handler="notify.handler",
    code=pulumi.AssetArchive({"notify.py": pulumi.FileAsset("./functions/notify.py")}),
)
aws.cloudwatch.LogGroup("notify-logs", name=pulumi.Output.concat("/aws/lambda/", notify.name), retention_in_days=7)

aws.lambda_.Permission("notify-from-topic", action="lambda:InvokeFunction", function=notify,
                       principal="sns.amazonaws.com", source_arn=topic.arn)
aws.sns.TopicSubscription("notify", topic=topic.arn, protocol="lambda", endpoint=notify.arn)

pulumi.export("topic_arn", topic.arn)
