"""Uploads under uploads/ trigger the resizer. S3 invokes it asynchronously and nothing keeps the
events it fails on."""
import json

import pulumi
import pulumi_aws as aws

config = pulumi.Config()
sizes = config.require_object("sizes")

photos = aws.s3.Bucket("photos")
aws.s3.BucketPublicAccessBlock("photos", bucket=photos.id, block_public_acls=True, block_public_policy=True,
                               ignore_public_acls=True, restrict_public_buckets=True)

role = aws.iam.Role("resizer-role", assume_role_policy={
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
})
aws.iam.RolePolicyAttachment("resizer-logs", role=role,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")
aws.iam.RolePolicy("resizer-objects", role=role, policy={
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"],
                   "Resource": pulumi.Output.concat(photos.arn, "/*")}],
})

resizer = aws.lambda_.Function(
    "resizer",
    role=role.arn,
    runtime="python3.12",
    handler="index.handler",
    memory_size=1024,
    timeout=60,
    code=pulumi.AssetArchive({
        "index.py": pulumi.FileAsset("./resize/index.py"),
        "settings.json": pulumi.StringAsset(json.dumps({"quality": 85})),
    }),
    environment={"variables": {"SIZES": json.dumps(sizes)}},
)
aws.cloudwatch.LogGroup("resizer-logs", name=resizer.name.apply(lambda n: f"/aws/lambda/{n}"), retention_in_days=14)

allow_s3 = aws.lambda_.Permission("resizer-from-s3", action="lambda:InvokeFunction", function=resizer,
                                  principal="s3.amazonaws.com", source_arn=photos.arn)
aws.s3.BucketNotification(
    "photos-uploaded",
    bucket=photos.id,
    lambda_functions=[{"lambda_function_arn": resizer.arn, "events": ["s3:ObjectCreated:*"],
                       "filter_prefix": "uploads/"}],
    opts=pulumi.ResourceOptions(depends_on=[allow_s3]),
)

pulumi.export("bucket", photos.bucket)
pulumi.export("resizer_version", resizer.version)
