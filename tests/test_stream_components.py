"""IdempotentStreamConsumer and NonIdempotentStreamConsumer under the Pulumi SDK's mocks: what each
stack deploys, and the configurations the components refuse."""

import json

import pulumi
import pytest

from integration_blueprint.components.idempotent_stream_consumer import IdempotentStreamConsumer
from integration_blueprint.components.non_idempotent_stream_consumer import NonIdempotentStreamConsumer
from integration_blueprint.preview.recording import ProgramError, record_program
from tests.conftest import REGION_CONFIG, REPO, assert_tls_only, stack_file

PATTERNS = {  # component name in __main__.py -> (stack config section, type token)
    "orders": ("blueprint:idempotentStream", "blueprint:index:IdempotentStreamConsumer"),
    "payments": ("blueprint:nonIdempotentStream", "blueprint:index:NonIdempotentStreamConsumer"),
}


class Deployed:
    """The resources one component registered, found by their name suffix."""

    def __init__(self, recorded, component):
        self.resources = [r for r in recorded.resources if r.name == component or r.name.startswith(f"{component}-")]
        self.component = component

    def one(self, type_token, suffix=""):
        matches = [r for r in self.resources if r.type == type_token and r.name == f"{self.component}{suffix}"]
        assert len(matches) == 1, (type_token, suffix, [r.name for r in self.resources])
        return matches[0]

    def all(self, type_token):
        return [r for r in self.resources if r.type == type_token]

    def policy(self):
        return json.loads(self.one("aws:iam/rolePolicy:RolePolicy", "-consumer-policy").inputs["policy"])

    def allowed(self, resource):
        return {action for s in self.policy()["Statement"] if resource in s["Resource"] for action in s["Action"]}


def deploy(component, args, config=REGION_CONFIG):
    recorded = record_program(lambda: component(args), config=config)
    return Deployed(recorded, "orders")


@pytest.fixture(scope="module")
def stacks(recordings):
    return {stack: recordings(REPO, stack) for stack in ("dev", "staging", "prod")}


# --- what each stack deploys ------------------------------------------------------------------------

