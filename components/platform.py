"""What every component shares: the stack's `blueprint:platform` settings, and how it publishes
its outputs.

Public: `PlatformArgs` (the args every component's Args extend), `PLATFORM_SETTINGS` (their table),
`runtime_settings` (the functions' deployment settings from a component's args), `publish`.
"""

from typing import Any, Mapping, Sequence, TypedDict

import pulumi

from integration_blueprint import aws_limits, conventions
from integration_blueprint.components.function import RuntimeSettings
from integration_blueprint.components.settings import Setting, SettingsTable

__all__ = ["PLATFORM_SETTINGS", "PlatformArgs", "publish", "runtime_settings"]


class PlatformArgs(TypedDict, total=False):
    alarm_actions: pulumi.Input[Sequence[pulumi.Input[str]]]
    """SNS topic ARNs every alarm of the component notifies."""
    log_retention_days: pulumi.Input[int]
    """Retention of the functions' log groups (a value CloudWatch Logs accepts)."""
    powertools_layer_version: pulumi.Input[int]
    """Version of the public Powertools for AWS Lambda (Python) layer the functions use."""
    protect_data: pulumi.Input[bool]
    """Point-in-time recovery and deletion protection on the tables (production data)."""


PLATFORM_SETTINGS = SettingsTable("platform", [
    Setting("alarm_actions", list, [], pattern=aws_limits.ARN_PATTERN, describe="a list of SNS topic ARNs",
            why="every alarm notifies them; empty: alarms are recorded but page nobody"),
    Setting("log_retention_days", int, conventions.LOG_RETENTION_DEFAULT_DAYS,
            choices=aws_limits.LOG_RETENTION_ALLOWED_DAYS, describe="a retention CloudWatch Logs accepts",
            why="the functions' log groups expire instead of keeping logs forever"),
    Setting("powertools_layer_version", int, conventions.POWERTOOLS_LAYER_VERSION_DEFAULT, minimum=1,
            why="the Powertools layer version the functions run with"),
    Setting("protect_data", bool, True, why="point-in-time recovery and deletion protection on the tables"),
])


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
