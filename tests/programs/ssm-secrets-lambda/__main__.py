"""The password is a stack secret stored as a SecureString under a key of this stack; the function
may read that one parameter (and list its folder) and decrypt with that one key. The stack's legacy
API token is never read. A false-alarm guard."""
import json

import pulumi
import pulumi_aws as aws

config = pulumi.Config()
memory = config.get_int("memory")
features = config.get_object("features")
db_password = config.require_secret("dbPassword")

identity = aws.get_caller_identity()
region = aws.get_region()
prefix = f"/{pulumi.get_project()}/{pulumi.get_stack()}"

key = aws.kms.Key("reports-params", description="reports-api parameters", enable_key_rotation=True,
                  deletion_window_in_days=7)
password = aws.ssm.Parameter("db-password", name=f"{prefix}/db-password", type="SecureString",
                             value=db_password, key_id=key.key_id)

role = aws.iam.Role("report-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicyAttachment("report-logs", role=role.name,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")
aws.iam.RolePolicy("report-secrets", role=role.name, policy=pulumi.Output.all(password.arn, key.arn).apply(
    lambda arns: json.dumps({
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": "ssm:GetParameter", "Resource": arns[0]},
            {"Effect": "Allow", "Action": "ssm:GetParametersByPath",
             "Resource": f"arn:aws:ssm:{region.region}:{identity.account_id}:parameter{prefix}"},
            {"Effect": "Allow", "Action": "kms:Decrypt", "Resource": arns[1]},
        ],
    })))

report = aws.lambda_.Function(
    "report",
    role=role.arn,
    runtime="python3.12",
    handler="report.handler",
    memory_size=memory,
    code=pulumi.FileArchive("./function"),
    environment={"variables": {"DB_PASSWORD_PARAM": password.name, "FEATURES": json.dumps(features)}},
)
aws.cloudwatch.LogGroup("report-logs", name=report.name.apply(lambda n: f"/aws/lambda/{n}"), retention_in_days=30)

pulumi.export("password_parameter_arn", password.arn)
pulumi.export("report_function", report.name)
