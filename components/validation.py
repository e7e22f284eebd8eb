"""Refusals shared by every component: a bad argument fails the preview with a message that names
the argument, what it got and what is allowed. Values that are still Outputs cannot be checked at
construction time and pass through; the policy pack checks them once they are known.

Public: `ComponentArgumentError`, `is_known` (narrows an Input to its plain value), `plain` (an
argument the component must read now), `require`, `require_range`.
"""

from typing import Any, Optional, TypeVar

import pulumi
from typing_extensions import TypeIs

__all__ = ["ComponentArgumentError", "is_known", "plain", "require", "require_range"]

T = TypeVar("T")


class ComponentArgumentError(ValueError):
    """A component argument outside what AWS or this blueprint allows, or one the component does
    not know. `arg` names the argument at fault (snake_case) when one is: the plugin answers with
    that input's name as the calling language spells it."""

    def __init__(self, message: str, arg: Optional[str] = None):
        super().__init__(message)
        self.arg = arg
        self.refusals: list[ComponentArgumentError] = [self]  # every refusal of the call, this one first

    @classmethod
    def every(cls, refusals: list["ComponentArgumentError"]) -> "ComponentArgumentError":
        """Every refusal of one call as one error, a line each (the first names `arg`)."""
        if len(refusals) == 1:
            return refusals[0]
        combined = cls("\n".join(str(refusal) for refusal in refusals), refusals[0].arg)
        combined.refusals = list(refusals)
        return combined


def is_known(value: Optional[pulumi.Input[T]]) -> TypeIs[T]:
    """True for a plain value the component can check now (not an Output/awaitable)."""
    return value is not None and not hasattr(value, "apply") and not hasattr(value, "__await__")


def plain(component: str, arg: str, value: Optional[pulumi.Input[T]]) -> Optional[T]:
    """`value` as a plain value: the component must read it now (e.g. to name IAM actions), so an
    Output is refused with a message that names the argument."""
    if value is None or is_known(value):
        return value
    raise ComponentArgumentError(f"{component}: {arg} must be a plain value when the component is declared, "
                                 "not an Output; resolve it first (or pass the resources it depends on instead)",
                                 arg.split("[", 1)[0])


def require_range(component: str, arg: str, value: Any, minimum: float, maximum: Optional[float] = None,
                  why: str = "") -> None:
    if not is_known(value):
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ComponentArgumentError(f"{component}: {arg} must be a number, got {value!r}", arg)
    if value < minimum or (maximum is not None and value > maximum):
        allowed = f"{minimum}-{maximum}" if maximum is not None else f">= {minimum}"
        suffix = f" ({why})" if why else ""
        raise ComponentArgumentError(f"{component}: {arg}={value} is not allowed; use {allowed}{suffix}", arg)


def require(component: str, condition: bool, message: str, arg: Optional[str] = None) -> None:
    """Refuse with `message` unless `condition`; `arg` is the argument to fix (the first the message names)."""
    if not condition:
        raise ComponentArgumentError(f"{component}: {message}", arg)
