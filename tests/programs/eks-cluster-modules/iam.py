"""Cluster and node roles. The node role also gets AmazonS3FullAccess "for the log shipper"."""
import json

import pulumi_aws as aws


def service_role(name: str, service: str, policies: list[str]) -> aws.iam.Role:
    role = aws.iam.Role(name, assume_role_policy=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}],
    }))
    for i, policy in enumerate(policies):
        aws.iam.RolePolicyAttachment(f"{name}-{i}", role=role.name, policy_arn=f"arn:aws:iam::aws:policy/{policy}")
    return role


cluster_role = service_role("eks-cluster-role", "eks.amazonaws.com", ["AmazonEKSClusterPolicy"])
node_role = service_role("eks-node-role", "ec2.amazonaws.com", [
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryReadOnly",
    "AmazonS3FullAccess",
])
