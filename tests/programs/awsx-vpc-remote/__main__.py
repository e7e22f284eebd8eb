"""The network comes from awsx (constructed by its plugin, so nothing inside it is checked here); the
database subnet group and security group use its outputs. The ingest queue turns encryption off."""
import pulumi
import pulumi_aws as aws
import pulumi_awsx as awsx

config = pulumi.Config()

vpc = awsx.ec2.Vpc("data", awsx.ec2.VpcArgs(
    cidr_block="10.40.0.0/16",
    number_of_availability_zones=3,
    nat_gateways=awsx.ec2.NatGatewayConfigurationArgs(strategy=config.get("natStrategy") or "OnePerAz"),
))

db_subnets = aws.rds.SubnetGroup("warehouse", subnet_ids=vpc.private_subnet_ids)
db_sg = aws.ec2.SecurityGroup(
    "warehouse-db",
    vpc_id=vpc.vpc_id,
    ingress=[aws.ec2.SecurityGroupIngressArgs(protocol="tcp", from_port=5432, to_port=5432,
                                              cidr_blocks=["10.40.0.0/16"])],
)

ingest = aws.sqs.Queue("ingest", sqs_managed_sse_enabled=False, message_retention_seconds=86400)

pulumi.export("vpc_id", vpc.vpc_id)
pulumi.export("db_subnet_group", db_subnets.name)
pulumi.export("ingest_queue", ingest.url)
