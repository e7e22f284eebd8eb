"""CloudWatch Logs rule: every function's log group expires its events.

Lambda writes to /aws/lambda/<function name> (or the group its loggingConfig names) and, when no
such group exists, creates it with retention "never expire": logs then grow, and cost, forever.
"""

from pulumi_policy import ReportViolation, StackValidationArgs

from integration_blueprint.core import aws_limits

from ._links import FUNCTION, LOG_GROUP, StackIndex, label
from ._policy import rule
from ._values import Malformed, each_resource, gather, get, is_set, known, shown, to_number


def _retention_days(group) -> float:
    days = to_number(get(group.props, "retentionInDays", default=0), f"log group {label(group)}: retentionInDays") or 0
    if days and days not in aws_limits.LOG_RETENTION_ALLOWED_DAYS:
        raise Malformed(f"log group {label(group)}: retentionInDays is {shown(days)}; CloudWatch Logs accepts "
                        f"{', '.join(map(str, aws_limits.LOG_RETENTION_ALLOWED_DAYS))}")
    return days


def _check(args: StackValidationArgs, report: ReportViolation) -> None:
    index = StackIndex(args.resources)
    by_function = {}  # log groups whose name was built from a function (name=f"/aws/lambda/{fn.name}")

    def note(group):
        for dependency in group.property_dependencies.get("name", []):
            if dependency.resource_type == FUNCTION:
                by_function[dependency.urn] = group
    gather(index.of_type(LOG_GROUP), note)

    def check(function):
        logging = get(function.props, "loggingConfig", default={})
        configured = is_set(logging, "logGroup")
        if configured:
            # The group's property dependency decides while its name is still unknown (a first preview).
            group = index.follow(function, "loggingConfig", lambda: get(logging, "logGroup"), [LOG_GROUP])
            where = known(lambda: get(logging, "logGroup")) or f"log group {label(group)}"
        else:
            group = by_function.get(function.urn)
            where = ""
            if group is None:  # its name (maybe unknown yet) finds it
                name = get(function.props, "name")
                where = f"{aws_limits.LAMBDA_LOG_GROUP_PREFIX}{name}" if isinstance(name, str) else "/aws/lambda/<its name>"
                group = index.lookup(where, [LOG_GROUP]) if isinstance(name, str) else None
        if group is None:
            if configured:
                return  # a group of another stack: that stack's rule judges its retention
            report(f"function {label(function)} logs to {where}, which no LogGroup of this stack creates: "
                   "Lambda creates it on first use with retention \"never expire\". Declare "
                   "aws.cloudwatch.LogGroup(name=f\"/aws/lambda/{function.name}\", retention_in_days=30) "
                   "or set logging_config.log_group to a group with a retention.", function.urn)
            return
        if not _retention_days(group):
            report(f"log group {label(group)} of function {label(function)} has no retentionInDays: its "
                   "events never expire. Set retention_in_days (e.g. 30).", group.urn)

    each_resource(index, report, {FUNCTION: check})


lambda_log_group_has_retention = rule("stack", "lambda-log-group-has-retention", _check)

POLICIES = [lambda_log_group_has_retention]
