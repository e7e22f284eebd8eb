"""Queue and topic policies: only encrypted transport, and no one-and-all principal.

A queue's or topic's resource policy is given by its own `policy` or by a QueuePolicy/TopicPolicy.
"""

from __future__ import annotations

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from ._iam import Statement, grants, statements
from ._links import QUEUE, QUEUE_POLICY, TOPIC, TOPIC_POLICY, ResourcePolicies, StackIndex, label
from ._policy import ADVISORY, HIGH, MANDATORY, MEDIUM, rule
from ._values import each, is_set, json_document, resource_rule

# Condition keys that tie a public principal to one account, organization, source or network.
RESTRICTING_KEYS = frozenset(k.lower() for k in (
    "aws:SourceArn", "aws:SourceAccount", "aws:SourceOwner", "aws:SourceOrgID", "aws:SourceOrgPaths",
    "aws:PrincipalOrgID", "aws:PrincipalOrgPaths", "aws:PrincipalAccount", "aws:PrincipalArn",
    "aws:SourceVpc", "aws:SourceVpce", "aws:SourceIp"))
# What a transport rule must deny for each kind of resource, and the Action AWS's own example
# writes: for a queue the data going in and out (the SQS best practices deny "sqs:*" or "*"), for a
# topic what is published (the SNS example denies "SNS:Publish"; action names are case-insensitive).
GUARDED = {QUEUE: ("sqs:SendMessage", "sqs:ReceiveMessage"), TOPIC: ("sns:Publish",)}
EXAMPLE_ACTION = {QUEUE: "sqs:*", TOPIC: "sns:Publish"}


def _tls_fix(kind: str) -> str:
    return (f"add a Deny for Principal \"*\", Action \"{EXAMPLE_ACTION[kind]}\" (it must cover "
            f"{' and '.join(GUARDED[kind])}), Condition {{\"Bool\": {{\"aws:SecureTransport\": \"false\"}}}}")


def _public(principal) -> bool:
    if principal == "*":
        return True
    if isinstance(principal, dict):
        aws = principal.get("AWS")
        return aws == "*" or (isinstance(aws, list) and "*" in aws)
    return False


def _condition_keys(statement: Statement) -> set[str]:
    return {key.lower() for test in statement.condition.values() if isinstance(test, dict) for key in test}


def _check_public(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if not is_set(args.props, "policy"):
        return
    document = json_document(args.props, "policy")
    for statement in statements(document or {}, "policy"):
        if not statement.allows:
            continue
        if _public(statement.principal) and not _condition_keys(statement) & RESTRICTING_KEYS:
            actions = statement.not_actions and ["NotAction"] or statement.actions
            report(f"{statement.where}: allows {actions} to Principal \"*\" (anyone, any account) with no "
                   "condition on aws:SourceArn, aws:SourceAccount or aws:PrincipalOrgID: name the principals, "
                   "or add such a condition.", None)


# ---- queue-topic-policy-denies-insecure-transport -------------------------------------------------

def _denies_plain_transport(statement: Statement, kind: str) -> bool:
    if statement.allows or not _public(statement.principal):
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

    each(index.of_type(QUEUE, TOPIC), check, report, lambda r: r.urn)


queue_topic_policy_denies_insecure_transport = rule(
    "stack", name="queue-topic-policy-denies-insecure-transport",
    display_name="Queues and topics refuse unencrypted transport",
    description=("Every SQS queue and SNS topic should have a resource policy that denies requests made "
                 "without TLS (Deny, Principal \"*\", Condition Bool aws:SecureTransport \"false\"), as AWS's "
                 "security best practices for SQS and SNS advise."),
    level=ADVISORY, severity=MEDIUM, tags=["security", "sqs", "sns", "encryption-in-transit"],
    remediation=(f"In the QueuePolicy (queue): {_tls_fix(QUEUE)}. In the TopicPolicy (topic): {_tls_fix(TOPIC)}. "
                 "Resource: the queue's or topic's ARN."),
    url="https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-security-best-practices.html",
    validate=_check_transport,
)

queue_topic_policy_no_public_principal = rule(
    "resource", name="queue-topic-policy-no-public-principal", display_name="Queue and topic policies are not public",
    description=("A queue or topic policy must not Allow Principal \"*\" without a condition that ties it to "
                 "a source or account (aws:SourceArn, aws:SourceAccount, aws:PrincipalOrgID, ...): anyone "
                 "could send, read or delete."),
    level=MANDATORY, severity=HIGH, tags=["security", "sqs", "sns", "public-access"],
    remediation="Name the principals (an account, a role, a service) or add an aws:SourceArn / aws:SourceAccount condition.",
    url="https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-security-best-practices.html",
    validate=resource_rule(_check_public, QUEUE_POLICY, TOPIC_POLICY, QUEUE, TOPIC),
)

POLICIES = [queue_topic_policy_denies_insecure_transport, queue_topic_policy_no_public_principal]
