"""Failure destinations their writer can write to: a DLQ or on-failure destination that refuses its
writer loses exactly the records it exists to keep, and nothing says so until they are needed.

Who writes each failure destination, and with what permission (AWS's guides):
- a Scheduler schedule's DLQ: the schedule's execution role, sqs:SendMessage on the queue; the queue
  must be a standard queue (https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html);
- an EventBridge rule target's DLQ: events.amazonaws.com, allowed sqs:SendMessage by the queue's
  policy (for that rule where an aws:SourceArn condition names one)
  (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html);
- an SNS subscription's redrive queue: sns.amazonaws.com, allowed by the queue's policy
  (https://docs.aws.amazon.com/sns/latest/dg/sns-configure-dead-letter-queue.html);
- a Lambda function's deadLetterConfig and its FunctionEventInvokeConfig on-failure destination: the
  function's execution role, sqs:SendMessage / sns:Publish / lambda:InvokeFunction / events:PutEvents /
  s3:PutObject (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html); an
  event source mapping's on-failure destination is lambda-esm-role-can-use-source's (AWS refuses the
  mapping, so that rule says it as a deploy failure);
- an EventBridge pipe's DLQ: the pipe's role (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-pipes-error-troubleshooting.html).
"""

from __future__ import annotations

from typing import Callable, Optional

from pulumi_policy import PolicyResource, ReportViolation, StackValidationArgs

from ._links import (
    ALIAS,
    EVENT_TARGET,
    FUNCTION,
    INVOKE_CONFIG,
    PIPE,
    QUEUE,
    ROLE,
    SCHEDULE,
    SUBSCRIPTION,
    TOPIC,
    ResourcePolicies,
    StackIndex,
    arn_service,
    fifo,
    fifo_by_name,
    function_at,
    label,
)
from ._policy import rule
from ._roles import RoleGrants
from ._values import Unverifiable, each_resource, get, given, json_document, known
from .delivery import EVENTS, SNS, known_arn, policy_fix, policy_lets, subscription_topic, target_rule

EVENT_BUS = "aws:cloudwatch/eventBus:EventBus"
BUCKETS = ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2")
DESTINATIONS = (QUEUE, TOPIC, FUNCTION, ALIAS, EVENT_BUS, *BUCKETS)
# What the writer needs on each kind of destination, by resource type and by ARN service.
WRITE = {QUEUE: "sqs:SendMessage", TOPIC: "sns:Publish", FUNCTION: "lambda:InvokeFunction",
         EVENT_BUS: "events:PutEvents", **{bucket: "s3:PutObject" for bucket in BUCKETS}}
WRITE_BY_SERVICE = {"sqs": "sqs:SendMessage", "sns": "sns:Publish", "lambda": "lambda:InvokeFunction",
                    "events": "events:PutEvents", "s3": "s3:PutObject"}
KIND = {"sqs:SendMessage": "queue", "sns:Publish": "topic", "lambda:InvokeFunction": "function",
        "events:PutEvents": "event bus", "s3:PutObject": "bucket"}
PIPE_STREAM_PARAMETERS = ("kinesisStreamParameters", "dynamodbStreamParameters")


class Destination:
    """A failure destination: the stack's resource where it is one, and its ARN as the program
    writes it (None while unknown)."""

    def __init__(self, resource: Optional[PolicyResource], arn: Optional[str]):
        self.resource, self.arn = resource, arn
        if resource is not None:
            self.action = WRITE.get(resource.resource_type)
        else:
            self.action = WRITE_BY_SERVICE.get(arn_service(arn) or "") if arn else None
        self.kind = KIND.get(self.action or "", "destination")

    def named(self) -> str:
        return f"{self.kind} {label(self.resource) if self.resource is not None else self.arn}"

    def resource_arns(self) -> list[Optional[str]]:
        """The ARNs a role's statement may cover to allow the write: as written and the resource's own
        (a function named by its alias's ARN is the function); [None] (any resource) when neither is
        known, and for S3, whose object keys Lambda chooses."""
        if self.action == "s3:PutObject":
            return [None]
        arns = [a for a in (self.arn, known_arn(self.resource)) if a is not None]
        return list(dict.fromkeys(arns)) or [None]


