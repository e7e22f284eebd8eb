"""DistributedMapBatch: the definition builder, the component's resources, and a real execution of
the definition in moto's Step Functions interpreter with the real item handler."""

import importlib
import io
import json
import os
import threading
import time
import zipfile

import boto3
import pytest
from moto import mock_aws
from moto.awslambda.models import LambdaFunction
from moto.dynamodb.responses import DynamoHandler
from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

from integration_blueprint.components.distributed_map_batch import DistributedMapBatch
from integration_blueprint.components.distributed_map_definition import (
    FAIL_STATE,
    IN_PROGRESS_ERROR,
    ITEM_STATE,
    MAP_STATE,
    NOTIFY_STATE,
    RUN_FAILED_ERROR,
    MapSettings,
    RetrySettings,
    build_definition,
    to_json,
)
from integration_blueprint.components.validation import ComponentArgumentError
from integration_blueprint.core import aws_limits, conventions
from integration_blueprint.preview.recording import ProgramError, record_program
from integration_blueprint.sandbox.distributed_map import unsupported
from integration_blueprint.sandbox.lambda_context import LocalLambdaContext
from tests.conftest import MOCK_ACCOUNT, REGION, REPO, assert_tls_only, policy_statements, stack_file, trust_policy
from tests.invoice_fixtures import ENVIRONMENT, create_tables, customer_total, load_handler

ENRICHER_MODULE = "integration_blueprint.handlers.reference.invoice_enricher"
STACKS = ("dev", "staging", "prod")
FUNCTION_ARN = "arn:aws:lambda:eu-west-1:123456789012:function:enricher"
QUEUE_URL = "https://sqs.eu-west-1.amazonaws.com/123456789012/ops"


def definition(**settings) -> dict:
    settings.setdefault("max_concurrency", 10)
    return build_definition(function_arn=FUNCTION_ARN, input_bucket="invoice-input", ops_queue_url=QUEUE_URL,
                            settings=MapSettings(**settings), result_prefix="results/")


def moto_accepts(document: dict) -> None:
    """moto's ASL parser (ported from LocalStack) raises on anything its grammar rejects."""
    AmazonStateLanguageParser.parse(to_json(document))


# ---- the definition builder ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def stacks(recordings):
    """Each stack of the blueprint program, recorded with its own stack file."""
    return {stack: recordings(REPO, stack) for stack in STACKS}


def stack_section(stack: str) -> dict:
    return stack_file(stack)["blueprint:distributedMap"]


