"""The emulator's speed patches (sandbox/shortcuts.py, registered in integration_blueprint.core.patches)
keep moto's answers: the same scenario (DynamoDB expressions and errors, Step Functions paths, a
JSON error's body; the account and region SQS, S3 and Kinesis read from a request; the User-Agent
headers sent) gives the same responses on plain moto, with each patch alone and with all of them.
In-process: each patch is undone when its block ends."""

import json
import time

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.core.config import default_user_config

from integration_blueprint.core import patches
from integration_blueprint.sandbox import shortcuts


def record(call):
    """The answer to `call` (without its request id), or its error."""
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
    """DynamoDB expressions and errors, SQS counts and FIFO deduplication, S3, Kinesis and Step
    Functions paths, a JSON error's body, and the User-Agent of every request."""
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
        update_expressions(ddb)
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
        # Metadata names with an underscore (moto keeps their spelling), a key to quote, a query string.
        s3.put_object(Bucket="drill-input", Key="a b/ü+%2F", Body=b"", Metadata={"my_key": "v", "Other-Key": "w"})
        out.append(s3.head_object(Bucket="drill-input", Key="a b/ü+%2F")["Metadata"])
        out.append([o["Key"] for o in s3.list_objects_v2(Bucket="drill-input", Prefix="a b/")["Contents"]])
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


