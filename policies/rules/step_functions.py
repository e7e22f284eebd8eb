"""Step Functions rule: a Distributed Map must be bounded, tolerate some failures, and back off."""

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy

from integration_blueprint import aws_limits

from ._values import Malformed, json_document, resource_rule

STATE_MACHINE = "aws:sfn/stateMachine:StateMachine"
EXCEEDED = aws_limits.DISTRIBUTED_MAP_TOLERATED_FAILURE_ERROR


def _states(container: dict, where: str) -> dict:
    states = container.get("States")
    if not isinstance(states, dict):
        raise Malformed(f"definition: {where} needs a 'States' object")
    return states


def _walk(states: dict, where: str):
    """Every (path, state) in `states`, including those inside Map processors and Parallel branches."""
    for name, state in states.items():
        if not isinstance(state, dict):
            raise Malformed(f"definition: state {where}{name} must be an object")
        path = f"{where}{name}"
        yield path, state
        if state.get("Type") == "Map":
            processor = state.get("ItemProcessor") or state.get("Iterator") or {}
            yield from _walk(_states(processor, path), f"{path}/")
        if state.get("Type") == "Parallel":
            for i, branch in enumerate(state.get("Branches") or []):
                yield from _walk(_states(branch, f"{path} branch {i}"), f"{path}[{i}]/")


def _distributed(state: dict) -> bool:
    processor = state.get("ItemProcessor") or {}
    return state.get("Type") == "Map" and (processor.get("ProcessorConfig") or {}).get("Mode") == "DISTRIBUTED"


def _problems(state: dict) -> list[str]:
    problems = []
    if not (state.get("MaxConcurrency") or state.get("MaxConcurrencyPath")):
        problems.append(f"set MaxConcurrency from the downstream capacity (0 or absent means up to "
                        f"{aws_limits.DISTRIBUTED_MAP_MAX_CONCURRENCY_MAX} parallel children)")
    if not any(k in state for k in ("ToleratedFailurePercentage", "ToleratedFailureCount",
                                    "ToleratedFailurePercentagePath", "ToleratedFailureCountPath")):
        problems.append("set ToleratedFailurePercentage (or ToleratedFailureCount)")
    caught = {e for c in state.get("Catch") or [] for e in (c.get("ErrorEquals") or [])}
    if not caught & {EXCEEDED, "States.ALL"}:
        problems.append(f"add a Catch for {EXCEEDED} that alerts (e.g. sends to an ops queue)")
    processor = state.get("ItemProcessor") or {}
    for path, task in _walk(_states(processor, "ItemProcessor"), ""):
        if task.get("Type") != "Task":
            continue
        retriers = task.get("Retry") or []
        if not retriers:
            problems.append(f"give task {path} a Retry with JitterStrategy FULL and MaxDelaySeconds")
        for retrier in retriers:
            if retrier.get("JitterStrategy") != "FULL" or "MaxDelaySeconds" not in retrier:
                problems.append(f"task {path}: every Retry needs JitterStrategy \"FULL\" and "
                                f"MaxDelaySeconds (got {retrier.get('ErrorEquals')})")
    return problems


def _check(args: ResourceValidationArgs, report: ReportViolation) -> None:
    definition = json_document(args.props, "definition")
    if definition is None:
        return
    for path, state in _walk(_states(definition, "the definition"), ""):
        if _distributed(state):
            problems = _problems(state)
            if problems:
                report(f"Distributed Map {path}: " + "; ".join(problems) + ".", None)


sfn_distributed_map_bounded = ResourceValidationPolicy(
    name="sfn-distributed-map-bounded",
    description=("A DISTRIBUTED Map must set MaxConcurrency, a tolerated failure threshold, a Catch for "
                 f"{EXCEEDED}, and Retry on its tasks with JitterStrategy FULL and MaxDelaySeconds."),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=resource_rule(_check, STATE_MACHINE),
)

POLICIES = [sfn_distributed_map_bounded]
