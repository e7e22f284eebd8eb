"""Verdicts a reviewer trusts (issue 23), each through the real analyzer over gRPC.

The false alarms the pack raised on programs written by others (AWS's own documented examples, a
batch of one, actions AWS authorizes only on "*", managed policies it did not know), the messages a
team acts on, and the paths where AWS accepts a program and then drops its messages at run time.
Each class has a program AWS or a team writes that must pass and one that must not.
"""

import json

import pulumi
import pulumi_aws as aws
import pytest
from test_policies import ROLE, analyse, dlq, flagged, function, redrive_to, skipped
from test_policies_second_edition import allow, document, names

from integration_blueprint.policies.rules._managed_policies import managed_policy

TLS = "queue-topic-policy-denies-insecure-transport"
BATCH_FAILURES = "lambda-sqs-esm-reports-batch-item-failures"
WRITE_ALL = "iam-no-write-actions-on-all-resources"
WILDCARD = "iam-no-wildcard-actions"
ROLE_CAN = "lambda-esm-role-can-use-source"
ASYNC = "lambda-async-invoke-has-on-failure-destination"
MANAGED = "arn:aws:iam::aws:policy/"


def said(violation) -> str:
    """What the rule found (the SDK puts the rule's description first)."""
    return violation.message.splitlines()[-1]


# ---- IAM action names are case-insensitive -------------------------------------------------------

def tls_only(action):
    """AWS's documented statement that refuses requests sent without TLS."""
    return {"Effect": "Deny", "Principal": "*", "Action": action, "Resource": "*",
            "Condition": {"Bool": {"aws:SecureTransport": "false"}}}


def test_the_sns_documentation_example_denying_SNS_Publish_is_a_tls_only_topic(policy_analyzer):
    def program(action):
        return lambda: aws.sns.Topic("news", policy=document(tls_only(action)))
    assert not flagged(analyse(policy_analyzer, program("SNS:Publish")), TLS)
    assert not flagged(analyse(policy_analyzer, program("sns:publish")), TLS)
    assert flagged(analyse(policy_analyzer, program("sns:Subscribe")), TLS)


def test_an_upper_case_queue_action_denies_plain_transport_too(policy_analyzer):
    program = lambda: aws.sqs.Queue("jobs", policy=document(tls_only("SQS:*")))  # noqa: E731
    assert not flagged(analyse(policy_analyzer, program), TLS)


def test_the_tls_rule_gives_one_answer_in_its_message_and_its_fix(policy_analyzer):
    def program():
        aws.sns.Topic("news")
        aws.sqs.Queue("jobs")
    found = {names([v])[0]: said(v) for v in flagged(analyse(policy_analyzer, program), TLS)}
    fix = policy_analyzer.rules[TLS].remediation
    assert 'Action "sns:Publish"' in found["news"] and 'Action "sns:Publish"' in fix
    assert 'Action "sqs:*"' in found["jobs"] and 'Action "sqs:*"' in fix
    assert "sns:Subscribe" not in found["news"] + fix


def test_write_actions_in_any_case_are_judged_as_the_catalogue_names_them(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: role_policy(allow(["SQS:sendmessage", "CloudWatch:putMetricData"]))),
                    WRITE_ALL)
    assert len(found) == 1 and "Write (sqs:SendMessage)" in said(found[0])
    assert "PutMetricData" not in said(found[0])


# ---- a batch of one ---------------------------------------------------------------------------------

def sqs_consumer(**mapping):
    queue = aws.sqs.Queue("jobs", visibility_timeout_seconds=360, redrive_policy=redrive_to(dlq("jobs-dlq")))
    fn = function("jobs-fn", timeout=60)
    aws.lambda_.EventSourceMapping("jobs-mapping", event_source_arn=queue.arn, function_name=fn.name, **mapping)


@pytest.mark.parametrize(("mapping", "violates"), [
    ({"batch_size": 1}, False),
    ({"batch_size": 1, "maximum_batching_window_in_seconds": 5}, True),
    ({"batch_size": 2}, True),
    ({}, True),  # Lambda's default batch is 10
], ids=["one", "one-with-window", "two", "default"])
def test_a_mapping_whose_batch_is_one_message_needs_no_partial_batch_response(policy_analyzer, mapping, violates):
    found = flagged(analyse(policy_analyzer, lambda: sqs_consumer(**mapping)), BATCH_FAILURES)
    assert bool(found) == violates