def update_expressions(ddb):
    """Update expressions (each met twice, so the second meets what the first left): SET, REMOVE,
    ADD and DELETE, if_not_exists, list_append, arithmetic, in an item and a new one; moto's errors
    (a missing path, a type mismatch, two clauses of a kind, a path set twice, a key updated, an
    undefined name or value, a key of the wrong type) and condition failures, alone and in a
    transaction, and the same texts with other names."""
    ddb.create_table(TableName="pair", BillingMode="PAY_PER_REQUEST",
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                           {"AttributeName": "sk", "AttributeType": "N"}])
    n, s, a_list, ss = ({"N": "2"}, {"S": "x"}, {"L": [{"S": "y"}]}, {"SS": ["p", "q"]})
    updates = [  # (table, key, expression, names, values)
        ("t", "u", "SET #s = :s, #c = if_not_exists(#c, :n) + :n, lst = list_append(if_not_exists(lst, :l), :l)",
         {"#s": "status", "#c": "count"}, {":s": s, ":n": n, ":l": a_list}),
        ("t", "u", "SET #c = #c - :n REMOVE gone ADD tags :ss, amount :n", {"#c": "count"}, {":n": n, ":ss": ss}),
        ("t", "u", "DELETE tags :ss SET m = :m, lst[0] = :s", None, {":ss": {"SS": ["p"]}, ":m": {"M": {}}, ":s": s}),
        ("t", "u", "SET lst[0] = :s, lst[5] = :s REMOVE lst[1]", None, {":s": s}),
        ("t", "u", "SET m.deep = :s", None, {":s": s}),
        ("t", "u", "SET #c = :n", {"#c": "other"}, {":n": n}),  # a text met before, other names
        ("t", "new", "ADD amount :n", None, {":n": n}),  # a new item
        ("pair", "u", "ADD balance :n, applied :one", None, {":n": n, ":one": {"N": "1"}}),
        ("pair", "new", "SET #t = :n", {"#t": "ttl"}, {":n": n}),
        # moto's errors
        ("t", "u", "SET #s = nowhere.deep", {"#s": "status"}, None),  # a path the item does not have
        ("t", "u", "SET #c = #s + :n", {"#c": "count", "#s": "status"}, {":n": n}),  # a string in arithmetic
        ("t", "u", "SET lst = list_append(#s, :l)", {"#s": "status"}, {":l": a_list}),  # not a list
        ("t", "u", "ADD #s :n", {"#s": "status"}, {":n": n}),  # a type mismatch
        ("t", "u", "SET a = :n SET b = :n", None, {":n": n}),  # two SET clauses
        ("t", "u", "SET a = :n REMOVE a", None, {":n": n}),  # a path twice
        ("t", "u", "SET a.b = :n, a = :n", None, {":n": n}),  # overlapping paths
        ("t", "u", "SET pk = :s", None, {":s": s}),  # a key attribute
        ("t", "u", "SET #k = :n", {"#k": "sk"}, {":n": n}),  # not a key here: passes
        ("pair", "u", "SET #k = :n", {"#k": "sk"}, {":n": n}),  # the same text and names, the range key here
        ("t", "u", "SET #a = :n, #b = :n", {"#a": "x", "#b": "y"}, {":n": n}),  # passes
        ("t", "u", "SET #a = :n, #b = :n", {"#a": "x", "#b": "x"}, {":n": n}),  # the same text, a path twice
        ("t", "u", "SET #undefined = :s", {"#other": "x"}, {":s": s}),  # a name not defined
        ("t", "u", "SET a = :s, b = :undefined", None, {":s": s}),  # a value not defined
        ("t", "u", "SET a = :s", None, {":s": {"S": ""}}),  # an empty string, not in a key
        ("t", "u", "SET lst[0].x = :s", None, {":s": s}),  # a path through a string
        ("t", "u", "SET a = :s", None, None),  # no values at all
    ]
    for _ in range(2):
        for table, key, expression, names, values in updates:
            arguments = {"TableName": table, "UpdateExpression": expression, "ReturnValues": "ALL_NEW",
                         "Key": {"pk": {"S": key}, **({"sk": {"N": "1"}} if table == "pair" else {})}}
            if names is not None:
                arguments["ExpressionAttributeNames"] = names
            if values is not None:
                arguments["ExpressionAttributeValues"] = values
            record(lambda: ddb.update_item(**arguments))
        # a condition that fails, then holds (one text, other values)
        for limit in ("0", "99"):
            record(lambda: ddb.update_item(TableName="t", Key={"pk": {"S": "u"}}, UpdateExpression="ADD amount :n",
                                           ConditionExpression="amount < :limit", ReturnValues="UPDATED_OLD",
                                           ExpressionAttributeValues={":n": n, ":limit": {"N": limit}}))
        # transactions: one whose condition fails (nothing written), one whose update is refused, one that holds
        for guard, expression in (("attribute_not_exists(pk)", "ADD amount :n"), ("attribute_exists(pk)", "SET pk = :s"),
                                  ("attribute_exists(pk)", "ADD amount :n")):
            record(lambda: ddb.transact_write_items(TransactItems=[
                {"Update": {"TableName": "t", "Key": {"pk": {"S": "w"}}, "UpdateExpression": "SET #t = :n",
                            "ExpressionAttributeNames": {"#t": "ttl"}, "ExpressionAttributeValues": {":n": n}}},
                {"Update": {"TableName": "t", "Key": {"pk": {"S": "u"}}, "UpdateExpression": expression,
                            "ConditionExpression": guard, "ExpressionAttributeValues": {":n": n, ":s": s}}}]))
            record(lambda: ddb.get_item(TableName="t", Key={"pk": {"S": "w"}}))
        record(lambda: ddb.get_item(TableName="t", Key={"pk": {"S": "u"}}))
    plain_updates(ddb)


