"""Asynchronous Lambda invocations: what fails in the function must land somewhere.

EventBridge rules, EventBridge Scheduler, SNS and S3 invoke Lambda asynchronously. A rule's or
schedule's DLQ catches only events that could not be delivered; an error the function returns is
retried by Lambda (twice by default) and then dropped, unless the function has an on-failure
destination (FunctionEventInvokeConfig) or a dead-letter queue (deadLetterConfig).
"""

from pulumi_policy import ReportViolation, StackValidationArgs
from pulumi_policy.proxy import UnknownValueError

from integration_blueprint.core import aws_limits

from ._links import (
    ALIAS,
    BUCKET_NOTIFICATION,
    EVENT_TARGET,
    FUNCTION,
    INVOKE_CONFIG,
    PERMISSION,
    SCHEDULE,
    SUBSCRIPTION,
    StackIndex,
    function_at,
    label,
    schedule_target,
)
from ._policy import rule
from ._values import each, gather, get, given, is_set, plain, shown, whole_number


def _callers(index: StackIndex):
    """(caller, how) for every resource of the stack that invokes a function asynchronously."""
    for schedule in index.of_type(SCHEDULE):
        yield schedule, "target", None
    for target in index.of_type(EVENT_TARGET):
        yield target, "arn", lambda t=target: get(t.props, "arn")
    for subscription in index.of_type(SUBSCRIPTION):
        yield subscription, "endpoint", lambda s=subscription: get(s.props, "endpoint")
    for notification in index.of_type(BUCKET_NOTIFICATION):
        for i, _ in enumerate(plain(get(notification.props, "lambdaFunctions", default=[])) or []):
            yield notification, "lambdaFunctions", lambda n=notification, i=i: get(n.props, "lambdaFunctions")[i].get(
                "lambdaFunctionArn")
    # Last: a permission only says who may invoke; the resources above say who does, and the
    # violation names the first caller found.
    for permission in index.of_type(PERMISSION):
        yield permission, "function", lambda p=permission: get(p.props, "function")


def _invoked(index: StackIndex, caller, prop, value):
    if caller.resource_type == PERMISSION and get(caller.props, "principal") not in aws_limits.LAMBDA_ASYNC_INVOKING_PRINCIPALS:
        return None  # a synchronous caller (API Gateway, a load balancer)
    if caller.resource_type == SUBSCRIPTION and get(caller.props, "protocol") != "lambda":
        return None
    if caller.resource_type == SCHEDULE:
        found = schedule_target(index, caller, [FUNCTION, ALIAS])
        if found is not None and found.resource_type == ALIAS:
            alias = found
            found = function_at(index, alias, "functionName", lambda: get(alias.props, "functionName"))
    else:
        found = function_at(index, caller, prop, value)
    return found if found is not None and found.resource_type == FUNCTION else None


def _caller(caller) -> str:
    """"EventTarget 'nightly-target' of rule 'nightly'": what invokes the function, as a team names it."""
    what = f"{caller.resource_type.rsplit(':', 1)[-1]} '{caller.name}'"
    if caller.resource_type == EVENT_TARGET:
        try:
            rule_name = get(caller.props, "rule")
        except UnknownValueError:
            rule_name = None
        if isinstance(rule_name, str):
            what += f" of rule '{rule_name}'"
    return what


def _check(args: StackValidationArgs, report: ReportViolation) -> None:
    index = StackIndex(args.resources)
    kept = set()
    retries: dict[str, object] = {}  # function URN -> its invoke config's maximumRetryAttempts
    configs: dict[str, str] = {}  # function URN -> the name of its FunctionEventInvokeConfig

    def note_config(config):
        destination = given(get(config.props, "destinationConfig", "onFailure", default={}), "destination")
        if not destination and not is_set(config.props, "maximumRetryAttempts"):
            return
        function = function_at(index, config, "functionName", lambda: get(config.props, "functionName"))
        if function is None:
            return
        if destination:
            kept.add(function.urn)
        configs[function.urn] = config.name
        if is_set(config.props, "maximumRetryAttempts"):
            retries[function.urn] = config.props["maximumRetryAttempts"]
    unknown_configs = gather(index.of_type(INVOKE_CONFIG), note_config)
    reported = set()

    def check(item):
        caller, prop, value = item
        function = _invoked(index, caller, prop, value)
        if function is None or function.urn in kept or function.urn in reported:
            return
        if given(get(function.props, "deadLetterConfig", default={}), "targetArn"):
            return
        if unknown_configs:
            raise unknown_configs[0]  # an invoke config we cannot read may belong to this function
        reported.add(function.urn)
        report(f"function {label(function)} is invoked asynchronously by {_caller(caller)} but has no "
               f"on-failure destination or dead-letter queue: an error it returns is {_retried(retries.get(function.urn))} "
               f"(a target's or schedule's DLQ only catches delivery failures). {_fix(configs.get(function.urn))}",
               function.urn)

    each(list(_callers(index)), check, report, lambda item: item[0].urn)


def _fix(config_name) -> str:
    if config_name is not None:  # the function has its invoke config: the destination goes there
        return (f"Set destination_config.on_failure.destination (an SQS queue with a depth alarm) on its "
                f"FunctionEventInvokeConfig '{config_name}', or set the function's dead_letter_config.")
    return ("Add an aws.lambda_.FunctionEventInvokeConfig with destination_config.on_failure.destination (an "
            "SQS queue with a depth alarm), or set the function's dead_letter_config.")


def _retried(attempts) -> str:
    """What Lambda does with a failed event, in the function's own maximumRetryAttempts (its
    FunctionEventInvokeConfig's, else Lambda's default)."""
    if attempts is None:
        attempts = aws_limits.LAMBDA_ASYNC_RETRY_ATTEMPTS_DEFAULT
    attempts = whole_number(attempts, "FunctionEventInvokeConfig maximumRetryAttempts")
    if attempts == 0:
        return "not retried (maximumRetryAttempts 0): the event is dropped at once"
    times = "once" if attempts == 1 else f"{shown(attempts)} times"
    return f"retried {times} by Lambda and then the event is dropped"


lambda_async_invoke_has_on_failure_destination = rule("stack", "lambda-async-invoke-has-on-failure-destination", _check)

POLICIES = [lambda_async_invoke_has_on_failure_destination]
