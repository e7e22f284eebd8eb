"""The paths where messages vanish without an error: a service delivers to a queue, topic or
function that does not let it.

AWS accepts an SNS subscription of a queue, an EventBridge rule target or Scheduler target that is
a queue or topic, whatever the target's policy says; at run time the delivery is refused and the
message is dropped (SNS retries and then drops it, EventBridge and Scheduler drop it or, with a
DLQ, park it there). S3 checks its destinations when a notification is configured, so a missing
permission fails the deploy, and one removed later drops the events.

What delivers, and what it needs on the target (https://docs.aws.amazon.com/sns/latest/dg/subscribe-sqs-queue-to-sns-topic.html,
https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html,
https://docs.aws.amazon.com/AmazonS3/latest/userguide/grant-destinations-permissions-to-s3.html):
- SNS -> SQS: the queue policy allows sns.amazonaws.com sqs:SendMessage (for that topic); SNS ->
  Lambda: a lambda Permission for sns.amazonaws.com;
- EventBridge rule -> SQS/SNS: the queue or topic policy allows events.amazonaws.com
  (sqs:SendMessage / sns:Publish, for that rule); -> Lambda: a lambda Permission for
  events.amazonaws.com; Scheduler -> SQS/SNS: the schedule's role does;
- S3 -> SQS/SNS/Lambda: the queue or topic policy allows s3.amazonaws.com, and a function has a
  lambda Permission for s3.amazonaws.com (for that bucket).
"""

from __future__ import annotations

from typing import Optional

from pulumi_policy import PolicyResource, ReportViolation, StackValidationArgs
from pulumi_policy.proxy import UnknownValueError

from ._iam import Statement, arn_covers, grants
from ._links import (
    ALIAS,
    BUCKET_NOTIFICATION,
    EVENT_TARGET,
    FUNCTION,
    PERMISSION,
    QUEUE,
    ROLE,
    SCHEDULE,
    SUBSCRIPTION,
    TOPIC,
    ResourcePolicies,
    StackIndex,
    function_at,
    label,
    schedule_target,
)
from ._policy import rule
from ._roles import RoleGrants
from ._values import each, each_resource, gather, get, known, plain

SEND = {QUEUE: "sqs:SendMessage", TOPIC: "sns:Publish"}
SOURCE_ARN_KEYS = ("aws:sourcearn",)


def _names_service(principal, service: str) -> bool:
    if principal == "*":
        return True
    if not isinstance(principal, dict):
        return False
    listed = principal.get("Service")
    services = listed if isinstance(listed, list) else [listed]
    aws = principal.get("AWS")
    return service in services or aws == "*" or (isinstance(aws, list) and "*" in aws)


def _source_arns(statement: Statement) -> Optional[list[str]]:
    """The aws:SourceArn values a statement's condition requires, or None when it requires none."""
    found: Optional[list[str]] = None
    for test in statement.condition.values():
        if not isinstance(test, dict):
            continue
        for key, value in test.items():
            if key.lower() in SOURCE_ARN_KEYS:
                found = (found or []) + [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)]
    return found


def _lets(statements: list[Statement], service: str, action: str, source_arn: Optional[str]) -> bool:
    """Whether a resource policy lets `service` do `action`, from `source_arn` when it is known."""
    def matches(statement: Statement) -> bool:
        if not _names_service(statement.principal, service) or not grants(statement, action):
            return False
        required = _source_arns(statement)
        return required is None or source_arn is None or any(arn_covers(r, source_arn) for r in required)
    return any(s.allows and matches(s) for s in statements) and not any(
        not s.allows and not s.condition and matches(s) for s in statements)


def policy_fix(target: PolicyResource, service: str, source: str) -> str:
    kind = "QueuePolicy" if target.resource_type == QUEUE else "TopicPolicy"
    return (f"Add a {kind} statement: Effect Allow, Principal {{\"Service\": \"{service}\"}}, Action "
            f"\"{SEND[target.resource_type]}\", Resource the {'queue' if target.resource_type == QUEUE else 'topic'}'s "
            f"ARN, Condition {{\"ArnEquals\": {{\"aws:SourceArn\": <{source} ARN>}}}}.")


def known_arn(resource: Optional[PolicyResource]) -> Optional[str]:
    return known(lambda: get(resource.props, "arn")) if resource is not None else None


def subscription_topic(index: StackIndex, subscription: PolicyResource) -> tuple[Optional[PolicyResource], Optional[str]]:
    """A subscription's topic: the stack's resource (None for another stack's) and its ARN where known."""
    topic = index.follow(subscription, "topic", lambda: get(subscription.props, "topic"), [TOPIC])
    return topic, known_arn(topic) or known(lambda: get(subscription.props, "topic"))


