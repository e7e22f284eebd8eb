"""The sandbox's Distributed Map executor (blueprint/sandbox/distributed_map.py) runs a Map as AWS
documents it: batches, thresholds, retries with jitter, EXPRESS's limit, the ResultWriter's files."""

import io
import json
import time

import pytest
from botocore.exceptions import ClientError

from integration_blueprint.components.distributed_map_definition import MapSettings, RetrySettings
from integration_blueprint.components.validation import ComponentArgumentError
from integration_blueprint.core import aws_limits
from integration_blueprint.handlers.runtime.map_batch import BATCH_ITEMS_FAILED_ERROR, BatchItemsFailed, process_batch
from integration_blueprint.handlers.runtime.retry import TransientServiceError
from integration_blueprint.redrive.map_items import failed_items_from_manifest
from integration_blueprint.sandbox.emulator import running_emulator

REGION = "eu-west-1"
FUNCTION = f"arn:aws:lambda:{REGION}:123456789012:function:items"


class Function:
    """What the Map's tasks invoke (the emulator's invoke_function, as the sandbox sets it): records
    each event and answers as Lambda does, a raised error as FunctionError with its errorType."""

    def __init__(self, handler):
        self.handler, self.events = handler, []

    def __call__(self, name, payload):
        event = json.loads(payload)
        self.events.append(event)
        try:
            body, error = json.dumps(self.handler(event)), None
        except Exception as exc:  # noqa: BLE001 - Lambda reports every exception
            body, error = json.dumps({"errorType": type(exc).__name__, "errorMessage": str(exc)}), "Unhandled"
        return {"StatusCode": 200, "Payload": io.BytesIO(body.encode()), **({"FunctionError": error} if error else {})}


def machine(map_fields: dict, processor_retry=None, execution_type="STANDARD") -> dict:
    task = {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": FUNCTION, "Payload.$": "$"}, "OutputPath": "$.Payload", "End": True}
    if processor_retry:
        task["Retry"] = processor_retry
    return {"StartAt": "Map", "States": {
        "Map": {"Type": "Map", "ItemReader": {"Resource": "arn:aws:states:::s3:getObject",
                                              "ReaderConfig": {"InputType": "CSV", "CSVHeaderLocation": "FIRST_ROW"},
                                              "Parameters": {"Bucket": "input-bucket", "Key.$": "$.inputKey"}},
                "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": execution_type},
                                  "StartAt": "Item", "States": {"Item": task}},
                "ResultWriter": {"Resource": "arn:aws:states:::s3:putObject",
                                 "Parameters": {"Bucket": "input-bucket", "Prefix": "results"}},
                "Catch": [{"ErrorEquals": [aws_limits.DISTRIBUTED_MAP_TOLERATED_FAILURE_ERROR], "ResultPath": "$.failure",
                           "Next": "Notify"}],
                "End": True, **map_fields},
        "Notify": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage", "ResultPath": None,
                   "Parameters": {"QueueUrl": "QUEUE", "MessageBody": {"error.$": "$.failure.Error",
                                                                       "execution.$": "$$.Execution.Id"}},
                   "Next": "Failed"},
        "Failed": {"Type": "Fail", "Error": "Run.Failed"}}}


@pytest.fixture
def account():
    with running_emulator(REGION) as emulator:
        session = emulator.session()
        s3, sqs, sfn = (emulator.client(s, session) for s in ("s3", "sqs", "stepfunctions"))
        s3.create_bucket(Bucket="input-bucket", CreateBucketConfiguration={"LocationConstraint": REGION})
        queue = sqs.create_queue(QueueName="ops")["QueueUrl"]
        role = emulator.client("iam", session).create_role(RoleName="r", AssumeRolePolicyDocument="{}")["Role"]["Arn"]

        def run(definition: dict, rows: int, handler, name="night"):
            emulator.invoke_function = function = Function(handler)
            body = "id,amount\n" + "\n".join(f"{i},{i}.00" for i in range(rows))
            s3.put_object(Bucket="input-bucket", Key="in.csv", Body=body.encode())
            arn = sfn.create_state_machine(name=name, roleArn=role,
                                           definition=json.dumps(definition).replace("QUEUE", queue))["stateMachineArn"]
            execution = sfn.start_execution(stateMachineArn=arn, name=name, input=json.dumps({"inputKey": "in.csv"}))
            deadline = time.monotonic() + 20
            while (description := sfn.describe_execution(executionArn=execution["executionArn"]))["status"] == "RUNNING":
                assert time.monotonic() < deadline
                time.sleep(0.02)
            alerts = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages", [])
            manifests = [o["Key"] for o in s3.list_objects_v2(Bucket="input-bucket", Prefix="results").get("Contents", [])
                         if o["Key"].endswith("manifest.json")]
            return description, function, alerts, manifests

        yield run, emulator, s3, sfn, role


def test_item_batcher_hands_each_child_its_rows_and_batch_input_and_bills_a_transition_per_child(account):
    run, emulator, *_ = account
    definition = machine({"MaxConcurrency": 2, "ItemBatcher": {"MaxItemsPerBatch": 4, "BatchInput": {"night.$": "$.inputKey"}}})
    description, function, alerts, _ = run(definition, 10, lambda event: {"n": len(event["Items"])})

    assert description["status"] == "SUCCEEDED" and not alerts
    assert sorted(len(e["Items"]) for e in function.events) == [2, 4, 4]
    assert {"id": "0", "amount": "0.00"} in function.events[0]["Items"] + function.events[1]["Items"]
    assert all(e["BatchInput"] == {"night": "in.csv"} for e in function.events)
    assert json.loads(description["output"])["ResultWriterDetails"]["Key"].endswith("/manifest.json")
    usage = emulator.state_machine_usage
    # The Map state entered, 3 children started, one Task state in each.
    assert usage.children_started == 3 and usage.standard_transitions == 1 + 3 + 3


