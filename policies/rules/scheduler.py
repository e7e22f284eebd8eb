"""EventBridge Scheduler rule: a target that fails must be retried and then kept, not dropped."""

from pulumi_policy import ReportViolation, ResourceValidationArgs
from pulumi_policy.proxy import UnknownValueError

from integration_blueprint.core import aws_limits

from ._links import SCHEDULE
from ._policy import rule
from ._values import get, given, resource_rule, shown, whole_number
from .eventbridge import missing_retry_and_dlq


def _check(args: ResourceValidationArgs, report: ReportViolation) -> None:
    target = get(args.props, "target", default={})
    missing = missing_retry_and_dlq(target, "target.", "Scheduler", report)
    if missing:
        report("schedule has no " + " and no ".join(missing) + f": an invocation that fails is "
               f"dropped {_after_retries(target)} with no record of it.", None)


def _after_retries(target) -> str:
    """When Scheduler gives up on an invocation, in the program's own retry settings."""
    if not given(target, "retryPolicy"):
        return (f"after Scheduler's default retries ({aws_limits.SCHEDULER_RETRY_ATTEMPTS_MAX} retries over "
                f"{aws_limits.SCHEDULER_EVENT_AGE_MAX_SECONDS} s)")
    try:
        attempts = get(target, "retryPolicy", "maximumRetryAttempts")
    except UnknownValueError:
        return "after its retries"
    if attempts is None:
        return f"after its retries ({aws_limits.SCHEDULER_RETRY_ATTEMPTS_MAX} by default)"
    attempts = whole_number(attempts, "target.retryPolicy.maximumRetryAttempts")
    if attempts == 0:
        return "at its first failure (retryPolicy.maximumRetryAttempts 0: not retried)"
    return f"after its {shown(attempts)} {'retry' if attempts == 1 else 'retries'}"


scheduler_target_has_retry_and_dlq = rule("resource", "scheduler-target-has-retry-and-dlq", resource_rule(_check, SCHEDULE))

POLICIES = [scheduler_target_has_retry_and_dlq]
