"""Checks the gate makes itself, beside the policy pack: those that need the program's own files,
which a policy pack never sees (the Analyzer interface carries a FileArchive as its path alone,
and the pack runs in its own folder).

`lambda-handler-in-archive`: a Python function whose handler module or function is not in the
archive it ships fails every invocation on Lambda (Runtime.ImportModuleError,
Runtime.HandlerNotFound), and so does one whose handler module imports a package at load that
neither the archive, the Lambda runtime (the standard library, boto3) nor the Powertools layer
provides; the preview reports it as a mandatory violation of the function, at the
line that declared it (a component's children: the component's line). Judged only where the gate
can read the whole archive (a FileArchive folder or zip, an AssetArchive of files); a remote
archive, a container image, or a function with a layer other than AWS's Powertools (a layer may
provide the module: Lambda puts /opt/python on the path) is not judged.
"""

from __future__ import annotations

from pathlib import Path

from integration_blueprint import __version__
from integration_blueprint.core import aws_limits
from integration_blueprint.preview import lambda_archive
from integration_blueprint.preview.analyzer import Rule, Violation

FUNCTION = "aws:lambda/function:Function"
# The name the gate's own checks are reported under, beside each policy pack's (reports name every
# finding's pack).
PACK = "blueprint-gate"

HANDLER_IN_ARCHIVE = Rule(
    name="lambda-handler-in-archive",
    description=("A Python Lambda function's handler (module.function) must name a module its archive holds and a "
                 "function that module defines: otherwise Lambda fails every invocation with "
                 "Runtime.ImportModuleError or Runtime.HandlerNotFound; the packages the module imports must be in "
                 "the archive or provided by the runtime or a layer. Correct the handler's spelling or add the "
                 "module (or package) to the function's code."),
    level="mandatory", kind="resource", config_schema={},
    remediation=("Write the handler as <module>.<function> where <module>.py is at the root of the function's code "
                 "(or a folder path with dots) and defines <function> at its top level."),
    url="https://docs.aws.amazon.com/lambda/latest/dg/python-handler.html",
    severity="high", tags=("reliability",))

RULES = {HANDLER_IN_ARCHIVE.name: HANDLER_IN_ARCHIVE}


def violations(recorded) -> list[Violation]:
    """The gate's own findings for a recording (RecordedStack)."""
    return handler_violations(recorded)


def _layers_may_hold_code(layers) -> bool:
    """Whether a layer could provide the handler's module: any layer but AWS's Powertools, whose
    layers hold its library only (an unknown ARN may be any layer)."""
    return any(not (isinstance(arn, str) and arn.split(":")[4:6] == [aws_limits.POWERTOOLS_LAYER_ACCOUNT, "layer"])
               for arn in layers or [])


def handler_violations(recorded) -> list[Violation]:
    """Each Python function whose handler Lambda would not find in the archive the gate can read."""
    if recorded.program_dir is None:
        return []
    found = []
    for function in recorded.of_type(FUNCTION):
        inputs = function.inputs
        code, handler = inputs.get("code"), inputs.get("handler")
        if not isinstance(code, dict) or not isinstance(handler, str) or _layers_may_hold_code(inputs.get("layers")) \
                or inputs.get("packageType") == "Image" \
                or not str(inputs.get("runtime") or "python").startswith("python"):
            continue
        provided = lambda_archive.runtime_provided(powertools_layer=bool(inputs.get("layers")))
        problem = lambda_archive.handler_problem(code, Path(recorded.program_dir), handler, provided,
                                                 recorded.view.path if recorded.view is not None else None)
        if problem:
            found.append(Violation(policy=HANDLER_IN_ARCHIVE.name, level=HANDLER_IN_ARCHIVE.level, urn=function.urn,
                                   pack=PACK, pack_version=__version__,
                                   message=f"{HANDLER_IN_ARCHIVE.description}\nfunction {function.name}: {problem}"))
    return found