def plain_updates(ddb):
    """Updates of plain SETs and numeric ADDs (apply_plain_updates_directly): every type set, numbers
    added to nothing, to integers and to decimals, lower-case keywords and the clauses in either
    order, an item grown past DynamoDB's 400 KB (refused, and left as it was), and the plain shapes
    moto refuses (a string ADDed to, a set ADDed, a value of no known type, a number that is not one,
    an index's key attribute of the wrong type or empty)."""
    every = {"s": {"S": "x"}, "e": {"S": ""}, "n": {"N": "-0.50"}, "b": {"B": b"\x00b"}, "t": {"BOOL": True},
             "z": {"NULL": True}, "ss": {"SS": ["a", "b"]}, "ns": {"NS": ["1", "2.5"]}, "bs": {"BS": [b"x"]},
             "l": {"L": [{"S": "a"}, {"M": {"k": {"N": "1"}}}]}, "m": {"M": {"d": {"L": []}}}}
    updates = [  # (key, expression, names, values)
        ("p", "SET " + ", ".join(f"#{k} = :{k}" for k in every), {f"#{k}": k for k in every},
         {f":{k}": v for k, v in every.items()}),
        ("p", "ADD total :a, #c :one", {"#c": "count"}, {":a": {"N": "2.25"}, ":one": {"N": "1"}}),
        ("p", "add total :a set note=:s", None, {":a": {"N": "-7"}, ":s": {"S": "lower case"}}),
        ("p", "ADD n :a", None, {":a": {"N": "1e2"}}),  # a decimal item attribute, an exponent added
        ("p", "ADD s :a", None, {":a": {"N": "1"}}),  # a string added to: moto refuses it
        ("p", "ADD ss :a", None, {":a": {"SS": ["c"]}}),  # a set added: moto's own pass
        ("p", "SET big = :big", None, {":big": {"S": "x" * 410_000}}),  # past the item size: refused
        ("p", "SET s = :v", None, {":v": {"Q": "no such type"}}),
        ("p", "ADD total :a", None, {":a": {"N": "not a number"}}),
        ("fresh", "SET #t = :t ADD total :a", {"#t": "ttl"}, {":t": {"N": "9"}, ":a": {"N": "3"}}),
    ]
    ddb.create_table(TableName="indexed", BillingMode="PAY_PER_REQUEST",
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                           {"AttributeName": "g", "AttributeType": "S"}],
                     GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                              "Projection": {"ProjectionType": "ALL"}}])
    updates += [  # an index's key: its type and an empty string are moto's to judge
        ("indexed", "SET g = :v", None, {":v": {"N": "1"}}), ("indexed", "SET g = :v", None, {":v": {"S": ""}}),
        ("indexed", "SET g = :v, other = :v", None, {":v": {"S": "fine"}}), ("indexed", "ADD g :n", None, {":n": {"N": "1"}}),
    ]
    for _ in range(2):
        for key, expression, names, values in updates:
            table, key = (key, "i") if key == "indexed" else ("t", key)
            arguments = {"TableName": table, "Key": {"pk": {"S": key}}, "UpdateExpression": expression,
                         "ExpressionAttributeValues": values, "ReturnValues": "ALL_NEW"}
            if names is not None:
                arguments["ExpressionAttributeNames"] = names
            record(lambda: ddb.update_item(**arguments))
    record(lambda: ddb.get_item(TableName="t", Key={"pk": {"S": "p"}}))
    record(lambda: ddb.get_item(TableName="indexed", Key={"pk": {"S": "i"}}))


def answers(names) -> list:
    """What the scenario gets from moto with the named speed patches applied (undone after)."""
    global out, agents
    out, agents = [], []
    default_user_config["stepfunctions"]["execute_state_machine"] = True
    with patches.applied(names):
        scenario()
    out.append(agents)
    return json.loads(json.dumps(out, sort_keys=True, default=repr))  # blobs compared as bytes


out: list = []
agents: list = []


@pytest.mark.parametrize("method, url, headers, body", [
    ("POST", "https://dynamodb.eu-west-1.amazonaws.com/", [("X-Amz-Target", "DynamoDB_20120810.GetItem"),
     ("Content-Type", "application/x-amz-json-1.0"), ("Content-Length", "2"), ("Authorization", "AWS4 x")], b"{}"),
    ("PUT", "https://b.s3.eu-west-1.amazonaws.com/a%20b/%C3%BC%2B", [("x-amz-meta-my_key", "v"),
     ("x-amz-meta-my-key", "w"), ("Content-Length", "9")], b"body \xc3\xbc\x00"),
    ("GET", "https://b.s3.amazonaws.com/?list-type=2&prefix=a%20b%2F", [("Accept", "*/*"), ("accept", "text/x")], b""),
    ("POST", "https://sqs.eu-west-1.amazonaws.com:8443/123456789012/q", [("Content-Type", "application/x-amz-json-1.0")],
     b""),
    ("GET", "http://localhost/p%C3%BCth", [("Host", "elsewhere:81")], b""),
])
def test_a_request_s_environment_is_built_key_for_key_as_werkzeug_s_builder_builds_it(method, url, headers, body):
    """route_and_build_requests_directly makes moto's request of a WSGI environment of its own: the same
    keys, values and order as werkzeug's EnvironBuilder for the arguments moto passes it."""
    from urllib.parse import urlparse

    from werkzeug.test import EnvironBuilder

    parsed = urlparse(url)
    arguments = dict(method=method, base_url=f"{parsed.scheme}://{parsed.netloc}", path=parsed.path,
                     query_string=parsed.query, data=body, headers=headers)
    built = shortcuts._wsgi_environment(**arguments)
    assert built is not None
    builder = EnvironBuilder(**arguments)
    expected = builder.get_environ()
    builder.close()
    assert list(built) == list(expected)
    assert {k: v for k, v in built.items() if k != "wsgi.input"} == {k: v for k, v in expected.items() if k != "wsgi.input"}
    assert built["wsgi.input"].read() == expected["wsgi.input"].read()


