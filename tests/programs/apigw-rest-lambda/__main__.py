"""REST API -> Lambda proxy integration. The function's log group is left to Lambda (the classic
mistake: it never expires)."""
import iam
import pulumi
import pulumi_aws as aws

config = pulumi.Config()
stage_name = config.get("stageName") or "v1"

hello = aws.lambda_.Function(
    "hello",
    role=iam.lambda_role.arn,
    runtime="python3.12",
    handler="hello.handler",
    timeout=10,
    code=pulumi.AssetArchive({".": pulumi.FileArchive("./app")}),
)

api = aws.apigateway.RestApi("api", description="hello API")

proxy = aws.apigateway.Resource(
    "proxy", rest_api=api.id, parent_id=api.root_resource_id, path_part="{proxy+}")

proxy_any = aws.apigateway.Method(
    "proxy-any", rest_api=api.id, resource_id=proxy.id, http_method="ANY", authorization="NONE")

proxy_lambda = aws.apigateway.Integration(
    "proxy-lambda",
    rest_api=api.id,
    resource_id=proxy.id,
    http_method=proxy_any.http_method,
    integration_http_method="POST",
    type="AWS_PROXY",
    uri=hello.invoke_arn,
)

deployment = aws.apigateway.Deployment(
    "deployment",
    rest_api=api.id,
    triggers={"integration": proxy_lambda.id},
    opts=pulumi.ResourceOptions(depends_on=[proxy_lambda]),
)

stage = aws.apigateway.Stage("stage", rest_api=api.id, deployment=deployment.id, stage_name=stage_name)

aws.lambda_.Permission(
    "api-invoke-hello",
    action="lambda:InvokeFunction",
    function=hello,
    principal="apigateway.amazonaws.com",
    source_arn=api.execution_arn.apply(lambda arn: f"{arn}/*/*"),
)

pulumi.export("url", stage.invoke_url.apply(lambda url: url + "/hello"))
pulumi.export("function", hello.name)
