"""The policy pack's second edition (issue 12), each rule through the real analyzer over gRPC.

Every new rule has a violating, a passing and an unknown-value program (an unknown is skipped with
the SDK's advisory "can't run policy" note, never a violation); then the accuracy fixes (aliases,
facts from names, metricQueries alarms, get_policy_document, stream bounds that bound nothing, FIFO
DLQ retention), malformed values that must become violations, silent passes that must not pass,
the pack's own config checks, and the metadata every rule publishes.
"""

import json
import tomllib

import pulumi
import pulumi_aws as aws
import pytest
from test_policies import ROLE, analyse, dlq, flagged, function, later, redrive_to, skipped

from integration_blueprint.core import aws_limits, conventions
from integration_blueprint.policies.rules import POLICIES
from integration_blueprint.policies.rules._policy import CATALOGUE, rule
from integration_blueprint.preview.analyzer import AnalyzerError, analyzer_pb2
from integration_blueprint.preview.recording import record_program

EXTERNAL_QUEUE = "arn:aws:sqs:us-east-1:123456789012:elsewhere"


def names(violations):
    return [v.urn.rsplit("::", 1)[-1] for v in violations]


def document(*statements):
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def allow(actions, resources="*", **extra):
    return {"Effect": "Allow", "Action": actions, "Resource": resources, **extra}


def check_rule(analyzer, policy, violating, passing, unknown, *, count=1):
    found = flagged(analyse(analyzer, violating), policy)
    assert len(found) == count, [v.message for v in found]
    assert not flagged(analyse(analyzer, passing), policy)
    result = analyse(analyzer, lambda: unknown(aws.s3.Bucket("marker")), unknowns=True)
    assert not flagged(result, policy) and skipped(result, policy)
    return found


# ---- lambda-async-invoke-has-on-failure-destination ------------------------------------------------

ASYNC = "lambda-async-invoke-has-on-failure-destination"


def scheduled(on_failure=None, dead_letter=None):
    fn = function("dispatcher", dead_letter_config=dead_letter)
    aws.scheduler.Schedule("monthly", schedule_expression="cron(0 3 1 * ? *)", flexible_time_window={"mode": "OFF"},
                           target={"arn": fn.arn, "role_arn": ROLE,
                                   "retry_policy": {"maximum_retry_attempts": 3},
                                   "dead_letter_config": {"arn": dlq("monthly-dlq").arn}})
    if on_failure is not None:
        aws.lambda_.FunctionEventInvokeConfig("dispatcher-async", function_name=fn.name,
                                              destination_config={"on_failure": {"destination": on_failure}})
    return fn


def test_a_scheduled_function_without_on_failure_destination_violates_and_the_rest_do_not(policy_analyzer):
    def unknown(marker):
        fn = function("dispatcher")
        aws.lambda_.Permission("from-sns", action="lambda:InvokeFunction", function=fn.name,
                               principal=later("sns.amazonaws.com", marker.arn))
    found = check_rule(policy_analyzer, ASYNC, lambda: scheduled(),
                       lambda: scheduled(on_failure=dlq("dispatcher-failed").arn), unknown)
    assert names(found) == ["dispatcher"]
    assert "Schedule 'monthly'" in found[0].message and "FunctionEventInvokeConfig" in found[0].message


def test_a_dead_letter_config_also_keeps_failed_async_events(policy_analyzer):
    program = lambda: scheduled(dead_letter={"target_arn": dlq("dispatcher-dead").arn})
    assert not flagged(analyse(policy_analyzer, program), ASYNC)


@pytest.mark.parametrize("principal, flagged_count", [("events.amazonaws.com", 1), ("s3.amazonaws.com", 1),
                                                      ("apigateway.amazonaws.com", 0)])
def test_async_callers_are_found_through_permissions_on_an_alias(policy_analyzer, principal, flagged_count):
    def program():
        fn = function("handler")
        live = aws.lambda_.Alias("live", function_name=fn.name, function_version="$LATEST")
        aws.lambda_.Permission("invoke", action="lambda:InvokeFunction", function=live.arn, principal=principal)
    # unknowns: the offline mocks give an Alias no ARN, a real preview an unknown one
    assert len(flagged(analyse(policy_analyzer, program, unknowns=True), ASYNC)) == flagged_count


