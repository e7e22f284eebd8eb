"""Values that looked set but set nothing, or that AWS would refuse, are violations (through the
real analyzer): blank ARNs, an empty retry policy, impossible Distributed Map thresholds, queue
names with spaces, PassRole on every role of every account, a blank KMS key id, an alarm that is
always in ALARM."""

import json

import pulumi_aws as aws
import pytest
from test_policies import analyse, flagged, function
from test_policies_second_edition import allow, role_policy

from integration_blueprint.components.alarms import queue_depth_alarm


def test_a_blank_on_failure_destination_is_no_destination(policy_analyzer):
    def program():
        stream = aws.kinesis.Stream("events", shard_count=1, encryption_type="KMS", kms_key_id="alias/aws/kinesis")
        aws.lambda_.EventSourceMapping("events-mapping", event_source_arn=stream.arn,
                                       function_name=function("events-fn", timeout=60).arn, starting_position="LATEST",
                                       maximum_retry_attempts=3, destination_config={"on_failure": {"destination_arn": " "}})

    assert len(flagged(analyse(policy_analyzer, program), "lambda-stream-esm-has-on-failure-destination")) == 1


def scheduled_target(**target):
    aws.scheduler.Schedule("nightly", schedule_expression="cron(0 2 * * ? *)", flexible_time_window={"mode": "OFF"},
                           target={"arn": "arn:aws:lambda:us-east-1:123456789012:function:f",
                                   "role_arn": "arn:aws:iam::123456789012:role/r", **target})


@pytest.mark.parametrize("target", [
    {"retry_policy": {}, "dead_letter_config": {"arn": "arn:aws:sqs:us-east-1:123456789012:dlq"}},
    {"retry_policy": {"maximum_retry_attempts": 3}, "dead_letter_config": {"arn": ""}},
])
def test_an_empty_retry_policy_or_a_blank_dlq_arn_is_not_set(policy_analyzer, target):
    found = flagged(analyse(policy_analyzer, lambda: scheduled_target(**target)), "scheduler-target-has-retry-and-dlq")
    assert len(found) == 1


def distributed(**map_fields):
    state = {"Type": "Map", "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                                              "StartAt": "T", "States": {"T": {"Type": "Pass", "End": True}}},
             "MaxConcurrency": 10, "ToleratedFailurePercentage": 5,
             "Catch": [{"ErrorEquals": ["States.ExceedToleratedFailureThreshold"], "Next": "Alert"}], "Next": "Done",
             **map_fields}
    definition = {"StartAt": "M", "States": {"M": state, "Alert": {"Type": "Pass", "End": True},
                                             "Done": {"Type": "Succeed"}}}
    return lambda: aws.sfn.StateMachine("batch", role_arn="arn:aws:iam::123456789012:role/r",
                                        definition=json.dumps(definition))


@pytest.mark.parametrize("fields, reason", [
    ({"ToleratedFailurePercentage": 500}, "ToleratedFailurePercentage is 500; AWS accepts 0-100"),
    ({"ToleratedFailurePercentage": "lots"}, "ToleratedFailurePercentage must be a number"),
    ({"ToleratedFailureCount": -1}, "ToleratedFailureCount is -1"),
    ({"MaxConcurrency": 0.5}, "MaxConcurrency must be a whole number"),
])
def test_distributed_map_thresholds_aws_would_refuse_violate(policy_analyzer, fields, reason):
    found = flagged(analyse(policy_analyzer, distributed(**fields)), "sfn-distributed-map-bounded")
    assert len(found) == 1 and reason in found[0].message


def test_a_distributed_map_with_sound_thresholds_passes(policy_analyzer):
    assert not flagged(analyse(policy_analyzer, distributed()), "sfn-distributed-map-bounded")


@pytest.mark.parametrize("name", ["my queue", "jobs!", "caf\u00e9"])
def test_a_queue_name_sqs_refuses_violates(policy_analyzer, name):
    found = flagged(analyse(policy_analyzer, lambda: aws.sqs.Queue("q", name=name)), "aws-resource-names-within-limits")
    assert len(found) == 1 and "characters SQS refuses" in found[0].message


def test_pass_role_on_every_role_of_every_account_violates(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: role_policy(allow("iam:PassRole", "arn:aws:iam::*:role/*"))),
                    "iam-no-write-actions-on-all-resources")
    assert len(found) == 1 and "iam:PassRole" in found[0].message
    assert not flagged(analyse(policy_analyzer, lambda: role_policy(allow("s3:PutObject", "arn:aws:s3:::my-bucket/*"))),
                       "iam-no-write-actions-on-all-resources")


def test_a_blank_kms_key_id_is_no_encryption(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: aws.sqs.Queue("q", kms_master_key_id=" ")),
                    "sqs-queue-encrypted-at-rest")
    assert len(found) == 1 and "blank" in found[0].message


@pytest.mark.parametrize("threshold, operator", [(-1, "GreaterThanOrEqualToThreshold"), (0, "GreaterThanOrEqualToThreshold"),
                                                 (-1, "GreaterThanThreshold")])
def test_a_dlq_alarm_that_is_always_in_alarm_does_not_count(policy_analyzer, threshold, operator):
    def program():
        source_dlq = aws.sqs.Queue("jobs-dlq", message_retention_seconds=1_209_600)
        aws.sqs.Queue("jobs", redrive_policy=source_dlq.arn.apply(
            lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 5})))
        aws.cloudwatch.MetricAlarm("jobs-dlq-depth", namespace="AWS/SQS", metric_name="ApproximateNumberOfMessagesVisible",
                                   dimensions={"QueueName": source_dlq.name}, statistic="Maximum", period=60,
                                   evaluation_periods=1, threshold=threshold, comparison_operator=operator)

    assert len(flagged(analyse(policy_analyzer, program), "dlq-has-depth-alarm")) == 1


def test_a_dlq_alarm_at_the_first_message_counts(policy_analyzer):
    def program():
        source_dlq = aws.sqs.Queue("jobs-dlq", message_retention_seconds=1_209_600)
        aws.sqs.Queue("jobs", redrive_policy=source_dlq.arn.apply(
            lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 5})))
        queue_depth_alarm("jobs-dlq-depth", queue=source_dlq, parent=None, description="test")

    assert not flagged(analyse(policy_analyzer, program), "dlq-has-depth-alarm")


def test_a_blank_async_destination_is_no_destination(policy_analyzer):
    def program():
        fn = function("dispatcher", timeout=30)
        aws.lambda_.FunctionEventInvokeConfig("dispatcher-async", function_name=fn.name,
                                              destination_config={"on_failure": {"destination": ""}})
        aws.scheduler.Schedule("nightly", schedule_expression="cron(0 2 * * ? *)", flexible_time_window={"mode": "OFF"},
                               target={"arn": fn.arn, "role_arn": "arn:aws:iam::123456789012:role/r"})

    assert len(flagged(analyse(policy_analyzer, program), "lambda-async-invoke-has-on-failure-destination")) == 1
