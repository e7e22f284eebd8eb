"""Lambda packaging with a least-privilege role, written once for every pattern.

The code archive holds this package's `integration_blueprint.handlers` (only its .py files, so the
zip is reproducible), imported in Lambda as `integration_blueprint.handlers.<runtime|reference>.<module>.<function>`,
plus the namespace's `__init__` and `core` (`aws_limits`, `conventions`), which handlers share with
components (they import nothing else), so the components' Pulumi code never reaches the function.
The files are found from this package itself, never by a top-level name lookup, so a team program
with its own `handlers/` folder still ships ours. Powertools comes from its public Lambda layer
for the function's runtime, architecture and region, so the deployed function can import everything
the handlers import (boto3 is in the runtime). Logs go to a log group the component owns, with a
retention, instead of the never-expiring group Lambda would create.

A team's own code (`code`) ships with the same handlers beside it (`with_handler_runtime`), so a
handler built on the runtime imports it once deployed. What a function runs is read from a
component's arguments in one place (`handler_code`: `<prefix>handler`, `<prefix>code` and what that
code needs, its own environment variables and IAM statements from the `<prefix>environment` and
`<prefix>policy_statements` arguments `settings.code_settings` declares next to `<prefix>code`).

Public: `packaged_function` (returns `PackagedFunction`), `RuntimeSettings`, `handlers_archive`, `with_handler_runtime`,
`powertools_layer_arn`, `stack_region`, `ARCHIVE_ROOT`, `PolicyStatementArgs`, `handler_code` (returns
`HandlerCode`). IAM statements are in `iam`.
"""

import os
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator, Mapping, Optional, Sequence, TypedDict, Union

import pulumi
import pulumi_aws as aws

import integration_blueprint as namespace_package
import integration_blueprint.core as core_package
import integration_blueprint.handlers as handlers_package
from integration_blueprint.components.iam import Statement, renamed, service_role
from integration_blueprint.components.validation import ComponentArgumentError, is_known, plain
from integration_blueprint.core import aws_limits, conventions
from integration_blueprint.preview import assets, wire

__all__ = ["ARCHIVE_ROOT", "HandlerCode", "PackagedFunction", "PolicyStatementArgs", "RuntimeSettings", "handler_code",
           "handlers_archive", "packaged_function", "powertools_layer_arn", "stack_region", "with_handler_runtime"]

ARCHIVE_ROOT = namespace_package.__name__

@dataclass
class RuntimeSettings:
    """Deployment settings every function of a stack shares."""

    log_retention_days: int = conventions.LOG_RETENTION_DEFAULT_DAYS
    powertools_layer_version: int = conventions.POWERTOOLS_LAYER_VERSION_DEFAULT
    runtime: str = conventions.LAMBDA_RUNTIME
    architecture: str = conventions.LAMBDA_ARCHITECTURE
    region: Optional[str] = None  # None: the stack's aws:region


@dataclass
class PackagedFunction:
    function: aws.lambda_.Function
    role: aws.iam.Role
    log_group: aws.cloudwatch.LogGroup
    extra: dict = field(default_factory=dict)


def handlers_archive() -> pulumi.AssetArchive:
    """This package's handlers (runtime and reference) as a Lambda code archive."""
    root = _module_path(handlers_package).parent
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    assets: dict[str, Union[pulumi.Asset, pulumi.Archive]] = {
        f"{ARCHIVE_ROOT}/handlers/{p.relative_to(root).as_posix()}": pulumi.FileAsset(str(p)) for p in files}
    for module, folder in ((namespace_package, ""), (core_package, "core/"), (aws_limits, "core/"), (conventions, "core/")):
        path = _module_path(module)
        assets[f"{ARCHIVE_ROOT}/{folder}{path.name}"] = pulumi.FileAsset(str(path))
    return pulumi.AssetArchive(assets)


