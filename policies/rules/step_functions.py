"""Step Functions rules: a Distributed Map must be bounded, tolerate some failures, and back off;
a task that invokes a Lambda function must wait at least as long as the function may run, and
retry the Lambda service's transient errors."""

import json
import re
from typing import Iterator

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from integration_blueprint.core import aws_limits

from ._links import STATE_MACHINE, StackIndex, function_at, function_timeout, label
from ._policy import rule
from ._values import (
    Malformed,
    a_list,
    an_object,
    each_resource,
    json_document,
    resource_rule,
    shown,
    to_number,
    whole_number,
    within,
)

EXCEEDED = aws_limits.DISTRIBUTED_MAP_TOLERATED_FAILURE_ERROR
LAMBDA_INVOKE = "arn:aws:states:::lambda:invoke"


def _states(container: dict, where: str) -> dict:
    states = container.get("States")
    if not isinstance(states, dict):
        raise Malformed(f"definition: {where} needs a 'States' object")
    return states


def _every_state(props) -> Iterator[tuple[str, dict]]:
    """Every (path, state) of a state machine's definition (none where it has no definition)."""
    definition = json_document(props, "definition")
    if definition is None:
        return
    yield from _walk(_states(definition, "the definition"), "")


def _walk(states: dict, where: str):
    """Every (path, state) in `states`, including those inside Map processors and Parallel branches.
    A part of the wrong JSON type (a Branches that is not a list, an ItemProcessor that is not an
    object) is malformed: Step Functions refuses the definition."""
    for name, state in states.items():
        path = f"{where}{name}"
        if not isinstance(state, dict):
            raise Malformed(f"definition: state {path} must be an object")
        yield path, state
        if state.get("Type") == "Map":
            processor = _processor(state, path)
            yield from _walk(_states(processor, path), f"{path}/")
        if state.get("Type") == "Parallel":
            for i, branch in enumerate(a_list(state.get("Branches"), f"definition: {path}.Branches")):
                if not isinstance(branch, dict):
                    raise Malformed(f"definition: {path}.Branches[{i}] must be an object with States, got {branch!r}")
                yield from _walk(_states(branch, f"{path} branch {i}"), f"{path}[{i}]/")


def _processor(state: dict, path: str) -> dict:
    key = "ItemProcessor" if "ItemProcessor" in state else "Iterator"
    return an_object(state.get(key), f"definition: {path}.{key}")


def _distributed(state: dict, path: str) -> bool:
    if state.get("Type") != "Map":
        return False
    config = an_object(_processor(state, path).get("ProcessorConfig"), f"definition: {path}.ItemProcessor.ProcessorConfig")
    return config.get("Mode") == "DISTRIBUTED"


def _retriers(task: dict, path: str) -> list:
    retriers = a_list(task.get("Retry"), f"definition: {path}.Retry")
    for i, retrier in enumerate(retriers):
        if not isinstance(retrier, dict):
            raise Malformed(f"definition: {path}.Retry[{i}] must be an object, got {retrier!r}")
    return retriers


def _problems(state: dict, path: str) -> list[str]:
    problems = []
    concurrency = state.get("MaxConcurrency")
    if concurrency is not None:
        concurrency = within(whole_number(concurrency, f"definition: {path}.MaxConcurrency"),
                             0, aws_limits.DISTRIBUTED_MAP_MAX_CONCURRENCY_MAX, f"definition: {path}.MaxConcurrency")
    if not (concurrency or state.get("MaxConcurrencyPath")):
        problems.append(f"set MaxConcurrency from the downstream capacity (0 or absent means up to "
                        f"{aws_limits.DISTRIBUTED_MAP_MAX_CONCURRENCY_MAX} parallel children)")
    if not any(k in state for k in ("ToleratedFailurePercentage", "ToleratedFailureCount",
                                    "ToleratedFailurePercentagePath", "ToleratedFailureCountPath")):
        problems.append("set ToleratedFailurePercentage (or ToleratedFailureCount)")
    # A threshold AWS would refuse (or one that tolerates nothing it could mean) is no threshold.
    if "ToleratedFailurePercentage" in state:
        within(to_number(state["ToleratedFailurePercentage"], f"definition: {path}.ToleratedFailurePercentage"), 0,
               aws_limits.DISTRIBUTED_MAP_TOLERATED_FAILURE_PERCENTAGE_MAX, f"definition: {path}.ToleratedFailurePercentage")
    if "ToleratedFailureCount" in state:
        within(whole_number(state["ToleratedFailureCount"], f"definition: {path}.ToleratedFailureCount"), 0,
               float("inf"), f"definition: {path}.ToleratedFailureCount")
    caught = set()
    for i, catcher in enumerate(a_list(state.get("Catch"), f"definition: {path}.Catch")):
        caught.update(a_list(an_object(catcher, f"definition: {path}.Catch[{i}]").get("ErrorEquals"),
                             f"definition: {path}.Catch[{i}].ErrorEquals"))
    if not caught & {EXCEEDED, "States.ALL"}:
        problems.append(f"add a Catch for {EXCEEDED} that alerts (e.g. sends to an ops queue)")
    for task_path, task in _walk(_states(_processor(state, path), path), ""):
        if task.get("Type") != "Task":
            continue
        retriers = _retriers(task, task_path)
        if not retriers:
            problems.append(f"give task {task_path} a Retry with JitterStrategy FULL and MaxDelaySeconds")
        for retrier in retriers:
            if retrier.get("JitterStrategy") != "FULL" or "MaxDelaySeconds" not in retrier:
                problems.append(f"task {task_path}: every Retry needs JitterStrategy \"FULL\" and "
                                f"MaxDelaySeconds (got {retrier.get('ErrorEquals')})")
    return problems


