"""A repository laid out as many public ones are: infra/ holds the Pulumi program, lambdas/ the
functions' code and the IAM documents the program reads (relative to its working directory, the
project folder, as `pulumi preview` runs it)."""
import json

import pulumi
import pulumi_aws as aws

with open("../lambdas/execution_role.json") as document:
    assume_role_policy = json.load(document)

role = aws.iam.Role("ingest-role", assume_role_policy=json.dumps(assume_role_policy))
aws.iam.RolePolicyAttachment("ingest-logs", role=role.name,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")
ingest = aws.lambda_.Function("ingest", role=role.arn, runtime="python3.12", handler="app.handler",
                              code=pulumi.FileArchive("../lambdas/ingest"))
aws.cloudwatch.LogGroup("ingest-logs", name=ingest.name.apply(lambda name: f"/aws/lambda/{name}"),
                        retention_in_days=14)
pulumi.export("function", ingest.name)
