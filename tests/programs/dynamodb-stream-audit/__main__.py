"""Orders table stream -> audit function, as the DynamoDB Streams tutorial sets it up: no on-failure
destination and AWS's default retries (a poison record blocks its shard for 24 hours). The stream's
ARN and label are published in SSM for other stacks."""
import json

import pulumi
import pulumi_aws as aws

orders = aws.dynamodb.Table(
    "orders",
    attributes=[{"name": "pk", "type": "S"}, {"name": "sk", "type": "S"}],
    hash_key="pk",
    range_key="sk",
    billing_mode="PAY_PER_REQUEST",
    stream_enabled=True,
    stream_view_type="NEW_AND_OLD_IMAGES",
)

role = aws.iam.Role("audit-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
for suffix, policy in (("basic", aws.iam.ManagedPolicy.AWS_LAMBDA_BASIC_EXECUTION_ROLE),
                       ("streams", aws.iam.ManagedPolicy.AWS_LAMBDA_DYNAMO_DB_EXECUTION_ROLE)):
    aws.iam.RolePolicyAttachment(f"audit-{suffix}", role=role, policy_arn=policy)

audit = aws.lambda_.Function("audit", role=role.arn, runtime="python3.12", handler="audit.handler",
                             code=pulumi.FileArchive("./handler"))
aws.cloudwatch.LogGroup("audit-logs", name=audit.name.apply(lambda n: f"/aws/lambda/{n}"), retention_in_days=365)

aws.lambda_.EventSourceMapping("orders-to-audit", event_source_arn=orders.stream_arn, function_name=audit.arn,
                               starting_position="LATEST")

stream_param = aws.ssm.Parameter("orders-stream-arn", type="String", value=orders.stream_arn,
                                 name=pulumi.Output.concat("/", pulumi.get_project(), "/", pulumi.get_stack(),
                                                           "/orders-stream-arn"))
label_param = aws.ssm.Parameter("orders-stream-label", type="String",
                                value=orders.stream_label.apply(lambda label: f"orders@{label}"))

pulumi.export("stream_arn", orders.stream_arn)
pulumi.export("stream_label", orders.stream_label)
pulumi.export("parameters", [stream_param.arn, label_param.arn])
