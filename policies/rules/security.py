"""Security rules: encryption at rest for queues, streams and tables; no wildcard IAM actions."""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy

from ._links import QUEUE, STREAM, TABLE
from ._values import Malformed, boolean, get, json_document, plain, resource_rule

ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
MANAGED_POLICY = "aws:iam/policy:Policy"


def _check_queue(args: ResourceValidationArgs, report: ReportViolation) -> None:
    # Absent, SQS encrypts new queues with SSE-SQS; only switching it off (without a KMS key) is bad.
    if get(args.props, "kmsMasterKeyId"):
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


def _documents(args: ResourceValidationArgs):
    if args.resource_type == ROLE:
        for i, inline in enumerate(get(args.props, "inlinePolicies", default=[])):
            yield f"inlinePolicies[{i}].policy", json_document(inline, "policy")
    else:
        yield "policy", json_document(args.props, "policy")


def _check_iam(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for where, document in _documents(args):
        if document is None:
            continue
        statements = document.get("Statement", [])
        for statement in statements if isinstance(statements, list) else [statements]:
            if not isinstance(statement, dict):
                raise Malformed(f"{where}: each Statement must be an object, got {statement!r}")
            if statement.get("Effect") != "Allow":
                continue
            if "NotAction" in statement:
                report(f"{where}: an Allow with NotAction grants every other action; list the "
                       "actions with Action instead.", None)
            actions = plain(statement.get("Action", []))
            wild = [a for a in ([actions] if isinstance(actions, str) else actions) if "*" in str(a)]
            if wild:
                report(f"{where}: Allow on wildcard actions {wild}; name the exact actions the code "
                       "calls (e.g. sqs:SendMessage).", None)


sqs_queue_encrypted_at_rest = ResourceValidationPolicy(
    name="sqs-queue-encrypted-at-rest",
    description="SQS queues must be encrypted at rest: keep SSE-SQS on or set kmsMasterKeyId.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=resource_rule(_check_queue, QUEUE),
)

kinesis_stream_encrypted_at_rest = ResourceValidationPolicy(
    name="kinesis-stream-encrypted-at-rest",
    description="Kinesis streams must be encrypted at rest: set encryptionType 'KMS' and kmsKeyId.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=resource_rule(_check_stream, STREAM),
)

dynamodb_table_encrypted_with_kms = ResourceValidationPolicy(
    name="dynamodb-table-encrypted-with-kms",
    description=("DynamoDB tables should be encrypted with a KMS key you can audit: set "
                 "serverSideEncryption {enabled: true}."),
    enforcement_level=EnforcementLevel.ADVISORY,
    validate=resource_rule(_check_table, TABLE),
)

iam_no_wildcard_actions = ResourceValidationPolicy(
    name="iam-no-wildcard-actions",
    description=("IAM policies must not Allow wildcard actions ('*', 'sqs:*', 's3:Get*') or NotAction: "
                 "name each action the code needs."),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=resource_rule(_check_iam, ROLE, ROLE_POLICY, MANAGED_POLICY),
)

POLICIES = [
    sqs_queue_encrypted_at_rest,
    kinesis_stream_encrypted_at_rest,
    dynamodb_table_encrypted_with_kms,
    iam_no_wildcard_actions,
]