def test_an_unknown_batch_size_is_noted_with_the_mapping_and_the_value(policy_analyzer):
    result = analyse(policy_analyzer, lambda: sqs_consumer(batch_size=aws.s3.Bucket("m").arn.apply(lambda _: 1)),
                     unknowns=True)
    [note] = skipped(result, BATCH_FAILURES)
    assert "EventSourceMapping 'jobs-mapping'" in note.message and ".batchSize" in note.message


# ---- write actions on every resource -------------------------------------------------------------

def role_policy(*statements):
    aws.iam.RolePolicy("p", role="r", policy=document(*statements))


VPC_ENI = ["ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DeleteNetworkInterface",
           "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"]
LOGS = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"]


@pytest.mark.parametrize("statement", [
    allow(VPC_ENI),  # what AWSLambdaVPCAccessExecutionRole grants a VPC function on "*"
    allow(LOGS, "arn:aws:logs:*:*:*"),  # what AWSLambdaBasicExecutionRole grants on "*"
    allow(["xray:PutTraceSegments", "xray:PutTelemetryRecords", "ec2:DescribeSubnets"]),  # no resource type
], ids=["vpc-eni", "logs", "no-resource-type"])
def test_what_aws_authorizes_only_on_every_resource_or_grants_there_itself_passes(policy_analyzer, statement):
    assert not flagged(analyse(policy_analyzer, lambda: role_policy(statement)), WRITE_ALL)


def test_write_on_every_resource_quotes_the_resource_the_statement_names(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: role_policy(allow(["sqs:SendMessage", *LOGS], "arn:aws:sqs:*:*:*"))),
                    WRITE_ALL)
    assert len(found) == 1
    assert 'Resource "arn:aws:sqs:*:*:*"' in said(found[0]) and '("*")' not in said(found[0])
    assert "sqs:SendMessage" in said(found[0]) and "logs:" not in said(found[0])


def test_action_lists_keep_their_service(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: role_policy(allow(["logs:TagResource", "sqs:TagQueue"]))), WRITE_ALL)
    assert "Tagging (logs:TagResource, sqs:TagQueue)" in said(found[0])


# ---- AWS managed policies -------------------------------------------------------------------------

def test_the_managed_policy_catalogue_answers_by_name_or_arn():
    basic = managed_policy("AWSLambdaBasicExecutionRole")
    assert basic is not None and basic["arn"] == f"{MANAGED}service-role/AWSLambdaBasicExecutionRole"
    assert basic["path"] == "/service-role/"
    assert managed_policy(basic["arn"]) == basic
    assert {a for s in basic["document"]["Statement"] for a in s["Action"]} == set(LOGS)
    assert managed_policy(f"{MANAGED}AWSLambdaBasicExecutionRole") is None  # IAM refuses the wrong path
    assert managed_policy("arn:aws:iam::123456789012:policy/AWSLambdaBasicExecutionRole") is None
    assert managed_policy("SomethingAWSNeverMade") is None


def mapped_role(*managed_arns):
    queue = aws.sqs.Queue("jobs", visibility_timeout_seconds=360, redrive_policy=redrive_to(dlq("jobs-dlq")))
    role = aws.iam.Role("jobs-role", assume_role_policy=document(
        {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}))
    for i, arn in enumerate(managed_arns):
        aws.iam.RolePolicyAttachment(f"jobs-managed-{i}", role=role.name, policy_arn=arn)
    fn = aws.lambda_.Function("jobs-fn", role=role.arn, runtime="python3.12", handler="h.handler",
                              code=pulumi.AssetArchive({}), timeout=60)
    aws.lambda_.EventSourceMapping("jobs-mapping", event_source_arn=queue.arn, function_name=fn.name,
                                   function_response_types=["ReportBatchItemFailures"])


def test_a_role_with_only_basic_execution_cannot_read_its_queue_and_is_told_so(policy_analyzer):
    result = analyse(policy_analyzer, lambda: mapped_role(f"{MANAGED}service-role/AWSLambdaBasicExecutionRole"))
    [found] = flagged(result, ROLE_CAN)
    assert found.level == "mandatory" and names([found]) == ["jobs-mapping"]
    assert "function 'jobs-fn'" in said(found) and "sqs:ReceiveMessage" in said(found)
    assert not skipped(result, ROLE_CAN)


