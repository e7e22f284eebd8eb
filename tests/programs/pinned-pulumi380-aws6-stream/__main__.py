"""A clickstream consumer on pulumi 3.80 and pulumi-aws 6.0 (requirements.txt pins both)."""
import json

import pulumi
import pulumi_aws as aws

stream = aws.kinesis.Stream("clicks", shard_count=1, retention_period=24, encryption_type="KMS",
                            kms_key_id="alias/aws/kinesis")

role = aws.iam.Role("consumer", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicyAttachment("consumer-kinesis", role=role.name,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaKinesisExecutionRole")

consumer = aws.lambda_.Function(
    "consumer",
    role=role.arn,
    runtime="python3.11",
    handler="index.handler",
    timeout=30,
    code=pulumi.AssetArchive({"index.py": pulumi.StringAsset("def handler(event, context):\n    return None\n")}),
)
aws.cloudwatch.LogGroup("consumer-logs", name=consumer.name.apply(lambda name: f"/aws/lambda/{name}"),
                        retention_in_days=14)

# No on-failure destination and retries left at the default (-1: until the record expires).
aws.lambda_.EventSourceMapping("clicks-to-consumer", event_source_arn=stream.arn, function_name=consumer.arn,
                               starting_position="LATEST", batch_size=100)

pulumi.export("stream", stream.arn)