def with_handler_runtime(code: pulumi.Archive) -> pulumi.Archive:
    """A team's code with this package's handlers beside it (under `integration_blueprint/`), so a
    handler built on the runtime (`make_handler` from `integration_blueprint.handlers.runtime`) finds
    it once deployed, as in the drill. A folder or an AssetArchive is merged, the team's own files
    winning; a zip or a remote archive ships as it is, and must hold what its handler imports."""
    if isinstance(code, pulumi.AssetArchive):
        own = dict(code.assets)
    elif isinstance(code, pulumi.FileArchive) and Path(code.path).is_dir():
        root = Path(code.path)
        # A link is kept whatever it points to (the engine reads it, and refuses one it cannot read):
        # a program whose view of its machine is narrower (the preview's sandbox sees no target
        # outside the project) must still hand the engine what Pulumi would pack.
        own = {p.relative_to(root).as_posix(): pulumi.FileAsset(str(p)) for p in sorted(root.rglob("*"))
               if (p.is_file() or (p.is_symlink() and not p.is_dir())) and "__pycache__" not in p.parts}
    else:
        return code
    return pulumi.AssetArchive({**handlers_archive().assets, **own})


def _module_path(module: ModuleType) -> Path:
    if module.__file__ is None:  # a namespace package without files: nothing to ship
        raise RuntimeError(f"{module.__name__} has no file; install integration-blueprint with its sources")
    return Path(module.__file__)


def powertools_layer_arn(region: str, settings: RuntimeSettings) -> str:
    runtime = settings.runtime.replace(".", "")  # python3.12 -> python312
    layer = aws_limits.POWERTOOLS_LAYER_NAME_FORMAT.format(runtime=runtime, architecture=settings.architecture)
    return f"arn:aws:lambda:{region}:{aws_limits.POWERTOOLS_LAYER_ACCOUNT}:layer:{layer}:{settings.powertools_layer_version}"


def stack_region(settings: RuntimeSettings) -> str:
    """The region the AWS provider deploys to: the stack's `aws:region`, else the environment
    variables the provider reads (AWS_REGION, then AWS_DEFAULT_REGION)."""
    region = (settings.region or pulumi.Config("aws").get("region") or os.environ.get("AWS_REGION")
              or os.environ.get("AWS_DEFAULT_REGION"))
    if not region:
        raise ValueError("aws:region is not set; run `pulumi config set aws:region <region>` (it writes the "
                         f"stack's file, Pulumi.{pulumi.get_stack()}.yaml in the project's stack config folder) "
                         "or set AWS_REGION")
    return region


def packaged_function(name: str, *, parent: pulumi.Resource, runs: "HandlerCode",
                      statements: Sequence[Statement], settings: RuntimeSettings,
                      timeout: pulumi.Input[int], memory_size: pulumi.Input[int] = conventions.LAMBDA_MEMORY_DEFAULT_MB,
                      environment: Optional[Mapping[str, pulumi.Input[str]]] = None,
                      reserved_concurrency: Optional[pulumi.Input[int]] = None,
                      formerly: Optional[str] = None) -> PackagedFunction:
    """A function running the handler `runs` names (default code: this package's handlers) with a
    role that may do exactly `statements` plus write its own logs, and what a team's code needs (its
    variables win over the component's own: a team's handler may point a setting elsewhere).
    `formerly`: the name the function had in an earlier version; its resources are aliased to it,
    so a deployed stack keeps them (and their logs) instead of replacing them."""
    environment = {**(environment or {}), **runs.environment}
    statements = [*statements, *runs.statements]
    log_group = aws.cloudwatch.LogGroup(f"{name}-logs", retention_in_days=settings.log_retention_days,
                                        opts=renamed(parent, formerly and f"{formerly}-logs"))
    logs = Statement(["logs:CreateLogStream", "logs:PutLogEvents"], [log_group.arn.apply(lambda a: f"{a}:*")])
    access = service_role(name, parent=parent, service="lambda.amazonaws.com", statements=[logs, *statements],
                          formerly=formerly)
    function = aws.lambda_.Function(
        name,
        role=access.role.arn,
        runtime=settings.runtime,
        architectures=[settings.architecture],
        handler=runs.handler,
        code=with_handler_runtime(runs.code) if runs.code is not None else handlers_archive(),
        timeout=timeout,
        memory_size=memory_size,
        layers=[powertools_layer_arn(stack_region(settings), settings)],
        environment={"variables": dict(environment)} if environment else None,
        reserved_concurrent_executions=reserved_concurrency,
        logging_config={"log_format": "JSON", "log_group": log_group.name},
        # The role's policy must exist before the function can poll its event sources.
        opts=renamed(parent, formerly, depends_on=[access.policy]),
    )
    return PackagedFunction(function=function, role=access.role, log_group=log_group)



