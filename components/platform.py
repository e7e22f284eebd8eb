"""What every component takes from the stack's shared `blueprint:platform` settings."""

from typing import Mapping, Sequence, TypedDict

import pulumi

from integration_blueprint.components.function import RuntimeSettings


class PlatformArgs(TypedDict, total=False):
    alarm_actions: pulumi.Input[Sequence[pulumi.Input[str]]]
    """SNS topic ARNs every alarm of the component notifies."""
    log_retention_days: pulumi.Input[int]
    """Retention of the functions' log groups (a value CloudWatch Logs accepts)."""
    powertools_layer_version: pulumi.Input[int]
    """Version of the public Powertools for AWS Lambda (Python) layer the functions use."""
    protect_data: pulumi.Input[bool]
    """Point-in-time recovery and deletion protection on the tables (production data)."""


def runtime_settings(args: Mapping) -> RuntimeSettings:
    """The functions' deployment settings from a component's args."""
    settings = RuntimeSettings()
    if args.get("log_retention_days") is not None:
        settings.log_retention_days = args["log_retention_days"]
    if args.get("powertools_layer_version") is not None:
        settings.powertools_layer_version = args["powertools_layer_version"]
    return settings