def test_item_batcher_fills_each_batch_up_to_its_input_bytes_and_refuses_an_item_that_fits_none(account):
    run, *_ = account
    most = 150
    definition = machine({"ItemBatcher": {"MaxInputBytesPerBatch": most, "BatchInput": {"night.$": "$.inputKey"}}})
    description, function, _, _ = run(definition, 40, lambda event: "ok")

    def size(batch: dict) -> int:  # a state's input as AWS counts it: compact JSON, UTF-8
        return len(json.dumps(batch, separators=(",", ":")).encode())

    assert description["status"] == "SUCCEEDED"
    batches = sorted(function.events, key=lambda e: int(e["Items"][0]["id"]))
    assert [int(row["id"]) for e in batches for row in e["Items"]] == list(range(40))  # each row once, in order
    for batch, following in zip(batches, batches[1:]):  # full: the next row would not have fitted
        assert size(batch) <= most < size({**batch, "Items": batch["Items"] + following["Items"][:1]})
    assert size(batches[-1]) <= most

    refused, function, _, _ = run(machine({"ItemBatcher": {"MaxInputBytesPerBatch": 20}}), 3, lambda event: "ok",
                                  name="too-small")
    assert refused["status"] == "FAILED" and not function.events
    assert "does not fit the ItemBatcher's MaxInputBytesPerBatch of 20" in refused.get("cause", "")


def test_past_its_tolerated_failures_the_map_stops_fails_alerts_and_leaves_the_rest_pending(account):
    run, _, s3, *_ = account

    def handler(event):
        return process_batch(event["Items"], lambda row: 1 / (int(row["id"]) % 5))  # every 5th row: poison

    definition = machine({"MaxConcurrency": 1, "ToleratedFailureCount": 2, "ItemBatcher": {"MaxItemsPerBatch": 5}})
    description, function, alerts, [manifest] = run(definition, 30, handler)

    assert description["status"] == "FAILED" and description["error"] == "Run.Failed"
    assert [json.loads(a["Body"])["error"] for a in alerts] == [aws_limits.DISTRIBUTED_MAP_TOLERATED_FAILURE_ERROR]
    assert len(function.events) == 1  # 5 items failed with the first batch: more than 2, no further child
    # The redrive takes the poison row of the failed batch (not its done batch-mates) and every row never started.
    items = failed_items_from_manifest(s3, "input-bucket", manifest)
    assert [row["id"] for row in items] == ["0"] + [str(i) for i in range(5, 30)]


def test_a_retried_transient_error_succeeds_and_each_retry_is_a_transition(account):
    run, emulator, *_ = account
    failures = iter([True, True])

    def handler(event):
        if next(failures, False):
            raise TransientServiceError("throttled")
        return "ok"

    retry = [{"ErrorEquals": ["TransientServiceError"], "IntervalSeconds": 2, "MaxAttempts": 3, "BackoffRate": 2.0,
              "JitterStrategy": "FULL"}]
    description, function, _, _ = run(machine({"MaxConcurrency": 1}, retry), 1, handler)
    assert description["status"] == "SUCCEEDED" and len(function.events) == 3
    assert emulator.state_machine_usage.standard_transitions == 1 + 1 + 1 + 2


def test_an_express_child_past_five_minutes_of_retry_waits_times_out_and_counts_as_failed(account):
    run, emulator, *_ = account

    def handler(event):
        raise TransientServiceError("down")

    retry = [{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 200, "MaxAttempts": 2, "BackoffRate": 1.0}]
    description, _, alerts, _ = run(machine({"MaxConcurrency": 1}, retry, "EXPRESS"), 1, handler)
    assert description["status"] == "FAILED" and len(alerts) == 1
    [child] = emulator.state_machine_usage.express_children
    # The second wait would end past 300 s: the child ends there, after two deliveries.
    assert child.waited_seconds == 200 and child.records == 2


def test_a_definition_the_executor_cannot_run_is_refused_naming_what(account):
    *_, sfn, role = account
    definition = machine({})
    definition["States"]["Map"]["ItemProcessor"]["States"]["Item"] = {"Type": "Wait", "Seconds": 1, "End": True}
    with pytest.raises(ClientError, match="Map.ItemProcessor.Item: state type Wait") as refused:
        sfn.create_state_machine(name="x", roleArn=role, definition=json.dumps(definition))
    assert refused.value.response["Error"]["Code"] == "InvalidDefinition"


def test_one_poison_item_neither_fails_nor_repeats_its_batch_mates():
    done = []

    def record(row):
        if row == "poison":
            raise ValueError("not an invoice")
        done.append(row)

    with pytest.raises(BatchItemsFailed) as failure:
        process_batch(["a", "poison", "b"], record)
    assert done == ["a", "b"] and type(failure.value).__name__ == BATCH_ITEMS_FAILED_ERROR
    assert json.loads(str(failure.value)) == {"failedItems": [1], "errors": {"1": "ValueError"}}


def test_express_children_are_refused_where_the_timeout_and_retries_cannot_fit_five_minutes():
    with pytest.raises(ComponentArgumentError, match="over EXPRESS's 300 s limit"):
        MapSettings(max_concurrency=5, execution_type="EXPRESS", task_timeout_seconds=40,
                    retry=RetrySettings(max_attempts=4))
    assert MapSettings(max_concurrency=5, execution_type="EXPRESS", task_timeout_seconds=20,
                       retry=RetrySettings(max_attempts=2, max_delay_seconds=10)).longest_child_seconds() <= 300
