import iam
import pulumi
import pulumi_aws as aws
import vpc

config = pulumi.Config()
sizes = config.require_object("nodeGroup")

cluster = aws.eks.Cluster(
    "platform",
    role_arn=iam.cluster_role.arn,
    version=config.get("clusterVersion"),
    vpc_config=aws.eks.ClusterVpcConfigArgs(subnet_ids=vpc.subnet_ids, endpoint_public_access=True),
)

nodes = aws.eks.NodeGroup(
    "platform-nodes",
    cluster_name=cluster.name,
    node_role_arn=iam.node_role.arn,
    subnet_ids=vpc.subnet_ids,
    instance_types=sizes["instanceTypes"],
    scaling_config=aws.eks.NodeGroupScalingConfigArgs(
        desired_size=sizes["desiredSize"], min_size=1, max_size=sizes["maxSize"]),
)

pulumi.export("cluster_name", cluster.name)
pulumi.export("endpoint", cluster.endpoint)
pulumi.export("certificate_authority", cluster.certificate_authority.apply(lambda ca: ca.data))
pulumi.export("kubeconfig_hint", pulumi.Output.concat(
    "aws eks update-kubeconfig --name ", cluster.name, " --region ", aws.get_region().region))
