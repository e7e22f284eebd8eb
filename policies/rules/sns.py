"""SNS rule: a subscription that delivers to SQS or Lambda keeps what it cannot deliver."""

from pulumi_policy import ReportViolation, ResourceValidationArgs

from ._links import SUBSCRIPTION
from ._policy import rule
from ._values import Malformed, get, json_document, resource_rule

KEPT_PROTOCOLS = ("sqs", "lambda")


def _check(args: ResourceValidationArgs, report: ReportViolation) -> None:
    protocol = get(args.props, "protocol")
    if protocol not in KEPT_PROTOCOLS:
        return
    document = json_document(args.props, "redrivePolicy")
    if document is None:
        report(f"the {protocol} subscription has no redrivePolicy: a message SNS cannot deliver (the "
               "queue's policy refuses it, the function is throttled or deleted) is dropped after SNS's "
               "retries. Set redrive_policy to json.dumps({'deadLetterTargetArn': <SQS queue ARN>}).", None)
    elif not document.get("deadLetterTargetArn"):
        raise Malformed("redrivePolicy has no deadLetterTargetArn; set it to the dead-letter queue's ARN")


sns_subscription_has_redrive_policy = rule("resource", "sns-subscription-has-redrive-policy", resource_rule(_check, SUBSCRIPTION))

POLICIES = [sns_subscription_has_redrive_policy]