@pytest.mark.parametrize("stack", STACKS)
def test_each_stack_gets_the_documented_shape(stacks, stack):
    config = stack_section(stack)
    recorded = stacks[stack]
    [machine] = recorded.of_type("aws:sfn/stateMachine:StateMachine")
    document = json.loads(machine.inputs["definition"])
    [ops_queue] = [q for q in recorded.of_type("aws:sqs/queue:Queue") if q.name == "invoices-ops"]
    [function] = [f for f in recorded.of_type("aws:lambda/function:Function") if f.name == "invoices-enricher"]

    assert machine.inputs["type"] == "STANDARD"
    assert document["StartAt"] == MAP_STATE
    state = document["States"][MAP_STATE]
    assert state["Type"] == "Map"
    assert state["ItemProcessor"]["ProcessorConfig"] == {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}
    assert state["ItemReader"]["Resource"] == "arn:aws:states:::s3:getObject"
    assert state["ItemReader"]["ReaderConfig"] == {"InputType": "CSV", "CSVHeaderLocation": "FIRST_ROW"}
    assert state["ItemReader"]["Parameters"]["Key.$"] == "$.inputKey"
    assert state["MaxConcurrency"] == config["maxConcurrency"] > 0
    assert state["ToleratedFailurePercentage"] == float(config["toleratedFailurePercentage"])
    assert isinstance(state["ToleratedFailurePercentage"], float)
    assert state["ResultWriter"]["Parameters"]["Prefix"] == "results/"

    task = state["ItemProcessor"]["States"][ITEM_STATE]
    assert task["Resource"] == "arn:aws:states:::lambda:invoke"
    assert task["Parameters"]["FunctionName"] == function.outputs["arn"]
    assert task["TimeoutSeconds"] == config["itemTimeoutSeconds"] + conventions.SFN_TASK_TIMEOUT_MARGIN_SECONDS
    transient, in_progress = task["Retry"]
    from integration_blueprint.handlers.runtime.retry import TRANSIENT_ERROR_NAME

    # Lambda's own transient errors, a task timeout, and an item whose AWS calls stayed throttled
    # through the handler's own retries.
    assert set(aws_limits.SFN_LAMBDA_TRANSIENT_ERRORS) | {"States.Timeout", TRANSIENT_ERROR_NAME} == set(
        transient["ErrorEquals"])
    assert in_progress["ErrorEquals"] == [IN_PROGRESS_ERROR]
    for retrier in task["Retry"]:
        assert retrier["JitterStrategy"] == "FULL"
        assert retrier["IntervalSeconds"] == config["retryIntervalSeconds"]
        assert retrier["BackoffRate"] == config["retryBackoffRate"]
        assert retrier["MaxAttempts"] == config["retryMaxAttempts"]
        assert retrier["MaxDelaySeconds"] == config["retryMaxDelaySeconds"]
    assert "Catch" not in task  # a validation error fails the item and counts toward the threshold

    [catch] = state["Catch"]
    assert catch["ErrorEquals"] == ["States.ExceedToleratedFailureThreshold"]
    assert catch["Next"] == NOTIFY_STATE
    notify = document["States"][NOTIFY_STATE]
    assert notify["Resource"] == "arn:aws:states:::sqs:sendMessage"
    assert notify["Parameters"]["QueueUrl"] == ops_queue.outputs["url"]
    assert set(notify["Parameters"]["MessageBody"]) == {"execution.$", "inputKey.$", "error.$", "cause.$"}
    assert document["States"][FAIL_STATE]["Type"] == "Fail"
    assert not document["States"][FAIL_STATE]["Error"].startswith("States.")  # reserved prefix
    # The cheap shape: the reference handler gets its invoices in batches.
    assert state["ItemBatcher"]["MaxItemsPerBatch"] == conventions.MAP_ITEMS_PER_BATCH_DEFAULT

    # moto's grammar has no ItemBatcher: the sandbox's own executor runs it, and all the rest.
    assert unsupported(document) == []


def test_given_headers_batching_and_no_result_writer():
    document = build_definition(function_arn=FUNCTION_ARN, input_bucket="b", ops_queue_url=QUEUE_URL,
                                settings=MapSettings(max_concurrency=3, tolerated_failure_count=5,
                                                     tolerated_failure_percentage=None,
                                                     csv_headers=["invoice_id", "amount"], max_items_per_batch=25))
    state = document["States"][MAP_STATE]
    assert state["ItemReader"]["ReaderConfig"] == {"InputType": "CSV", "CSVHeaderLocation": "GIVEN",
                                                   "CSVHeaders": ["invoice_id", "amount"]}
    assert state["ItemBatcher"]["MaxItemsPerBatch"] == 25
    assert state["ToleratedFailureCount"] == 5 and "ToleratedFailurePercentage" not in state
    assert "ResultWriter" not in state
    # moto's grammar has no ItemBatcher; without it the rest parses.
    del state["ItemBatcher"]
    moto_accepts(document)


def test_tolerated_percentage_is_emitted_in_the_form_aws_and_moto_both_accept():
    document = definition(tolerated_failure_percentage=2)
    assert document["States"][MAP_STATE]["ToleratedFailurePercentage"] == 2.0
    assert '"ToleratedFailurePercentage": 2.0' in to_json(document)
    moto_accepts(document)
    # Why: the bare integer (valid for AWS) is refused by moto's parser.
    document["States"][MAP_STATE]["ToleratedFailurePercentage"] = 2
    with pytest.raises(Exception, match="ToleratedFailurePercentage"):
        moto_accepts(document)


@pytest.mark.parametrize("settings, message", [
    ({"max_concurrency": 0}, "max_concurrency=0 is not allowed: a whole number from 1 to 10000"),
    ({"max_concurrency": 10_001}, "max_concurrency=10001 is not allowed"),
    ({"max_concurrency": 5, "tolerated_failure_percentage": -1},
     "tolerated_failure_percentage=-1 is not allowed: a number from 0 to 100"),
    ({"max_concurrency": 5, "tolerated_failure_percentage": 100.5}, "tolerated_failure_percentage=100.5"),
    ({"max_concurrency": 5, "tolerated_failure_percentage": None}, "set tolerated_failure_percentage or"),
    ({"max_concurrency": 5, "csv_headers": []}, "csv_headers"),
])
def test_builder_refuses_unsafe_map_settings(settings, message):
    with pytest.raises(ComponentArgumentError, match=message):
        MapSettings(**settings)


