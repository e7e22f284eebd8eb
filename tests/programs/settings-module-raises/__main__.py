"""The stack says `development` where the settings module accepts dev/staging/prod: the program's
own error, raised while importing settings.py, must be reported there."""
import json

import pulumi
import pulumi_aws as aws
from settings import SETTINGS

exports = aws.s3.Bucket(f"billing-exports-{SETTINGS.environment}")
aws.s3.BucketServerSideEncryptionConfiguration("billing-exports", bucket=exports.id, rules=[{
    "apply_server_side_encryption_by_default": {"sse_algorithm": "aws:kms"},
}])
aws.scheduler.ScheduleGroup("billing-exports")

pulumi.export("bucket", exports.bucket)
pulumi.export("settings", json.dumps({"hour": SETTINGS.export_hour}))
