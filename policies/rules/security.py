"""Security rules: encryption at rest for queues, streams and tables; least-privilege IAM."""

import json
from functools import lru_cache
from typing import Optional

from pulumi_policy import ReportViolation, ResourceValidationArgs

from ._iam import (
    WRITE_LEVELS,
    access_level,
    catalogue_version,
    expand,
    is_wildcard,
    on_every_resource,
    resource_level_supported,
    statements,
    summary,
)
from ._links import (
    MANAGED_POLICY,
    QUEUE,
    QUEUE_POLICY,
    ROLE,
    ROLE_POLICY,
    STREAM,
    TABLE,
    TOPIC,
    TOPIC_POLICY,
)
from ._managed_policies import is_aws_managed, managed_policy
from ._policy import rule
from ._values import Malformed, boolean, get, is_set, json_document, plain, resource_rule

USER_POLICY = "aws:iam/userPolicy:UserPolicy"
GROUP_POLICY = "aws:iam/groupPolicy:GroupPolicy"
ATTACHMENTS = ("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "aws:iam/userPolicyAttachment:UserPolicyAttachment",
               "aws:iam/groupPolicyAttachment:GroupPolicyAttachment", "aws:iam/policyAttachment:PolicyAttachment")
IDENTITY_POLICIES = (ROLE, ROLE_POLICY, USER_POLICY, GROUP_POLICY, MANAGED_POLICY)
RESOURCE_POLICIES = (QUEUE_POLICY, TOPIC_POLICY, QUEUE, TOPIC)
# The AWS managed policies Lambda's documentation gives a function's execution role for its logs,
# its VPC network interfaces and X-Ray tracing: what they grant on "*" is AWS's own answer for that
# job, so a hand-written statement granting the same on "*" is not reported as write-on-everything.
BASELINE_POLICIES = ("AWSLambdaBasicExecutionRole", "AWSLambdaVPCAccessExecutionRole", "AWSXRayDaemonWriteAccess")


def _check_queue(args: ResourceValidationArgs, report: ReportViolation) -> None:
    # Absent, SQS encrypts new queues with SSE-SQS; only switching it off (without a KMS key) is bad.
    key = get(args.props, "kmsMasterKeyId")
    if isinstance(key, str) and key.strip():
        return
    if isinstance(key, str):
        report("kmsMasterKeyId is blank: SQS reads an empty key id as \"no SSE-KMS\", which switches a queue's "
               "encryption off. Remove kmsMasterKeyId (SSE-SQS stays on) or name a KMS key.", None)
        return
    if not boolean(args.props, "sqsManagedSseEnabled", True):
        report("sqsManagedSseEnabled is false and no kmsMasterKeyId is set: messages are stored "
               "unencrypted. Remove sqsManagedSseEnabled=false or set kmsMasterKeyId.", None)


