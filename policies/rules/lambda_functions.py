"""Lambda function rules: a function runs on a runtime AWS still supports.

A deprecated runtime keeps running the functions on it, so nothing fails on the day: it gets no more
security patches, its functions no technical support, and AWS then blocks creating functions on it
and later updating them, so the fix is forced on the day a hotfix has to ship. The deprecation dates
are `aws_limits.LAMBDA_RUNTIME_DEPRECATION_DATES`; a runtime absent there (one AWS added later, or a
container image function, which has none) is not judged.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from pulumi_policy import ReportViolation, ResourceValidationArgs

from integration_blueprint.core import aws_limits

from ._links import FUNCTION
from ._policy import rule
from ._values import config_value, get, resource_rule

DEPRECATION = aws_limits.LAMBDA_RUNTIME_DEPRECATION_DATES


def _family(runtime: str) -> str:
    """The language a runtime runs: go1.x and provided are OS-only runtimes, as provided.al2023 is."""
    if runtime.startswith(("go", "provided")):
        return "provided"
    return "dotnet" if runtime.startswith("dotnet") else re.sub(r"[^a-z].*", "", runtime)


def _version(runtime: str) -> tuple[int, ...]:
    return tuple(int(number) for number in re.findall(r"\d+", runtime))


def successor(runtime: str, as_of: str) -> str | None:
    """The newest runtime of the same language that AWS supports on `as_of` (ISO date)."""
    supported = [other for other, date in DEPRECATION.items()
                 if _family(other) == _family(runtime) and date > as_of]
    return max(supported, key=lambda other: (DEPRECATION[other], _version(other)), default=None)


def _check_runtime(args: ResourceValidationArgs, report: ReportViolation) -> None:
    as_of = config_value(args.get_config(), "asOf", datetime.now(timezone.utc).date().isoformat())
    runtime = get(args.props, "runtime")
    if not isinstance(runtime, str) or runtime not in DEPRECATION or DEPRECATION[runtime] > as_of:
        return
    newer = successor(runtime, as_of)
    report(f"runs {runtime}, which Lambda deprecated on {DEPRECATION[runtime]}: it gets no security patches and no "
           "technical support, and AWS blocks creating functions on it and then updating them. Move the function to "
           + (f"{newer} (and test it there)." if newer else "a supported runtime."), None)


lambda_function_runtime_supported = rule(
    "resource", "lambda-function-runtime-supported", resource_rule(_check_runtime, FUNCTION),
    config={"asOf": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$",
                     "description": "judge runtimes as of this date (YYYY-MM-DD; default: the day of the preview, "
                                    "UTC): a later date reports deprecations before they come"}})

POLICIES = [lambda_function_runtime_supported]