def test_sns_and_eventbridge_targets_are_async_callers(policy_analyzer):
    def program():
        fn = function("handler")
        topic = aws.sns.Topic("news")
        aws.sns.TopicSubscription("news-to-fn", topic=topic.arn, protocol="lambda", endpoint=fn.arn,
                                  redrive_policy=redrive_to(dlq("news-dlq")))
    assert names(flagged(analyse(policy_analyzer, program), ASYNC)) == ["handler"]


# ---- eventbridge-target-has-dlq-and-retry-policy -----------------------------------------------------

EB_TARGET = "eventbridge-target-has-dlq-and-retry-policy"


def event_target(**kwargs):
    rule_ = aws.cloudwatch.EventRule("nightly", schedule_expression="rate(1 day)")
    aws.cloudwatch.EventTarget("nightly-target", rule=rule_.name, arn=EXTERNAL_QUEUE, **kwargs)


def test_eventbridge_target(policy_analyzer):
    found = check_rule(
        policy_analyzer, EB_TARGET, lambda: event_target(),
        lambda: event_target(retry_policy={"maximum_retry_attempts": 3, "maximum_event_age_in_seconds": 3600},
                             dead_letter_config={"arn": dlq("nightly-dlq").arn}),
        lambda m: event_target(retry_policy=later({"maximumRetryAttempts": 3}, m.arn),
                               dead_letter_config=later({"arn": EXTERNAL_QUEUE}, m.arn)))
    assert "retryPolicy" in found[0].message and "deadLetterConfig" in found[0].message


def test_eventbridge_target_dlq_must_be_standard(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: event_target(
        retry_policy={"maximum_retry_attempts": 3}, dead_letter_config={"arn": f"{EXTERNAL_QUEUE}.fifo"})), EB_TARGET)
    assert len(found) == 1 and "FIFO" in found[0].message


# ---- sns-subscription-has-redrive-policy --------------------------------------------------------

SNS = "sns-subscription-has-redrive-policy"


def subscription(redrive=None, protocol="sqs"):
    topic = aws.sns.Topic("news")
    aws.sns.TopicSubscription("news-sub", topic=topic.arn, protocol=protocol, endpoint=EXTERNAL_QUEUE,
                              redrive_policy=redrive)


def test_sns_subscription(policy_analyzer):
    check_rule(policy_analyzer, SNS, lambda: subscription(),
               lambda: subscription(redrive=dlq("news-dlq").arn.apply(lambda a: json.dumps({"deadLetterTargetArn": a}))),
               lambda m: subscription(redrive=later(None, m.arn)))
    assert not flagged(analyse(policy_analyzer, lambda: subscription(protocol="email")), SNS)


# ---- pipe-source-has-dlq-and-bounded-retries -----------------------------------------------------------

PIPE = "pipe-source-has-dlq-and-bounded-retries"


def pipe(parameters=None, source=None, retention=None):
    stream = aws.kinesis.Stream("events", shard_count=1, retention_period=retention)
    aws.pipes.Pipe("events-pipe", role_arn=ROLE, source=source if source is not None else stream.arn,
                   target=EXTERNAL_QUEUE,
                   source_parameters={"kinesis_stream_parameters": {"starting_position": "LATEST", **(parameters or {})}})


def test_pipe_from_a_stream(policy_analyzer):
    bounded = {"maximum_retry_attempts": 3, "dead_letter_config": {"arn": EXTERNAL_QUEUE}}
    found = check_rule(policy_analyzer, PIPE, lambda: pipe(), lambda: pipe(bounded),
                       lambda m: pipe({**bounded, "maximum_retry_attempts": later(-1, m.arn)}))
    assert "deadLetterConfig" in found[0].message and "both -1" in found[0].message


def test_pipe_record_age_at_the_stream_retention_is_no_bound(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: pipe(
        {"maximum_record_age_in_seconds": 86_400, "dead_letter_config": {"arn": EXTERNAL_QUEUE}})), PIPE)
    assert len(found) == 1 and "bounds nothing" in found[0].message
    assert not flagged(analyse(policy_analyzer, lambda: pipe(
        {"maximum_record_age_in_seconds": 86_400, "dead_letter_config": {"arn": EXTERNAL_QUEUE}}, retention=48)), PIPE)


