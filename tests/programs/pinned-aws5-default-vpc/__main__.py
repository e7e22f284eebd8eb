"""A reports worker written against pulumi-aws 5: `ec2.get_subnet_ids` and a bucket's inline
`versioning`/`acl` (both gone in pulumi-aws 6), pinned in requirements.txt as teams pin for years."""
import json

import pulumi
import pulumi_aws as aws

vpc = aws.ec2.get_vpc(default=True)
subnet_ids = aws.ec2.get_subnet_ids(vpc_id=vpc.id)

worker_sg = aws.ec2.SecurityGroup(
    "worker",
    vpc_id=vpc.id,
    description="reports worker",
    egress=[aws.ec2.SecurityGroupEgressArgs(protocol="-1", from_port=0, to_port=0, cidr_blocks=["0.0.0.0/0"])],
)

reports = aws.s3.Bucket(
    "reports",
    acl="private",
    versioning=aws.s3.BucketVersioningArgs(enabled=True),
)

dead_letters = aws.sqs.Queue("jobs-dlq", message_retention_seconds=1209600, sqs_managed_sse_enabled=True)
jobs = aws.sqs.Queue(
    "jobs",
    sqs_managed_sse_enabled=True,
    redrive_policy=dead_letters.arn.apply(lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1})),
)

pulumi.export("subnets", subnet_ids.ids)
pulumi.export("bucket_domain", reports.bucket_domain_name)
