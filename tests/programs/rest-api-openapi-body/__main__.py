"""The OpenAPI-body shape of a REST API: the integration URI is formatted from the region and the
function's ARN, the permission's source ARN from the API's execution ARN, and the stage writes
access logs to a group with a retention. A false-alarm guard."""
import json

import iam
import pulumi
import pulumi_aws as aws

config = pulumi.Config()
stage_name = config.get("stageName") or "v1"
region = aws.config.region

hello = aws.lambda_.Function(
    "greetings",
    role=iam.lambda_role.arn,
    runtime="python3.12",
    handler="hello.handler",
    code=pulumi.AssetArchive({".": pulumi.FileArchive("./hello_lambda")}),
)
aws.cloudwatch.LogGroup("greetings-fn-logs", name=hello.name.apply(lambda n: f"/aws/lambda/{n}"),
                        retention_in_days=14)


def proxy_route(function_arn: pulumi.Output) -> dict:
    return {"x-amazon-apigateway-any-method": {"x-amazon-apigateway-integration": {
        "uri": pulumi.Output.format(
            "arn:aws:apigateway:{0}:lambda:path/2015-03-31/functions/{1}/invocations", region, function_arn),
        "passthroughBehavior": "when_no_match",
        "httpMethod": "POST",
        "type": "aws_proxy",
    }}}


api = aws.apigateway.RestApi("greetings", body=pulumi.Output.json_dumps({
    "swagger": "2.0",
    "info": {"title": "greetings", "version": "1.0"},
    "paths": {"/{proxy+}": proxy_route(hello.arn)},
}))
deployment = aws.apigateway.Deployment("greetings", rest_api=api.id,
                                       triggers={"body": api.body.apply(lambda body: str(hash(body)))})
access_logs = aws.cloudwatch.LogGroup("greetings-access", retention_in_days=30)
stage = aws.apigateway.Stage(
    "greetings",
    rest_api=api.id,
    deployment=deployment.id,
    stage_name=stage_name,
    access_log_settings={"destination_arn": access_logs.arn,
                         "format": json.dumps({"requestId": "$context.requestId", "status": "$context.status"})},
)
aws.lambda_.Permission("greetings-api", action="lambda:InvokeFunction", function=hello.name,
                       principal="apigateway.amazonaws.com",
                       source_arn=pulumi.Output.concat(api.execution_arn, "/*/*"))

pulumi.export("url", pulumi.Output.concat(stage.invoke_url, "/hello"))