@pytest.mark.parametrize("policy", ["service-role/AWSLambdaSQSQueueExecutionRole", "AmazonSQSFullAccess",
                                    "AdministratorAccess", "PowerUserAccess"])
def test_a_managed_policy_that_grants_the_reads_lets_the_mapping_be_created(policy_analyzer, policy):
    result = analyse(policy_analyzer, lambda: mapped_role(f"{MANAGED}service-role/AWSLambdaBasicExecutionRole",
                                                          f"{MANAGED}{policy}"))
    assert not flagged(result, ROLE_CAN) and not skipped(result, ROLE_CAN)


def test_a_managed_policy_the_pack_does_not_know_is_noted_naming_the_mapping(policy_analyzer):
    result = analyse(policy_analyzer, lambda: mapped_role("arn:aws:iam::123456789012:policy/team-readers"))
    assert not flagged(result, ROLE_CAN)
    [note] = skipped(result, ROLE_CAN)
    assert "EventSourceMapping 'jobs-mapping'" in note.message and "team-readers" in note.message


def test_a_full_access_policy_is_judged_by_its_document(policy_analyzer):
    def program(policy):
        return lambda: aws.iam.RolePolicyAttachment("a", role="r", policy_arn=f"{MANAGED}{policy}")
    assert flagged(analyse(policy_analyzer, program("AmazonSNSFullAccess")), WILDCARD)
    assert not flagged(analyse(policy_analyzer, program("service-role/AWSLambdaBasicExecutionRole")), WILDCARD)


# ---- messages a team can act on ---------------------------------------------------------------------

def test_an_eventbridge_invoked_function_is_told_which_rule_invokes_it(policy_analyzer):
    def program():
        fn = function("nightly-fn")
        rule_ = aws.cloudwatch.EventRule("nightly", name="nightly", schedule_expression="rate(1 day)")
        aws.lambda_.Permission("nightly-may-invoke", action="lambda:InvokeFunction", function=fn.name,
                               principal="events.amazonaws.com", source_arn=rule_.arn)
        aws.cloudwatch.EventTarget("nightly-target", rule=rule_.name, arn=fn.arn)
    [found] = flagged(analyse(policy_analyzer, program), ASYNC)
    assert "EventTarget 'nightly-target' of rule 'nightly'" in said(found)
    assert "Permission" not in said(found)


def test_no_message_names_a_module_a_team_does_not_have(policy_analyzer):
    def program():
        queue = aws.sqs.Queue("jobs-dlq", message_retention_seconds=1_209_600)
        aws.sqs.Queue("jobs", redrive_policy=queue.arn.apply(
            lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 5})))
    [found] = flagged(analyse(policy_analyzer, program), "dlq-has-depth-alarm")
    assert "integration_blueprint.components.alarms.queue_depth_alarm" in said(found)
    assert " components.alarms" not in said(found) and "(components." not in said(found)


# ---- the paths where messages vanish without an error ------------------------------------------------

SNS_DELIVERY = "sns-subscription-endpoint-allows-topic"
EVENTS_DELIVERY = "eventbridge-target-allows-delivery"
S3_DELIVERY = "s3-notification-target-allows-bucket"


def may_send(service, action, source_arn=None, **extra):
    statement = {"Effect": "Allow", "Principal": {"Service": service}, "Action": action, "Resource": "*", **extra}
    if source_arn is not None:
        statement["Condition"] = {"ArnEquals": {"aws:SourceArn": source_arn}}
    return statement


def queue_policy(queue, *statements_of):
    """A QueuePolicy whose statements are made from the ARNs the program knows later."""
    return aws.sqs.QueuePolicy(f"{queue._name}-policy", queue_url=queue.url, policy=pulumi.Output.all(
        *[arn for _, arn in statements_of]).apply(lambda arns: document(*[
            make(arn) for (make, _), arn in zip(statements_of, arns)])))


def subscribed_queue(policy_for=None):
    topic = aws.sns.Topic("orders")
    queue = aws.sqs.Queue("orders-copy")
    if policy_for is not None:
        queue_policy(queue, (policy_for, topic.arn))
    aws.sns.TopicSubscription("orders-to-copy", topic=topic.arn, protocol="sqs", endpoint=queue.arn)