def _destination(index: StackIndex, holder: PolicyResource, prop: str, read: Callable[[], object]) -> Destination:
    found = index.follow(holder, prop, read, DESTINATIONS)
    if found is not None and found.resource_type == ALIAS:
        found = function_at(index, holder, prop, read)
    return Destination(found, known(read))


def _schedule_dlq(index: StackIndex, schedule: PolicyResource) -> Destination:
    """A schedule's DLQ. Its `target` also holds the role and the target, so while the DLQ's ARN is
    unknown its queue is the one queue among the target's dependencies that is not the target."""
    target = get(schedule.props, "target", default={})

    def read():
        return get(target, "deadLetterConfig", "arn")
    arn = known(read)
    if arn is not None:
        return Destination(index.lookup(arn, [QUEUE]), arn)
    queues = [d for d in schedule.property_dependencies.get("target", []) if d.resource_type == QUEUE]
    invoked = known(lambda: get(target, "arn"))
    invoked_queue = index.lookup(invoked, [QUEUE]) if invoked is not None else None
    others = [d for d in schedule.property_dependencies.get("target", []) if d.resource_type not in (QUEUE, ROLE)]
    candidates = [q for q in queues if q is not invoked_queue] if invoked is not None else (
        queues if others else [])
    if len(candidates) != 1:
        read()  # raises: which queue is the DLQ is not known yet
        return Destination(None, None)
    return Destination(candidates[0], None)


def _role_report(roles: RoleGrants, role: Optional[PolicyResource], destination: Destination,
                 writer: str) -> Optional[str]:
    """The action `role` lacks on the destination, or None when it may write. What this stack cannot
    show (a role of another stack, a destination of no kind the rule knows) is Unverifiable, named."""
    if destination.action is None:
        raise Unverifiable(f"{writer} names failure destination {destination.arn or '(unknown)'}, which is none of "
                           f"the kinds it can write to ({', '.join(sorted(set(KIND.values())))}): check it by hand")
    if role is None:
        raise Unverifiable(f"{writer} writes {destination.named()} with a role of another stack, whose policies are "
                           f"not here to read: check by hand that it is allowed {destination.action} on it")
    if any(roles.allows(role, destination.action, arn) for arn in destination.resource_arns()):
        return None
    return destination.action


def _outside(writer: str, arn: object, service: str) -> Unverifiable:
    """A DLQ of another stack that a service writes: its policy is not here to read."""
    return Unverifiable(f"the dead-letter queue {arn} of {writer} is outside this stack, its policy not here to "
                        f"read: check by hand that it lets {service} send to it")


