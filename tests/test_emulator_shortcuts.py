"""The emulator's speed shortcuts (sandbox/emulator.py SHORTCUTS) keep moto's answers: the same
scenario (DynamoDB expressions and errors; the account and region SQS, S3 and Kinesis read from a
request) gives the same responses with and without them."""

import json
import subprocess
import sys

from integration_blueprint.sandbox import emulator

SCENARIO = '''
import json, sys
import boto3
from botocore.exceptions import ClientError
from moto import mock_aws

def record(call):
    try:
        response = call()
        response.pop("ResponseMetadata", None)
        out.append(response)
    except ClientError as exc:
        out.append({"error": exc.response["Error"]["Code"], "message": exc.response["Error"]["Message"]})
    except Exception as exc:  # moto in-process raises some errors as they are
        out.append({"exception": type(exc).__name__, "message": str(exc)})

def scenario():
    with mock_aws():
        ddb = boto3.client("dynamodb", region_name="eu-west-1")
        ddb.create_table(TableName="t", BillingMode="PAY_PER_REQUEST",
                         KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                         AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
        for _ in range(2):  # the second round meets every expression again
            for key in ("a", "b"):
                record(lambda: ddb.put_item(TableName="t", Item={"pk": {"S": key}, "n": {"N": "1"}},
                                            ConditionExpression="attribute_not_exists(pk)"))
                record(lambda: ddb.update_item(TableName="t", Key={"pk": {"S": key}},
                                               UpdateExpression="ADD #n :one SET #s = :s",
                                               ConditionExpression="#n < :limit",
                                               ExpressionAttributeNames={"#n": "n", "#s": "status"},
                                               ExpressionAttributeValues={":one": {"N": "1"}, ":s": {"S": "ok"},
                                                                          ":limit": {"N": "3"}},
                                               ReturnValues="ALL_NEW"))
            record(lambda: ddb.update_item(TableName="t", Key={"pk": {"S": "a"}}, UpdateExpression="SET #x = :v",
                                           ExpressionAttributeNames={"#x": "x"}, ExpressionAttributeValues={}))
            record(lambda: ddb.put_item(TableName="t", Item={"pk": {"S": "c"}}, ConditionExpression="#unused = :v",
                                        ExpressionAttributeValues={":v": {"S": "x"}}))
            record(lambda: ddb.delete_item(TableName="t", Key={"pk": {"S": "b"}}, ConditionExpression="n > :z",
                                           ExpressionAttributeValues={":z": {"N": "10"}}))
        out.append(ddb.scan(TableName="t")["Items"])
        # The account and region SQS, S3 and Kinesis read from a request.
        sqs = boto3.client("sqs", region_name="eu-west-1")
        url = sqs.create_queue(QueueName="q")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="hello")
        out.append([url, sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"],
                    [m["Body"] for m in sqs.receive_message(QueueUrl=url).get("Messages", [])]])
        s3 = boto3.client("s3", region_name="eu-west-1")
        s3.create_bucket(Bucket="drill-input", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
        s3.put_object(Bucket="drill-input", Key="k", Body=b"body")
        out.append([s3.get_bucket_location(Bucket="drill-input")["LocationConstraint"],
                    s3.get_object(Bucket="drill-input", Key="k")["Body"].read().decode()])
        kinesis = boto3.client("kinesis", region_name="eu-west-1")
        kinesis.create_stream(StreamName="s", ShardCount=1)
        out.append(kinesis.describe_stream_summary(StreamName="s")["StreamDescriptionSummary"]["StreamARN"])
        sfn = boto3.client("stepfunctions", region_name="eu-west-1")
        record(lambda: sfn.list_state_machines())

runs = {}
out = runs["plain"] = []
scenario()
from integration_blueprint.sandbox import emulator
emulator.share_botocore_data()
emulator._remember_response_method_names()
emulator._parse_dynamodb_expressions_once()
out = runs["shortcuts"] = []
scenario()
print(json.dumps(runs, sort_keys=True))
'''


def test_dynamodb_answers_and_errors_are_the_same_with_the_shortcuts():
    # A fresh interpreter: the scenario runs on plain moto, then again with the shortcuts applied.
    done = subprocess.run([sys.executable, "-c", SCENARIO], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout)
    plain, shortcuts = runs["plain"], runs["shortcuts"]

    assert shortcuts == plain
    errors = {entry["error"] for entry in plain if isinstance(entry, dict) and "error" in entry}
    assert {"ConditionalCheckFailedException", "ValidationException"} <= errors  # the scenario meets both


def test_every_shortcut_is_listed_with_what_it_saves():
    for name in emulator.SHORTCUTS:
        assert callable(getattr(emulator, name)) and emulator.SHORTCUTS[name]
