"""The emulator's speed shortcuts (sandbox/shortcuts.py SHORTCUTS) keep moto's answers: the same
scenario (DynamoDB expressions and errors, transactions cancelled and held, Step Functions paths, a JSON error's body; the account
and region SQS, S3 and Kinesis read from a request; the User-Agent headers sent) gives the same
responses with and without them, and moto's werkzeug requests are built as werkzeug builds them."""

import json
import subprocess
import sys

from integration_blueprint.sandbox import shortcuts

SCENARIO = '''
import json, sys, time
import boto3
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.core.config import default_user_config
default_user_config["stepfunctions"]["execute_state_machine"] = True

def record(call):
    try:
        response = call()
        response.pop("ResponseMetadata", None)
        out.append(response)
    except ClientError as exc:
        out.append({"error": exc.response["Error"]["Code"], "message": exc.response["Error"]["Message"]})
    except Exception as exc:  # moto in-process raises some errors as they are
        out.append({"exception": type(exc).__name__, "message": str(exc)})

def client(service):
    made = boto3.client(service, region_name="eu-west-1")
    # The User-Agent header of every request (it names the SDK features in use).
    made.meta.events.register_first("before-send.*", lambda request, **_: agents.append(str(request.headers["User-Agent"])))
    return made

def scenario():
    with mock_aws():
        ddb = client("dynamodb")
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
            for limit in ("1", "9"):  # one condition text, different values: fails, then holds
                record(lambda: ddb.update_item(TableName="t", Key={"pk": {"S": "a"}}, UpdateExpression="SET #s = :s",
                                               ConditionExpression="#n < :limit AND attribute_exists(pk)",
                                               ExpressionAttributeNames={"#n": "n", "#s": "status"},
                                               ExpressionAttributeValues={":s": {"S": limit}, ":limit": {"N": limit}},
                                               ReturnValues="ALL_NEW"))
            for low in ({"NULL": True}, {"N": "0"}, {"N": "5"}):  # one text: a NULL bound is refused, then met, then not
                record(lambda: ddb.update_item(
                    TableName="t", Key={"pk": {"S": "a"}}, UpdateExpression="SET #s = :s",
                    ConditionExpression="(#n BETWEEN :low AND :high OR #s IN (:s, :high)) AND NOT contains(#s, :part)",
                    ExpressionAttributeNames={"#n": "n", "#s": "status"}, ReturnValues="UPDATED_NEW",
                    ExpressionAttributeValues={":low": low, ":high": {"N": "9"}, ":s": {"S": "ok"}, ":part": {"S": "x"}}))
            record(lambda: ddb.put_item(TableName="t", Item={"pk": {"S": "d"}}, ExpressionAttributeNames={"#n": "n"},
                                        ConditionExpression="attribute_not_exists(pk) AND #n = :absent",
                                        ExpressionAttributeValues={":other": {"S": "x"}}))  # a value named, not given
            record(lambda: ddb.delete_item(TableName="t", Key={"pk": {"S": "a"}}, ConditionExpression="n > AND :z",
                                           ExpressionAttributeValues={":z": {"N": "1"}}))  # not a condition
            record(lambda: ddb.update_item(TableName="t", Key={"pk": {"S": "a"}}, UpdateExpression="SET #x = :v",
                                           ExpressionAttributeNames={"#x": "x"}, ExpressionAttributeValues={}))
            record(lambda: ddb.put_item(TableName="t", Item={"pk": {"S": "c"}}, ConditionExpression="#unused = :v",
                                        ExpressionAttributeValues={":v": {"S": "x"}}))
            record(lambda: ddb.delete_item(TableName="t", Key={"pk": {"S": "b"}}, ConditionExpression="n > :z",
                                           ExpressionAttributeValues={":z": {"N": "10"}}))
        # Transactions: one cancelled by its condition (nothing it wrote stays), one that holds, one
        # malformed (two writes of one item), then what the table holds.
        for guard in ("a", "new-1", "new-1"):
            record(lambda: ddb.transact_write_items(TransactItems=[
                {"Update": {"TableName": "t", "Key": {"pk": {"S": "total"}}, "UpdateExpression": "ADD n :one",
                            "ExpressionAttributeValues": {":one": {"N": "1"}}}},
                {"Put": {"TableName": "t", "Item": {"pk": {"S": guard}}, "ConditionExpression": "attribute_not_exists(pk)"}}]))
        record(lambda: ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": "t", "Item": {"pk": {"S": "twice"}}}},
            {"Put": {"TableName": "t", "Item": {"pk": {"S": "twice"}}}}]))
        out.append(sorted(json.dumps(item, sort_keys=True) for item in ddb.scan(TableName="t")["Items"]))
        every_type = {"pk": {"S": "types"}, "n": {"N": "1.5"}, "b": {"B": b"bytes"}, "ok": {"BOOL": False},
                      "none": {"NULL": True}, "ss": {"SS": ["x", "y"]}, "ns": {"NS": ["1", "2"]}, "bs": {"BS": [b"z"]},
                      "m": {"M": {"inner": {"L": [{"S": "deep"}, {"M": {}}, {"N": "0"}]}}}}
        record(lambda: ddb.put_item(TableName="t", Item=every_type))
        record(lambda: ddb.get_item(TableName="t", Key={"pk": {"S": "types"}}))
        out.append(ddb.scan(TableName="t")["Items"])
        out.append([page["Items"] for page in ddb.get_paginator("scan").paginate(TableName="t")])
        # The account and region SQS, S3 and Kinesis read from a request.
        sqs = client("sqs")
        url = sqs.create_queue(QueueName="q")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="hello")
        out.append([url, sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[
                        "QueueArn", "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
                        "ApproximateNumberOfMessagesDelayed"])["Attributes"],
                    [m["Body"] for m in sqs.receive_message(QueueUrl=url).get("Messages", [])]])
        # FIFO queues: moto reads their deduplication setting on every send (its errors, a duplicate
        # dropped, content-based ids), and the counts after them.
        def sent(response):  # without the random message ids and sequence numbers
            entries = response.get("Successful", [response])
            return [sorted(k for k in entry if k not in ("MessageId", "SequenceNumber")) for entry in entries]
        fifo = sqs.create_queue(QueueName="q.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
        by_content = sqs.create_queue(QueueName="c.fifo", Attributes={
            "FifoQueue": "true", "ContentBasedDeduplication": "true"})["QueueUrl"]
        record(lambda: sqs.send_message(QueueUrl=fifo, MessageBody="no group"))
        record(lambda: sqs.send_message(QueueUrl=fifo, MessageBody="no id", MessageGroupId="g"))
        record(lambda: {"sent": sent(sqs.send_message_batch(QueueUrl=fifo, Entries=[
            {"Id": str(i), "MessageBody": f"m{i % 3}", "MessageGroupId": "g", "MessageDeduplicationId": f"d{i % 3}"}
            for i in range(5)]))})
        for _ in range(2):
            record(lambda: {"sent": sent(sqs.send_message(QueueUrl=by_content, MessageBody="same", MessageGroupId="g"))})
        record(lambda: {"received": [m["Body"] for m in sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=2)["Messages"]]})
        for queue_url in (fifo, by_content):
            out.append(sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=[
                "ContentBasedDeduplication", "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
                "ApproximateNumberOfMessagesDelayed"])["Attributes"])
        record(lambda: {"all": sorted((name, value) for name, value in sqs.get_queue_attributes(
            QueueUrl=fifo, AttributeNames=["All"])["Attributes"].items() if not name.endswith("Timestamp"))})
        s3 = client("s3")
        s3.create_bucket(Bucket="drill-input", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
        s3.put_object(Bucket="drill-input", Key="k", Body=b"body")
        out.append([s3.get_bucket_location(Bucket="drill-input")["LocationConstraint"],
                    s3.get_object(Bucket="drill-input", Key="k")["Body"].read().decode()])
        kinesis = client("kinesis")
        kinesis.create_stream(StreamName="s", ShardCount=1)
        out.append(kinesis.describe_stream_summary(StreamName="s")["StreamDescriptionSummary"]["StreamARN"])
        sfn = client("stepfunctions")
        record(lambda: sfn.list_state_machines())
        # JSONPaths (InputPath, Parameters, ResultPath, OutputPath), each met by two executions (polled
        # a varying number of times: this client's User-Agent headers are not recorded).
        sfn = boto3.client("stepfunctions", region_name="eu-west-1")
        arn = sfn.create_state_machine(name="paths", roleArn="arn:aws:iam::123456789012:role/r", definition=json.dumps({
            "StartAt": "Pick", "States": {
                "Pick": {"Type": "Pass", "InputPath": "$.order", "Parameters": {"id.$": "$.id", "lines.$": "$.lines[1:]"},
                         "ResultPath": "$.picked", "Next": "Keep"},
                "Keep": {"Type": "Pass", "OutputPath": "$.picked.lines", "End": True}}}))["stateMachineArn"]
        for name, lines in (("first", [1, 2, 3]), ("second", ["x"])):
            order = json.dumps({"order": {"id": "o-1", "lines": lines}})
            execution = sfn.start_execution(stateMachineArn=arn, name=name, input=order)
            for _ in range(500):
                described = sfn.describe_execution(executionArn=execution["executionArn"])
                if described["status"] != "RUNNING":
                    break
                time.sleep(0.01)
            out.append([described["status"], described.get("output")])
        # A JSON protocol error's body, headers and attributes.
        from moto.core.exceptions import JsonRESTError
        error = JsonRESTError("ValidationException", "bad")
        out.append([error.get_body(), error.get_headers(), error.code, sorted(vars(error).items())])

runs = {}
out = runs["plain"] = []
agents = []
scenario()
out.append(agents)
from integration_blueprint.sandbox import shortcuts
shortcuts.apply_all()
out = runs["shortcuts"] = []
agents = []
scenario()
out.append(agents)
print(json.dumps(runs, sort_keys=True, default=repr))  # blobs come back as bytes
'''


