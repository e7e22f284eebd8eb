"""Cluster, node and administrator roles. The node role also gets AmazonS3FullAccess "for the log
shipper", the administrators AdministratorAccess."""
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

# The people who run the cluster assume this role; it gets AdministratorAccess "to get started".
caller = aws.get_caller_identity()
administrator_access = aws.iam.get_policy(name="AdministratorAccess")
cluster_admin = aws.iam.Role("eks-cluster-admin", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{caller.account_id}:root"},
                   "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicyAttachment("eks-cluster-admin", role=cluster_admin.name, policy_arn=administrator_access.arn)