def test_pipe_from_a_queue_needs_the_queue_to_redrive(policy_analyzer):
    def program(redrive):
        queue = aws.sqs.Queue("jobs", redrive_policy=redrive_to(dlq("jobs-dlq")) if redrive else None)
        aws.pipes.Pipe("jobs-pipe", role_arn=ROLE, source=queue.arn, target=EXTERNAL_QUEUE)
    assert names(flagged(analyse(policy_analyzer, lambda: program(False)), PIPE)) == ["jobs-pipe"]
    assert not flagged(analyse(policy_analyzer, lambda: program(True)), PIPE)


# ---- lambda-sqs-esm-concurrency-within-reserved ----------------------------------------------------

CONCURRENCY = "lambda-sqs-esm-concurrency-within-reserved"


def reserved_consumer(reserved, maximum):
    queue = aws.sqs.Queue("jobs", visibility_timeout_seconds=360, redrive_policy=redrive_to(dlq("jobs-dlq")))
    fn = function("jobs-fn", timeout=60, reserved_concurrent_executions=reserved)
    aws.lambda_.EventSourceMapping("jobs-mapping", event_source_arn=queue.arn, function_name=fn.name,
                                   function_response_types=["ReportBatchItemFailures"],
                                   scaling_config={"maximum_concurrency": maximum} if maximum is not None else None)


def test_sqs_mapping_concurrency_within_reserved(policy_analyzer):
    found = check_rule(policy_analyzer, CONCURRENCY, lambda: reserved_consumer(5, 10), lambda: reserved_consumer(5, 5),
                       lambda m: reserved_consumer(5, later(10, m.arn)))
    assert "maximumConcurrency 10" in found[0].message and "reserved concurrency 5" in found[0].message
    assert flagged(analyse(policy_analyzer, lambda: reserved_consumer(5, None)), CONCURRENCY)
    assert not flagged(analyse(policy_analyzer, lambda: reserved_consumer(None, None)), CONCURRENCY)


# ---- queue/topic policies -----------------------------------------------------------------------

TLS = "queue-topic-policy-denies-insecure-transport"
PUBLIC = "queue-topic-policy-no-public-principal"
DENY_PLAIN = {"Effect": "Deny", "Principal": "*", "Action": "sqs:*", "Resource": "*",
              "Condition": {"Bool": {"aws:SecureTransport": "false"}}}


def queue_with_policy(policy):
    queue = aws.sqs.Queue("jobs")
    aws.sqs.QueuePolicy("jobs-policy", queue_url=queue.url, policy=policy)


def test_queue_policy_denies_insecure_transport_is_advisory(policy_analyzer):
    found = check_rule(policy_analyzer, TLS, lambda: aws.sqs.Queue("jobs"),
                       lambda: queue_with_policy(document(DENY_PLAIN)),
                       lambda m: queue_with_policy(later(document(DENY_PLAIN), m.arn)))
    assert found[0].level == "advisory" and names(found) == ["jobs"]


def test_topic_policy_denies_insecure_transport(policy_analyzer):
    deny = {**DENY_PLAIN, "Action": ["sns:Publish", "sns:Subscribe"]}
    assert flagged(analyse(policy_analyzer, lambda: aws.sns.Topic("news")), TLS)
    assert not flagged(analyse(policy_analyzer, lambda: aws.sns.Topic("news", policy=document(deny))), TLS)


def test_queue_policy_allowing_everyone_every_sqs_action_violates_two_rules(policy_analyzer):
    result = analyse(policy_analyzer, lambda: queue_with_policy(document(allow("sqs:*", Principal="*"))))
    assert len(flagged(result, PUBLIC)) == 1
    assert "DeleteQueue" in flagged(result, "iam-no-wildcard-actions")[0].message


def test_public_principal(policy_analyzer):
    scoped = allow("sqs:SendMessage", Principal="*",
                   Condition={"ArnEquals": {"aws:SourceArn": "arn:aws:sns:us-east-1:123456789012:t"}})
    check_rule(policy_analyzer, PUBLIC, lambda: queue_with_policy(document(allow("sqs:SendMessage", Principal={"AWS": "*"}))),
               lambda: queue_with_policy(document(scoped, DENY_PLAIN)),
               lambda m: queue_with_policy(later(document(allow("sqs:SendMessage", Principal="*")), m.arn)))


# ---- IAM ---------------------------------------------------------------------------------------

WILDCARD = "iam-no-wildcard-actions"
WRITE_ALL = "iam-no-write-actions-on-all-resources"


def role_policy(*statements):
    aws.iam.RolePolicy("p", role="r", policy=document(*statements))