@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
@pytest.mark.parametrize("component", ["orders", "payments"])
def test_each_stack_deploys_both_stream_patterns_with_its_numbers(stacks, stack, component):
    section, type_token = PATTERNS[component]
    settings = stack_file(stack)[section]
    alarm_actions = stack_file(stack)["blueprint:platform"]["alarmActions"]
    d = Deployed(stacks[stack], component)
    parent = d.one(type_token)
    assert all(r.parent == parent.urn for r in d.resources if r is not parent)

    stream = d.one("aws:kinesis/stream:Stream", "-stream")
    assert stream.inputs["retentionPeriod"] == settings["retentionHours"]
    assert stream.inputs["streamModeDetails"] == {"streamMode": settings["streamMode"]}
    assert stream.inputs.get("shardCount") == settings.get("shardCount")
    assert (stream.inputs["encryptionType"], stream.inputs["kmsKeyId"]) == ("KMS", "alias/aws/kinesis")
    consumers = d.all("aws:kinesis/streamConsumer:StreamConsumer")
    assert len(consumers) == (1 if settings["enhancedFanOut"] else 0)
    source_arn = consumers[0].outputs["arn"] if consumers else stream.outputs["arn"]

    retry = d.one("aws:sqs/queue:Queue", "-retry-dlq")
    unrecoverable = d.one("aws:sqs/queue:Queue", "-unrecoverable-dlq")
    assert retry.inputs["delaySeconds"] == settings["retryDelaySeconds"]
    assert retry.inputs["visibilityTimeoutSeconds"] == settings["retryVisibilityTimeoutSeconds"]
    assert retry.inputs["visibilityTimeoutSeconds"] >= settings["functionTimeoutSeconds"]
    assert json.loads(retry.inputs["redrivePolicy"]) == {"deadLetterTargetArn": unrecoverable.outputs["arn"],
                                                         "maxReceiveCount": settings["maxReceiveCount"]}
    replay_window = settings["retryDelaySeconds"] + settings["maxReceiveCount"] * settings["retryVisibilityTimeoutSeconds"]
    assert replay_window < retry.inputs["messageRetentionSeconds"] < unrecoverable.inputs["messageRetentionSeconds"]
    assert unrecoverable.inputs["messageRetentionSeconds"] == 14 * 86400
    assert not [m for m in d.all("aws:lambda/eventSourceMapping:EventSourceMapping")
                if m.inputs["eventSourceArn"] == unrecoverable.outputs["arn"]]  # nothing consumes it

    function = d.one("aws:lambda/function:Function", "-consumer")
    assert function.inputs["timeout"] == settings["functionTimeoutSeconds"]
    mapping = d.one("aws:lambda/eventSourceMapping:EventSourceMapping", "-stream-mapping")
    assert mapping.inputs["eventSourceArn"] == source_arn
    assert mapping.inputs["functionName"] == function.outputs["arn"]
    assert (mapping.inputs["batchSize"], mapping.inputs["maximumBatchingWindowInSeconds"],
            mapping.inputs["parallelizationFactor"], mapping.inputs["startingPosition"]) == (
        settings["batchSize"], settings["batchingWindowSeconds"], settings["parallelizationFactor"],
        settings["startingPosition"])
    retry_mapping = d.one("aws:lambda/eventSourceMapping:EventSourceMapping", "-retry-mapping")
    assert retry_mapping.inputs["eventSourceArn"] == retry.outputs["arn"]
    assert retry_mapping.inputs["functionName"] == function.outputs["arn"]
    assert retry_mapping.inputs["functionResponseTypes"] == ["ReportBatchItemFailures"]

    alarms = {a.name.removeprefix(component + "-"): a for a in d.all("aws:cloudwatch/metricAlarm:MetricAlarm")}
    assert set(alarms) == {"iterator-age", "unrecoverable-dlq-depth",
                           "retry-dlq-oldest-message", "consumer-errors"}
    assert alarms["iterator-age"].inputs["threshold"] == settings["retentionHours"] * 3600 * 1000 // 2
    assert alarms["unrecoverable-dlq-depth"].inputs["threshold"] == 1
    assert alarms["unrecoverable-dlq-depth"].inputs["dimensions"] == {"QueueName": unrecoverable.outputs["name"]}
    assert alarms["retry-dlq-oldest-message"].inputs["threshold"] == replay_window
    assert all(a.inputs.get("alarmActions", []) == alarm_actions for a in alarms.values())

    assert {"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:SendMessage"} <= d.allowed(retry.outputs["arn"])
    assert {"kinesis:GetRecords", "kinesis:GetShardIterator"} <= d.allowed(stream.outputs["arn"])
    if consumers:
        assert "kinesis:SubscribeToShard" in d.allowed(consumers[0].outputs["arn"])
    assert not [a for s in d.policy()["Statement"] for a in s["Action"] if "*" in a]

    for queue in (retry, unrecoverable):  # both refuse requests without TLS
        policy = d.one("aws:sqs/queuePolicy:QueuePolicy", queue.name.removeprefix(component) + "-tls-only")
        assert policy.inputs["queueUrl"] == queue.outputs["url"]
        assert_tls_only(policy, "sqs", [queue.outputs["arn"]])


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_the_idempotent_mapping_bisects_retries_a_bounded_number_of_times_and_replays_from_the_retry_dlq(stacks, stack):
    settings = stack_file(stack)["blueprint:idempotentStream"]
    d = Deployed(stacks[stack], "orders")
    retry = d.one("aws:sqs/queue:Queue", "-retry-dlq")
    mapping = d.one("aws:lambda/eventSourceMapping:EventSourceMapping", "-stream-mapping")
    assert mapping.inputs["bisectBatchOnFunctionError"] is True
    assert mapping.inputs["maximumRetryAttempts"] == settings["maximumRetryAttempts"] >= 1
    assert mapping.inputs["maximumRecordAgeInSeconds"] == settings["maximumRecordAgeSeconds"]
    assert mapping.inputs["destinationConfig"] == {"onFailure": {"destinationArn": retry.outputs["arn"]}}
    assert "functionResponseTypes" not in mapping.inputs  # a failure raises so Lambda bisects

    table = d.one("aws:dynamodb/table:Table", "-idempotency")
    assert table.inputs["hashKey"] == "id" and table.inputs["ttl"] == {"attributeName": "expiration", "enabled": True}
    function = d.one("aws:lambda/function:Function", "-consumer")
    env = function.inputs["environment"]["variables"]
    unrecoverable = d.one("aws:sqs/queue:Queue", "-unrecoverable-dlq")
    horizon = (settings["maximumRecordAgeSeconds"] + settings["retryDelaySeconds"]
               + settings["maxReceiveCount"] * settings["retryVisibilityTimeoutSeconds"])
    assert horizon <= settings["retentionHours"] * 3600
    assert env["IDEMPOTENCY_TABLE_NAME"] == table.outputs["name"]
    assert int(env["IDEMPOTENCY_EXPIRY_SECONDS"]) >= horizon
    assert env["IDEMPOTENCY_KEY_JMESPATH"] == settings["idempotencyKeyJmespath"]
    assert env["UNRECOVERABLE_DLQ_URL"] == unrecoverable.outputs["url"]
    assert env["SOURCE_STREAM_ARN"] == d.one("aws:kinesis/stream:Stream", "-stream").outputs["arn"]  # the only stream it re-reads
    assert function.inputs["handler"] == "integration_blueprint.handlers.reference.ledger_idempotent_consumer.lambda_handler"
    assert {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"} <= d.allowed(
        table.outputs["arn"])
    assert d.allowed(unrecoverable.outputs["arn"]) == {"sqs:SendMessage"}  # parks expired ranges


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_the_non_idempotent_mapping_never_retries_and_parks_crashed_batches_in_the_unrecoverable_dlq(stacks, stack):
    d = Deployed(stacks[stack], "payments")
    retry = d.one("aws:sqs/queue:Queue", "-retry-dlq")
    unrecoverable = d.one("aws:sqs/queue:Queue", "-unrecoverable-dlq")
    mapping = d.one("aws:lambda/eventSourceMapping:EventSourceMapping", "-stream-mapping")
    assert mapping.inputs["bisectBatchOnFunctionError"] is False
    assert mapping.inputs["maximumRetryAttempts"] == 0
    assert mapping.inputs["functionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping.inputs["destinationConfig"] == {"onFailure": {"destinationArn": unrecoverable.outputs["arn"]}}
    assert d.all("aws:dynamodb/table:Table") == [d.one("aws:dynamodb/table:Table", "-ledger")]  # no idempotency table
    function = d.one("aws:lambda/function:Function", "-consumer")
    assert function.inputs["environment"]["variables"]["RETRY_DLQ_URL"] == retry.outputs["url"]
    stream_arn = d.one("aws:kinesis/stream:Stream", "-stream").outputs["arn"]
    assert function.inputs["environment"]["variables"]["SOURCE_STREAM_ARN"] == stream_arn
    assert function.inputs["handler"] == "integration_blueprint.handlers.reference.ledger_app_dlq_consumer.lambda_handler"
    assert d.allowed(unrecoverable.outputs["arn"]) == {"sqs:SendMessage"}


# --- building blocks ----------------------------------------------------------------------------------

def test_an_existing_stream_is_consumed_without_creating_one_and_the_role_reads_exactly_it():
    arn = "arn:aws:kinesis:eu-west-1:111122223333:stream/clicks"
    d = deploy(lambda a: IdempotentStreamConsumer("orders", a), {"stream_arn": arn, "retention_hours": 48})
    assert d.all("aws:kinesis/stream:Stream") == []
    assert d.one("aws:lambda/eventSourceMapping:EventSourceMapping", "-stream-mapping").inputs["eventSourceArn"] == arn
    assert "kinesis:GetRecords" in d.allowed(arn)


def test_a_team_handler_gets_its_own_code_and_permissions_and_no_reference_ledger():
    import pulumi

    table = "arn:aws:dynamodb:eu-west-1:111122223333:table/orders"
    d = deploy(lambda a: NonIdempotentStreamConsumer("orders", a), {
        "handler": "orders.consumer.handler", "code": pulumi.AssetArchive({}),
        "environment": {"ORDERS_TABLE": "orders"},
        "policy_statements": [{"actions": ["dynamodb:PutItem"], "resources": [table]}]})
    function = d.one("aws:lambda/function:Function", "-consumer")
    assert function.inputs["handler"] == "orders.consumer.handler"
    assert function.inputs["environment"]["variables"]["ORDERS_TABLE"] == "orders"
    assert d.allowed(table) == {"dynamodb:PutItem"}
    assert d.all("aws:dynamodb/table:Table") == []


def test_permissions_given_as_an_output_are_refused_naming_the_argument():
    import pulumi

    def component(args):
        args["policy_statements"] = pulumi.Output.from_input([{"actions": ["dynamodb:PutItem"], "resources": ["x"]}])
        return NonIdempotentStreamConsumer("orders", args)

    with pytest.raises(ProgramError, match="NonIdempotentStreamConsumer: policy_statements must be a plain value"):
        deploy(component, {"handler": "orders.consumer.handler", "code": pulumi.AssetArchive({})})


def test_a_customer_managed_key_is_used_and_the_role_may_decrypt_with_it():
    key = "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    d = deploy(lambda a: IdempotentStreamConsumer("orders", a), {"kms_key_id": key})
    assert d.one("aws:kinesis/stream:Stream", "-stream").inputs["kmsKeyId"] == key
    assert d.allowed(key) == {"kms:Decrypt"}


# --- refusals ----------------------------------------------------------------------------------------

REFUSALS = [
    # (args, words the message must contain)
    ({"retention_hours": 24, "maximum_record_age_seconds": 82800, "retry_delay_seconds": 900,
      "retry_visibility_timeout_seconds": 600, "max_receive_count": 5},
     ["replay window", "82800", "900", "5 x", "600", "86700", "retention_hours 24", "86400", "at least 25"]),
    ({"maximum_retry_attempts": 0}, ["maximum_retry_attempts=0", "a whole number from 1 to 10000"]),
    ({"maximum_retry_attempts": -1}, ["maximum_retry_attempts=-1", "a whole number from 1 to 10000"]),
    ({"maximum_record_age_seconds": -1}, ["maximum_record_age_seconds=-1", "a whole number from 60 to 604800"]),
    ({"function_timeout_seconds": 120, "retry_visibility_timeout_seconds": 60},
     ["retry_visibility_timeout_seconds=60", "a whole number from 120 to 43200", "at least the function timeout"]),
    ({"max_receive_count": 3}, ["max_receive_count=3", "a whole number from 4 to 1000"]),
    ({"idempotency_ttl_seconds": 600}, ["idempotency_ttl_seconds=600", "at least 5460"]),
    ({"retry_retention_seconds": 1800}, ["replay window", "retry_retention_seconds=1800", "1860"]),
    ({"retry_retention_seconds": 1209600}, ["retry_retention_seconds=1209600", "a whole number from 60 to 1209599"]),
    ({"stream_arn": "arn:aws:kinesis:eu-west-1:111122223333:stream/x", "stream_mode": "ON_DEMAND"},
     ["stream_mode", "stream_arn"]),
    ({"stream_mode": "PROVISIONED"}, ["PROVISIONED needs shard_count"]),
    ({"shard_count": 2}, ["shard_count is only for stream_mode=PROVISIONED"]),
    ({"kms_key_id": "alias/my-key"}, ["kms_key_id='alias/my-key'", "alias/aws/kinesis", "key ARN"]),
    ({"batch_size": 10_001}, ["batch_size=10001", "a whole number from 1 to 10000"]),
    ({"parallelization_factor": 11}, ["parallelization_factor=11", "a whole number from 1 to 10"]),
    ({"retention_hours": 8761}, ["retention_hours=8761", "a whole number from 24 to 8760"]),
    ({"starting_position": "AT_TIMESTAMP"}, ["starting_position='AT_TIMESTAMP'", "LATEST or TRIM_HORIZON"]),
    ({"code": pulumi.FileArchive("."), "environment": {}}, ["code is given without handler"]),
    ({"code": "./build", "handler": "app.handler"}, ["code='./build' is not allowed", "pulumi.Archive"]),
    ({"batch_size": "10"}, ["batch_size='10' is not allowed: '10' is a string; a whole number"]),
    ({"batchsize": 10}, ["unknown argument 'batchsize' (did you mean 'batch_size'?)"]),
]


@pytest.mark.parametrize("args,words", REFUSALS, ids=[next(iter(a)) + f"-{i}" for i, (a, _) in enumerate(REFUSALS)])
def test_the_idempotent_consumer_refuses_unsafe_settings_naming_the_numbers(args, words):
    with pytest.raises(ProgramError) as refused:
        deploy(lambda a: IdempotentStreamConsumer("orders", a), args)
    message = str(refused.value)
    assert "IdempotentStreamConsumer" in message
    for word in words:
        assert word in message


def test_the_non_idempotent_consumer_refuses_a_retry_dlq_that_expires_messages_before_their_last_replay():
    with pytest.raises(ProgramError, match=r"NonIdempotentStreamConsumer: the replay window .* 4 x .* 900 .*"
                                           r"retry_retention_seconds=3000"):
        deploy(lambda a: NonIdempotentStreamConsumer("orders", a),
               {"function_timeout_seconds": 60, "retry_delay_seconds": 0, "max_receive_count": 4,
                "retry_visibility_timeout_seconds": 900, "retry_retention_seconds": 3000})


def test_stack_config_refuses_an_unknown_key_in_a_stream_section():
    config = {**REGION_CONFIG, "blueprint:idempotentStream": json.dumps({"enabled": True, "batchsize": 10})}
    with pytest.raises(ProgramError, match="blueprint:idempotentStream has unknown keys batchsize"):
        record_program(REPO, stack="dev", config=config)


def test_stack_config_refuses_a_retry_visibility_below_the_function_timeout_naming_the_key():
    config = {**REGION_CONFIG, "blueprint:nonIdempotentStream": json.dumps(
        {"enabled": True, "functionTimeoutSeconds": 120, "retryVisibilityTimeoutSeconds": 60})}
    with pytest.raises(ProgramError, match=r"blueprint:nonIdempotentStream.retryVisibilityTimeoutSeconds = 60"):
        record_program(REPO, stack="dev", config=config)
