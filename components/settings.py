"""One declaration per argument: each component lists its arguments once, in a `SettingsTable`, with
the type, default, what AWS or this blueprint allows, and why. Every reader of an argument uses
that row:

- the component refuses an argument it does not know (naming the nearest known one) and parses
  each value with the row (`Setting.parse`): `FifoBillingQueue: batch_size=11 is not allowed: a
  whole number from 1 to 10 (...)`;
- the blueprint program's stack-config reader (`integration_blueprint.program.stack_config`)
  parses the stack file's key with the same row, so the same value is accepted or refused by both,
  with the same reason (`blueprint:fifoBilling.batchSize = 11 is not allowed: a whole number from 1
  to 10 (...)`);
- the plugin's schema (descriptions, enums) and the reference pages in docs/ are generated from
  the rows (`describe_setting`).

A default of None means "not set": AWS's own behaviour applies, or the component derives the value
from other settings (the row's `why` says how). Bounds that are AWS facts come from `aws_limits`;
the project's own choices from `conventions` or the row itself. Arguments a stack file cannot set
(code, handlers, extra permissions) are rows too, with `in_stack=False`.

Public: `Setting`, `SettingsTable`, `REQUIRED`, `STATEMENT_KEYS`, `camel_case`, `camel_case_names`, and the rows several
components share: `code_settings`, `schedule_expression_setting`, `SCHEDULE_SETTINGS`.
"""

import difflib
import re
from dataclasses import dataclass
from typing import Any, Collection, Iterable, Iterator, Mapping, Optional

import pulumi

from integration_blueprint.components.validation import ComponentArgumentError, is_known
from integration_blueprint.core import aws_limits, conventions

__all__ = ["REQUIRED", "SCHEDULE_SETTINGS", "STATEMENT_KEYS", "Setting", "SettingsTable", "camel_case", "camel_case_names",
           "code_settings", "schedule_expression_setting"]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""The default of a setting that has none on purpose: the user must choose the value."""

STATEMENT_KEYS = ("actions", "resources")
"""The keys of one extra IAM statement (`policy_statements` items)."""


def camel_case(arg: str) -> str:
    head, *rest = arg.split("_")
    return head + "".join(word.capitalize() for word in rest)


# A Python argument name as it appears in running text (`item_code`, `max_concurrency`).
SNAKE_CASE_NAME = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")


def camel_case_names(text: str, names: Collection[str]) -> str:
    """`text` with every argument name among `names` spelled as other languages spell it (camelCase)."""
    return SNAKE_CASE_NAME.sub(lambda found: camel_case(found.group(0)) if found.group(0) in names
                               else found.group(0), text)


def _kind_of(value: Any) -> str:
    """The kind of a value in words, as a team would name it in any language ('' for another kind)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a map"
    if isinstance(value, (list, tuple)):
        return "a list"
    return ""


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