@pytest.mark.parametrize("retry, message", [
    ({"jitter_strategy": "NONE"}, "retry_jitter_strategy='NONE' is not allowed: one of FULL"),
    ({"max_attempts": 0}, "retry_max_attempts=0"),
    ({"backoff_rate": 0.5}, "retry_backoff_rate=0.5"),
    ({"interval_seconds": 10, "max_delay_seconds": 5}, "retry_max_delay_seconds=5"),
])
def test_builder_refuses_retries_without_jitter_or_bounds(retry, message):
    with pytest.raises(ComponentArgumentError, match=message):
        RetrySettings(**retry)


# ---- the component ---------------------------------------------------------------------------------

def record_component(**args):
    args.setdefault("max_concurrency", 5)
    return record_program(lambda: DistributedMapBatch("invoices", args), config={"aws:region": REGION})


def role_policy(recorded, name: str) -> list[dict]:
    return policy_statements(recorded.named(name))


def test_state_machine_role_is_least_privilege_without_a_cycle():
    recorded = record_component()
    [machine] = recorded.of_type("aws:sfn/stateMachine:StateMachine")
    name = machine.inputs["name"]
    assert name == "blueprint-dev-invoices"  # fixed: project-stack-resource
    statements = {tuple(s["Action"]): s["Resource"] for s in role_policy(recorded, "invoices-policy")}

    # The role names the machine's own ARN, built from the fixed name, and equals what AWS returns.
    assert statements[("states:StartExecution",)] == [machine.outputs["arn"]]
    assert statements[("states:DescribeExecution", "states:StopExecution")] == [
        f"arn:aws:states:{REGION}:123456789012:execution:{name}:*"]
    # ...and the policy does not depend on the machine (no cycle).
    policy = recorded.named("invoices-policy")
    assert machine.urn not in policy.dependencies
    assert policy.urn in machine.dependencies  # log delivery allowed before the machine exists

    bucket = recorded.named("invoices-input").outputs["bucket"]
    assert statements[("s3:GetObject",)] == [f"arn:aws:s3:::{bucket}/incoming/*"]
    function_arn = recorded.named("invoices-enricher").outputs["arn"]
    assert statements[("lambda:InvokeFunction",)] == [function_arn, f"{function_arn}:*"]
    assert statements[("sqs:SendMessage",)] == [recorded.named("invoices-ops").outputs["arn"]]
    assert statements[("s3:AbortMultipartUpload", "s3:GetObject", "s3:ListMultipartUploadParts",
                       "s3:PutObject")] == [f"arn:aws:s3:::{bucket}/results/*"]
    for policy_name in ("invoices-policy", "invoices-enricher-policy"):
        for statement in role_policy(recorded, policy_name):
            assert all("*" not in action for action in statement["Action"])
            if statement["Resource"] == ["*"]:  # only services without resource-level permissions
                assert all(a.startswith(("logs:", "xray:")) for a in statement["Action"])


