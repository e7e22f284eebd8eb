"""The proxy needs the database's secret ARN and subnets, which the team keeps in the ESC
environment payments/dev-database (imported by the stack file). Offline, that environment cannot
be opened: the preview must fail on the first value it would have set, naming the environment."""
import json

import pulumi
import pulumi_aws as aws

config = pulumi.Config()
secret_arn = config.require("dbSecretArn")
subnet_ids = config.require_object("dbSubnetIds")

role = aws.iam.Role("proxy-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "rds.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicy("proxy-secret", role=role.id, policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "secretsmanager:GetSecretValue", "Resource": secret_arn}],
}))
aws.rds.Proxy(
    "payments",
    engine_family="POSTGRESQL",
    role_arn=role.arn,
    vpc_subnet_ids=subnet_ids,
    idle_client_timeout=config.get_int("idleClientTimeout"),
    require_tls=True,
    auths=[{"auth_scheme": "SECRETS", "secret_arn": secret_arn, "iam_auth": "REQUIRED"}],
)
