"""Names within AWS limits: an explicit name AWS would refuse fails the deployment half way."""

import re

from pulumi_policy import ReportViolation, ResourceValidationArgs

from integration_blueprint.core import aws_limits as limits

from ._links import (
    FUNCTION,
    LOG_GROUP,
    MANAGED_POLICY,
    QUEUE,
    ROLE,
    ROLE_POLICY,
    SCHEDULE,
    STATE_MACHINE,
    STREAM,
    TABLE,
    TOPIC,
)
from ._policy import rule
from ._values import boolean, get, resource_rule

EVENT_RULE = "aws:cloudwatch/eventRule:EventRule"
# SQS CreateQueue: "alphanumeric characters, hyphens (-), and underscores (_)" (before a FIFO's .fifo).
SQS_NAME_CHARACTERS = re.compile(r"[A-Za-z0-9_-]+")
MAX_LENGTH = {
    FUNCTION: limits.LAMBDA_FUNCTION_NAME_MAX_LENGTH,
    ROLE: limits.IAM_ROLE_NAME_MAX_LENGTH,
    ROLE_POLICY: limits.IAM_POLICY_NAME_MAX_LENGTH,
    MANAGED_POLICY: limits.IAM_POLICY_NAME_MAX_LENGTH,
    QUEUE: limits.SQS_QUEUE_NAME_MAX_LENGTH,
    TOPIC: limits.SNS_TOPIC_NAME_MAX_LENGTH,
    SCHEDULE: limits.SCHEDULER_SCHEDULE_NAME_MAX_LENGTH,
    EVENT_RULE: limits.EVENTBRIDGE_RULE_NAME_MAX_LENGTH,
    LOG_GROUP: limits.LOG_GROUP_NAME_MAX_LENGTH,
    STREAM: limits.KINESIS_STREAM_NAME_MAX_LENGTH,
    TABLE: limits.DYNAMODB_TABLE_NAME_MAX_LENGTH,
    STATE_MACHINE: limits.SFN_STATE_MACHINE_NAME_MAX_LENGTH,
}


def _check(args: ResourceValidationArgs, report: ReportViolation) -> None:
    name = get(args.props, "name")
    if not isinstance(name, str):
        return  # auto-named (or not known yet): Pulumi's generated name is the component's concern
    limit = MAX_LENGTH[args.resource_type]
    kind = args.resource_type.rsplit(":", 1)[-1]
    if len(name) > limit:
        report(f"{kind} name {name!r} has {len(name)} characters; AWS accepts at most {limit}"
               f"{' (the .fifo suffix included)' if args.resource_type == QUEUE else ''}. Shorten it.", None)
    if args.resource_type == QUEUE:
        is_fifo = boolean(args.props, "fifoQueue", False)
        if is_fifo and not name.endswith(limits.SQS_FIFO_SUFFIX):
            report(f"FIFO queue name {name!r} must end with {limits.SQS_FIFO_SUFFIX}.", None)
        elif not is_fifo and "." in name:
            report(f"standard queue name {name!r} contains a dot; SQS allows only letters, digits, '-' "
                   "and '_' (a .fifo name needs fifoQueue=true).", None)
        stem = name[:-len(limits.SQS_FIFO_SUFFIX)] if is_fifo and name.endswith(limits.SQS_FIFO_SUFFIX) else name
        if "." not in stem and not SQS_NAME_CHARACTERS.fullmatch(stem):
            report(f"queue name {name!r} has characters SQS refuses (spaces and punctuation); it allows only "
                   "letters, digits, '-' and '_'.", None)


aws_resource_names_within_limits = rule("resource", "aws-resource-names-within-limits", resource_rule(_check, *MAX_LENGTH))

POLICIES = [aws_resource_names_within_limits]
