"""The program zips its handler code into build/ (in its own folder) as it runs, as many public
programs do, and ships the zip. `report` names a module the zip does not hold: the gate must read
the zip the program built to say so."""
import shutil

import pulumi
import pulumi_aws as aws

archive = shutil.make_archive("build/functions", "zip", "src")

role = aws.iam.Role("builder-role", assume_role_policy={
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
})
aws.iam.RolePolicyAttachment("builder-logs", role=role.name,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")
for name, handler in (("builder", "app.handler"), ("report", "report.handler")):
    function = aws.lambda_.Function(name, role=role.arn, runtime="python3.12", handler=handler,
                                    code=pulumi.FileArchive(archive))
    aws.cloudwatch.LogGroup(f"{name}-logs", name=function.name.apply(lambda n: f"/aws/lambda/{n}"),
                            retention_in_days=14)
