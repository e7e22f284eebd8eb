"""What every component shares: the stack's `blueprint:platform` settings, and how it publishes
its outputs.

Public: `PlatformArgs` (the args every component's Args extend), `PLATFORM_SETTINGS` (their table),
`runtime_settings` (the functions' deployment settings from a component's args), `publish`.
"""

from typing import Any, Mapping, Optional, Sequence, TypedDict

import pulumi

from integration_blueprint.components.function import RuntimeSettings
from integration_blueprint.components.settings import Setting, SettingsTable
from integration_blueprint.core import aws_limits, conventions

__all__ = ["PLATFORM_SETTINGS", "PlatformArgs", "declared", "publish", "runtime_settings", "with_tags"]


class PlatformArgs(TypedDict, total=False):
    """What every component takes (the stack's `blueprint:platform`). Each argument's type, default,
    bounds and reason are its row in PLATFORM_SETTINGS (docs/components/ shows them); the fields
    here only give Python type checkers the names and types."""

    alarm_actions: pulumi.Input[Sequence[pulumi.Input[str]]]
    log_retention_days: pulumi.Input[int]
    powertools_layer_version: pulumi.Input[int]
    protect_data: pulumi.Input[bool]
    tags: pulumi.Input[Mapping[str, pulumi.Input[str]]]


PLATFORM_SETTINGS = SettingsTable("platform", [
    Setting("alarm_actions", list, [], pattern=aws_limits.ARN_PATTERN, describe="a list of SNS topic ARNs",
            why="the SNS topics every alarm of the component notifies; empty: alarms are recorded but page nobody"),
    Setting("log_retention_days", int, conventions.LOG_RETENTION_DEFAULT_DAYS,
            choices=aws_limits.LOG_RETENTION_ALLOWED_DAYS, describe="a retention CloudWatch Logs accepts",
            why="the functions' log groups expire instead of keeping logs forever"),
    Setting("powertools_layer_version", int, conventions.POWERTOOLS_LAYER_VERSION_DEFAULT, minimum=1,
            why="the version of the public Powertools for AWS Lambda (Python) layer the functions run with"),
    Setting("protect_data", bool, True,
            why="point-in-time recovery and deletion protection on the tables (production data)"),
    Setting("tags", dict, {}, describe="an object of tag names to values",
            why="tags on every taggable resource the component creates (queues, functions, tables, roles, log "
                "groups, ...), merged with the provider's default tags as AWS merges them: on the same key, these "
                "win"),
])


def with_tags(opts: Optional[pulumi.ResourceOptions], args: Optional[Mapping[str, Any]]) -> Optional[pulumi.ResourceOptions]:
    """The component's options with a transformation that puts its `tags` on every child that takes
    tags (every resource whose inputs have `tags`). Pulumi applies a component's transformations to
    everything created under it; the AWS provider then merges its default tags under these
    (tagsAll), so the organisation's defaults stay and a key set here wins. A tag a child sets
    itself wins over both."""
    tags = (args or {}).get("tags")
    if not tags or not isinstance(tags, Mapping):
        return opts  # none, or not an object: the settings table refuses it with its message

    def tag(resource: pulumi.ResourceTransformationArgs) -> Optional[pulumi.ResourceTransformationResult]:
        if "tags" not in resource.props or isinstance(resource.resource, pulumi.ComponentResource):
            return None
        own = resource.props.get("tags")
        if own is not None and not isinstance(own, Mapping):
            return None  # an Output of the child's own: left as it is
        return pulumi.ResourceTransformationResult({**resource.props, "tags": {**tags, **(own or {})}}, resource.opts)
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(transformations=[tag]))


def declared(component: pulumi.ComponentResource, type_token: str, name: str, args: Optional[Mapping[str, Any]],
             opts: Optional[pulumi.ResourceOptions], settings: SettingsTable) -> dict:
    """What every component's __init__ starts with: `component` registered (its `tags` put on every
    child, `with_tags`), and its arguments returned as its settings rows parse them (refused with
    every refusal at once where they do not)."""
    pulumi.ComponentResource.__init__(component, type_token, name, None, with_tags(opts, args))
    return settings.check(args)


def runtime_settings(args: Mapping[str, Any]) -> RuntimeSettings:
    """The functions' deployment settings from a component's args."""
    settings = RuntimeSettings()
    if args.get("log_retention_days") is not None:
        settings.log_retention_days = args["log_retention_days"]
    if args.get("powertools_layer_version") is not None:
        settings.powertools_layer_version = args["powertools_layer_version"]
    return settings


def publish(component: pulumi.ComponentResource, outputs: Mapping[str, pulumi.Input[Any]]) -> None:
    """Set each output as the component's attribute (declared on its class) and register them all."""
    for key, value in outputs.items():
        setattr(component, key, value)
    component.register_outputs(dict(outputs))
