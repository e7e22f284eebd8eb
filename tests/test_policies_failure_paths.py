"""Issue 40, through the real pack: a failure destination its writer cannot write is found (each
writer linked the way AWS links it), a Lambda task without a Retry for Lambda's transient errors is
found wherever it sits in the definition, and the messages say what the program says."""

import json
from pathlib import Path

import pulumi
import pulumi_aws as aws
import pytest
from policy_env import allow, analyse, document, flagged, resource_names, skipped

from integration_blueprint.preview.run import run_preview

WRITABLE = "failure-destination-writable"
RETRIES = "sfn-lambda-task-retries-service-errors"
TRUST = {"scheduler": "scheduler.amazonaws.com", "lambda": "lambda.amazonaws.com", "pipes": "pipes.amazonaws.com"}


def role(name, service):
    """A role of the stack that `service` assumes."""
    return aws.iam.Role(name, assume_role_policy=document(
        {"Effect": "Allow", "Principal": {"Service": TRUST[service]}, "Action": "sts:AssumeRole"}))


def role_policy(role_, name, statements):
    """statements: a list of statements, or an Output of one (when it names an ARN of the stack)."""
    policy = pulumi.Output.from_input(statements).apply(lambda s: document(*s))
    aws.iam.RolePolicy(name, role=role_.id, policy=policy)


def function(name, role_, **kwargs):
    return aws.lambda_.Function(name, role=role_.arn, runtime="python3.12", handler="app.handler",
                                code=pulumi.AssetArchive({}), timeout=30, **kwargs)


# ---- Scheduler: the schedule's execution role writes its DLQ --------------------------------------

def reminder_schedule(dlq_statement, *, dlq_kwargs=None):
    """A schedule sending to a queue, with a DLQ; its role may send to the target and what
    `dlq_statement(dlq_arn)` allows (None: nothing more)."""
    target = aws.sqs.Queue("reminders")
    dead = aws.sqs.Queue("reminders-dlq", message_retention_seconds=1_209_600, **(dlq_kwargs or {}))
    runner = role("reminders-role", "scheduler")
    statements = pulumi.Output.all(target.arn, dead.arn).apply(
        lambda arns: [allow("sqs:SendMessage", arns[0])] + ([dlq_statement(arns[1])] if dlq_statement else []))
    role_policy(runner, "reminders-send", statements)
    aws.scheduler.Schedule("reminders", schedule_expression="rate(1 hour)", flexible_time_window={"mode": "OFF"},
                           target={"arn": target.arn, "role_arn": runner.arn,
                                   "retry_policy": {"maximum_retry_attempts": 3},
                                   "dead_letter_config": {"arn": dead.arn}})
    return runner


def test_a_schedule_whose_role_may_send_only_to_its_target_loses_its_dead_letters(policy_analyzer):
    [found] = flagged(analyse(policy_analyzer, lambda: reminder_schedule(None)), WRITABLE)
    assert resource_names([found]) == ["reminders"] and found.level == "mandatory"
    said = found.message
    assert "role 'reminders-role'" in said and "queue 'reminders-dlq'" in said and "sqs:SendMessage" in said
    # a first preview cannot read the role's policy (it names the target's ARN): noted, never a verdict
    first = analyse(policy_analyzer, lambda: reminder_schedule(None), unknowns=True)
    assert not flagged(first, WRITABLE) and skipped(first, WRITABLE)


@pytest.mark.parametrize("grant", [
    lambda arn: allow("sqs:SendMessage", arn),
    lambda arn: allow("SQS:sendmessage", arn),  # IAM matches actions without case
    lambda arn: allow("sqs:SendMessage*", "*"),
    lambda arn: allow(["sqs:Send*"], arn.rsplit(":", 1)[0] + ":reminders-*"),
], ids=["its-arn", "any-case", "every-resource", "wildcards"])
def test_a_schedule_role_allowed_to_send_to_its_dlq_passes(policy_analyzer, grant):
    assert not flagged(analyse(policy_analyzer, lambda: reminder_schedule(grant)), WRITABLE)


def test_a_managed_policy_attached_to_the_schedule_role_counts(policy_analyzer):
    def program():
        runner = reminder_schedule(None)
        aws.iam.RolePolicyAttachment("reminders-sqs", role=runner.name,
                                     policy_arn="arn:aws:iam::aws:policy/AmazonSQSFullAccess")
    result = analyse(policy_analyzer, program)
    assert not flagged(result, WRITABLE)


