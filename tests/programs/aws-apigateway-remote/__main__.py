"""The serverless template's shape: the function is handed to the RestAPI component as a resource
object (`event_handler=fn`); the component is built by its own plugin, so the API inside it is not
checked offline and the report must say so. The function itself is checked: its log group is
declared with a retention."""
import json

import pulumi
import pulumi_aws as aws
import pulumi_aws_apigateway as apigateway

role = aws.iam.Role("hello-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicyAttachment("hello-logs", role=role, policy_arn=aws.iam.ManagedPolicy.AWS_LAMBDA_BASIC_EXECUTION_ROLE)

fn = aws.lambda_.Function("hello", role=role.arn, runtime="python3.12", handler="handler.handler",
                          code=pulumi.AssetArchive({".": pulumi.FileArchive("./handler")}))
aws.cloudwatch.LogGroup("hello-logs", name=fn.name.apply(lambda n: f"/aws/lambda/{n}"), retention_in_days=14)

api = apigateway.RestAPI("api", apigateway.RestAPIArgs(routes=[
    apigateway.RouteArgs(path="/", method="GET", event_handler=fn),
]))

pulumi.export("url", api.url)
