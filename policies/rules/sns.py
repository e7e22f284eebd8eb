"""SNS rule: a subscription that delivers to SQS or Lambda keeps what it cannot deliver."""

from pulumi_policy import ReportViolation, ResourceValidationArgs

from ._links import SUBSCRIPTION
from ._policy import HIGH, MANDATORY, rule
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


sns_subscription_has_redrive_policy = rule(
    "resource", name="sns-subscription-has-redrive-policy",
    display_name="SNS subscriptions keep what they cannot deliver",
    description=("An SNS subscription delivering to SQS or Lambda needs a redrivePolicy to a dead-letter "
                 "queue (the queue's type matches the topic's): SNS drops a message it cannot deliver "
                 "after its retries."),
    level=MANDATORY, severity=HIGH, tags=["reliability", "sns", "dlq"],
    remediation="Set redrive_policy=json.dumps({'deadLetterTargetArn': dlq.arn}) and allow SNS to send to that queue.",
    url="https://docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html",
    validate=resource_rule(_check, SUBSCRIPTION),
)

POLICIES = [sns_subscription_has_redrive_policy]
