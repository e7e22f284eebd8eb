"""Nightly ledger exports; the platform helpers are imported from PYTHONPATH (the CI job's checkout)."""
import pulumi
import pulumi_aws as aws
from acme_platform import OWNER_TAGS, retention_seconds

exports = aws.sqs.Queue("exports", message_retention_seconds=retention_seconds(4), sqs_managed_sse_enabled=True,
                        tags=OWNER_TAGS)
archive = aws.s3.BucketV2("ledger-archive", tags=OWNER_TAGS)
aws.s3.BucketPublicAccessBlock("ledger-archive", bucket=archive.id, block_public_acls=True, block_public_policy=True,
                               ignore_public_acls=True, restrict_public_buckets=True)

pulumi.export("queue", exports.url)
