"""An order API in the shared network: its subnets and VPC come from the network project's stack
outputs (`pulumi stack output --json` of acme/stackref-network/dev, kept in stack-references/)."""
import json

import pulumi
import pulumi_aws as aws

config = pulumi.Config()
network = pulumi.StackReference(config.require("networkStack"))
vpc_id = network.require_output("vpc_id")
subnet_ids = network.require_output("private_subnet_ids")

app_sg = aws.ec2.SecurityGroup("api", vpc_id=vpc_id, description="order api",
                               egress=[aws.ec2.SecurityGroupEgressArgs(protocol="tcp", from_port=443, to_port=443,
                                                                       cidr_blocks=["0.0.0.0/0"])])
role = aws.iam.Role("api", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicyAttachment("api-vpc", role=role.name,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole")
api = aws.lambda_.Function(
    "api",
    role=role.arn,
    runtime="python3.12",
    handler="index.handler",
    code=pulumi.AssetArchive({"index.py": pulumi.StringAsset("def handler(event, context):\n    return {}\n")}),
    vpc_config=aws.lambda_.FunctionVpcConfigArgs(subnet_ids=subnet_ids, security_group_ids=[app_sg.id]),
)
aws.cloudwatch.LogGroup("api-logs", name=api.name.apply(lambda name: f"/aws/lambda/{name}"), retention_in_days=30)

pulumi.export("subnets", subnet_ids)