def test_a_queue_subscribed_to_a_topic_must_let_that_topic_send(policy_analyzer):
    [found] = flagged(analyse(policy_analyzer, lambda: subscribed_queue()), SNS_DELIVERY)
    assert found.level == "mandatory" and names([found]) == ["orders-to-copy"]
    assert "queue 'orders-copy'" in said(found) and "sns.amazonaws.com" in said(found)
    # AWS's documented statement (action names in any case), for that topic
    allowed = lambda topic_arn: may_send("sns.amazonaws.com", "SQS:SendMessage", topic_arn)  # noqa: E731
    assert not flagged(analyse(policy_analyzer, lambda: subscribed_queue(allowed)), SNS_DELIVERY)
    other_topic = lambda _: may_send("sns.amazonaws.com", "sqs:SendMessage", "arn:aws:sns:eu-west-1:1:other")  # noqa: E731
    assert flagged(analyse(policy_analyzer, lambda: subscribed_queue(other_topic)), SNS_DELIVERY)
    result = analyse(policy_analyzer, lambda: subscribed_queue(allowed), unknowns=True)
    assert not flagged(result, SNS_DELIVERY)


def rule_to_queue(policy_for=None):
    queue = aws.sqs.Queue("audit")
    rule_ = aws.cloudwatch.EventRule("audit-all", schedule_expression="rate(1 hour)")
    if policy_for is not None:
        queue_policy(queue, (policy_for, rule_.arn))
    aws.cloudwatch.EventTarget("audit-target", rule=rule_.name, arn=queue.arn)


def schedule_to_topic(actions):
    topic = aws.sns.Topic("reminders")
    role = aws.iam.Role("reminders-role", assume_role_policy=document(
        {"Effect": "Allow", "Principal": {"Service": "scheduler.amazonaws.com"}, "Action": "sts:AssumeRole"}))
    aws.iam.RolePolicy("reminders-send", role=role.id, policy=topic.arn.apply(lambda arn: document(allow(actions, arn))))
    aws.scheduler.Schedule("reminders", schedule_expression="rate(1 day)", flexible_time_window={"mode": "OFF"},
                           target={"arn": topic.arn, "role_arn": role.arn})


def test_an_eventbridge_rule_and_a_schedule_must_be_let_deliver(policy_analyzer):
    [found] = flagged(analyse(policy_analyzer, lambda: rule_to_queue()), EVENTS_DELIVERY)
    assert names([found]) == ["audit-target"] and "events.amazonaws.com" in said(found)
    allowed = lambda rule_arn: may_send("events.amazonaws.com", "sqs:SendMessage", rule_arn)  # noqa: E731
    assert not flagged(analyse(policy_analyzer, lambda: rule_to_queue(allowed)), EVENTS_DELIVERY)

    [found] = flagged(analyse(policy_analyzer, lambda: schedule_to_topic(["sns:ListTopics"])), EVENTS_DELIVERY)
    assert names([found]) == ["reminders"] and "role 'reminders-role'" in said(found) and "sns:Publish" in said(found)
    assert not flagged(analyse(policy_analyzer, lambda: schedule_to_topic(["SNS:Publish"])), EVENTS_DELIVERY)


def bucket_notifying(queue_policy_for=None, permission=True):
    bucket = aws.s3.Bucket("uploads", bucket="uploads-bucket")
    queue = aws.sqs.Queue("uploads-queue")
    if queue_policy_for is not None:
        queue_policy(queue, (queue_policy_for, bucket.arn))
    fn = function("uploads-fn")
    depends = []
    if permission:
        depends.append(aws.lambda_.Permission("uploads-may-invoke", action="lambda:InvokeFunction", function=fn.name,
                                              principal="s3.amazonaws.com", source_arn=bucket.arn))
    aws.s3.BucketNotification("uploads-notify", bucket=bucket.id,
                              queues=[{"queue_arn": queue.arn, "events": ["s3:ObjectCreated:*"]}],
                              lambda_functions=[{"lambda_function_arn": fn.arn, "events": ["s3:ObjectRemoved:*"]}],
                              opts=pulumi.ResourceOptions(depends_on=depends))


def test_an_s3_notification_target_must_let_the_bucket_deliver(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: bucket_notifying(permission=False)), S3_DELIVERY)
    assert len(found) == 2 and {"queue 'uploads-queue'" in said(f) for f in found} == {True, False}
    assert any("function 'uploads-fn'" in said(f) for f in found)
    allowed = lambda bucket_arn: may_send("s3.amazonaws.com", "sqs:SendMessage", bucket_arn)  # noqa: E731
    assert not flagged(analyse(policy_analyzer, lambda: bucket_notifying(allowed)), S3_DELIVERY)