def nightly_to_function(dlq_kwargs):
    """A schedule starting a function (the common shape) with a DLQ its role may write."""
    dead = aws.sqs.Queue("nightly-dlq", message_retention_seconds=1_209_600, **dlq_kwargs)
    runner = role("nightly-role", "scheduler")
    role_policy(runner, "nightly-policy", [allow(["lambda:InvokeFunction", "sqs:SendMessage"])])
    fn = function("nightly", role("nightly-fn-role", "lambda"))
    aws.scheduler.Schedule("nightly", schedule_expression="cron(0 3 * * ? *)", flexible_time_window={"mode": "OFF"},
                           target={"arn": fn.arn, "role_arn": runner.arn,
                                   "retry_policy": {"maximum_retry_attempts": 3},
                                   "dead_letter_config": {"arn": dead.arn}})


def test_a_fifo_queue_as_a_schedule_dlq_is_refused_in_a_first_preview_too(policy_analyzer):
    fifo = {"fifo_queue": True}
    [found] = flagged(analyse(policy_analyzer, lambda: nightly_to_function(fifo), unknowns=True), WRITABLE)
    assert "FIFO queue 'nightly-dlq'" in found.message and "standard queue" in found.message
    # with ARNs known the resource rule reads the .fifo name; the stack rule does not say it twice
    known = analyse(policy_analyzer, lambda: nightly_to_function(fifo))
    assert not flagged(known, WRITABLE)
    assert any("FIFO" in v.message for v in flagged(known, "scheduler-target-has-retry-and-dlq"))
    assert not flagged(analyse(policy_analyzer, lambda: nightly_to_function({}), unknowns=True), WRITABLE)


def test_a_schedule_role_policy_unknown_in_a_first_preview_is_noted_not_judged(policy_analyzer):
    def program():
        runner = reminder_schedule(None)
        later = aws.s3.Bucket("marker").arn.apply(lambda _: document(allow("sqs:SendMessage", "*")))
        aws.iam.RolePolicy("reminders-later", role=runner.id, policy=later)
    result = analyse(policy_analyzer, program, unknowns=True)
    assert not flagged(result, WRITABLE) and skipped(result, WRITABLE)


# ---- EventBridge and SNS write their DLQs as services: the queue's policy must let them --------------

def rule_with_dlq(dlq_policy_of):
    """A rule target (a queue of another stack) keeping undeliverable events in a DLQ of this stack."""
    hourly = aws.cloudwatch.EventRule("hourly", schedule_expression="rate(1 hour)")
    dead = aws.sqs.Queue("hourly-dlq", message_retention_seconds=1_209_600)
    if dlq_policy_of is not None:
        aws.sqs.QueuePolicy("hourly-dlq-policy", queue_url=dead.url,
                            policy=pulumi.Output.all(dead.arn, hourly.arn).apply(lambda a: dlq_policy_of(*a)))
    aws.cloudwatch.EventTarget("hourly-target", rule=hourly.name, arn="arn:aws:sqs:us-east-1:123456789012:elsewhere",
                               retry_policy={"maximum_retry_attempts": 3, "maximum_event_age_in_seconds": 3600},
                               dead_letter_config={"arn": dead.arn})


def events_may_send(condition_arn=None):
    def policy(queue_arn, rule_arn):
        statement = {"Effect": "Allow", "Principal": {"Service": "events.amazonaws.com"},
                     "Action": "sqs:SendMessage", "Resource": queue_arn}
        if condition_arn is not None:
            statement["Condition"] = {"ArnEquals": {"aws:SourceArn": condition_arn(rule_arn)}}
        return document(statement)
    return policy


def test_an_eventbridge_target_dlq_without_a_policy_for_eventbridge_is_found(policy_analyzer):
    [found] = flagged(analyse(policy_analyzer, lambda: rule_with_dlq(None)), WRITABLE)
    assert resource_names([found]) == ["hourly-target"]
    assert "dead-letter queue 'hourly-dlq'" in found.message and "events.amazonaws.com" in found.message
    assert "aws:SourceArn" in found.message  # the fix names the condition AWS advises


