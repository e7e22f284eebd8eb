"""The blueprint program's stack configuration: one typed reader, one section per pattern.

Stack files (`<stackConfigDir>/Pulumi.<stack>.yaml`) hold one object per section, for example

    blueprint:fifoBilling:
      enabled: true
      batchSize: 10

The keys of a section are the settings of its component, read from the component's settings table
(`integration_blueprint.components.settings`): the key is the argument in camelCase, and the
default, bounds and reason are the ones the component itself applies. Every value is checked here,
before any resource is declared: a wrong or missing value fails the preview with the full key,
what it got, what is allowed and the stack file to fix; unknown keys and unknown sections (typos)
are refused. A key left unset is left to the component's default.

Public: `read()` (every section of the stack), `StackSettings`, `StackConfigError`, `Section`,
`SECTIONS`, and one reader per section.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pulumi
import pulumi.runtime.config as pulumi_config
import yaml

from integration_blueprint.components.settings import Setting, SettingsTable
from integration_blueprint.core.conventions import SUPPRESSIONS_SECTION

__all__ = ["ENABLED", "NAMESPACE", "SECTIONS", "Section", "StackConfigError", "StackSettings", "check_sections",
           "distributed_map_args", "fifo_billing_args", "idempotent_stream_args", "non_idempotent_stream_args",
           "platform_settings", "read", "stack_file"]

NAMESPACE = "blueprint"


class StackConfigError(pulumi.RunError):
    """A stack config value is missing or wrong. Printed without a traceback by the Pulumi CLI."""


class Section:
    """One config object (e.g. `blueprint:fifoBilling`), read row by row from a settings table."""

    def __init__(self, name: str, values: Optional[dict], source: Optional[str] = None):
        self.name = name
        self.values = dict(values or {})
        self.source = source or stack_file()
        self.read: set[str] = set()

    @classmethod
    def from_pulumi(cls, name: str) -> "Section":
        config = pulumi.Config(NAMESPACE)
        raw = config.get(name)
        if raw is None:
            return cls(name, {})
        try:
            values = json.loads(raw)
        except json.JSONDecodeError:
            values = raw
        if not isinstance(values, dict):
            raise StackConfigError(f"{NAMESPACE}:{name} must be an object of settings, got {raw!r}. "
                                   f"Fix it in {stack_file()}.")
        return cls(name, values)

    def key(self, key: str) -> str:
        return f"{NAMESPACE}:{self.name}.{key}"

    def setting(self, setting: Setting, table: SettingsTable, read: dict[str, Any]) -> Any:
        """The stack's value for one row of a component's settings table, parsed by the row exactly as
        the component parses it (the same values pass, with the same reason when refused); None when
        the key is not set (the component applies its default). `read` holds the values read so far,
        for a bound that is another setting (`at_least`)."""
        key = setting.key
        self.read.add(key)
        value = self.values.get(key)
        if value is None or (setting.kind is list and value == []):  # an empty list means "not set"
            if setting.required:
                raise StackConfigError(f"{self.key(key)} is required but not set ({setting.why}). "
                                       f"Set it in {self.source}.")
            return None
        try:
            return setting.parse(value, table.lower_bound(setting, read))
        except ValueError as refused:
            raise StackConfigError(f"{self.key(key)} = {value!r} is not allowed: {refused}. "
                                   f"Fix it in {self.source}.{_quoted_hint(setting, value)}") from None

    def settings(self, table: SettingsTable) -> dict[str, Any]:
        """Every stack-settable row of `table` that the section sets: argument name -> value."""
        read: dict[str, Any] = {}
        for setting in table:
            if setting.in_stack:
                value = self.setting(setting, table, read)
                if value is not None:
                    read[setting.arg] = value
        return read

    def finish(self) -> None:
        """Refuse keys nobody read: they are typos or settings this blueprint does not have."""
        unknown = sorted(set(self.values) - self.read)
        if unknown:
            guesses = [difflib.get_close_matches(str(key), sorted(self.read), n=1) for key in unknown]
            named = ", ".join(f"{key} (did you mean {guess[0]}?)" if guess else str(key)
                              for key, guess in zip(unknown, guesses))
            raise StackConfigError(
                f"{NAMESPACE}:{self.name} has unknown keys {named}; allowed keys are "
                f"{', '.join(sorted(self.read))}. Fix it in {self.source}.")




_CONFIG_TYPES = {int: "int", float: "float", bool: "bool"}


def _quoted_hint(setting: Setting, value: Any) -> str:
    """How to fix a number or boolean the stack file holds as a string (`pulumi config set --path`
    stores decimals as strings unless told the type)."""
    if not isinstance(value, str) or setting.kind not in _CONFIG_TYPES:
        return ""
    return (f" The file holds the string {value!r}: write the value unquoted, or set it with "
            f"`pulumi config set --path --type {_CONFIG_TYPES[setting.kind]}`.")


def stack_file() -> str:
    """The stack's config file as the user edits it: `<stackConfigDir>/Pulumi.<stack>.yaml`, relative
    to the project (Pulumi runs the program in the project's folder)."""
    name = f"Pulumi.{pulumi.get_stack()}.yaml"
    for folder in (Path.cwd(), *Path.cwd().parents):
        project = next((folder / f for f in ("Pulumi.yaml", "Pulumi.yml") if (folder / f).is_file()), None)
        if project is None:
            continue
        try:
            config_dir = (yaml.safe_load(project.read_text()) or {}).get("stackConfigDir")
        except yaml.YAMLError:
            config_dir = None
        return str(Path(config_dir) / name) if isinstance(config_dir, str) and config_dir else name
    return name


# --- sections ------------------------------------------------------------------------------------

def component_tables() -> dict[str, SettingsTable]:
    """Each pattern's section and its component's settings table (imported here, not at module
    import, so reading `blueprint:platform` does not load every component)."""
    from integration_blueprint.components import (
        distributed_map_definition,
        fifo_billing_queue,
        idempotent_stream_consumer,
        non_idempotent_stream_consumer,
    )

    return {
        "fifoBilling": fifo_billing_queue.SETTINGS,
        "distributedMap": distributed_map_definition.SETTINGS,
        "idempotentStream": idempotent_stream_consumer.SETTINGS,
        "nonIdempotentStream": non_idempotent_stream_consumer.SETTINGS,
    }


# Every pattern's section starts with this switch; a pattern is off unless its section turns it on.
ENABLED = Setting("enabled", bool, False, why="the stack runs this pattern")
_SECTION_SWITCH = SettingsTable("section", [ENABLED])

SECTIONS = ("platform", "fifoBilling", "distributedMap", "idempotentStream", "nonIdempotentStream")


def check_sections() -> None:
    """Refuse a `blueprint:<section>` this program does not read: a misspelled section would
    otherwise silently turn its pattern off."""
    keys = set(pulumi_config.CONFIG.get()) | set(pulumi_config.get_config_env())
    prefix = f"{NAMESPACE}:"
    for key in sorted(keys):
        if not key.startswith(prefix):
            continue
        section = key[len(prefix):]
        if section == SUPPRESSIONS_SECTION:  # the gate's, not the program's
            continue
        if section not in SECTIONS:
            close = difflib.get_close_matches(section, SECTIONS, n=1)
            hint = f" (did you mean {prefix}{close[0]}?)" if close else ""
            raise StackConfigError(
                f"{key} is not a section this blueprint reads{hint}; the sections are "
                f"{', '.join(prefix + s for s in SECTIONS)}. Fix it in {stack_file()}.")


def platform_settings() -> dict[str, Any]:
    """`blueprint:platform`: what every pattern of the stack shares, with its defaults applied."""
    from integration_blueprint.components.platform import PLATFORM_SETTINGS

    section = Section.from_pulumi("platform")
    given = section.settings(PLATFORM_SETTINGS)
    section.finish()
    return {s.arg: given.get(s.arg, PLATFORM_SETTINGS.default(s.arg)) for s in PLATFORM_SETTINGS}


def _pattern_args(name: str, platform: dict[str, Any]) -> Optional[dict[str, Any]]:
    """`blueprint:<name>` -> its component's args (the section's settings and the platform's), or
    None when the stack disables the pattern."""
    section = Section.from_pulumi(name)
    if not section.setting(ENABLED, _SECTION_SWITCH, {}):
        section.values = {k: v for k, v in section.values.items() if k == "enabled"}
        section.finish()
        return None
    args = {**section.settings(component_tables()[name]), **platform}
    section.finish()
    return args


def fifo_billing_args(platform: dict[str, Any]) -> Optional[dict[str, Any]]:
    """`blueprint:fifoBilling` -> FifoBillingQueueArgs, or None when the stack disables it."""
    args = _pattern_args("fifoBilling", platform)
    if args is not None and "accounts_table_arn" in args:
        args["accounts_table_name"] = args["accounts_table_arn"].rsplit("/", 1)[-1]
    return args


def distributed_map_args(platform: dict[str, Any]) -> Optional[dict[str, Any]]:
    """`blueprint:distributedMap` -> DistributedMapBatchArgs, or None when the stack disables it.
    No `schedule`: runs are started by hand (or by the team's own trigger)."""
    return _pattern_args("distributedMap", platform)


def idempotent_stream_args(platform: dict[str, Any]) -> Optional[dict[str, Any]]:
    """`blueprint:idempotentStream` -> IdempotentStreamConsumerArgs, or None when the stack disables
    it. The component checks the numbers against each other (replay window vs retention)."""
    return _pattern_args("idempotentStream", platform)


def non_idempotent_stream_args(platform: dict[str, Any]) -> Optional[dict[str, Any]]:
    """`blueprint:nonIdempotentStream` -> NonIdempotentStreamConsumerArgs, or None when disabled."""
    return _pattern_args("nonIdempotentStream", platform)


@dataclass(frozen=True)
class StackSettings:
    """Everything the stack file says: the platform settings and each enabled pattern's args."""

    platform: dict[str, Any]
    fifo_billing: Optional[dict[str, Any]]
    distributed_map: Optional[dict[str, Any]]
    idempotent_stream: Optional[dict[str, Any]]
    non_idempotent_stream: Optional[dict[str, Any]]


def read() -> StackSettings:
    """Check every `blueprint:*` section and key of the stack, then return them."""
    check_sections()
    platform = platform_settings()
    return StackSettings(platform=platform, fifo_billing=fifo_billing_args(platform),
                         distributed_map=distributed_map_args(platform),
                         idempotent_stream=idempotent_stream_args(platform),
                         non_idempotent_stream=non_idempotent_stream_args(platform))
