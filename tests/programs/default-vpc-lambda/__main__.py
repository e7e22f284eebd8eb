"""A health-check function inside the default VPC: the VPC and its subnets come from data sources
(ec2.get_vpc(default=True), ec2.get_subnets), the execution role is written with
iam.get_policy_document and attaches AWSLambdaVPCAccessExecutionRole. A false-alarm guard."""
import pulumi
import pulumi_aws as aws

config = pulumi.Config()

default_vpc = aws.ec2.get_vpc(default=True)
subnets = aws.ec2.get_subnets(filters=[aws.ec2.GetSubnetsFilterArgs(name="vpc-id", values=[default_vpc.id])])

security_group = aws.ec2.SecurityGroup(
    "pinger",
    vpc_id=default_vpc.id,
    description="health-check function",
    egress=[aws.ec2.SecurityGroupEgressArgs(protocol="tcp", from_port=5432, to_port=5432,
                                            cidr_blocks=[default_vpc.cidr_block])],
)

assume = aws.iam.get_policy_document(statements=[aws.iam.GetPolicyDocumentStatementArgs(
    actions=["sts:AssumeRole"],
    principals=[aws.iam.GetPolicyDocumentStatementPrincipalArgs(type="Service", identifiers=["lambda.amazonaws.com"])],
)])
role = aws.iam.Role("pinger-role", assume_role_policy=assume.json)
aws.iam.RolePolicyAttachment("pinger-vpc-access", role=role.name,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole")

pinger = aws.lambda_.Function(
    "pinger",
    name="vpc-pinger",
    role=role.arn,
    runtime="python3.12",
    handler="ping.handler",
    timeout=10,
    code=pulumi.FileArchive("./src"),
    vpc_config=aws.lambda_.FunctionVpcConfigArgs(subnet_ids=subnets.ids, security_group_ids=[security_group.id]),
    environment=aws.lambda_.FunctionEnvironmentArgs(variables={"TARGET_HOST": config.require("targetHost")}),
)
aws.cloudwatch.LogGroup("pinger-logs", name="/aws/lambda/vpc-pinger", retention_in_days=14)

pulumi.export("vpc_id", default_vpc.id)
pulumi.export("subnet_count", len(subnets.ids))
pulumi.export("function_arn", pinger.arn)
