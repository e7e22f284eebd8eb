"""The partner only calls hosts under its allowed domain, so the program refuses an endpoint outside
it, inside an apply on the provider-computed endpoint. Once the endpoint is known (known-value
mode), the program's own ValueError must be reported at this file's line; in a first preview the
endpoint is unknown, the check does not run, and the missing log group is what is left."""
from urllib.parse import urlparse

import pulumi
import pulumi_aws as aws

config = pulumi.Config()
allowed_domain = config.require("partnerAllowedDomain")


def check_endpoint(endpoint: str) -> str:
    host = urlparse(endpoint).hostname or ""
    if not host.endswith(allowed_domain):
        raise ValueError(f"API endpoint {host} is not under {allowed_domain}: add a custom domain first")
    return endpoint


role = aws.iam.Role("pong-role", assume_role_policy={
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
})
pong = aws.lambda_.Function("pong", role=role.arn, runtime="python3.12", handler="main.handler",
                            code=pulumi.FileArchive("./lambda_src"))

api = aws.apigatewayv2.Api("partner", protocol_type="HTTP", target=pong.arn)
aws.lambda_.Permission("partner-invoke", action="lambda:InvokeFunction", function=pong,
                       principal="apigateway.amazonaws.com",
                       source_arn=pulumi.Output.concat(api.execution_arn, "/*/*"))

pulumi.export("endpoint", api.api_endpoint.apply(check_endpoint))