@dataclass(frozen=True)
class Setting:
    """One component argument: its type, default and allowed values, and why."""

    arg: str
    """The component argument (snake_case)."""
    kind: type
    """int, float, bool, str, list (of `items`), dict (of strings) or pulumi.Archive."""
    default: Any = None
    minimum: Optional[float] = None
    maximum: Optional[float] = None
    at_least: str = ""
    """Another setting whose effective value is a lower bound of this one."""
    choices: tuple = ()
    pattern: str = ""
    describe: str = ""
    """What is allowed, in words, when the type, bounds or choices alone would not say it."""
    why: str = ""
    stack_key: str = ""
    """The key in the stack file's section; default: the argument in camelCase."""
    in_stack: bool = True
    """False for arguments a stack file cannot set (they name code or identities)."""
    items: type = str
    """The type of a list's items: str, or dict for IAM statements ({actions, resources})."""

    @property
    def key(self) -> str:
        return self.stack_key or camel_case(self.arg)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def allowed(self, minimum: Optional[float] = None) -> str:
        """What the row allows, in words (`minimum`: a higher lower bound from `at_least`)."""
        low = self.minimum if minimum is None else minimum
        if self.describe and (self.choices or self.pattern or self.kind not in (int, float)):
            return self.describe + (": one of " + ", ".join(map(str, self.choices)) if self.kind is int and self.choices
                                    else "")
        if self.choices:
            return "one of " + ", ".join(map(str, self.choices))
        if self.kind in (int, float):
            words = "a whole number" if self.kind is int else "a number"
            if low is not None and self.maximum is not None:
                return f"{words} from {_number(low)} to {_number(self.maximum)}"
            if low is not None:
                return f"{words} of at least {_number(low)}"
            return words
        return {bool: "true or false", str: "a non-empty string", dict: "an object of string values",
                list: "a list of strings" if self.items is str else "a list of {actions, resources} objects",
                }.get(self.kind, "a pulumi.Archive of your code (e.g. pulumi.FileArchive('./build'))")

    def problem(self, value: Any, minimum: Optional[float] = None) -> Optional[str]:
        """Why a known `value` is refused (the type it is when that is the mistake, what is allowed,
        and why), or None when it is allowed."""
        if self._fits(value, minimum):
            return None
        given = _kind_of(value)
        wrong_type = f"{value!r} is {given}; " if given and given != _kind_of(self._example()) else ""
        return wrong_type + self.allowed(minimum) + (f" ({self.why})" if self.why else "")

    def _example(self) -> Any:
        """A value of the row's kind (for comparing kinds)."""
        return {int: 0, float: 0.0, bool: False, str: "", dict: {}, list: []}.get(self.kind)

    def parse(self, value: Any, minimum: Optional[float] = None) -> Any:
        """`value` as the component uses it (a whole float becomes an int, an int a float where a
        decimal is allowed), or ValueError with `problem`'s reason. Outputs pass unchanged: they are
        checked once known (by the policy pack)."""
        if value is None or not is_known(value):
            return value
        reason = self.problem(value, minimum)
        if reason is not None:
            raise ValueError(reason)
        if self.kind is int:
            return int(value)
        if self.kind is float:
            return float(value)
        if self.kind is list:
            return list(value)
        return value

    def _fits(self, value: Any, minimum: Optional[float]) -> bool:
        if self.kind in (int, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
                return False
            if self.kind is int and not float(value).is_integer():
                return False
            low = self.minimum if minimum is None else minimum
            if (low is not None and value < low) or (self.maximum is not None and value > self.maximum):
                return False
            return not self.choices or value in self.choices
        if self.kind is bool:
            return isinstance(value, bool)
        if self.kind is str:
            return isinstance(value, str) and bool(value) and (not self.choices or value in self.choices) and \
                (not self.pattern or re.fullmatch(self.pattern, value) is not None)
        if self.kind is dict:
            return isinstance(value, Mapping) and all(isinstance(k, str) and (isinstance(v, str) or not is_known(v))
                                                      for k, v in value.items())
        if self.kind is list:
            return isinstance(value, (list, tuple)) and all(self._item_fits(item) for item in value)
        return isinstance(value, self.kind)

    def _item_fits(self, item: Any) -> bool:
        if not is_known(item):
            return True
        if self.items is dict:
            return isinstance(item, Mapping) and set(item) == set(STATEMENT_KEYS)
        return isinstance(item, str) and bool(item) and (not self.pattern or re.fullmatch(self.pattern, item) is not None)

    def check(self, component: str, value: Any, minimum: Optional[float] = None) -> Any:
        """`parse` for a component: the parsed value, or ComponentArgumentError naming the argument."""
        try:
            return self.parse(value, minimum)
        except ValueError as refused:
            raise ComponentArgumentError(f"{component}: {self.arg}={value!r} is not allowed: {refused}", self.arg) \
                from None


class SettingsTable:
    """A component's arguments, by name: its own rows (what its stack section holds) and the ones it
    shares with every component (`inherited`: the platform's)."""

    def __init__(self, component: str, settings: Iterable[Setting], inherited: Iterable[Setting] = ()):
        self.component = component
        self._rows = {s.arg: s for s in settings}
        self._inherited = {s.arg: s for s in inherited}

    def __iter__(self) -> Iterator[Setting]:
        """The component's own rows (not the inherited ones)."""
        return iter(self._rows.values())

    def __getitem__(self, arg: str) -> Setting:
        return self._rows.get(arg) or self._inherited[arg]

    def arguments(self) -> list[Setting]:
        """Every argument the component takes: the inherited rows, then its own."""
        return [*self._inherited.values(), *self._rows.values()]

    def default(self, arg: str) -> Any:
        default = self[arg].default
        return None if default is REQUIRED else default

    def lower_bound(self, setting: Setting, values: Mapping[str, Any]) -> Optional[float]:
        """The row's minimum, raised to the effective value of its `at_least` setting when that is known."""
        if not setting.at_least:
            return setting.minimum
        other = values.get(setting.at_least)
        other = self.default(setting.at_least) if other is None else other
        if not isinstance(other, (int, float)) or isinstance(other, bool):
            return setting.minimum
        return other if setting.minimum is None else max(setting.minimum, other)

    def value(self, args: Mapping[str, Any], arg: str) -> Any:
        """The effective value of `arg` (given, else the default), parsed by its row."""
        setting = self[arg]
        value = args.get(arg)
        if value is None:
            if setting.required:
                raise ComponentArgumentError(f"{self.component}: {arg} is required" +
                                             (f": {setting.why}" if setting.why else ""), arg)
            return setting.default
        return setting.check(self.component, value, self.lower_bound(setting, args))

    def check(self, args: Any) -> dict[str, Any]:
        """The given arguments, each parsed by its row (a whole float becomes an int, ...); refuses an
        argument the component does not know (naming the nearest known one), a required one left
        out and every value its row refuses, all of them at once (one line each)."""
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            raise ComponentArgumentError(f"{self.component}: args must be a dict of {self.component}Args, got {args!r}")
        known = [s.arg for s in self.arguments()]
        refusals = []  # every one of the call, so a team fixes them in one go
        for arg in args:
            if arg not in known:
                close = difflib.get_close_matches(str(arg), known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                refusals.append(ComponentArgumentError(
                    f"{self.component}: unknown argument {arg!r}{hint}; {self.component} takes "
                    f"{', '.join(sorted(known))} (see `blueprint docs {self.component}`)", str(arg)))
        for arg in known:
            try:
                self.value(args, arg)
            except ComponentArgumentError as refused:
                refusals.append(refused)
        if refusals:
            raise ComponentArgumentError.every(refusals)
        return {arg: self.value(args, arg) if value is not None else None for arg, value in args.items()}


def code_settings(code_arg: str, handler_arg: str, what: str) -> tuple[Setting, ...]:
    """The rows of a function whose code the team may bring: `code_arg` (an Archive), `handler_arg`,
    and what the team's code needs from the function, named like `code_arg` (`consumer_code`:
    `consumer_environment`, `consumer_policy_statements`; `code`: `environment`, `policy_statements`)."""
    prefix = code_arg.removesuffix("code")
    return (Setting(code_arg, pulumi.Archive, None, in_stack=False,
                    why=f"your own {what} code; unset: this package's reference handler"),
            Setting(handler_arg, str, None, in_stack=False, describe="module.function in your code",
                    why=f"the {what} handler in {code_arg} (module.function); required with {code_arg}"),
            Setting(f"{prefix}environment", dict, None, in_stack=False,
                    why=f"extra environment variables of the {what} function (your handler's own settings)"),
            Setting(f"{prefix}policy_statements", list, None, items=dict, in_stack=False,
                    why=f"extra permissions of the {what} function for your handler: named actions (no wildcards) "
                        "on resources"))


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
