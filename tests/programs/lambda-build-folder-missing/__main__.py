"""An order webhook behind a function URL. Its code is bundled (handler + dependencies) into dist/
by `make bundle`; the program packages that folder as it is."""
import pulumi
import pulumi_aws as aws

config = pulumi.Config()

role = aws.iam.Role("webhook-role", assume_role_policy=aws.iam.get_policy_document(statements=[{
    "actions": ["sts:AssumeRole"],
    "principals": [{"type": "Service", "identifiers": ["lambda.amazonaws.com"]}],
}]).json)
aws.iam.RolePolicyAttachment("webhook-logs", role=role.name,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")

webhook = aws.lambda_.Function(
    "order-webhook",
    role=role.arn,
    runtime="python3.12",
    handler="webhook.handler",
    memory_size=config.get_int("memory") or 128,
    code=pulumi.FileArchive("./dist"),
)
url = aws.lambda_.FunctionUrl("order-webhook", function_name=webhook.name, authorization_type="AWS_IAM")

pulumi.export("url", url.function_url)