@pytest.mark.parametrize("condition", [None, lambda rule_arn: rule_arn], ids=["any-source", "this-rule"])
def test_an_eventbridge_dlq_policy_allowing_the_rule_passes(policy_analyzer, condition):
    assert not flagged(analyse(policy_analyzer, lambda: rule_with_dlq(events_may_send(condition))), WRITABLE)


def test_an_eventbridge_dlq_policy_for_another_rule_is_found(policy_analyzer):
    other = events_may_send(lambda rule_arn: rule_arn + "-other")
    assert len(flagged(analyse(policy_analyzer, lambda: rule_with_dlq(other)), WRITABLE)) == 1


def subscription_with_dlq(sns_may_send):
    topic = aws.sns.Topic("orders")
    dead = aws.sqs.Queue("orders-sub-dlq", message_retention_seconds=1_209_600)
    if sns_may_send:
        aws.sqs.QueuePolicy("orders-sub-dlq-policy", queue_url=dead.url, policy=dead.arn.apply(lambda arn: document(
            {"Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"}, "Action": "sqs:SendMessage",
             "Resource": arn})))
    aws.sns.TopicSubscription("orders-sub", topic=topic.arn, protocol="sqs",
                              endpoint="arn:aws:sqs:us-east-1:123456789012:elsewhere",
                              redrive_policy=dead.arn.apply(lambda arn: json.dumps({"deadLetterTargetArn": arn})))


def test_an_sns_redrive_queue_sns_may_not_write_is_found_and_one_it_may_passes(policy_analyzer):
    [found] = flagged(analyse(policy_analyzer, lambda: subscription_with_dlq(False)), WRITABLE)
    assert resource_names([found]) == ["orders-sub"] and "sns.amazonaws.com" in found.message
    assert not flagged(analyse(policy_analyzer, lambda: subscription_with_dlq(True)), WRITABLE)


# ---- Lambda writes its own failure destinations with the function's role ---------------------------

LOGS_ONLY = [allow(["logs:CreateLogStream", "logs:PutLogEvents"])]


def async_function_with(destination_of, grants):
    """A function whose failures go to `destination_of()` (its on-failure destination); its role is
    allowed LOGS_ONLY plus `grants(destination ARN)`."""
    runner = role("worker-role", "lambda")
    destination = destination_of()
    role_policy(runner, "worker-policy", destination.arn.apply(lambda arn: LOGS_ONLY + grants(arn)))
    fn = function("worker", runner)
    aws.lambda_.FunctionEventInvokeConfig("worker-async", function_name=fn.name, maximum_retry_attempts=1,
                                          destination_config={"on_failure": {"destination": destination.arn}})


DESTINATIONS = {
    "queue": (lambda: aws.sqs.Queue("failed"), "sqs:SendMessage"),
    "topic": (lambda: aws.sns.Topic("failed"), "sns:Publish"),
    "function": (lambda: function("failed", aws.iam.Role("failed-role", assume_role_policy=document())),
                 "lambda:InvokeFunction"),
    "event-bus": (lambda: aws.cloudwatch.EventBus("failed"), "events:PutEvents"),
}


@pytest.mark.parametrize("kind", sorted(DESTINATIONS))
def test_an_on_failure_destination_the_function_role_cannot_write_is_found(policy_analyzer, kind):
    make, action = DESTINATIONS[kind]
    [found] = flagged(analyse(policy_analyzer, lambda: async_function_with(make, lambda arn: [])), WRITABLE)
    assert resource_names([found]) == ["worker-async"]
    assert f"not allowed {action}" in found.message and "role 'worker-role'" in found.message
    granted = analyse(policy_analyzer, lambda: async_function_with(make, lambda arn: [allow(action, arn)]))
    assert not flagged(granted, WRITABLE)


def test_a_function_dead_letter_topic_its_role_cannot_publish_to_is_found(policy_analyzer):
    def program(grants):
        runner = role("worker-role", "lambda")
        topic = aws.sns.Topic("worker-dlq")
        role_policy(runner, "worker-policy", topic.arn.apply(lambda arn: LOGS_ONLY + grants(arn)))
        function("worker", runner, dead_letter_config={"target_arn": topic.arn})
    [found] = flagged(analyse(policy_analyzer, lambda: program(lambda arn: [])), WRITABLE)
    assert resource_names([found]) == ["worker"] and "sns:Publish" in found.message
    assert not flagged(analyse(policy_analyzer, lambda: program(lambda arn: [allow("sns:Publish", arn)])), WRITABLE)


