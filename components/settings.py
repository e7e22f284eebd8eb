"""One declaration per setting: each component lists its settings once, in a `SettingsTable`, with the
default, what AWS or this blueprint allows, and why. Both readers of a setting use that row:

- the component's `validate()` takes effective values and refusals from it
  (`FifoBillingQueue: batch_size=11 is not allowed; use 1-10 (...)`), and
- the blueprint program's stack-config reader (`integration_blueprint.program.stack_config`) reads
  and checks the stack file's key from it (`blueprint:fifoBilling.batchSize = 11 is not allowed: ...`).

A default of None means "not set": AWS's own behaviour applies, or the component derives the value
from other settings (the row's `why` says how). Bounds that are AWS facts come from `aws_limits`;
the project's own choices from `conventions` or the row itself.

Public: `Setting`, `SettingsTable`, `REQUIRED`, and the rows every scheduled component shares:
`schedule_expression_setting`, `SCHEDULE_SETTINGS`.
"""

import re
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Optional

from integration_blueprint import aws_limits, conventions
from integration_blueprint.components.validation import ComponentArgumentError, is_known, require_range

__all__ = ["REQUIRED", "SCHEDULE_SETTINGS", "Setting", "SettingsTable", "schedule_expression_setting"]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""The default of a setting that has none on purpose: the user must choose the value."""


def camel_case(arg: str) -> str:
    head, *rest = arg.split("_")
    return head + "".join(word.capitalize() for word in rest)


@dataclass(frozen=True)
class Setting:
    """One component argument: its type, default and allowed values, and why."""

    arg: str
    """The component argument (snake_case)."""
    kind: type
    """int, float, bool, str or list (of strings)."""
    default: Any = None
    minimum: Optional[float] = None
    maximum: Optional[float] = None
    at_least: str = ""
    """Another setting whose effective value is a lower bound of this one."""
    choices: tuple = ()
    pattern: str = ""
    describe: str = ""
    """What is allowed, in words, when choices or pattern alone would not say it."""
    why: str = ""
    stack_key: str = ""
    """The key in the stack file's section; default: the argument in camelCase."""
    in_stack: bool = True
    """False for arguments a stack file cannot set (they name code or identities)."""

    @property
    def key(self) -> str:
        return self.stack_key or camel_case(self.arg)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def allowed_choices(self) -> str:
        return self.describe or " or ".join(map(str, self.choices))

    def check(self, component: str, value: Any) -> None:
        """Refuse a known value outside the row's bounds, naming the argument (Outputs pass)."""
        if not is_known(value):
            return
        if self.kind in (int, float) and self.minimum is not None:
            require_range(component, self.arg, value, self.minimum, self.maximum, self.why)
        if self.kind is int and isinstance(value, float) and not value.is_integer():
            raise ComponentArgumentError(f"{component}: {self.arg}={value!r} must be a whole number")
        if self.choices and value not in self.choices:
            suffix = f" ({self.why})" if self.why else ""
            raise ComponentArgumentError(
                f"{component}: {self.arg}={value!r} is not allowed; use {self.allowed_choices()}{suffix}")
        if self.pattern:
            items = value if self.kind is list and isinstance(value, (list, tuple)) else [value]
            for item in items:
                if not is_known(item):
                    continue
                if not (isinstance(item, str) and re.fullmatch(self.pattern, item)):
                    raise ComponentArgumentError(
                        f"{component}: {self.arg}={value!r} is not allowed; use {self.describe or self.pattern}")


class SettingsTable:
    """A component's settings, by argument name."""

    def __init__(self, component: str, settings: Iterable[Setting]):
        self.component = component
        self._rows = {s.arg: s for s in settings}

    def __iter__(self) -> Iterator[Setting]:
        return iter(self._rows.values())

    def __getitem__(self, arg: str) -> Setting:
        return self._rows[arg]

    def extended(self, component: str, settings: Iterable[Setting]) -> "SettingsTable":
        """This table plus `settings`, for a component that adds to shared settings."""
        return SettingsTable(component, [*self, *settings])

    def default(self, arg: str) -> Any:
        default = self._rows[arg].default
        return None if default is REQUIRED else default

    def value(self, args: Mapping[str, Any], arg: str) -> Any:
        """The effective value of `arg` (given, else the default), refused if outside its row."""
        setting = self._rows[arg]
        value = args.get(arg)
        if value is None:
            if setting.required:
                raise ComponentArgumentError(f"{self.component}: {arg} is required" +
                                             (f": {setting.why}" if setting.why else ""))
            value = setting.default
        setting.check(self.component, value)
        return value


# --- rows several components share ------------------------------------------------------------

def schedule_expression_setting(default: Optional[str], why: str) -> Setting:
    return Setting("schedule_expression", str, default, pattern=aws_limits.SCHEDULER_EXPRESSION_PATTERN,
                   describe="a Scheduler expression: cron(min hour dom month dow year), rate(...) or at(...)",
                   why=why, stack_key="schedule")


# The settings of a component's schedule (besides its expression), shared by every scheduled pattern.
SCHEDULE_SETTINGS = (
    Setting("schedule_timezone", str, "UTC", why="the time zone the cron expression is read in"),
    Setting("schedule_enabled", bool, True, why="false keeps the schedule but never fires it (e.g. in dev)"),
    Setting("scheduler_retry_attempts", int, conventions.SCHEDULER_RETRY_ATTEMPTS_DEFAULT, minimum=0,
            maximum=aws_limits.SCHEDULER_RETRY_ATTEMPTS_MAX,
            why="Scheduler's retries of a failed start before the message goes to the schedule's DLQ"),
    Setting("scheduler_max_event_age_seconds", int, conventions.SCHEDULER_EVENT_AGE_DEFAULT_SECONDS,
            minimum=aws_limits.SCHEDULER_EVENT_AGE_MIN_SECONDS, maximum=aws_limits.SCHEDULER_EVENT_AGE_MAX_SECONDS,
            why="how long Scheduler keeps retrying a start"),
)