def test_logging_tracing_alarms_bucket_and_ops_queue():
    recorded = record_component(alarm_actions=["arn:aws:sns:eu-west-1:123456789012:pager"])
    [machine] = recorded.of_type("aws:sfn/stateMachine:StateMachine")
    log_group = recorded.named("invoices-logs")
    assert machine.inputs["loggingConfiguration"]["level"] == "ERROR"
    assert machine.inputs["loggingConfiguration"]["logDestination"] == f"{log_group.outputs['arn']}:*"
    assert log_group.inputs["name"] == "/aws/vendedlogs/states/blueprint-dev-invoices"
    assert log_group.inputs["retentionInDays"] == conventions.LOG_RETENTION_DEFAULT_DAYS
    assert machine.inputs["tracingConfiguration"] == {"enabled": True}

    alarms = {a.inputs["metricName"]: a for a in recorded.of_type("aws:cloudwatch/metricAlarm:MetricAlarm")
              if a.inputs["namespace"] == "AWS/States"}
    assert set(alarms) == {"ExecutionsFailed", "ExecutionsAborted", "ExecutionThrottled"}
    for alarm in alarms.values():
        assert alarm.inputs["dimensions"] == {"StateMachineArn": machine.outputs["arn"]}
        assert alarm.inputs["threshold"] == 1
        assert alarm.inputs["alarmActions"] == ["arn:aws:sns:eu-west-1:123456789012:pager"]

    bucket = recorded.named("invoices-input")
    assert recorded.named("invoices-input-versioning").inputs["versioningConfiguration"] == {"status": "Enabled"}
    assert recorded.named("invoices-input-encryption").inputs["rules"]
    block = recorded.named("invoices-input-public-access").inputs
    assert all(block[k] for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"))
    assert bucket.urn in recorded.named("invoices-input-versioning").dependencies

    ops = recorded.named("invoices-ops")
    redrive = json.loads(ops.inputs["redrivePolicy"])
    assert redrive["deadLetterTargetArn"] == recorded.named("invoices-ops-dlq").outputs["arn"]
    depth_alarms = {a.name for a in recorded.of_type("aws:cloudwatch/metricAlarm:MetricAlarm")
                    if a.inputs["namespace"] == "AWS/SQS"}
    assert {"invoices-ops-depth", "invoices-ops-dlq-depth"} <= depth_alarms

    component = recorded.of_type("blueprint:index:DistributedMapBatch")[0]
    assert all(r.parent == component.urn for r in recorded.resources if r is not component)


def test_item_function_gets_its_tables_from_the_component():
    recorded = record_component(idempotency_expiry_seconds=3600)
    variables = recorded.named("invoices-enricher").inputs["environment"]["variables"]
    assert variables["IDEMPOTENCY_TABLE_NAME"] == recorded.named("invoices-idempotency").outputs["name"]
    assert variables["INVOICE_LEDGER_TABLE_NAME"] == recorded.named("invoices-invoice-ledger").outputs["name"]
    assert variables["IDEMPOTENCY_EXPIRY_SECONDS"] == "3600"
    assert set(ENVIRONMENT) <= set(variables)  # the tests run the handler with the same variables
    assert recorded.named("invoices-enricher").inputs["handler"] == f"{ENRICHER_MODULE}.lambda_handler"
    idempotency = recorded.named("invoices-idempotency").inputs
    assert idempotency["hashKey"] == "id" and idempotency["ttl"]["attributeName"] == "expiration"


def test_given_bucket_no_schedule_by_default_and_a_scheduled_nightly_run():
    recorded = record_component(input_bucket_name="team-invoices")
    assert not recorded.of_type("aws:s3/bucket:Bucket")
    assert not recorded.of_type("aws:scheduler/schedule:Schedule")
    statements = {tuple(s["Action"]): s["Resource"] for s in role_policy(recorded, "invoices-policy")}
    assert statements[("s3:GetObject",)] == ["arn:aws:s3:::team-invoices/incoming/*"]

    recorded = record_component(schedule_expression="cron(0 2 * * ? *)", schedule_input_key="incoming/x.csv",
                                scheduler_retry_attempts=7)
    [schedule] = recorded.of_type("aws:scheduler/schedule:Schedule")
    target = schedule.inputs["target"]
    assert target["arn"] == recorded.of_type("aws:sfn/stateMachine:StateMachine")[0].outputs["arn"]
    assert json.loads(target["input"]) == {"inputKey": "incoming/x.csv"}
    assert target["retryPolicy"]["maximumRetryAttempts"] == 7
    assert target["deadLetterConfig"]["arn"] == recorded.named("invoices-schedule-dlq").outputs["arn"]
    statements = {tuple(s["Action"]): s["Resource"] for s in role_policy(recorded, "invoices-schedule-policy")}
    assert set(statements) == {("states:StartExecution",), ("sqs:SendMessage",)}


def test_secure_by_default_tls_only_bucket_and_queues_and_a_trust_policy_for_this_machine_only():
    recorded = record_component(schedule_expression="cron(0 2 * * ? *)")
    bucket = recorded.named("invoices-input")
    bucket_policy = recorded.named("invoices-input-tls-only")
    assert bucket_policy.inputs["bucket"] == bucket.id == bucket.outputs["bucket"]
    assert_tls_only(bucket_policy, "s3", [bucket.outputs["arn"], f"{bucket.outputs['arn']}/*"])
    for queue in recorded.of_type("aws:sqs/queue:Queue"):
        assert_tls_only(recorded.named(f"{queue.name}-tls-only"), "sqs", [queue.outputs["arn"]])

    [machine] = recorded.of_type("aws:sfn/stateMachine:StateMachine")
    states = trust_policy(recorded.named("invoices-role"))
    assert states["Principal"] == {"Service": "states.amazonaws.com"}
    assert states["Condition"] == {"StringEquals": {"aws:SourceAccount": MOCK_ACCOUNT},
                                   "ArnLike": {"aws:SourceArn": machine.outputs["arn"]}}
    scheduler = trust_policy(recorded.named("invoices-schedule-role"))
    assert scheduler["Condition"]["ArnLike"] == {
        "aws:SourceArn": f"arn:aws:scheduler:{REGION}:{MOCK_ACCOUNT}:schedule-group/default"}
    # ...and the trust policies do not depend on the machine (no cycle).
    assert machine.urn not in recorded.named("invoices-role").dependencies


def test_a_given_input_bucket_gets_no_bucket_policy_from_the_component():
    recorded = record_component(input_bucket_name="team-invoices")
    assert not recorded.of_type("aws:s3/bucketPolicy:BucketPolicy")


def test_first_preview_with_unknown_outputs_and_a_given_name():
    recorded = record_program(lambda: DistributedMapBatch("invoices", {"max_concurrency": 5,
                                                                       "state_machine_name": "nightly-invoices"}),
                              config={"aws:region": REGION}, unknowns=True)
    [machine] = recorded.of_type("aws:sfn/stateMachine:StateMachine")
    assert machine.inputs["name"] == "nightly-invoices"
    assert recorded.named("invoices-logs").inputs["name"] == "/aws/vendedlogs/states/nightly-invoices"


@pytest.mark.parametrize("args, message", [
    ({"max_concurrency": None}, "max_concurrency is required"),
    ({"max_concurrency": 0}, "max_concurrency=0 is not allowed"),
    ({"tolerated_failure_percentage": 101}, "tolerated_failure_percentage=101"),
    ({"retry_jitter_strategy": "NONE"}, "retry_jitter_strategy='NONE'"),
    ({"max_concurrency": 50, "item_reserved_concurrency": 10}, "max_concurrency=50 is above item_reserved_concurrency=10"),
    ({"schedule_expression": "cron(0 2 * * ? *)", "schedule_input_key": "other/x.csv"}, "outside input_prefix"),
    ({"state_machine_name": "has spaces"}, "state_machine_name='has spaces'"),
])
def test_component_refuses_unsafe_arguments_naming_them(args, message):
    args = {k: v for k, v in {"max_concurrency": 5, **args}.items() if v is not None}
    with pytest.raises(ProgramError, match=message):
        record_program(lambda: DistributedMapBatch("invoices", args), config={"aws:region": REGION})


def test_stack_config_requires_max_concurrency():
    config = {"aws:region": REGION, "blueprint:distributedMap": json.dumps({"enabled": True})}
    with pytest.raises(ProgramError, match="blueprint:distributedMap.maxConcurrency is required"):
        record_program(REPO, stack="dev", config=config)
    config["blueprint:distributedMap"] = json.dumps({"enabled": True, "maxConcurrency": 5, "maxConcurency": 5})
    with pytest.raises(ProgramError, match="unknown keys maxConcurency"):
        record_program(REPO, stack="dev", config=config)


# ---- a real execution in moto --------------------------------------------------------------------

def invoke_handler_in_process(self, event=None):
    """Stands in for moto's LambdaFunction._invoke_lambda.

    moto runs Lambda code in a Docker container, and Docker is not available where these tests
    run. This runs the function's real handler instead: the module and function named by the
    function's Handler setting are imported from this repository and called in this process, with
    the environment the function was created with (checked, not assumed) and a Lambda-like
    context. Everything around it stays moto's: Step Functions calls lambda:Invoke through boto3,
    moto's Lambda API answers, and an exception is reported the way Lambda reports it
    ({"errorType", "errorMessage"} with a FunctionError), which is what Step Functions' Retry
    and the Map's failure accounting see. What this does not emulate: a separate process per
    invocation, the timeout and memory limits, and the packaged archive itself.
    """
    for key, value in self.environment_vars.items():
        assert os.environ.get(key) == value, f"the handler would run without {key}={value!r}"
    module_name, _, function_name = self.handler.rpartition(".")
    handler = getattr(importlib.import_module(module_name), function_name)
    try:
        result = handler(event, LocalLambdaContext(self.function_name, timeout_seconds=self.timeout))
    except Exception as exc:  # noqa: BLE001 - Lambda reports every exception to the caller
        INVOCATIONS.append((event, type(exc).__name__))
        return json.dumps({"errorType": type(exc).__name__, "errorMessage": str(exc)}), True, ""
    INVOCATIONS.append((event, "ok"))
    return json.dumps(result), False, ""


INVOCATIONS: list = []
CSV = (
    "invoice_id,customer_id,region,billing_date,amount\n"
    "INV-1,C-1,eu,2026-11-01,10.00\n"
    "INV-2,C-1,eu,2026-11-01,2.50\n"
    "INV-1,C-1,eu,2026-11-01,10.00\n"   # duplicate row in the same file
    "INV-3,C-2,us,2026-11-01,7.25\n"
    "INV-4,C-2,us,2026-11-01,not-a-number\n"  # invalid
)


def wait_for(sfn, execution_arn: str) -> dict:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        description = sfn.describe_execution(executionArn=execution_arn)
        if description["status"] != "RUNNING":
            return description
        time.sleep(0.05)
    raise AssertionError(f"{execution_arn} still running after 30 s")


@pytest.fixture
def moto_batch(monkeypatch):
    """The batch's AWS side in moto: input bucket with the CSV, the item function (running the real
    handler in-process), its tables, the ops queue, and the state machine from the builder."""
    INVOCATIONS.clear()
    monkeypatch.setattr(LambdaFunction, "_invoke_lambda", invoke_handler_in_process)
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        create_tables(REGION)
        load_handler(monkeypatch)  # sets ENVIRONMENT in this process, imports the handler fresh
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket="invoice-input", CreateBucketConfiguration={"LocationConstraint": REGION})
        s3.put_object(Bucket="invoice-input", Key="incoming/invoices.csv", Body=CSV.encode())
        role = boto3.client("iam", region_name=REGION).create_role(
            RoleName="batch", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as zf:
            zf.write(REPO / "handlers" / "reference" / "invoice_enricher.py", ENRICHER_MODULE.replace(".", "/") + ".py")
        function_arn = boto3.client("lambda", region_name=REGION).create_function(
            FunctionName="invoice-enricher", Runtime=conventions.LAMBDA_RUNTIME, Role=role,
            Handler=f"{ENRICHER_MODULE}.lambda_handler", Code={"ZipFile": archive.getvalue()},
            Timeout=30, Environment={"Variables": ENVIRONMENT})["FunctionArn"]
        queue_url = boto3.client("sqs", region_name=REGION).create_queue(QueueName="ops")["QueueUrl"]

        def state_machine(settings: MapSettings) -> str:
            document = build_definition(function_arn=function_arn, input_bucket="invoice-input",
                                        ops_queue_url=queue_url, settings=settings, result_prefix="results/")
            return boto3.client("stepfunctions", region_name=REGION).create_state_machine(
                name="invoice-batch", definition=to_json(document), roleArn=role, type="STANDARD")["stateMachineArn"]

        yield state_machine


def run(state_machine_arn: str, name: str) -> dict:
    sfn = boto3.client("stepfunctions", region_name=REGION)
    # An explicit name: moto names every unnamed execution "None" and refuses the second one.
    execution = sfn.start_execution(stateMachineArn=state_machine_arn, name=name,
                                    input=json.dumps({"inputKey": "incoming/invoices.csv"}))
    return wait_for(sfn, execution["executionArn"])


def test_execution_runs_the_real_handler_per_row_and_suppresses_duplicates(moto_batch):
    # MaxConcurrency 1 makes the run deterministic: the duplicate row finds a COMPLETED record.
    machine = moto_batch(MapSettings(max_concurrency=1, tolerated_failure_percentage=25))
    result = run(machine, "night-1")

    assert result["status"] == "SUCCEEDED", result
    # Every CSV row reached the real handler, parsed by the Map's CSV ItemReader (header row = keys).
    assert [event["invoice_id"] for event, _ in INVOCATIONS] == ["INV-1", "INV-2", "INV-1", "INV-3", "INV-4"]
    assert [outcome for _, outcome in INVOCATIONS] == ["ok", "ok", "ok", "ok", "InvalidInvoiceError"]
    # The duplicate row did not add again; the invalid row added nothing.
    assert customer_total(REGION, "C-1") == (1250, 2)
    assert customer_total(REGION, "C-2") == (725, 1)
    # The results (failed items included) are in S3 for the operators.
    manifest = json.loads(result["output"])["ResultWriterDetails"]
    assert manifest["Bucket"] == "invoice-input" and manifest["Key"].startswith("results/")

    # Re-running the same file (a retried night) changes nothing.
    assert run(machine, "night-1-rerun")["status"] == "SUCCEEDED"
    assert customer_total(REGION, "C-1") == (1250, 2)
    assert customer_total(REGION, "C-2") == (725, 1)
    assert len(INVOCATIONS) == 10


def test_concurrent_children_still_add_each_invoice_once(moto_batch, monkeypatch):
    """With several children at once, the duplicate row may run while its twin is INPROGRESS: the
    handler raises IdempotencyAlreadyInProgressError and the task's jittered Retry resolves it."""
    # moto runs the Map's children on threads but does not make one DynamoDB request atomic
    # (a conditional put or an ADD is read-modify-write in Python), so concurrent requests can
    # lose updates that real DynamoDB never loses. One lock per request restores DynamoDB's
    # per-request atomicity without serializing the handlers themselves.
    lock = threading.Lock()
    call_action = DynamoHandler.call_action

    def atomic_call_action(self):
        with lock:
            return call_action(self)

    monkeypatch.setattr(DynamoHandler, "call_action", atomic_call_action)
    machine = moto_batch(MapSettings(max_concurrency=5, tolerated_failure_percentage=25,
                                     retry=RetrySettings(interval_seconds=1, max_delay_seconds=1)))
    assert run(machine, "night-parallel")["status"] == "SUCCEEDED"
    outcomes = [outcome for _, outcome in INVOCATIONS]
    # Four valid rows succeed (the duplicate with the stored result), possibly after in-progress
    # retries; the invalid row fails once (InvalidInvoiceError is not retried).
    assert outcomes.count("ok") == 4 and outcomes.count("InvalidInvoiceError") == 1
    assert set(outcomes) <= {"ok", "InvalidInvoiceError", IN_PROGRESS_ERROR}
    assert customer_total(REGION, "C-1") == (1250, 2)
    assert customer_total(REGION, "C-2") == (725, 1)


def test_stack_config_tolerated_count_alone_does_not_imply_zero_percent():
    config = {"aws:region": REGION,
              "blueprint:distributedMap": json.dumps({"enabled": True, "maxConcurrency": 5, "toleratedFailureCount": 3})}
    [machine] = record_program(REPO, stack="dev", config=config).of_type("aws:sfn/stateMachine:StateMachine")
    state = json.loads(machine.inputs["definition"])["States"][MAP_STATE]
    assert state["ToleratedFailureCount"] == 3 and "ToleratedFailurePercentage" not in state


def test_threshold_path_sends_the_failure_to_the_ops_queue_and_fails_the_run(moto_batch):
    """moto does not evaluate ToleratedFailurePercentage (it logs "no effect" and lets the Map
    succeed), so it never raises States.ExceedToleratedFailureThreshold. The states behind the
    Catch are run directly instead, with the input the Catch produces (ResultPath $.failure)."""
    sfn = boto3.client("stepfunctions", region_name=REGION)
    sqs = boto3.client("sqs", region_name=REGION)
    machine = moto_batch(MapSettings(max_concurrency=1))
    document = json.loads(sfn.describe_state_machine(stateMachineArn=machine)["definition"])
    document["StartAt"] = NOTIFY_STATE
    role = sfn.describe_state_machine(stateMachineArn=machine)["roleArn"]
    catch_path = sfn.create_state_machine(name="catch-path", definition=json.dumps(document), roleArn=role)
    failure = {"Error": aws_limits.DISTRIBUTED_MAP_TOLERATED_FAILURE_ERROR, "Cause": "3 of 100 items failed"}
    execution = sfn.start_execution(stateMachineArn=catch_path["stateMachineArn"], name="night-bad",
                                    input=json.dumps({"inputKey": "incoming/invoices.csv", "failure": failure}))
    result = wait_for(sfn, execution["executionArn"])

    assert result["status"] == "FAILED"
    assert result["error"] == RUN_FAILED_ERROR
    queue_url = sqs.get_queue_url(QueueName="ops")["QueueUrl"]
    [message] = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10)["Messages"]
    body = json.loads(message["Body"])
    assert body == {"execution": execution["executionArn"], "inputKey": "incoming/invoices.csv",
                    "error": failure["Error"], "cause": failure["Cause"]}