@pytest.mark.parametrize("method, url, headers, body", [
    ("POST", "https://dynamodb.eu-west-1.amazonaws.com/", [("X-Amz-Target", "DynamoDB_20120810.UpdateItem"),
     ("Content-Type", "application/x-amz-json-1.0"), ("Content-Length", "16"), ("Host", "dynamodb.eu-west-1.amazonaws.com")],
     b'{"TableName":"\xc3\xbc"}'),
    ("POST", "https://sqs.eu-west-1.amazonaws.com/", [("Content-Type", "application/x-amz-json-1.0; charset=utf-8"),
     ("Host", "elsewhere:8443")], b"{}"),
    ("POST", "http://localhost:5000/2015-03-31/functions/f/invocations", [("Content-Type", "application/json")], b"[1]"),
    ("GET", "https://states.eu-west-1.amazonaws.com/", [("Content-Type", "application/x-amz-json-1.1")], b""),
    ("POST", "https://sqs.eu-west-1.amazonaws.com/?Action=x", [("Content-Type", "application/x-amz-json-1.0")], b"{}"),
    ("PUT", "https://b.s3.eu-west-1.amazonaws.com/k", [("Content-Type", "text/plain")], b"body"),
])
def test_what_moto_reads_of_a_request_is_what_werkzeug_reads_of_it(method, url, headers, body):
    """route_and_build_requests_directly puts what werkzeug would read of a JSON request's body, root
    URL and arguments in the request as werkzeug puts it there: every property moto and werkzeug read
    gives the same value as on moto's own request, whichever is read first."""
    from moto.core.request import Request

    reads = ("url_root", "root_url", "host", "raw_url", "data", "values", "form", "args", "files", "mimetype",
             "mimetype_params", "content_type", "content_length", "method", "path", "full_path")

    def seen(request) -> dict:
        values = {name: getattr(request, name) for name in reads}
        values["get_data"] = request.get_data()
        values["stream"] = (type(request.stream).__name__, request.stream.read())
        values["headers"] = list(request.headers.items())
        return values

    class Prepared:  # what botocore hands moto
        def __init__(self):
            self.method, self.url, self.headers, self.body = method, url, dict(headers), body

    ours = shortcuts._moto_request(Prepared())
    assert ours is not None
    assert seen(ours) == seen(Request.from_primitives(method, url, dict(headers), body))


def test_a_request_the_builder_would_encode_a_form_for_is_left_to_it():
    assert shortcuts._wsgi_environment("POST", "https://sqs.amazonaws.com", "/", "", b"",
                                       [("Content-Type", "application/x-www-form-urlencoded")]) is None


@pytest.fixture(scope="module")
def plain():
    return answers([])


@pytest.mark.parametrize("name", shortcuts.NAMES)
def test_each_speed_patch_alone_gives_plain_moto_s_answers(plain, name):
    outside = patches.active()  # the suite's own (conftest.py)
    assert answers([name]) == plain
    assert patches.active() == outside  # undone


def test_all_speed_patches_together_give_plain_moto_s_answers(plain):
    assert answers(shortcuts.NAMES) == plain
    errors = {entry["error"] for entry in plain if isinstance(entry, dict) and "error" in entry}
    assert {"ConditionalCheckFailedException", "ValidationException"} <= errors  # the scenario meets both


