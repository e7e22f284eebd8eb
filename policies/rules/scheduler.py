"""EventBridge Scheduler rule: a target that fails must be retried and then kept, not dropped."""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy

from ._links import SCHEDULE
from ._values import get, resource_rule


def _check(args: ResourceValidationArgs, report: ReportViolation) -> None:
    missing = []
    if get(args.props, "target", "retryPolicy") is None:
        missing.append("target.retryPolicy (maximumRetryAttempts, maximumEventAgeInSeconds)")
    dlq = get(args.props, "target", "deadLetterConfig", "arn")
    if not dlq:
        missing.append("target.deadLetterConfig.arn (a standard SQS queue)")
    elif isinstance(dlq, str) and dlq.endswith(".fifo"):
        report(f"the dead-letter queue {dlq} is FIFO; Scheduler needs a standard queue.", None)
    if missing:
        report("schedule has no " + " and no ".join(missing) + ": an invocation that fails is "
               "dropped after Scheduler's default retries with no record of it.", None)


scheduler_target_has_retry_and_dlq = ResourceValidationPolicy(
    name="scheduler-target-has-retry-and-dlq",
    description=("An EventBridge Scheduler schedule's target must set a retryPolicy and a "
                 "deadLetterConfig (a standard SQS queue)."),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=resource_rule(_check, SCHEDULE),
)

POLICIES = [scheduler_target_has_retry_and_dlq]