def test_a_pipe_dlq_its_role_cannot_write_is_found(policy_analyzer):
    def program(grants):
        stream = aws.kinesis.Stream("clicks", shard_count=1)
        dead = aws.sqs.Queue("clicks-pipe-dlq", message_retention_seconds=1_209_600)
        runner = role("clicks-pipe-role", "pipes")
        role_policy(runner, "clicks-pipe-policy", dead.arn.apply(lambda arn: grants(arn) or [allow("kinesis:GetRecords")]))
        aws.pipes.Pipe("clicks-pipe", role_arn=runner.arn, source=stream.arn,
                       target="arn:aws:sqs:us-east-1:123456789012:elsewhere",
                       source_parameters={"kinesis_stream_parameters": {
                           "starting_position": "LATEST", "maximum_retry_attempts": 3,
                           "dead_letter_config": {"arn": dead.arn}}})
    [found] = flagged(analyse(policy_analyzer, lambda: program(lambda arn: [])), WRITABLE)
    assert resource_names([found]) == ["clicks-pipe"] and "queue 'clicks-pipe-dlq'" in found.message
    assert not flagged(analyse(policy_analyzer, lambda: program(lambda arn: [allow("sqs:SendMessage", arn)])), WRITABLE)


def test_a_role_from_another_stack_is_not_judged(policy_analyzer):
    def program():
        dead = aws.sqs.Queue("worker-dlq")
        aws.lambda_.Function("worker", role="arn:aws:iam::123456789012:role/elsewhere", runtime="python3.12",
                             handler="app.handler", code=pulumi.AssetArchive({}),
                             dead_letter_config={"target_arn": dead.arn})
    assert not flagged(analyse(policy_analyzer, program), WRITABLE)


# ---- Step Functions: a task invoking Lambda retries Lambda's transient errors ----------------------

FN_ARN = "arn:aws:lambda:us-east-1:123456789012:function:enrich"
INVOKE = {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
          "Parameters": {"FunctionName": FN_ARN, "Payload.$": "$"}, "End": True}
ALL_FOUR = ["Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException",
            "Lambda.TooManyRequestsException"]


def machine(states, start):
    aws.sfn.StateMachine("orders", role_arn="arn:aws:iam::123456789012:role/sfn",
                         definition=json.dumps({"StartAt": start, "States": states}))


def task(**extra):
    return {**INVOKE, **extra}


@pytest.mark.parametrize("retry", [
    [{"ErrorEquals": ALL_FOUR, "MaxAttempts": 6, "BackoffRate": 2}],
    [{"ErrorEquals": ["States.ALL"]}],
    [{"ErrorEquals": ["States.TaskFailed"], "MaxAttempts": 2}],
    [{"ErrorEquals": ["States.Timeout"], "MaxAttempts": 0}, {"ErrorEquals": ALL_FOUR}],
], ids=["named", "states-all", "task-failed", "after-another-retrier"])
def test_a_lambda_task_retrying_the_transient_errors_passes(policy_analyzer, retry):
    assert not flagged(analyse(policy_analyzer, lambda: machine({"Enrich": task(Retry=retry)}, "Enrich")), RETRIES)


def test_a_lambda_task_with_no_retry_or_a_partial_one_is_found_naming_what_is_not_retried(policy_analyzer):
    [bare] = flagged(analyse(policy_analyzer, lambda: machine({"Enrich": task()}, "Enrich")), RETRIES)
    assert "task Enrich invokes Lambda and has no Retry" in bare.message
    partial = [{"ErrorEquals": ALL_FOUR[:3], "MaxAttempts": 3}]
    [found] = flagged(analyse(policy_analyzer, lambda: machine({"Enrich": task(Retry=partial)}, "Enrich")), RETRIES)
    assert "does not retry Lambda.TooManyRequestsException" in found.message
    assert "Lambda.ServiceException" not in found.message.split("task Enrich")[1].split("Add")[0]  # only what is missing
    # the first retrier that matches decides: States.ALL with MaxAttempts 0 retries nothing
    zero = [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 0}]
    [none] = flagged(analyse(policy_analyzer, lambda: machine({"Enrich": task(Retry=zero)}, "Enrich")), RETRIES)
    assert all(error in none.message for error in ALL_FOUR)


