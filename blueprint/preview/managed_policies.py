"""The AWS managed policies public programs use most, as `aws.iam.get_policy` answers for them.

One place, meant to be swapped: a maintained managed-policy data source is planned for the policy
pack, and this table gives way to it then. Names, paths and documents are AWS's (IAM console /
`aws iam get-policy-version`, default versions as of 2026); a document is kept only where it is
short and stable (AdministratorAccess, the Lambda execution roles, the service full-access ones).
For the others `document` is None and get_policy answers a document with no statements.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

_VERSION = "2012-10-17"
_LOG_ACTIONS = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"]


@dataclass(frozen=True)
class ManagedPolicy:
    name: str
    path: str
    description: str
    document: Optional[dict]

    @property
    def arn(self) -> str:
        return f"arn:aws:iam::aws:policy{self.path}{self.name}"


def _allow(actions, resource="*") -> dict:
    return {"Version": _VERSION, "Statement": [{"Effect": "Allow", "Action": actions, "Resource": resource}]}


_POLICIES = [
    ManagedPolicy("AdministratorAccess", "/", "Provides full access to AWS services and resources.",
                  _allow("*")),
    ManagedPolicy("PowerUserAccess", "/", "Provides full access to AWS services and resources, but does not "
                  "allow management of Users and groups.", {"Version": _VERSION, "Statement": [
                      {"Effect": "Allow", "NotAction": ["iam:*", "organizations:*", "account:*"], "Resource": "*"}]}),
    ManagedPolicy("ReadOnlyAccess", "/", "Provides read-only access to AWS services and resources.", None),
    ManagedPolicy("IAMFullAccess", "/", "Provides full access to IAM via the AWS Management Console.",
                  _allow(["iam:*"])),
    ManagedPolicy("AWSLambdaBasicExecutionRole", "/service-role/",
                  "Provides write permissions to CloudWatch Logs.", _allow(_LOG_ACTIONS)),
    ManagedPolicy("AWSLambdaVPCAccessExecutionRole", "/service-role/",
                  "Provides minimum permissions for a Lambda function to execute while accessing a resource "
                  "within a VPC", _allow(_LOG_ACTIONS + [
                      "ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets",
                      "ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses",
                      "ec2:UnassignPrivateIpAddresses"])),
    ManagedPolicy("AWSLambdaKinesisExecutionRole", "/service-role/",
                  "Provides list and read access to Kinesis streams and write permissions to CloudWatch logs.",
                  _allow(["kinesis:DescribeStream", "kinesis:DescribeStreamSummary", "kinesis:GetRecords",
                          "kinesis:GetShardIterator", "kinesis:ListShards", "kinesis:ListStreams",
                          "kinesis:SubscribeToShard"] + _LOG_ACTIONS)),
    ManagedPolicy("AWSLambdaSQSQueueExecutionRole", "/service-role/",
                  "Provides receive message, delete message, and read attribute access to SQS queues, and "
                  "write permissions to CloudWatch logs.",
                  _allow(["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"] + _LOG_ACTIONS)),
    ManagedPolicy("AWSLambdaDynamoDBExecutionRole", "/service-role/",
                  "Provides list and read access to DynamoDB streams and write permissions to CloudWatch logs.",
                  _allow(["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator",
                          "dynamodb:ListStreams"] + _LOG_ACTIONS)),
    ManagedPolicy("AWSLambdaRole", "/service-role/", "Default policy for AWS Lambda service role.",
                  _allow(["lambda:InvokeFunction"])),
    ManagedPolicy("AWSLambda_FullAccess", "/", "Grants full access to AWS Lambda service.", None),
    ManagedPolicy("AmazonS3FullAccess", "/", "Provides full access to all buckets via the AWS Management Console.",
                  _allow(["s3:*", "s3-object-lambda:*"])),
    ManagedPolicy("AmazonS3ReadOnlyAccess", "/", "Provides read only access to all buckets via the AWS "
                  "Management Console.", _allow(["s3:Get*", "s3:List*", "s3:Describe*",
                                                 "s3-object-lambda:Get*", "s3-object-lambda:List*"])),
    ManagedPolicy("AmazonSQSFullAccess", "/", "Provides full access to Amazon SQS via the AWS Management Console.",
                  _allow(["sqs:*"])),
    ManagedPolicy("AmazonSNSFullAccess", "/", "Provides full access to Amazon SNS via the AWS Management Console.",
                  _allow(["sns:*"])),
    ManagedPolicy("AmazonDynamoDBFullAccess", "/", "Provides full access to Amazon DynamoDB via the AWS "
                  "Management Console.", None),
    ManagedPolicy("CloudWatchLogsFullAccess", "/", "Provides full access to CloudWatch Logs", None),
    ManagedPolicy("CloudWatchAgentServerPolicy", "/", "Permissions required to use AmazonCloudWatchAgent on servers",
                  None),
    ManagedPolicy("AWSXRayDaemonWriteAccess", "/", "Allow the AWS X-Ray Daemon to relay raw trace segments data "
                  "to the service's API and retrieve sampling data (rules, targets, etc.) to be used by the "
                  "X-Ray SDK.", None),
    ManagedPolicy("AmazonECSTaskExecutionRolePolicy", "/service-role/",
                  "Provides access to other AWS service resources that are required to run Amazon ECS tasks",
                  _allow(["ecr:GetAuthorizationToken", "ecr:BatchCheckLayerAvailability",
                          "ecr:GetDownloadUrlForLayer", "ecr:BatchGetImage", "logs:CreateLogStream",
                          "logs:PutLogEvents"])),
    ManagedPolicy("AmazonEC2ContainerRegistryReadOnly", "/", "Provides read-only access to Amazon EC2 Container "
                  "Registry repositories.", None),
    ManagedPolicy("AmazonEKSClusterPolicy", "/", "This policy provides Kubernetes the permissions it requires to "
                  "manage resources on your behalf.", None),
    ManagedPolicy("AmazonEKSServicePolicy", "/", "This policy allows Amazon Elastic Container Service for "
                  "Kubernetes to create and manage the necessary resources to operate EKS Clusters.", None),
    ManagedPolicy("AmazonEKSWorkerNodePolicy", "/", "This policy allows Amazon EKS worker nodes to connect to "
                  "Amazon EKS Clusters.", None),
    ManagedPolicy("AmazonEKS_CNI_Policy", "/", "This policy provides the Amazon VPC CNI Plugin (amazon-vpc-cni-k8s) "
                  "the permissions it requires to modify the IP address configuration on your EKS worker nodes.",
                  None),
    ManagedPolicy("AmazonEKSVPCResourceController", "/", "Policy used by VPC Resource Controller to manage ENI "
                  "and IPs for worker nodes.", None),
    ManagedPolicy("AmazonSSMManagedInstanceCore", "/", "The policy for Amazon EC2 Role to enable AWS Systems "
                  "Manager service core functionality.", None),
    ManagedPolicy("AmazonAPIGatewayPushToCloudWatchLogs", "/service-role/",
                  "Allows API Gateway to push logs to user's account.",
                  _allow(["logs:CreateLogGroup", "logs:CreateLogStream", "logs:DescribeLogGroups",
                          "logs:DescribeLogStreams", "logs:PutLogEvents", "logs:GetLogEvents",
                          "logs:FilterLogEvents"])),
    ManagedPolicy("AWSStepFunctionsFullAccess", "/", "An access policy for providing a user/role/etc access to "
                  "the AWS StepFunctions API.", None),
]
_BY_NAME = {p.name.lower(): p for p in _POLICIES}
_BY_ARN = {p.arn: p for p in _POLICIES}


def managed_policy(name_or_arn: str) -> Optional[ManagedPolicy]:
    """An AWS managed policy by its name or ARN (None: not one this table knows)."""
    if name_or_arn.startswith("arn:"):
        return _BY_ARN.get(name_or_arn.replace(":aws-us-gov:", ":aws:").replace(":aws-cn:", ":aws:"))
    return _BY_NAME.get(name_or_arn.lower())
