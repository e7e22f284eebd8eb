"""VPC with one public and one private subnet per availability zone, a NAT gateway per zone."""
import pulumi
import pulumi_aws as aws

CIDR = "10.20.0.0/16"
ZONE_COUNT = 2

zones = aws.get_availability_zones(state="available").names[:ZONE_COUNT]

vpc = aws.ec2.Vpc("orders-vpc", cidr_block=CIDR, enable_dns_hostnames=True, enable_dns_support=True,
                  tags={"Name": f"orders-{pulumi.get_stack()}"})
igw = aws.ec2.InternetGateway("orders-igw", vpc_id=vpc.id)

public_rt = aws.ec2.RouteTable("orders-public-rt", vpc_id=vpc.id,
                               routes=[{"cidr_block": "0.0.0.0/0", "gateway_id": igw.id}])

public_subnet_ids = []
private_subnet_ids = []
for i, zone in enumerate(zones):
    public = aws.ec2.Subnet(f"orders-public-{zone}", vpc_id=vpc.id, availability_zone=zone,
                            cidr_block=f"10.20.{i}.0/24", map_public_ip_on_launch=True)
    aws.ec2.RouteTableAssociation(f"orders-public-{zone}", subnet_id=public.id, route_table_id=public_rt.id)
    eip = aws.ec2.Eip(f"orders-nat-{zone}", domain="vpc")
    nat = aws.ec2.NatGateway(f"orders-nat-{zone}", subnet_id=public.id, allocation_id=eip.id,
                             opts=pulumi.ResourceOptions(depends_on=[igw]))
    private = aws.ec2.Subnet(f"orders-private-{zone}", vpc_id=vpc.id, availability_zone=zone,
                             cidr_block=f"10.20.{100 + i}.0/24")
    private_rt = aws.ec2.RouteTable(f"orders-private-{zone}", vpc_id=vpc.id,
                                    routes=[{"cidr_block": "0.0.0.0/0", "nat_gateway_id": nat.id}])
    aws.ec2.RouteTableAssociation(f"orders-private-{zone}", subnet_id=private.id, route_table_id=private_rt.id)
    public_subnet_ids.append(public.id)
    private_subnet_ids.append(private.id)
