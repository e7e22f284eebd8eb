"""The stack file names no region: CI sets AWS_REGION, which the AWS provider reads. The stream is
left unencrypted (encryption_type defaults to NONE), and the delivery role's name, which carries the
region, is too long for IAM in a region with a long name (ap-southeast-2: 68 characters)."""
import json

import pulumi
import pulumi_aws as aws

config = pulumi.Config()
region = aws.get_region()
account = aws.get_caller_identity().account_id

stream = aws.kinesis.Stream("clickstream", shard_count=config.get_int("shards") or 1, retention_period=48)

producers = aws.iam.Policy(
    "clickstream-producers",
    description=f"Put records on the clickstream in {region.region}",
    policy=stream.arn.apply(lambda arn: json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": ["kinesis:PutRecord", "kinesis:PutRecords"], "Resource": arn}],
    })),
)

delivery_role = aws.iam.Role(
    "clickstream-delivery",
    name=f"clickstream-{region.region}-producer-role-for-partner-ingest-firehose",
    assume_role_policy=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": "firehose.amazonaws.com"},
                       "Action": "sts:AssumeRole", "Condition": {"StringEquals": {"sts:ExternalId": account}}}],
    }),
)

pulumi.export("region", aws.config.region)
pulumi.export("stream_arn", stream.arn)
pulumi.export("console", f"https://{region.region}.console.aws.amazon.com/kinesis/home?region={region.region}")
pulumi.export("account", account)
