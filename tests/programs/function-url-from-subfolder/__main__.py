"""The code archive path is relative to the project (./app), as Pulumi runs the program from the
folder holding Pulumi.yaml whatever folder the command was started in. A false-alarm guard."""
import pulumi
import pulumi_aws as aws

config = pulumi.Config()
origins = config.require_object("allowedOrigins")

role = aws.iam.Role("receiver-role", assume_role_policy={
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
})
aws.iam.RolePolicyAttachment("receiver-logs", role=role, policy_arn=aws.iam.ManagedPolicy.AWS_LAMBDA_BASIC_EXECUTION_ROLE)

receiver = aws.lambda_.Function(
    "receiver",
    name=f"webhook-receiver-{pulumi.get_stack()}",
    role=role.arn,
    runtime="python3.12",
    handler="receiver.handler",
    code=pulumi.FileArchive("./app"),
)
aws.cloudwatch.LogGroup("receiver-logs", name=f"/aws/lambda/webhook-receiver-{pulumi.get_stack()}",
                        retention_in_days=7)

url = aws.lambda_.FunctionUrl(
    "receiver",
    function_name=receiver.name,
    authorization_type="NONE",
    cors=aws.lambda_.FunctionUrlCorsArgs(allow_origins=origins, allow_methods=["POST"]),
)

pulumi.export("webhook_url", url.function_url.apply(lambda base: f"{base}hooks"))
