"""FifoBillingQueue under the Pulumi SDK's mocks: the infrastructure each stack deploys, and the
configurations the component refuses."""

import dataclasses
import json

import pytest

from integration_blueprint.components.fifo_billing_queue import FifoBillingQueue
from integration_blueprint.preview.recording import ProgramError, record_program
from tests.conftest import MOCK_ACCOUNT, REGION_CONFIG, REPO, assert_tls_only, only, stack_file, trust_policy


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_each_stack_deploys_the_fifo_billing_pattern_as_configured(stack, recordings):
    settings = stack_file(stack)["blueprint:fifoBilling"]
    platform = stack_file(stack)["blueprint:platform"]
    recorded = recordings(REPO, stack)
    recorded = dataclasses.replace(recorded, resources=[r for r in recorded.resources
                                                        if r.name == "billing" or r.name.startswith("billing-")])
    component = only(recorded, "blueprint:index:FifoBillingQueue", "billing")

    # Every child hangs under the component.
    children = [r for r in recorded.resources if r.name.startswith("billing-")]
    assert children and all(r.parent == component.urn for r in children)

    queue = only(recorded, "aws:sqs/queue:Queue", "-charges")
    dlq = only(recorded, "aws:sqs/queue:Queue", "billing-dlq")
    assert queue.inputs["fifoQueue"] is True and queue.outputs["name"].endswith(".fifo")
    assert queue.inputs["contentBasedDeduplication"] is False
    assert queue.inputs["deduplicationScope"] == "messageGroup"
    assert queue.inputs["fifoThroughputLimit"] == "perMessageGroupId"
    assert queue.inputs["sqsManagedSseEnabled"] is True
    assert queue.inputs["visibilityTimeoutSeconds"] == 6 * settings["consumerTimeoutSeconds"]
    assert queue.inputs["messageRetentionSeconds"] == settings["messageRetentionSeconds"]
    assert json.loads(queue.inputs["redrivePolicy"]) == {"deadLetterTargetArn": dlq.outputs["arn"],
                                                         "maxReceiveCount": settings["maxReceiveCount"]}
    assert dlq.inputs["fifoQueue"] is True and dlq.inputs["messageRetentionSeconds"] == 14 * 86400

    depth = only(recorded, "aws:cloudwatch/metricAlarm:MetricAlarm", "billing-dlq-depth")
    assert depth.inputs["dimensions"] == {"QueueName": dlq.outputs["name"]}
    assert depth.inputs["metricName"] == "ApproximateNumberOfMessagesVisible"
    assert depth.inputs["threshold"] == 1 and depth.inputs["comparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert depth.inputs.get("alarmActions", []) == platform["alarmActions"]
    oldest = only(recorded, "aws:cloudwatch/metricAlarm:MetricAlarm", "-charges-oldest-message")
    assert oldest.inputs["threshold"] == settings["oldestMessageAlarmSeconds"]
    only(recorded, "aws:cloudwatch/metricAlarm:MetricAlarm", "-consumer-errors")

    consumer = only(recorded, "aws:lambda/function:Function", "-consumer")
    mapping = only(recorded, "aws:lambda/eventSourceMapping:EventSourceMapping", "-consumer-mapping")
    assert mapping.inputs["eventSourceArn"] == queue.outputs["arn"]
    assert mapping.inputs["functionName"] == consumer.outputs["arn"]
    assert mapping.inputs["batchSize"] == settings["batchSize"] <= 10
    assert mapping.inputs["functionResponseTypes"] == ["ReportBatchItemFailures"]
    assert "maximumBatchingWindowInSeconds" not in mapping.inputs
    assert mapping.inputs.get("scalingConfig", {}).get("maximumConcurrency") == settings.get("maximumConcurrency")
    assert consumer.inputs["timeout"] == settings["consumerTimeoutSeconds"]
    assert consumer.inputs.get("reservedConcurrentExecutions") == settings.get("reservedConcurrency")
    assert consumer.inputs["handler"] == "integration_blueprint.handlers.reference.billing_consumer.lambda_handler"
    assert consumer.inputs["layers"] == [
        f"arn:aws:lambda:eu-west-1:017000801446:layer:AWSLambdaPowertoolsPythonV3-python312-x86_64:"
        f"{platform['powertoolsLayerVersion']}"]
    log_group = only(recorded, "aws:cloudwatch/logGroup:LogGroup", "-consumer-logs")
    assert consumer.inputs["loggingConfig"]["logGroup"] == log_group.outputs["name"]
    assert log_group.inputs["retentionInDays"] == platform["logRetentionDays"]

    ledger = only(recorded, "aws:dynamodb/table:Table", "-ledger")
    assert (ledger.inputs["hashKey"], ledger.inputs["rangeKey"]) == ("pk", "sk")
    assert ledger.inputs["ttl"] == {"attributeName": "ttl", "enabled": True}
    assert ledger.inputs["billingMode"] == "PAY_PER_REQUEST"
    assert ledger.inputs["serverSideEncryption"] == {"enabled": True}
    assert ledger.inputs["pointInTimeRecovery"] == {"enabled": platform["protectData"]}
    assert ledger.inputs["deletionProtectionEnabled"] is platform["protectData"]
    assert consumer.inputs["environment"]["variables"]["LEDGER_TTL_DAYS"] == str(settings["ledgerTtlDays"])

    # Least privilege: named actions only, on this component's own resources.
    accounts = only(recorded, "aws:dynamodb/table:Table", "-accounts")
    policy = json.loads(only(recorded, "aws:iam/rolePolicy:RolePolicy", "-consumer-policy").inputs["policy"])
    grants = {tuple(s["Action"]): s["Resource"] for s in policy["Statement"]}
    assert grants == {
        ("logs:CreateLogStream", "logs:PutLogEvents"): [f"{log_group.outputs['arn']}:*"],
        ("sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"):
            [queue.outputs["arn"]],
        ("dynamodb:PutItem",): [ledger.outputs["arn"]],
        ("dynamodb:GetItem",): [accounts.outputs["arn"]],
    }

    schedule = only(recorded, "aws:scheduler/schedule:Schedule", "-schedule")
    schedule_dlq = only(recorded, "aws:sqs/queue:Queue", "-schedule-dlq")
    dispatcher = only(recorded, "aws:lambda/function:Function", "-dispatcher")
    assert schedule.inputs["scheduleExpression"] == settings["schedule"]
    assert schedule.inputs["scheduleExpressionTimezone"] == settings["scheduleTimezone"]
    assert schedule.inputs["state"] == ("ENABLED" if settings["scheduleEnabled"] else "DISABLED")
    target = schedule.inputs["target"]
    assert target["arn"] == dispatcher.outputs["arn"]
    assert target["retryPolicy"] == {"maximumRetryAttempts": settings["schedulerRetryAttempts"],
                                     "maximumEventAgeInSeconds": settings["schedulerMaxEventAgeSeconds"]}
    assert target["deadLetterConfig"] == {"arn": schedule_dlq.outputs["arn"]}
    assert "fifoQueue" not in schedule_dlq.inputs  # Scheduler refuses FIFO dead-letter queues
    scheduler_policy = json.loads(only(recorded, "aws:iam/rolePolicy:RolePolicy", "-schedule-policy").inputs["policy"])
    assert [(s["Action"], s["Resource"]) for s in scheduler_policy["Statement"]] == [
        (["lambda:InvokeFunction"], [dispatcher.outputs["arn"]]), (["sqs:SendMessage"], [schedule_dlq.outputs["arn"]])]
    assert only(recorded, "aws:cloudwatch/metricAlarm:MetricAlarm", "-schedule-dlq-depth").inputs["threshold"] == 1


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_queue_refuses_requests_without_tls(stack, recordings):
    recorded = recordings(REPO, stack)
    queues = [q for q in recorded.of_type("aws:sqs/queue:Queue") if q.name.startswith("billing-")]
    assert {q.name for q in queues} == {"billing-charges", "billing-dlq", "billing-schedule-dlq", "billing-dispatcher-failed"}
    for queue in queues:
        policy = only(recorded, "aws:sqs/queuePolicy:QueuePolicy", f"{queue.name}-tls-only")
        assert policy.inputs["queueUrl"] == queue.outputs["url"]
        assert_tls_only(policy, "sqs", [queue.outputs["arn"]])


def test_scheduler_may_assume_its_role_only_for_this_accounts_schedules_and_nothing_else_widens():
    recorded = record_program(lambda: FifoBillingQueue("billing", {}), config=REGION_CONFIG)
    scheduler = trust_policy(only(recorded, "aws:iam/role:Role", "-schedule-role"))
    assert scheduler["Principal"] == {"Service": "scheduler.amazonaws.com"}
    assert scheduler["Action"] == "sts:AssumeRole"
    assert scheduler["Condition"] == {
        "StringEquals": {"aws:SourceAccount": MOCK_ACCOUNT},
        "ArnLike": {"aws:SourceArn": f"arn:aws:scheduler:eu-west-1:{MOCK_ACCOUNT}:schedule-group/default"},
    }
    for function_role in ("-consumer-role", "-dispatcher-role"):
        assert trust_policy(only(recorded, "aws:iam/role:Role", function_role)) == {
            "Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}


def test_a_team_can_bring_its_own_accounts_store_and_consumer_code():
    import pulumi

    code = pulumi.AssetArchive({"app.py": pulumi.StringAsset("def handle(e, c): return {}")})
    arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/hr-accounts"
    recorded = record_program(lambda: FifoBillingQueue("payroll", {
        "accounts_table_name": "hr-accounts", "accounts_table_arn": arn, "consumer_code": code,
        "consumer_handler": "app.handle", "batch_size": 1, "reserved_concurrency": 1}), config=REGION_CONFIG)
    assert not [r for r in recorded.of_type("aws:dynamodb/table:Table") if r.name.endswith("-accounts")]
    consumer = only(recorded, "aws:lambda/function:Function", "-consumer")
    assert consumer.inputs["handler"] == "app.handle"
    assert consumer.inputs["environment"]["variables"]["ACCOUNTS_TABLE_NAME"] == "hr-accounts"
    assert only(recorded, "aws:lambda/eventSourceMapping:EventSourceMapping", "-mapping").inputs["batchSize"] == 1
    dispatcher_policy = json.loads(only(recorded, "aws:iam/rolePolicy:RolePolicy", "-dispatcher-policy").inputs["policy"])
    assert {"Effect": "Allow", "Action": ["dynamodb:Scan"], "Resource": [arn]} in dispatcher_policy["Statement"]


@pytest.mark.parametrize("args, message", [
    ({"batch_size": 11}, r"batch_size=11 is not allowed: a whole number from 1 to 10 \(.*Lambda reads at most 10 per batch"),
    ({"max_receive_count": 3}, r"max_receive_count=3 is not allowed: a whole number from 4 to 1000"),
    ({"consumer_timeout_seconds": 60, "visibility_timeout_seconds": 59},
     r"visibility_timeout_seconds=59 is not allowed: a whole number from 60 to 43200 \(.*at least the consumer timeout"),
    ({"message_retention_seconds": 14 * 86400}, r"message_retention_seconds=1209600 is not allowed"),
    ({"accounts_table_name": "t"}, r"give both accounts_table_name and accounts_table_arn"),
])
def test_component_refuses_unsafe_settings_with_a_message_naming_the_fix(args, message):
    with pytest.raises(ProgramError, match=message):
        record_program(lambda: FifoBillingQueue("billing", args), config=REGION_CONFIG)


def stack_with(section_overrides):
    config = {"aws:region": "eu-west-1", "blueprint:fifoBilling": json.dumps({"enabled": True, **section_overrides})}
    return config


@pytest.mark.parametrize("overrides, message", [
    ({"batchSize": 11}, r"blueprint:fifoBilling.batchSize = 11 is not allowed: a whole number from 1 to 10"),
    ({"batchSize": "ten"}, r"blueprint:fifoBilling.batchSize = 'ten' is not allowed"),
    ({"maxReceiveCount": 3}, r"blueprint:fifoBilling.maxReceiveCount = 3 is not allowed: a whole number from 4"),
    ({"consumerTimeoutSeconds": 60, "visibilityTimeoutSeconds": 30},
     r"visibilityTimeoutSeconds = 30 is not allowed: a whole number from 60"),
    ({"batchSise": 5}, r"blueprint:fifoBilling has unknown keys batchSise \(did you mean batchSize\?\); allowed keys "
                       r"are .*batchSize"),
    ({"schedule": "every month"}, r"blueprint:fifoBilling.schedule = 'every month' is not allowed: a Scheduler expression"),
])
def test_bad_stack_config_fails_with_the_key_and_what_is_allowed(overrides, message):
    with pytest.raises(ProgramError, match=message):
        record_program(REPO, stack="dev", config=stack_with(overrides))


def test_log_retention_must_be_one_cloudwatch_accepts():
    config = {**stack_with({}), "blueprint:platform": json.dumps({"logRetentionDays": 10})}
    with pytest.raises(ProgramError,
                       match=r"logRetentionDays = 10 is not allowed: a retention CloudWatch Logs accepts: one of 1, 3, 5"):
        record_program(REPO, stack="dev", config=config)


def test_the_scheduled_dispatcher_retries_boundedly_then_parks_the_run_in_a_paging_queue(recordings):
    """Scheduler invokes the dispatcher asynchronously: Lambda's own retries and the on-failure
    destination decide what happens to a run that keeps failing, not the schedule's retry policy."""
    recorded = recordings(REPO, "dev")
    dispatcher = only(recorded, "aws:lambda/function:Function", "billing-dispatcher")
    config = only(recorded, "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig", "billing-dispatcher-async")
    failed = only(recorded, "aws:sqs/queue:Queue", "billing-dispatcher-failed")
    assert config.inputs["functionName"] == dispatcher.outputs["name"]
    assert 0 <= config.inputs["maximumRetryAttempts"] <= 2
    assert 60 <= config.inputs["maximumEventAgeInSeconds"] <= 21600
    assert config.inputs["destinationConfig"] == {"onFailure": {"destination": failed.outputs["arn"]}}
    assert "fifoQueue" not in failed.inputs  # Lambda's async destinations are standard queues
    depth = only(recorded, "aws:cloudwatch/metricAlarm:MetricAlarm", "billing-dispatcher-failed-depth")
    assert depth.inputs["dimensions"] == {"QueueName": failed.outputs["name"]} and depth.inputs["threshold"] == 1
    role = only(recorded, "aws:iam/role:Role", "billing-dispatcher-role")
    send = only(recorded, "aws:iam/rolePolicy:RolePolicy", "billing-dispatcher-on-failure-policy")
    assert send.inputs["role"] == role.id
    assert json.loads(send.inputs["policy"])["Statement"] == [
        {"Effect": "Allow", "Action": ["sqs:SendMessage"], "Resource": [failed.outputs["arn"]]}]


@pytest.mark.parametrize("args, message", [
    ({"dispatcher_retry_attempts": 3}, r"dispatcher_retry_attempts=3 is not allowed: a whole number from 0 to 2"),
    ({"dispatcher_max_event_age_seconds": 30},
     r"dispatcher_max_event_age_seconds=30 is not allowed: a whole number from 60 to 21600"),
])
def test_async_retries_and_event_age_stay_within_what_lambda_accepts(args, message):
    with pytest.raises(ProgramError, match=message):
        record_program(lambda: FifoBillingQueue("billing", args), config=REGION_CONFIG)