class PolicyStatementArgs(TypedDict):
    """An extra permission for your own handler: named actions (no wildcards) on resources."""

    actions: pulumi.Input[Sequence[pulumi.Input[str]]]
    """IAM actions by name, e.g. dynamodb:GetItem (no wildcards)."""
    resources: pulumi.Input[Sequence[pulumi.Input[str]]]
    """ARNs of the resources the actions are allowed on."""


@dataclass
class HandlerCode:
    """What one of a component's functions runs: a handler of this package's code (`code` None), or
    a team's handler and code with what it needs beyond the component's own settings."""

    handler: pulumi.Input[str]
    code: Optional[pulumi.Archive] = None
    environment: dict[str, pulumi.Input[str]] = field(default_factory=dict)
    statements: list[Statement] = field(default_factory=list)


def handler_code(component: str, args: Mapping[str, Any], reference_handler: str, prefix: str = "") -> HandlerCode:
    """What one of a component's functions runs: the `<prefix>handler` and `<prefix>code` it was
    given (default: this package's `reference_handler`), with their `<prefix>environment` and
    `<prefix>policy_statements`; the actions are read now (named, no wildcards), the resources may be
    Outputs. The `<prefix>code` must be readable as the engine reads it, refused here naming that argument."""
    code = args.get(f"{prefix}code")
    require_readable_code(component, f"{prefix}code", code)
    env_arg, statements_arg = f"{prefix}environment", f"{prefix}policy_statements"
    statements = []
    for given in plain(component, statements_arg, args.get(statements_arg)) or []:
        statement = plain(component, statements_arg, given)
        if statement is not None:
            actions = plain(component, f"{statements_arg}[].actions", statement["actions"]) or []
            resources = plain(component, f"{statements_arg}[].resources", statement["resources"]) or []
            statements.append(Statement([plain(component, f"{statements_arg}[].actions", a) or "" for a in actions],
                                        list(resources)))
    return HandlerCode(handler=args.get(f"{prefix}handler", reference_handler), code=code,
                       environment=dict(plain(component, env_arg, args.get(env_arg)) or {}), statements=statements)


def require_readable_code(component: str, code_arg: str, code: Any) -> None:
    """Refuse a team's code archive whose file or folder is missing from the program's folder (a
    build step not run, a member not written), naming `code_arg`, the argument the team wrote: the
    engine's own error, at registration, names only the function's property (`"code"`). Only what
    is missing inside the program's folder is judged here, where the program sees what the engine
    reads; anything else (a path outside it, a link's target, a file it may not read) is the
    engine's to judge, as the preview's sandbox may show the program less than the engine reads."""
    if not is_known(code):
        return
    folder = Path.cwd()
    for member, value in _missing_paths(code, folder):
        problem = assets.archive_problem(_engine_form(value), folder)
        if problem is not None:
            where = f"its member {member!r}: " if member else ""
            raise ComponentArgumentError(
                f"{component}: {code_arg} cannot be read: {where}{problem}. Run the build step that makes it, or "
                f"point {code_arg} at where it is (a relative path is read from the program's folder, {folder})",
                code_arg)


def _missing_paths(value: Any, folder: Path, member: str = "") -> Iterator[tuple[str, Any]]:
    """(member name, asset or archive) of each path in `value` that names nothing inside `folder`,
    in the order the engine reads them (an AssetArchive's members by name)."""
    if isinstance(value, pulumi.AssetArchive):
        for name in sorted(value.assets):
            yield from _missing_paths(value.assets[name], folder, name)
    elif isinstance(getattr(value, "path", None), str):
        path = Path(os.path.normpath(folder / value.path))
        if path.is_relative_to(folder) and not os.path.lexists(path):
            yield member, value


def _engine_form(value: Any) -> Any:
    """An asset or archive as the engine receives it (wire form), to be read as the engine reads it."""
    if isinstance(value, pulumi.AssetArchive):
        return {wire.SIG: wire.ARCHIVE_SIG, "assets": {name: _engine_form(member) for name, member in value.assets.items()}}
    sig = wire.ARCHIVE_SIG if isinstance(value, pulumi.Archive) else wire.ASSET_SIG
    for attribute in ("path", "uri", "text"):
        if isinstance(getattr(value, attribute, None), str):
            return {wire.SIG: sig, attribute: getattr(value, attribute)}
    return value
