"""Queue and topic policies: only encrypted transport, and no one-and-all principal; role trust
policies: no one-and-all principal either (anyone could assume the role).

A queue's or topic's resource policy is given by its own `policy` or by a QueuePolicy/TopicPolicy.
What makes a statement public, and which conditions restrict it, is _principals.py's to say.
"""

from __future__ import annotations

from typing import Iterator

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from ._iam import Statement, grants, statements
from ._links import QUEUE, QUEUE_POLICY, ROLE, TOPIC, TOPIC_POLICY, ResourcePolicies, StackIndex, label
from ._policy import rule
from ._principals import is_public_principal, lets_anyone_in
from ._values import each_resource, is_set, json_document, resource_rule

# What a transport rule must deny for each kind of resource, and the Action AWS's own example
# writes: for a queue the data going in and out (the SQS best practices deny "sqs:*" or "*"), for a
# topic what is published (the SNS example denies "SNS:Publish"; action names are case-insensitive).
GUARDED = {QUEUE: ("sqs:SendMessage", "sqs:ReceiveMessage"), TOPIC: ("sns:Publish",)}
EXAMPLE_ACTION = {QUEUE: "sqs:*", TOPIC: "sns:Publish"}


def _tls_fix(kind: str) -> str:
    return (f"add a Deny for Principal \"*\", Action \"{EXAMPLE_ACTION[kind]}\" (it must cover "
            f"{' and '.join(GUARDED[kind])}), Condition {{\"Bool\": {{\"aws:SecureTransport\": \"false\"}}}}")


def _public_statements(props, key: str) -> Iterator[Statement]:
    """The statements of the policy document at `key` (none where it is not set) that let anyone in."""
    if not is_set(props, key):
        return
    for statement in statements(json_document(props, key) or {}, key):
        if lets_anyone_in(statement):
            yield statement


def _check_public(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for statement in _public_statements(args.props, "policy"):
        actions = statement.not_actions and ["NotAction"] or statement.actions
        who = "everyone but its NotPrincipal" if statement.not_principal is not None else 'Principal "*"'
        report(f"{statement.where}: allows {actions} to {who} (anyone, any account) with no condition that "
               "ties it to a specific source ARN, account, organization or network (a wildcard value, a "
               "negated operator, IfExists or Null restricts nothing): name the principals, or add such a "
               "condition.", None)


# ---- queue-topic-policy-denies-insecure-transport -------------------------------------------------

def _denies_plain_transport(statement: Statement, kind: str) -> bool:
    if statement.allows or not is_public_principal(statement.principal):
        return False
    insecure = False
    for operator, test in statement.condition.items():
        if operator.lower() not in ("bool", "boolifexists") or not isinstance(test, dict):
            continue
        for key, value in test.items():
            values = value if isinstance(value, list) else [value]
            if key.lower() == "aws:securetransport" and any(str(v).lower() == "false" for v in values):
                insecure = True
    return insecure and all(grants(statement, action) for action in GUARDED[kind])


def _check_transport(args: StackValidationArgs, report: ReportViolation) -> None:
    index = StackIndex(args.resources)
    policies = ResourcePolicies(index)

    def check(resource):
        kind = resource.resource_type
        if any(_denies_plain_transport(s, kind) for s in policies.statements(resource)):
            return
        if policies.unplaced:
            raise policies.unplaced[0]  # a policy we cannot place yet may be this one's
        what = "queue" if kind == QUEUE else "topic"
        report(f"{what} {label(resource)} has no policy statement that denies requests without TLS: "
               f"{_tls_fix(kind)}.", resource.urn)

    each_resource(index, report, {(QUEUE, TOPIC): check})


queue_topic_policy_denies_insecure_transport = rule("stack", "queue-topic-policy-denies-insecure-transport",
                                                    _check_transport,
                                                    text_values={"queue_fix": _tls_fix(QUEUE), "topic_fix": _tls_fix(TOPIC)})

queue_topic_policy_no_public_principal = rule("resource", "queue-topic-policy-no-public-principal",
                                              resource_rule(_check_public, QUEUE_POLICY, TOPIC_POLICY, QUEUE, TOPIC))


def _check_trust(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for statement in _public_statements(args.props, "assumeRolePolicy"):
        report(f"{statement.where}: lets any AWS principal (any account) assume this role, with no condition "
               "that ties it to a specific account, organization or source: name the principal (a service "
               "such as lambda.amazonaws.com, an account or a role ARN).", None)


iam_role_trust_policy_no_public_principal = rule("resource", "iam-role-trust-policy-no-public-principal",
                                                 resource_rule(_check_trust, ROLE))

POLICIES = [queue_topic_policy_denies_insecure_transport, queue_topic_policy_no_public_principal,
            iam_role_trust_policy_no_public_principal]