def _check_stream(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if get(args.props, "encryptionType", default="NONE") != "KMS" or not get(args.props, "kmsKeyId"):
        report("the stream is not encrypted at rest (encryptionType defaults to NONE): set "
               "encryptionType 'KMS' and kmsKeyId ('alias/aws/kinesis' or your key).", None)


def _check_table(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if get(args.props, "serverSideEncryption", "enabled", default=False) is not True:
        report("the table uses the AWS owned key, which you cannot audit or revoke: set "
               "serverSideEncryption {enabled: true} (AWS managed key, or a kmsKeyArn).", None)


# ---- IAM documents ------------------------------------------------------------------------------

def documents(args: ResourceValidationArgs):
    """(where, document) for every policy document the resource carries (not a role's trust policy)."""
    if args.resource_type == ROLE:
        inline = plain(get(args.props, "inlinePolicies", default=[]))
        if not isinstance(inline, list):
            raise Malformed(f"inlinePolicies must be a list, got {inline!r}")
        for i, entry in enumerate(inline):
            if isinstance(entry, dict) and entry.get("policy"):
                yield f"inlinePolicies[{i}].policy", json_document(entry, "policy")
    elif is_set(args.props, "policy"):
        document = json_document(args.props, "policy")
        if document is not None:
            yield "policy", document


def _allows(args: ResourceValidationArgs):
    """The Allow statements of every policy document the resource holds (a Deny grants nothing)."""
    for where, document in documents(args):
        yield from (statement for statement in statements(document, where) if statement.allows)


def _managed_policy_arns(args: ResourceValidationArgs) -> list[str]:
    if args.resource_type == ROLE:
        arns = plain(get(args.props, "managedPolicyArns", default=[]))
        return [a for a in arns if isinstance(a, str)] if isinstance(arns, list) else []
    arn = get(args.props, "policyArn")
    return [arn] if isinstance(arn, str) else []


def _wildcard_managed_policy(arn: str) -> Optional[str]:
    """How an AWS managed policy allows whole services or everything, said for a violation, or None.
    Judged by its document where the catalogue holds it (AdministratorAccess, AmazonSQSFullAccess,
    AWSLambdaExecute's logs:*; ReadOnlyAccess's Get*/List* name no whole service), else by AWS's
    naming (the <Service>FullAccess family)."""
    if not is_aws_managed(arn):
        return None
    known = managed_policy(arn)
    if known is None:
        return "allows whole services (its name says so)" if arn.rsplit("/", 1)[-1].endswith("FullAccess") else None
    allowed = [s for s in statements(known["document"], arn) if s.allows]
    if any("*" in s.actions for s in allowed):
        return "allows every action of every service"
    if any(s.not_actions is not None for s in allowed):
        return "allows every action of every service but those it lists"
    whole = sorted({a for s in allowed for a in s.actions if a.endswith(":*")})
    if not whole:
        return None
    return f"allows whole services ({', '.join(whole[:6])}{', ...' if len(whole) > 6 else ''})"


@lru_cache(maxsize=None)
def _baseline_on_every_resource() -> dict[str, str]:
    """action (lower case) -> the AWS managed execution-role policy that grants it on "*"."""
    granted = {}
    for name in BASELINE_POLICIES:
        known = managed_policy(name)
        assert known is not None, f"{name} is missing from the managed policy snapshot"
        for statement in statements(known["document"], name):
            if statement.allows and any(on_every_resource(r) for r in statement.resources):
                granted.update({a.lower(): name for pattern in statement.actions for a in expand(pattern)})
    return granted


def _check_wildcard_actions(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for arn in _managed_policy_arns(args):
        grants_ = _wildcard_managed_policy(arn)
        if grants_:
            report(f"attaches the AWS managed policy {arn}, which {grants_}: write a policy that names the "
                   "actions the code calls.", None)
    for statement in _allows(args):
        if statement.not_actions is not None:
            report(f"{statement.where}: an Allow with NotAction grants every other action of every "
                   "service; list the actions with Action instead.", None)
        for action in statement.actions:
            if not is_wildcard(action):
                continue
            if action == "*":
                report(f"{statement.where}: Allow on \"*\" grants every action of every AWS service; "
                       "name the actions the code calls (e.g. sqs:SendMessage).", None)
                continue
            covered = expand(action)
            if not covered:
                report(f"{statement.where}: {action} matches no action in the IAM catalogue "
                       f"({catalogue_version()}); name the exact actions.", None)
                continue
            report(f"{statement.where}: {action} covers {summary(covered)} (and any action AWS "
                   "adds under that name later); name only the actions the code calls.", None)


def _check_write_on_all(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for statement in _allows(args):
        if statement.not_resources is not None:
            report(f"{statement.where}: an Allow with NotResource {statement.not_resources} grants its "
                   "actions on every other resource of every account; list the resources with Resource.", None)
            continue
        if not any(on_every_resource(r) for r in statement.resources):
            continue
        if statement.not_actions is not None or "*" in statement.actions:
            report(f"{statement.where}: allows every action (\"*\" or NotAction) on every resource.", None)
            continue
        writes = sorted({a for pattern in statement.actions for a in expand(pattern)
                         if access_level(a) in WRITE_LEVELS and resource_level_supported(a)
                         and a.lower() not in _baseline_on_every_resource()})
        if writes:
            passrole = " (iam:PassRole on * lets it hand any role, with its permissions, to a service)" \
                if "iam:PassRole" in writes else ""
            everywhere = " and ".join(json.dumps(r) for r in statement.resources if on_every_resource(r))
            report(f"{statement.where}: allows write actions on every resource (Resource {everywhere}): "
                   f"{summary(writes)}{passrole}. Scope Resource to the ARNs the code writes to.", None)


sqs_queue_encrypted_at_rest = rule("resource", "sqs-queue-encrypted-at-rest", resource_rule(_check_queue, QUEUE))

kinesis_stream_encrypted_at_rest = rule("resource", "kinesis-stream-encrypted-at-rest", resource_rule(_check_stream, STREAM))

dynamodb_table_encrypted_with_kms = rule("resource", "dynamodb-table-encrypted-with-kms", resource_rule(_check_table, TABLE))

iam_no_wildcard_actions = rule("resource", "iam-no-wildcard-actions",
                               resource_rule(_check_wildcard_actions, *IDENTITY_POLICIES, *RESOURCE_POLICIES, *ATTACHMENTS))

iam_no_write_actions_on_all_resources = rule("resource", "iam-no-write-actions-on-all-resources",
                                             resource_rule(_check_write_on_all, *IDENTITY_POLICIES))

POLICIES = [
    sqs_queue_encrypted_at_rest,
    kinesis_stream_encrypted_at_rest,
    dynamodb_table_encrypted_with_kms,
    iam_no_wildcard_actions,
    iam_no_write_actions_on_all_resources,
]