def _check(args: StackValidationArgs, report: ReportViolation) -> None:
    index = StackIndex(args.resources)
    roles = RoleGrants(index)
    policies = ResourcePolicies(index)

    def role_cannot_write(holder, writer: str, role, destination: Destination, lost: str) -> None:
        action = _role_report(roles, role, destination, writer)
        if action is None:
            return
        report(f"{writer} sends {lost} to {destination.named()}, which it writes with role {label(role)}; that role "
               f"is not allowed {action} on it, so each of them is lost instead of kept. Allow {action} on the "
               f"{destination.kind}'s ARN in the policy of role {label(role)}.", holder.urn)

    def check_schedule(schedule):
        target = get(schedule.props, "target", default={})
        if not given(get(target, "deadLetterConfig", default={}), "arn"):
            return
        dlq = _schedule_dlq(index, schedule)
        if dlq.resource is not None and dlq.arn is None and fifo(dlq.resource):
            # a FIFO ARN the program writes out is scheduler-target-has-retry-and-dlq's to report
            report(f"schedule '{schedule.name}' names FIFO queue {label(dlq.resource)} as its dead-letter queue; "
                   "Scheduler accepts only a standard queue there and refuses the schedule. Give it a standard "
                   "queue as the DLQ.", schedule.urn)
            return
        if dlq.arn is not None and fifo_by_name(dlq.arn):
            return
        role = index.follow(schedule, "target", lambda: get(target, "roleArn"), [ROLE])
        role_cannot_write(schedule, f"schedule '{schedule.name}'", role, dlq,
                          "the invocations it gives up on (its dead-letter queue)")

    def check_event_target(target):
        if not given(get(target.props, "deadLetterConfig", default={}), "arn"):
            return
        queue = index.follow(target, "deadLetterConfig", lambda: get(target.props, "deadLetterConfig", "arn"), [QUEUE])
        if queue is None:
            raise _outside(f"EventTarget '{target.name}'", get(target.props, "deadLetterConfig", "arn"), EVENTS)
        rule_arn, of_rule = target_rule(target)
        if policy_lets(policies, queue, EVENTS, rule_arn):
            return
        report(f"EventTarget '{target.name}'{of_rule} keeps the events it "
               f"cannot deliver in dead-letter queue {label(queue)}, whose policy does not let {EVENTS} send to it: "
               f"EventBridge cannot write them there and they are lost. {policy_fix(queue, EVENTS, 'rule')}",
               target.urn)

    def check_subscription(subscription):
        document = json_document(subscription.props, "redrivePolicy")
        if not document or not document.get("deadLetterTargetArn"):
            return  # none (or a malformed one): sns-subscription-has-redrive-policy says so
        queue = index.follow(subscription, "redrivePolicy", lambda: document["deadLetterTargetArn"], [QUEUE])
        if queue is None:
            raise _outside(f"subscription '{subscription.name}'", document["deadLetterTargetArn"], SNS)
        _, topic_arn = subscription_topic(index, subscription)
        if policy_lets(policies, queue, SNS, topic_arn):
            return
        report(f"subscription '{subscription.name}' keeps the messages it cannot deliver in dead-letter queue "
               f"{label(queue)}, whose policy does not let {SNS} send to it: SNS cannot write them there and they "
               f"are lost. {policy_fix(queue, SNS, 'topic')}", subscription.urn)

    def check_function(function):
        if not given(get(function.props, "deadLetterConfig", default={}), "targetArn"):
            return
        dlq = _destination(index, function, "deadLetterConfig", lambda: get(function.props, "deadLetterConfig",
                                                                             "targetArn"))
        role_cannot_write(function, f"function {label(function)}", roles.role_of(function), dlq,
                          "the asynchronous events it fails (its dead_letter_config)")

    def check_invoke_config(config):
        destination_config = get(config.props, "destinationConfig", "onFailure", default={})
        if not given(destination_config, "destination"):
            return
        function = function_at(index, config, "functionName", lambda: get(config.props, "functionName"))
        if function is None:
            raise Unverifiable(f"FunctionEventInvokeConfig '{config.name}' configures function "
                               f"{get(config.props, 'functionName')} of another stack, whose role is not here to "
                               "read: check by hand that it may write its on-failure destination")
        destination = _destination(index, config, "destinationConfig",
                                   lambda: get(config.props, "destinationConfig", "onFailure", "destination"))
        role_cannot_write(config, f"FunctionEventInvokeConfig '{config.name}' of function {label(function)}",
                          roles.role_of(function), destination, "the events the function fails (on_failure)")

    def check_pipe(pipe):
        for key in PIPE_STREAM_PARAMETERS:
            parameters = get(pipe.props, "sourceParameters", key, default={})
            if not given(get(parameters, "deadLetterConfig", default={}), "arn"):
                continue
            dlq = _destination(index, pipe, "sourceParameters",
                               lambda: get(pipe.props, "sourceParameters", key, "deadLetterConfig", "arn"))  # noqa: B023
            role = index.follow(pipe, "roleArn", lambda: get(pipe.props, "roleArn"), [ROLE])
            role_cannot_write(pipe, f"pipe '{pipe.name}'", role, dlq, "the records it gives up on (its DLQ)")

    each_resource(index, report, {
        SCHEDULE: check_schedule,
        EVENT_TARGET: check_event_target,
        SUBSCRIPTION: check_subscription,
        FUNCTION: check_function,
        INVOKE_CONFIG: check_invoke_config,
        PIPE: check_pipe,
    })


failure_destination_writable = rule("stack", "failure-destination-writable", _check)

POLICIES = [failure_destination_writable]