@pytest.mark.parametrize("headers", [
    {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.GetItem"},
    {"Host": "sqs.eu-west-1.amazonaws.com", "User-Agent": "Boto3/1", "Expect": "100-continue", "x-amz-meta-A": "v"},
    {},
])
def test_a_placeholder_signed_request_carries_botocore_s_authorization_header_but_the_signature(headers, monkeypatch):
    """sign_with_a_placeholder: the Authorization header (credential scope, signed headers) is the
    one botocore's SigV4 signer writes, with the placeholder in place of the signature."""
    import datetime

    from botocore import auth
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    monkeypatch.setattr(auth, "get_current_datetime", lambda: datetime.datetime(2026, 12, 7, 23, 59, 59))  # one clock

    def signed(patched: bool) -> dict:
        request = AWSRequest(method="POST", url="https://dynamodb.eu-west-1.amazonaws.com/", data=b"{}",
                             headers=dict(headers))
        signer = SigV4Auth(Credentials("AKIAIOSFODNN7EXAMPLE", "secret", "token"), "dynamodb", "eu-west-1")
        with patches.applied(["sign_with_a_placeholder"] if patched else []):
            signer.add_auth(request)
        return dict(request.headers.items())

    plain, placeholder = signed(False), signed(True)
    assert placeholder["Authorization"].endswith("Signature=" + shortcuts.PLACEHOLDER_SIGNATURE)
    assert {**plain, "Authorization": plain["Authorization"].rsplit("=", 1)[0]} == \
           {**placeholder, "Authorization": placeholder["Authorization"].rsplit("=", 1)[0]}


def test_a_queue_s_deduplication_setting_read_alone_is_what_its_whole_attribute_set_says():
    """read_queue_settings_without_counting: inside a send, moto's reads of ContentBasedDeduplication
    get the value moto's full attribute set holds (FIFO or not, on or off), without building the set."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.sqs.models import Queue, sqs_backends

    with mock_aws():
        sqs = boto3.client("sqs", region_name="eu-west-1")
        sqs.create_queue(QueueName="plain", Attributes={"Policy": json.dumps({"Version": "2012-10-17", "Statement": []})})
        sqs.create_queue(QueueName="on.fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"})
        sqs.create_queue(QueueName="off.fifo", Attributes={"FifoQueue": "true"})
        backend = sqs_backends[DEFAULT_ACCOUNT_ID]["eu-west-1"]
        build = Queue.attributes.fget  # moto's own (no patch applied here)
        for name in ("plain", "on.fifo", "off.fifo"):
            queue = backend.get_queue(name)
            view, whole = shortcuts._QueueSettings(queue, build), build(queue)
            for key in ("ContentBasedDeduplication", "FifoQueue", "Policy", "VisibilityTimeout", "Nothing"):
                assert view.get(key) == whole.get(key), (name, key)
            assert dict(view) == whole


@pytest.mark.parametrize("expression, actions", [
    # What the drill's handlers send: Powertools' completion, the ledger's ADD, the guard's SET.
    ("SET #response_data = :response_data, #expiry = :expiry, #status = :status",
     (("SET", "#response_data", ":response_data"), ("SET", "#expiry", ":expiry"), ("SET", "#status", ":status"))),
    ("ADD balance :amount, applied :one", (("ADD", "balance", ":amount"), ("ADD", "applied", ":one"))),
    ("set a=:v add #b :n", (("SET", "a", ":v"), ("ADD", "#b", ":n"))),
    # Left to moto's passes: paths, functions, arithmetic, REMOVE and DELETE, two clauses of a kind,
    # a reserved word as a name, anything malformed.
    ("SET a.b = :v", None), ("SET lst[0] = :v", None), ("SET a = if_not_exists(a, :v)", None),
    ("SET a = a + :v", None), ("SET a = b", None), ("SET a = :v REMOVE b", None), ("DELETE s :v", None),
    ("SET a = :v SET b = :w", None), ("SET status = :v", None), ("SET a = :v,", None), ("ADD a", None), ("", None),
])
def test_only_plain_sets_and_adds_are_applied_directly(expression, actions):
    from moto.dynamodb.parsing.reserved_keywords import ReservedKeywords

    assert shortcuts._plain_actions(expression, frozenset(ReservedKeywords.get_reserved_keywords())) == actions