def _check(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for path, state in _every_state(args.props):
        if _distributed(state, path):
            problems = _problems(state, path)
            if problems:
                report(f"Distributed Map {path}: " + "; ".join(problems) + ".", None)


# ---- sfn-task-timeout-covers-lambda-timeout ------------------------------------------------------

def _invoked_function(task: dict):
    """The FunctionName (ARN or name) a Task invokes, or None when it invokes no Lambda function."""
    resource = task.get("Resource")
    if not isinstance(resource, str):
        return None
    if resource.startswith(LAMBDA_INVOKE):
        parameters = an_object(task.get("Parameters") or task.get("Arguments"), "Parameters")
        name = parameters.get("FunctionName")
        return name if isinstance(name, str) else None
    return resource if resource.startswith("arn:") and ":lambda:" in resource and ":function:" in resource else None


def _check_task_timeouts(args: StackValidationArgs, report: ReportViolation) -> None:
    index = StackIndex(args.resources)

    def check(machine):
        for path, state in _every_state(machine.props):
            if state.get("Type") != "Task" or "TimeoutSecondsPath" in state:
                continue
            name = _invoked_function(state)
            if name is None:
                continue
            function = function_at(index, machine, "definition", lambda name=name: name)  # type: ignore[misc]
            if function is None:
                continue
            timeout = within(to_number(state.get("TimeoutSeconds", aws_limits.SFN_TASK_TIMEOUT_DEFAULT_SECONDS),
                                       f"definition: {path}.TimeoutSeconds"),
                             1, aws_limits.SFN_TASK_TIMEOUT_DEFAULT_SECONDS, f"definition: {path}.TimeoutSeconds")
            runs = function_timeout(function)
            if timeout < runs:
                report(f"state machine {label(machine)}: task {path} times out after {shown(timeout)} s but "
                       f"function {label(function)} may run {shown(runs)} s: the task gives up (and a Retry "
                       "on States.Timeout starts the item again) while the first invocation still "
                       f"runs. Set TimeoutSeconds to at least {shown(runs)} (the function timeout plus a margin).",
                       machine.urn)

    each_resource(index, report, {STATE_MACHINE: check})


# ---- sfn-lambda-task-retries-service-errors -------------------------------------------------------

SERVICE_ERRORS = aws_limits.SFN_LAMBDA_SERVICE_ERRORS
# AWS's best-practice retrier for Lambda's service errors, with jitter so throttled tasks spread out
SUGGESTED_BACKOFF = {"IntervalSeconds": 2, "MaxAttempts": 6, "BackoffRate": 2, "JitterStrategy": "FULL"}
LAMBDA_INVOKE_ANY_PARTITION = re.compile(r"arn:[a-z-]+:states:::lambda:invoke")


def _retried(retriers: list, error: str, path: str) -> bool:
    """Whether a Retry retries `error`: Step Functions applies the first retrier whose ErrorEquals
    names the error or a wildcard covering it, and retries only if its MaxAttempts is above 0."""
    for i, retrier in enumerate(retriers):
        names = a_list(retrier.get("ErrorEquals"), f"definition: {path}.Retry[{i}].ErrorEquals")
        if error in names or any(w in names for w in aws_limits.SFN_ERROR_WILDCARDS):
            attempts = whole_number(retrier.get("MaxAttempts", aws_limits.SFN_RETRY_MAX_ATTEMPTS_DEFAULT),
                                    f"definition: {path}.Retry[{i}].MaxAttempts")
            return attempts > 0
    return False


def _check_lambda_retries(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for path, state in _every_state(args.props):
        if state.get("Type") != "Task" or not _invokes_lambda(state):
            continue
        retriers = _retriers(state, path)
        missing = [e for e in SERVICE_ERRORS if not _retried(retriers, e, path)]
        if not missing:
            continue
        has = "has no Retry" if not retriers else f"has a Retry that does not retry {', '.join(missing)}"
        retrier = json.dumps({"ErrorEquals": missing, **SUGGESTED_BACKOFF})
        report(f"task {path} invokes Lambda and {has}: each of these errors (a throttle, a transient Lambda "
               f"service error) fails the task at once. Add a retrier first in its Retry: {retrier} (AWS's list "
               "also names Lambda.ClientExecutionTimeoutException).", None)


def _invokes_lambda(task: dict) -> bool:
    """arn:<partition>:states:::lambda:invoke[.waitForTaskToken] (whatever names the function, a
    FunctionName.$ too) or a function's own ARN as the Resource."""
    resource = task.get("Resource")
    return isinstance(resource, str) and (LAMBDA_INVOKE_ANY_PARTITION.match(resource) is not None
                                          or _invoked_function(task) is not None)


sfn_distributed_map_bounded = rule("resource", "sfn-distributed-map-bounded",
                                   resource_rule(_check, STATE_MACHINE), text_values={"EXCEEDED": EXCEEDED})

sfn_task_timeout_covers_lambda_timeout = rule("stack", "sfn-task-timeout-covers-lambda-timeout", _check_task_timeouts)

sfn_lambda_task_retries_service_errors = rule("resource", "sfn-lambda-task-retries-service-errors",
                                              resource_rule(_check_lambda_retries, STATE_MACHINE),
                                              text_values={"service_errors": ", ".join(SERVICE_ERRORS)})

POLICIES = [sfn_distributed_map_bounded, sfn_task_timeout_covers_lambda_timeout, sfn_lambda_task_retries_service_errors]