def target_rule(target: PolicyResource) -> tuple[Optional[str], str]:
    """An EventBridge target's rule: its ARN (where the stack holds that one rule and its ARN is known)
    and ` of rule 'name'` for a message (empty while the name is unknown)."""
    rules = [d for d in target.property_dependencies.get("rule", []) if d.resource_type.endswith(":EventRule")]
    rule_name = known(lambda: get(target.props, "rule"))
    return (known_arn(rules[0]) if len(rules) == 1 else None), (f" of rule {rule_name!r}" if rule_name else "")


class Invokers:
    """Who each function of the stack lets invoke it: (service principal, source ARN or None when
    the Permission names none or it is not known yet), from its aws.lambda_.Permission resources."""

    def __init__(self, index: StackIndex):
        self._by_function: dict[str, list[tuple[str, Optional[str]]]] = {}

        def note(permission):
            principal = get(permission.props, "principal")
            function = function_at(index, permission, "function", lambda: get(permission.props, "function"))
            if function is not None and isinstance(principal, str):
                self._by_function.setdefault(function.urn, []).append(
                    (principal, known(lambda: get(permission.props, "sourceArn"))))
        self.unknown = gather(index.of_type(PERMISSION), note)

    def allow(self, function: PolicyResource, service: str, source_arn: Optional[str]) -> bool:
        """Whether `service` may invoke `function` (from `source_arn` when known). Not allowed while a
        Permission's function is unknown: that Permission may be this function's (UnknownValueError)."""
        if any(principal == service and (granted is None or source_arn is None or arn_covers(granted, source_arn))
               for principal, granted in self._by_function.get(function.urn, [])):
            return True
        if self.unknown:
            raise self.unknown[0]
        return False


def policy_lets(policies: ResourcePolicies, target: PolicyResource, service: str, source_arn: Optional[str]) -> bool:
    """Whether the queue's or topic's policy lets `service` send; not while a policy's owner is unknown."""
    if _lets(policies.statements(target), service, SEND[target.resource_type], source_arn):
        return True
    if policies.unplaced:
        raise policies.unplaced[0]  # a policy we cannot place yet may be this one's
    return False


def _report_not_permitted(index: StackIndex, invokers: Invokers, report: ReportViolation, resource: PolicyResource,
                          prop: str, service: str, source: tuple[str, Optional[str]], delivers: str, dropped: str) -> None:
    """Report `resource` when the function of this stack its `prop` delivers to has no
    aws.lambda_.Permission that lets `service` invoke it for `source` (its kind and ARN);
    `delivers` and `dropped` say who delivers and what then happens to the events."""
    function = function_at(index, resource, prop, lambda: get(resource.props, prop))
    if function is None or invokers.allow(function, service, source[1]):
        return
    report(f"{delivers} function {label(function)}, which has no aws.lambda_.Permission for {service}: "
           f"{dropped} {_permission_fix(service, source[0])}", resource.urn)


def _permission_fix(service: str, source: str) -> str:
    return (f"Add aws.lambda_.Permission(action='lambda:InvokeFunction', function=<the function>, "
            f"principal='{service}', source_arn=<{source} ARN>).")


# ---- sns-subscription-endpoint-allows-topic ------------------------------------------------------

SNS = "sns.amazonaws.com"


def _check_sns(args: StackValidationArgs, report: ReportViolation) -> None:
    index = StackIndex(args.resources)
    policies = ResourcePolicies(index)
    invokers = Invokers(index)

    def check(subscription):
        protocol = get(subscription.props, "protocol")
        if protocol not in ("sqs", "lambda"):
            return
        topic, topic_arn = subscription_topic(index, subscription)
        delivers = f"subscription '{subscription.name}' delivers topic {label(topic) if topic else topic_arn}"
        if protocol == "lambda":
            _report_not_permitted(index, invokers, report, subscription, "endpoint", SNS, ("topic", topic_arn),
                                  f"{delivers} to", "SNS accepts the subscription and drops every message after its "
                                  "retries.")
            return
        queue = index.follow(subscription, "endpoint", lambda: get(subscription.props, "endpoint"), [QUEUE])
        if queue is None:
            return  # a queue of another stack: its policy is not here to read
        if policy_lets(policies, queue, SNS, topic_arn):
            return
        report(f"{delivers} to queue {label(queue)}, whose policy does not let {SNS} send to it: SNS accepts the "
               f"subscription and drops every message it cannot deliver. {policy_fix(queue, SNS, 'topic')}", subscription.urn)

    each_resource(index, report, {SUBSCRIPTION: check})


sns_subscription_endpoint_allows_topic = rule("stack", "sns-subscription-endpoint-allows-topic", _check_sns)


# ---- eventbridge-target-allows-delivery ------------------------------------------------------------

EVENTS = "events.amazonaws.com"