# ---- first previews: a rule decides on the values that decide it -------------------------------------

BOUNDED = "lambda-stream-esm-bounded-retries"


def first_preview(analyzer, program):
    return analyse(analyzer, program, unknowns=True)


def test_unbounded_stream_retries_are_reported_while_the_streams_arn_is_unknown(policy_analyzer):
    def program():
        stream = aws.kinesis.Stream("clicks", shard_count=1)
        fn = function("clicks-fn")
        aws.lambda_.EventSourceMapping("clicks-mapping", event_source_arn=stream.arn, function_name=fn.arn,
                                       starting_position="LATEST", maximum_retry_attempts=-1)
    result = first_preview(policy_analyzer, program)
    assert names(flagged(result, BOUNDED)) == ["clicks-mapping"] and not skipped(result, BOUNDED)


def test_a_role_that_cannot_read_its_queue_is_reported_while_the_queues_arn_is_unknown(policy_analyzer):
    result = first_preview(policy_analyzer, lambda: mapped_role(f"{MANAGED}service-role/AWSLambdaBasicExecutionRole"))
    assert names(flagged(result, ROLE_CAN)) == ["jobs-mapping"] and not skipped(result, ROLE_CAN)


def test_a_schedule_that_starts_a_state_machine_is_no_function_caller_even_unknown(policy_analyzer):
    def program():
        machine = aws.sfn.StateMachine("nightly-machine", role_arn=ROLE, definition="{}")
        aws.scheduler.Schedule("nightly", schedule_expression="rate(1 day)", flexible_time_window={"mode": "OFF"},
                               target={"arn": machine.arn, "role_arn": ROLE,
                                       "dead_letter_config": {"arn": dlq("nightly-dlq").arn}})
    result = first_preview(policy_analyzer, program)
    assert not flagged(result, ASYNC) and not skipped(result, ASYNC)
    assert not skipped(result, EVENTS_DELIVERY)


def test_a_function_subscribed_or_targeted_must_let_sns_or_eventbridge_invoke_it(policy_analyzer):
    def program(permitted):
        fn = function("fan-fn", dead_letter_config={"target_arn": dlq("fan-dlq").arn})
        topic = aws.sns.Topic("fan")
        rule_ = aws.cloudwatch.EventRule("fan-hourly", schedule_expression="rate(1 hour)")
        if permitted:
            aws.lambda_.Permission("sns-may-invoke", action="lambda:InvokeFunction", function=fn.name,
                                   principal="sns.amazonaws.com", source_arn=topic.arn)
            aws.lambda_.Permission("events-may-invoke", action="lambda:InvokeFunction", function=fn.name,
                                   principal="events.amazonaws.com", source_arn=rule_.arn)
        aws.sns.TopicSubscription("fan-to-fn", topic=topic.arn, protocol="lambda", endpoint=fn.arn)
        aws.cloudwatch.EventTarget("fan-target", rule=rule_.name, arn=fn.arn)
    result = analyse(policy_analyzer, lambda: program(False))
    assert names(flagged(result, SNS_DELIVERY)) == ["fan-to-fn"] and names(flagged(result, EVENTS_DELIVERY)) == ["fan-target"]
    assert "aws.lambda_.Permission" in said(flagged(result, SNS_DELIVERY)[0])
    result = analyse(policy_analyzer, lambda: program(True))
    assert not flagged(result, SNS_DELIVERY) and not flagged(result, EVENTS_DELIVERY)


def test_a_log_group_without_retention_is_reported_while_its_name_is_unknown(policy_analyzer):
    def program(days):
        logs = aws.cloudwatch.LogGroup("api-logs", retention_in_days=days)
        function("api-fn", logging_config={"log_format": "JSON", "log_group": logs.name})
    result = first_preview(policy_analyzer, lambda: program(None))
    assert names(flagged(result, "lambda-log-group-has-retention")) == ["api-logs"]
    result = first_preview(policy_analyzer, lambda: program(30))
    assert not flagged(result, "lambda-log-group-has-retention") and not skipped(result, "lambda-log-group-has-retention")