def test_dynamodb_answers_and_errors_are_the_same_with_the_shortcuts():
    # A fresh interpreter: the scenario runs on plain moto, then again with the shortcuts applied.
    done = subprocess.run([sys.executable, "-c", SCENARIO], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout)
    plain, shortcuts = runs["plain"], runs["shortcuts"]

    assert shortcuts == plain
    errors = {entry["error"] for entry in plain if isinstance(entry, dict) and "error" in entry}
    assert {"ConditionalCheckFailedException", "ValidationException", "TransactionCanceledException"} <= errors


def test_every_shortcut_is_listed_with_what_it_saves():
    for name in shortcuts.SHORTCUTS:
        assert callable(getattr(shortcuts, name)) and shortcuts.SHORTCUTS[name]


def test_werkzeug_environments_are_built_key_for_key_as_the_builder_builds_them():
    from moto.core.request import Request
    from werkzeug.test import EnvironBuilder

    shortcuts.build_wsgi_environments_directly()
    json_headers = [("Content-Type", "application/x-amz-json-1.0"), ("X-Amz-Target", "DynamoDB_20120810.GetItem"),
                    ("Content-Length", "27"), ("Authorization", "AWS4-HMAC-SHA256 Credential=x/y")]
    requests = [
        # DynamoDB (JSON body), S3 (a percent-encoded key, a query, a metadata header kept apart by
        # case and underscore, a repeated header), a bodiless GET, a form body, a port, a non-ASCII path.
        dict(method="POST", base_url="https://dynamodb.eu-west-1.amazonaws.com", path="/", query_string="",
             data=b'{"TableName": "t", "Key": {}}', headers=json_headers),
        dict(method="PUT", base_url="https://drill-input.s3.eu-west-1.amazonaws.com", path="/a%2Fb/c%20d.csv",
             query_string="uploadId=1&partNumber=2", data=b"id,amount\n1,2\n",
             headers=[("x-amz-meta-my_key", "v"), ("X-Amz-Meta-Other", "w"), ("Accept", "a"), ("accept", "b"),
                      ("Content-MD5", "abc==")]),
        dict(method="GET", base_url="https://s3.amazonaws.com", path="/bucket", query_string="list-type=2",
             data=b"", headers=[("User-Agent", "Boto3/1"), ("Content-Length", "0")]),
        dict(method="POST", base_url="https://sqs.eu-west-1.amazonaws.com", path="/",
             query_string="", data="Action=ListQueues&Version=2012-11-05",
             headers=[("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")]),
        dict(method="GET", base_url="http://localhost:5000", path="/2015-03-31/functions/f/invocations",
             query_string="", data=b"", headers=[]),
        dict(method="DELETE", base_url="https://s3.amazonaws.com", path="/b/caf\u00e9 \u2603", query_string="",
             data=b"", headers=[("Content-Type", "text/plain")]),
    ]
    for arguments in requests:
        builder = EnvironBuilder(**arguments)
        expected = builder.get_environ()
        built = Request._sandbox_environment(**arguments)

        assert list(built) == list(expected), arguments["path"]
        for key in expected:
            if key == "wsgi.input":
                assert built[key].read() == expected[key].read()
            else:
                assert built[key] == expected[key], (arguments["path"], key)
        request, through_builder = Request.from_values(**arguments), EnvironBuilder(**arguments).get_request(Request)
        assert request.get_data() == through_builder.get_data() and request.url == through_builder.url
        assert list(request.headers) == list(through_builder.headers)

    # Where the builder does more than moto needs, it still builds the request.
    form_without_body = dict(method="POST", base_url="https://sqs.amazonaws.com", path="/", query_string="", data=b"",
                             headers=[("Content-Type", "application/x-www-form-urlencoded")])
    assert Request._sandbox_environment(**form_without_body) is None
    assert Request.from_values(**form_without_body).environ["CONTENT_LENGTH"] == "0"