def test_write_actions_on_every_resource(policy_analyzer):
    found = check_rule(policy_analyzer, WRITE_ALL, lambda: role_policy(allow(["sqs:SendMessage", "sqs:GetQueueUrl"])),
                       lambda: role_policy(allow("sqs:SendMessage", EXTERNAL_QUEUE), allow("sqs:GetQueueUrl"),
                                           allow(["cloudwatch:PutMetricData", "xray:PutTraceSegments"])),
                       lambda m: aws.iam.RolePolicy("p", role="r", policy=later(document(allow("sqs:SendMessage")), m.arn)))
    assert "Write (sqs:SendMessage)" in found[0].message and "GetQueueUrl" not in found[0].message


def test_pass_role_on_every_resource_and_not_resource_violate(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: role_policy(allow("iam:PassRole"))), WRITE_ALL)
    assert len(found) == 1 and "iam:PassRole on *" in found[0].message
    found = flagged(analyse(policy_analyzer, lambda: role_policy(
        {"Effect": "Allow", "Action": "sqs:SendMessage", "NotResource": EXTERNAL_QUEUE})), WRITE_ALL)
    assert len(found) == 1 and "NotResource" in found[0].message


def test_wildcards_are_judged_against_the_action_catalogue(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: role_policy(allow("sqs:*", EXTERNAL_QUEUE))), WILDCARD)
    assert len(found) == 1
    for action in ("DeleteQueue", "PurgeQueue", "AddPermission", "SetQueueAttributes"):
        assert action in found[0].message
    # IAM authorizes SendMessageBatch with sqs:SendMessage: the catalogue lists one action for it.
    found = flagged(analyse(policy_analyzer, lambda: role_policy(allow("sqs:SendMessage*", EXTERNAL_QUEUE))), WILDCARD)
    assert len(found) == 1 and "covers 1 action: Write (sqs:SendMessage)" in found[0].message
    found = flagged(analyse(policy_analyzer, lambda: role_policy(allow("sqs:Frobnicate*", EXTERNAL_QUEUE))), WILDCARD)
    assert len(found) == 1 and "matches no action in the IAM catalogue" in found[0].message


@pytest.mark.parametrize("program", [
    lambda: aws.iam.RolePolicyAttachment("admin", role="r", policy_arn="arn:aws:iam::aws:policy/AdministratorAccess"),
    lambda: aws.iam.Role("r", assume_role_policy="{}", managed_policy_arns=["arn:aws:iam::aws:policy/AmazonSQSFullAccess"]),
    lambda: aws.iam.UserPolicy("u", user="someone", policy=document(allow("s3:Get*", "arn:aws:s3:::b/*"))),
    lambda: aws.iam.GroupPolicy("g", group="team", policy=document(allow("*", "arn:aws:s3:::b/*"))),
], ids=["AdministratorAccess", "FullAccess", "UserPolicy", "GroupPolicy"])
def test_wildcard_grants_that_used_to_pass_silently(policy_analyzer, program):
    assert len(flagged(analyse(policy_analyzer, program), WILDCARD)) == 1


def test_an_action_that_is_a_number_is_a_violation_not_a_crash(policy_analyzer):
    result = analyse(policy_analyzer, lambda: role_policy(allow(5)))
    found = flagged(result, WILDCARD)
    assert len(found) == 1 and "Action must be a string or a list of strings, got 5" in found[0].message


# ---- lambda-esm-role-can-use-source -------------------------------------------------------------

ROLE_CAN = "lambda-esm-role-can-use-source"


def consumer_with_role(actions, *, policy_later=None):
    queue = aws.sqs.Queue("jobs", visibility_timeout_seconds=360, redrive_policy=redrive_to(dlq("jobs-dlq")))
    role = aws.iam.Role("jobs-role", assume_role_policy=document(
        {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}))
    policy = queue.arn.apply(lambda arn: document(allow(actions, arn)))
    aws.iam.RolePolicy("jobs-read", role=role.id, policy=policy_later(policy) if policy_later else policy)
    fn = aws.lambda_.Function("jobs-fn", role=role.arn, runtime="python3.12", handler="h.handler",
                              code=pulumi.AssetArchive({}), timeout=60)
    aws.lambda_.EventSourceMapping("jobs-mapping", event_source_arn=queue.arn, function_name=fn.name,
                                   function_response_types=["ReportBatchItemFailures"])
    return role


