"""A deploy role for CI with AdministratorAccess looked up by name (the mistake the pack exists to
stop), an auditor role with ReadOnlyAccess (allowed), and a bot user whose inline policy grants
s3:* on everything. Users and roles are passed to the attachments as resource objects."""
import json

import pulumi
import pulumi_aws as aws

config = pulumi.Config()
audit_account = config.require("auditAccountId")
caller = aws.get_caller_identity()
partition = aws.get_partition()

admin = aws.iam.get_policy(name="AdministratorAccess")
read_only = aws.iam.get_policy(name="ReadOnlyAccess")

deployer = aws.iam.Role(
    "ci-deployer",
    name="ci-deployer",
    assume_role_policy=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Action": "sts:AssumeRole",
            "Principal": {"AWS": f"arn:{partition.partition}:iam::{caller.account_id}:root"},
        }],
    }),
)
aws.iam.RolePolicyAttachment("ci-deployer-admin", role=deployer, policy_arn=admin.arn)

auditor = aws.iam.Role(
    "auditor",
    assume_role_policy=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                       "Principal": {"AWS": f"arn:aws:iam::{audit_account}:root"}}],
    }),
)
aws.iam.RolePolicyAttachment("auditor-read-only", role=auditor, policy_arn=read_only.arn)

bot = aws.iam.User("release-bot", path="/ci/")
aws.iam.UserPolicy(
    "release-bot-artifacts",
    user=bot,
    policy=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}],
    }),
)
key = aws.iam.AccessKey("release-bot-key", user=bot)

pulumi.export("deployer_role_arn", deployer.arn)
pulumi.export("bot_access_key_id", key.id)
pulumi.export("bot_secret_access_key", key.secret)
