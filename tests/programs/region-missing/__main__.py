"""Nothing tells the AWS provider which region to use: `pulumi preview` stops before any resource
with the provider's "missing region" error; the offline preview must fail the same way, naming
where to set it (this project's Pulumi.qa.yaml, or AWS_REGION)."""
import pulumi
import pulumi_aws as aws

config = pulumi.Config()

trail = aws.s3.Bucket("audit-trail", force_destroy=False)
aws.s3.BucketLifecycleConfiguration("audit-trail-expiry", bucket=trail.id, rules=[{
    "id": "expire",
    "status": "Enabled",
    "filter": {},
    "expiration": {"days": config.get_int("retentionDays") or 365},
}])

pulumi.export("bucket", trail.bucket)