def _check_eventbridge(args: StackValidationArgs, report: ReportViolation) -> None:
    index = StackIndex(args.resources)
    policies = ResourcePolicies(index)
    roles = RoleGrants(index)

    invokers = Invokers(index)

    def check_target(target):
        delivered = index.follow(target, "arn", lambda: get(target.props, "arn"), [QUEUE, TOPIC, FUNCTION, ALIAS])
        if delivered is None:
            return
        rule_arn, of_rule = target_rule(target)
        if delivered.resource_type in (FUNCTION, ALIAS):
            _report_not_permitted(index, invokers, report, target, "arn", EVENTS, ("rule", rule_arn),
                                  f"EventTarget '{target.name}'{of_rule} invokes",
                                  "the rule matches and every invocation fails and is dropped.")
            return
        if policy_lets(policies, delivered, EVENTS, rule_arn):
            return
        what = "queue" if delivered.resource_type == QUEUE else "topic"
        report(f"EventTarget '{target.name}'{of_rule} delivers to {what} "
               f"{label(delivered)}, whose policy does not let {EVENTS} send to it: the rule matches and every "
               f"event is dropped (or sits in the target's DLQ). {policy_fix(delivered, EVENTS, 'rule')}", target.urn)

    def check_schedule(schedule):
        delivered = schedule_target(index, schedule, [QUEUE, TOPIC])
        if delivered is None:
            return
        role = index.follow(schedule, "target", lambda: get(schedule.props, "target", "roleArn"), [ROLE])
        if role is None:
            return  # a role of another stack: its policies are not here to read
        action = SEND[delivered.resource_type]
        if not roles.allows(role, action, known_arn(delivered)):
            what = "queue" if delivered.resource_type == QUEUE else "topic"
            report(f"schedule '{schedule.name}' delivers to {what} {label(delivered)} with role {label(role)}, "
                   f"which is not allowed {action} on it: every invocation fails and is dropped (or sits in the "
                   f"schedule's DLQ). Allow {action} on the {what}'s ARN in the role's policy.", schedule.urn)

    each_resource(index, report, {EVENT_TARGET: check_target, SCHEDULE: check_schedule})


eventbridge_target_allows_delivery = rule("stack", "eventbridge-target-allows-delivery", _check_eventbridge)


# ---- s3-notification-target-allows-bucket ------------------------------------------------------------

S3 = "s3.amazonaws.com"
NOTIFIED = (("queues", "queueArn", QUEUE), ("topics", "topicArn", TOPIC), ("lambdaFunctions", "lambdaFunctionArn", FUNCTION))


def _check_s3(args: StackValidationArgs, report: ReportViolation) -> None:
    index = StackIndex(args.resources)
    policies = ResourcePolicies(index)
    invokers = Invokers(index)

    def check(item):
        notification, key, arn_key, kind, i = item
        entry = plain(get(notification.props, key))[i]
        bucket = known(lambda: get(notification.props, "bucket"))
        bucket_arn = f"arn:aws:s3:::{bucket}" if bucket else None
        if kind == FUNCTION:
            target = function_at(index, notification, key, lambda: entry.get(arn_key))
            if target is None:
                return
            if invokers.allow(target, S3, bucket_arn):
                return
            report(f"BucketNotification '{notification.name}' sends {key}[{i}] to function {label(target)}, which "
                   f"has no aws.lambda_.Permission for {S3}{f' from {bucket_arn}' if bucket_arn else ''}: S3 refuses "
                   "the configuration (the deploy fails) or, once the permission is gone, drops the events. Add "
                   f"a Permission(action='lambda:InvokeFunction', principal='{S3}', source_arn=<bucket ARN>) "
                   "and make the notification depend on it.", notification.urn)
            return
        target = index.follow(notification, key, lambda: entry.get(arn_key), [kind])
        if target is None:
            return
        if policy_lets(policies, target, S3, bucket_arn):
            return
        what = "queue" if kind == QUEUE else "topic"
        report(f"BucketNotification '{notification.name}' sends {key}[{i}] to {what} {label(target)}, whose policy "
               f"does not let {S3} send to it: S3 refuses the configuration (the deploy fails) or, once the "
               f"policy changes, drops the events. {policy_fix(target, S3, 'bucket')}", notification.urn)

    items = [(n, key, arn_key, kind, i) for n in index.of_type(BUCKET_NOTIFICATION) for key, arn_key, kind in NOTIFIED
             for i in range(len(_entries(n, key)))]
    each(items, check, report, lambda item: item[0].urn)


def _entries(notification: PolicyResource, key: str) -> list:
    try:
        entries = plain(get(notification.props, key, default=[]))
    except UnknownValueError:
        return []
    return entries if isinstance(entries, list) else []


s3_notification_target_allows_bucket = rule("stack", "s3-notification-target-allows-bucket", _check_s3)

POLICIES = [sns_subscription_endpoint_allows_topic, eventbridge_target_allows_delivery,
            s3_notification_target_allows_bucket]
