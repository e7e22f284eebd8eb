"""The shared network a team's apps reference: a VPC, two private subnets and an endpoint security group."""
import pulumi
import pulumi_aws as aws

vpc = aws.ec2.Vpc("main", cidr_block="10.20.0.0/16", enable_dns_hostnames=True)
zones = aws.get_availability_zones(state="available").names[:2]
private = [aws.ec2.Subnet(f"private-{zone}", vpc_id=vpc.id, availability_zone=zone, cidr_block=f"10.20.{i}.0/24")
           for i, zone in enumerate(zones)]
endpoints = aws.ec2.SecurityGroup("endpoints", vpc_id=vpc.id, description="VPC endpoints",
                                  ingress=[aws.ec2.SecurityGroupIngressArgs(protocol="tcp", from_port=443, to_port=443,
                                                                            cidr_blocks=["10.20.0.0/16"])])

pulumi.export("vpc_id", vpc.id)
pulumi.export("private_subnet_ids", [subnet.id for subnet in private])
pulumi.export("endpoint_security_group_id", endpoints.id)