def test_mapping_role_must_read_its_queue(policy_analyzer):
    read = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]
    found = check_rule(policy_analyzer, ROLE_CAN, lambda: consumer_with_role(["sqs:ReceiveMessage"]),
                       lambda: consumer_with_role(read),
                       lambda m: consumer_with_role(read, policy_later=lambda p: m.arn.apply(lambda _: "{}")))
    said = found[0].message.splitlines()[-1]  # the SDK puts the rule's description first
    assert "sqs:DeleteMessage on its source queue" in said
    assert "sqs:GetQueueAttributes" in said and "ReceiveMessage" not in said


def test_mapping_role_is_judged_through_an_aws_managed_execution_policy(policy_analyzer):
    def program():
        role = consumer_with_role(["sqs:ReceiveMessage"])
        aws.iam.RolePolicyAttachment("jobs-sqs", role=role.name,
                                     policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole")
    assert not flagged(analyse(policy_analyzer, program), ROLE_CAN)


# ---- sfn-task-timeout-covers-lambda-timeout -----------------------------------------------------

TASK_TIMEOUT = "sfn-task-timeout-covers-lambda-timeout"


def machine(task_timeout, fn_timeout=60):
    fn = function("item", timeout=fn_timeout)

    def definition(arn):
        task = {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
                "Parameters": {"FunctionName": arn, "Payload.$": "$"}, "End": True}
        if task_timeout is not None:
            task["TimeoutSeconds"] = task_timeout
        return json.dumps({"StartAt": "Item", "States": {"Item": task}})
    aws.sfn.StateMachine("batch", role_arn=ROLE, definition=fn.arn.apply(definition))


def test_task_timeout_covers_the_lambda_timeout(policy_analyzer):
    found = check_rule(policy_analyzer, TASK_TIMEOUT, lambda: machine(30), lambda: machine(70),
                       lambda m: machine(30, fn_timeout=later(60, m.arn)))
    assert "times out after 30 s" in found[0].message and "may run 60 s" in found[0].message
    assert not flagged(analyse(policy_analyzer, lambda: machine(None)), TASK_TIMEOUT)  # default: 99999999 s


# ---- lambda-log-group-has-retention ----------------------------------------------------------

LOGS = "lambda-log-group-has-retention"


def logged_function(retention, *, by_config=True):
    if by_config:
        group = aws.cloudwatch.LogGroup("worker-logs", retention_in_days=retention)
        function("worker", logging_config={"log_format": "JSON", "log_group": group.name})
    else:
        fn = function("worker")
        aws.cloudwatch.LogGroup("worker-logs", name=fn.name.apply(lambda n: f"/aws/lambda/{n}"),
                                retention_in_days=retention)


def test_log_group_retention(policy_analyzer):
    found = check_rule(policy_analyzer, LOGS, lambda: function("worker"), lambda: logged_function(30),
                       lambda m: logged_function(later(30, m.arn)))
    assert "/aws/lambda/" in found[0].message and "never expire" in found[0].message
    assert names(flagged(analyse(policy_analyzer, lambda: logged_function(None)), LOGS)) == ["worker-logs"]
    assert not flagged(analyse(policy_analyzer, lambda: logged_function(14, by_config=False)), LOGS)
    found = flagged(analyse(policy_analyzer, lambda: logged_function(-7)), LOGS)
    assert len(found) == 1 and "retentionInDays is -7" in found[0].message


# ---- aws-resource-names-within-limits -------------------------------------------------------

NAMES = "aws-resource-names-within-limits"


def test_explicit_names_within_aws_limits(policy_analyzer):
    check_rule(policy_analyzer, NAMES, lambda: function("f", name="x" * 65),
               lambda: function("f", name="x" * 64),
               lambda m: function("f", name=later("x" * 65, m.arn)))
    found = flagged(analyse(policy_analyzer, lambda: aws.sqs.Queue("q", name="q" * 76 + ".fifo", fifo_queue=True)), NAMES)
    assert len(found) == 1 and "81 characters" in found[0].message
    assert flagged(analyse(policy_analyzer, lambda: aws.sqs.Queue("q", name="jobs.v2")), NAMES)
    assert flagged(analyse(policy_analyzer, lambda: aws.iam.Role("r", name="r" * 65, assume_role_policy="{}")), NAMES)


# ---- accuracy -----------------------------------------------------------------------------------

@pytest.mark.parametrize("invoked", ["alias", "qualified ARN"])
def test_a_mapping_that_invokes_an_alias_or_a_version_is_that_functions_consumer(policy_analyzer, invoked):
    def program():
        queue = aws.sqs.Queue("jobs", visibility_timeout_seconds=30, redrive_policy=redrive_to(dlq("jobs-dlq")))
        fn = function("worker", timeout=60, name="worker")
        target = (aws.lambda_.Alias("live", function_name=fn.name, function_version="$LATEST").arn
                  if invoked == "alias" else "arn:aws:lambda:us-east-1:123456789012:function:worker:7")
        aws.lambda_.EventSourceMapping("jobs-mapping", event_source_arn=queue.arn, function_name=target,
                                       function_response_types=["ReportBatchItemFailures"])
    found = flagged(analyse(policy_analyzer, program, unknowns=invoked == "alias"),
                    "sqs-visibility-timeout-covers-function-timeout")
    assert len(found) == 1 and "function 'worker' may run 60 s" in found[0].message


def test_a_dlq_outside_the_stack_is_judged_by_its_name_and_noted_as_unchecked(policy_analyzer):
    external = json.dumps({"deadLetterTargetArn": f"{EXTERNAL_QUEUE}.fifo", "maxReceiveCount": 5})
    result = analyse(policy_analyzer, lambda: aws.sqs.Queue("orders", redrive_policy=external))
    assert "is FIFO" in flagged(result, "sqs-dlq-type-matches-source")[0].message
    note = skipped(result, "sqs-dlq-retention-exceeds-source")
    assert len(note) == 1 and note[0].level == "advisory" and "outside this stack" in note[0].message
    assert not flagged(result, "sqs-dlq-retention-exceeds-source")


def test_fifo_dlq_retention_still_applies_without_claiming_early_expiry(policy_analyzer):
    def program():
        target = aws.sqs.Queue("orders-dlq.fifo", fifo_queue=True)
        aws.sqs.Queue("orders", fifo_queue=True, redrive_policy=redrive_to(target))
    found = flagged(analyse(policy_analyzer, program), "sqs-dlq-retention-exceeds-source")
    assert len(found) == 1 and "resets a message's enqueue time" in found[0].message
    assert "original enqueue time" not in found[0].message


def test_an_alarm_written_with_metric_queries_counts(policy_analyzer):
    def program():
        target = aws.sqs.Queue("orders-dlq", message_retention_seconds=1_209_600)
        aws.cloudwatch.MetricAlarm("orders-dlq-depth", comparison_operator="GreaterThanOrEqualToThreshold",
                                   evaluation_periods=1, threshold=1, metric_queries=[
                                       {"id": "depth", "metric": {"namespace": "AWS/SQS", "metric_name":
                                                                  "ApproximateNumberOfMessagesVisible",
                                                                  "dimensions": {"QueueName": target.name},
                                                                  "period": 60, "stat": "Maximum"}},
                                       {"id": "total", "expression": "depth", "return_data": True}])
        aws.sqs.Queue("orders", redrive_policy=redrive_to(target))
    for unknowns in (False, True):
        assert not flagged(analyse(policy_analyzer, program, unknowns=unknowns), "dlq-has-depth-alarm")


def test_a_dynamodb_stream_record_age_of_a_day_bounds_nothing(policy_analyzer):
    def program(age):
        table = aws.dynamodb.Table("t", hash_key="id", attributes=[{"name": "id", "type": "S"}],
                                   stream_enabled=True, stream_view_type="NEW_IMAGE")
        fn = function("t-fn", timeout=60)
        aws.lambda_.EventSourceMapping("t-mapping", event_source_arn=table.stream_arn, function_name=fn.name,
                                       starting_position="LATEST", maximum_record_age_in_seconds=age,
                                       destination_config={"on_failure": {"destination_arn": EXTERNAL_QUEUE}})
    found = flagged(analyse(policy_analyzer, lambda: program(86_400)), "lambda-stream-esm-bounded-retries")
    assert len(found) == 1 and "DynamoDB streams keep records 24 h" in found[0].message
    assert not flagged(analyse(policy_analyzer, lambda: program(3600)), "lambda-stream-esm-bounded-retries")


def test_get_policy_document_gives_the_document_to_rules_and_roles(policy_analyzer):
    def program():
        trust = aws.iam.get_policy_document_output(statements=[{
            "actions": ["sts:AssumeRole"], "principals": [{"type": "Service", "identifiers": ["lambda.amazonaws.com"]}]}])
        aws.iam.Role("r", assume_role_policy=trust.json)
        access = aws.iam.get_policy_document(statements=[{"actions": ["sqs:*"], "resources": [EXTERNAL_QUEUE]}])
        aws.iam.RolePolicy("p", role="r", policy=access.json)
    for unknowns in (False, True):
        found = flagged(analyse(policy_analyzer, program, unknowns=unknowns), WILDCARD)
        assert names(found) == ["p"] and "DeleteQueue" in found[0].message


# ---- malformed values become violations that name them ------------------------------------------

SFN = "sfn-distributed-map-bounded"


def distributed(**state):
    processor = {"ProcessorConfig": {"Mode": "DISTRIBUTED"}, "StartAt": "Item",
                 "States": {"Item": {"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:1:function:x", "End": True}}}
    base = {"Type": "Map", "End": True, "ItemProcessor": processor, "MaxConcurrency": 5,
            "ToleratedFailurePercentage": 5}
    return {"StartAt": "Map", "States": {"Map": {**base, **state}}}


@pytest.mark.parametrize("definition, complaint", [
    (distributed(Catch={"ErrorEquals": ["States.ALL"], "Next": "x"}), "Map.Catch must be a list, got dict"),
    (distributed(ItemProcessor=[1, 2]), "Map.ItemProcessor must be an object, got list"),
    (distributed(MaxConcurrency="ten"), "MaxConcurrency must be a number, got 'ten'"),
    ({"StartAt": "P", "States": {"P": {"Type": "Parallel", "End": True, "Branches": ["a", "b"]}}},
     "P.Branches[0] must be an object with States"),
    (distributed(ItemProcessor={"ProcessorConfig": {"Mode": "DISTRIBUTED"}, "StartAt": "I", "States": {
        "I": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Retry": {"MaxAttempts": 2}, "End": True}}}),
     "I.Retry must be a list, got dict"),
])
def test_a_malformed_state_machine_is_a_violation_not_a_crash(policy_analyzer, definition, complaint):
    found = flagged(analyse(policy_analyzer, lambda: aws.sfn.StateMachine(
        "batch", role_arn=ROLE, definition=json.dumps(definition))), SFN)
    assert len(found) == 1 and complaint in found[0].message


@pytest.mark.parametrize("count, complaint", [
    (4.5, "maxReceiveCount must be a whole number, got 4.5"),
    (-3, "maxReceiveCount is -3"),
])
def test_a_fractional_or_negative_max_receive_count_is_a_violation(policy_analyzer, count, complaint):
    found = flagged(analyse(policy_analyzer, lambda: aws.sqs.Queue(
        "orders", redrive_policy=redrive_to(dlq("orders-dlq"), count=count))), "sqs-dlq-max-receive-count")
    assert len(found) == 1 and complaint in found[0].message


def test_a_negative_retention_is_a_violation(policy_analyzer):
    def program():
        target = aws.sqs.Queue("orders-dlq", message_retention_seconds=-5)
        aws.sqs.Queue("orders", redrive_policy=redrive_to(target))
    found = flagged(analyse(policy_analyzer, program), "sqs-dlq-retention-exceeds-source")
    assert len(found) == 1 and "messageRetentionSeconds is -5; AWS accepts 60-1209600" in found[0].message


# ---- the pack's own config checks ------------------------------------------------------------

@pytest.mark.parametrize("config, complaint", [
    ({"sqs-dlq-max-receive-count": {"minimun": 5}}, "sqs-dlq-max-receive-count: unknown property 'minimun'"),
    ({"sqs-dlq-max-receive-count": {"minimum": "five"}}, "sqs-dlq-max-receive-count: minimum must be a integer"),
    ({"dynamodb-idempotency-table-ttl": {"environmentKeyPattern": "(IDEMPOTENCY"}}, "is not a regular expression"),
    ({"lambda-function-runtime-supported": {"asOf": "next year"}}, "asOf must match .* got \"next year\""),
])
def test_the_pack_refuses_a_config_it_cannot_apply(policy_analyzer, config, complaint):
    request = analyzer_pb2.ConfigureAnalyzerRequest()
    for name, properties in config.items():
        request.policyConfig[name].enforcementLevel = analyzer_pb2.MANDATORY
        request.policyConfig[name].properties.update(properties)
    policy_analyzer._call(policy_analyzer._stub.Configure, request)  # as the Pulumi CLI sends it, unchecked
    try:
        with pytest.raises(AnalyzerError, match=complaint):
            policy_analyzer.analyze(record_program(
                lambda: aws.sqs.Queue("orders", redrive_policy=redrive_to(dlq("orders-dlq"))), stack="test"))
    finally:
        policy_analyzer.configure({})


# ---- metadata ---------------------------------------------------------------------------------

def test_every_rule_publishes_its_fix_its_source_and_how_much_it_matters(policy_analyzer):
    for policy in policy_analyzer.info.policies:
        assert policy.displayName and policy.remediation_steps and policy.tags, policy.name
        assert policy.url.startswith("https://docs."), policy.name
        assert policy.severity != 0, policy.name  # 0 = unspecified
    levels = {p.name: p.enforcementLevel for p in policy_analyzer.info.policies}
    assert len(levels) == 38 and levels[TLS] == 0  # proto ADVISORY



def test_the_catalogue_holds_the_texts_of_exactly_the_packs_rules_with_the_codes_values_filled_in(policy_analyzer):
    catalogue = tomllib.loads(CATALOGUE.read_text())
    published = {p.name: p for p in policy_analyzer.info.policies}
    assert list(catalogue) == [p.name for p in POLICIES] and set(catalogue) == set(published)
    for name, policy in published.items():
        assert "${" not in policy.description + policy.remediation_steps, name
        assert policy.displayName == catalogue[name]["display_name"], name
    minimum = published["sqs-dlq-max-receive-count"].description
    assert f"default {conventions.MIN_SAFE_MAX_RECEIVE_COUNT};" in minimum
    assert f"1-{aws_limits.SQS_MAX_RECEIVE_COUNT_MAX})" in minimum
    assert "States.ExceedToleratedFailureThreshold" in published["sfn-distributed-map-bounded"].remediation_steps


def test_a_rule_without_texts_or_with_a_value_the_code_lacks_stops_the_pack_naming_the_rule():
    with pytest.raises(KeyError, match="'no-such-rule' has no entry in catalogue.toml: add its texts there"):
        rule("stack", "no-such-rule", lambda args, report: None)
    with pytest.raises(ValueError, match=r"catalogue.toml \['sfn-distributed-map-bounded'\].*\$\{EXCEEDED\} names no "):
        rule("resource", "sfn-distributed-map-bounded", lambda args, report: None)  # its module passes EXCEEDED

def test_a_dlq_already_at_the_maximum_is_told_to_lower_the_source_in_the_finding_and_the_rules_fix(policy_analyzer):
    def program():
        target = aws.sqs.Queue("orders-dlq", message_retention_seconds=1209600)
        aws.sqs.Queue("orders", message_retention_seconds=1209600, redrive_policy=redrive_to(target))
    (found,) = flagged(analyse(policy_analyzer, program), "sqs-dlq-retention-exceeds-source")
    assert "lower the source's messageRetentionSeconds" in found.message
    assert "Set the DLQ's messageRetentionSeconds to" not in found.message
    remediation = policy_analyzer.rules["sqs-dlq-retention-exceeds-source"].remediation
    assert "where the DLQ already keeps messages that long, lower the source's" in remediation


@pytest.mark.parametrize("unknowns", [False, True])
def test_a_dynamodb_stream_mapping_whose_record_age_outlasts_the_streams_24_hours_is_flagged(policy_analyzer, unknowns):
    """A first preview knows no table's stream ARN: the mapping's source is still the table it names."""
    def program():
        table = aws.dynamodb.Table("orders", hash_key="id", attributes=[{"name": "id", "type": "S"}],
                                   billing_mode="PAY_PER_REQUEST", stream_enabled=True,
                                   stream_view_type="NEW_IMAGE")
        handler = function("audit")
        aws.lambda_.EventSourceMapping(
            "audit", event_source_arn=table.stream_arn, function_name=handler.arn, starting_position="LATEST",
            maximum_retry_attempts=-1, maximum_record_age_in_seconds=172800,
            destination_config={"on_failure": {"destination_arn": "arn:aws:sqs:eu-west-1:123456789012:audit-dlq"}})
    found = flagged(analyse(policy_analyzer, program, unknowns=unknowns), "lambda-stream-esm-bounded-retries")
    assert len(found) == 1 and "DynamoDB streams keep records 24 h" in found[0].message