def test_lambda_tasks_are_found_in_parallel_branches_and_map_processors_in_both_forms(policy_analyzer):
    direct = {"Type": "Task", "Resource": FN_ARN, "End": True}
    states = {
        "Fan": {"Type": "Parallel", "Next": "Each", "Branches": [{"StartAt": "Direct", "States": {"Direct": direct}}]},
        "Each": {"Type": "Map", "End": True, "ItemProcessor": {
            "ProcessorConfig": {"Mode": "INLINE"}, "StartAt": "Item", "States": {"Item": task()}}},
    }
    found = flagged(analyse(policy_analyzer, lambda: machine(states, "Fan")), RETRIES)
    said = " ".join(v.message for v in found)
    assert "task Fan[0]/Direct" in said and "task Each/Item" in said


def test_tasks_that_invoke_no_lambda_are_not_judged(policy_analyzer):
    send = {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage",
            "Parameters": {"QueueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/q", "MessageBody.$": "$"},
            "End": True}
    assert not flagged(analyse(policy_analyzer, lambda: machine({"Send": send}, "Send")), RETRIES)


# ---- the same classes in a TypeScript program (the end-to-end tier: Node.js runs it) ---------------

TS_PROGRAM = Path(__file__).parent / "node" / "programs" / "failure-paths-ts"


@pytest.mark.slow
def test_a_typescript_program_gets_each_failure_path_mistake_and_nothing_else(policy_analyzer):
    result = run_preview(TS_PROGRAM, stack="dev", analyzer=policy_analyzer)
    mandatory = {(v.policy, v.urn.rsplit("::", 1)[-1]) for v in result.violations if v.level == "mandatory"}
    assert mandatory == {
        (WRITABLE, "generator-async"), (WRITABLE, "nightly-invoices"), (WRITABLE, "invoice-issued-ledger"),
        (RETRIES, "email-invoices"), ("iam-no-wildcard-actions", "generator-execute"),
    }
    said = {v.urn.rsplit("::", 1)[-1]: v.message for v in result.violations if v.policy == WRITABLE}
    assert "role 'generator-role'" in said["generator-async"] and "sqs:SendMessage" in said["generator-async"]
    # a first preview cannot read what names unknown ARNs: notes, never a verdict of these rules; what
    # it can read is judged all the same (the generator's role holds only a managed policy, known, that
    # allows sqs:SendMessage on no queue at all), however many destinations before it could not be
    first = run_preview(TS_PROGRAM, stack="dev", analyzer=policy_analyzer, unknowns=True)
    assert resource_names(flagged(first.violations, WRITABLE)) == ["generator-async"]
    assert skipped(first.violations, WRITABLE) and not flagged(first.violations, RETRIES)


def test_every_destination_is_judged_when_another_cannot_be_and_what_cannot_be_read_is_named(policy_analyzer):
    """A schedule whose role's policy is unknown in a first preview is noted; the function after it
    is still judged (a type that cannot be read once ended the rule there, hiding the rest), and a
    DLQ of another stack is noted by name instead of passed in silence."""
    def program():
        runner = reminder_schedule(None)
        later = aws.s3.Bucket("marker").arn.apply(lambda _: document(allow("sqs:SendMessage", "*")))
        aws.iam.RolePolicy("reminders-later", role=runner.id, policy=later)
        worker = role("worker-role", "lambda")
        role_policy(worker, "worker-policy", LOGS_ONLY)
        function("worker", worker, dead_letter_config={"target_arn": aws.sns.Topic("worker-dlq").arn})
        aws.sns.TopicSubscription("alerts-to-ops", topic=aws.sns.Topic("alerts").arn, protocol="sqs",
                                  endpoint="arn:aws:sqs:us-east-1:123456789012:ops",
                                  redrive_policy=json.dumps({"deadLetterTargetArn":
                                                             "arn:aws:sqs:us-east-1:123456789012:ops-dlq"}))

    result = analyse(policy_analyzer, program, unknowns=True)

    [found] = flagged(result, WRITABLE)
    assert resource_names([found]) == ["worker"] and "not allowed sns:Publish" in found.message
    [note] = skipped(result, WRITABLE)
    assert "Schedule 'reminders'" in note.message
    assert ("the dead-letter queue arn:aws:sqs:us-east-1:123456789012:ops-dlq of subscription 'alerts-to-ops' is "
            "outside this stack") in note.message
