"""A VPC with a public subnet in each availability zone, all routed through one internet gateway."""
import pulumi_aws as aws

vpc = aws.ec2.Vpc("eks-vpc", cidr_block="10.100.0.0/16", enable_dns_hostnames=True, enable_dns_support=True,
                  tags={"Name": "platform-eks"})
igw = aws.ec2.InternetGateway("eks-igw", vpc_id=vpc.id)
route_table = aws.ec2.RouteTable("eks-routes", vpc_id=vpc.id, routes=[
    aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id)])

zones = aws.get_availability_zones()
subnet_ids = []
for zone in zones.names:
    subnet = aws.ec2.Subnet(
        f"eks-subnet-{zone}",
        vpc_id=vpc.id,
        availability_zone=zone,
        cidr_block=f"10.100.{len(subnet_ids)}.0/24",
        map_public_ip_on_launch=True,
        tags={"Name": f"platform-eks-{zone}", "kubernetes.io/role/elb": "1"},
    )
    aws.ec2.RouteTableAssociation(f"eks-subnet-{zone}", route_table_id=route_table.id, subnet_id=subnet.id)
    subnet_ids.append(subnet.id)
