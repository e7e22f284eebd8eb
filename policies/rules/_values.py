"""Reading resource properties the way the rules need to: AWS defaults, unknowns, malformed values.

Props reach a rule behind pulumi-policy's unknown-checking proxy: reading a value that is unknown
during preview raises `UnknownValueError`. The rules let that exception travel: in a resource
policy the SDK turns it into an advisory "can't run during preview" note; in a stack policy
`each()` catches it per item, so one unknown queue does not hide the verdict on every other one.

A value of the wrong shape (a redrive policy that is not JSON, a timeout that is a word) raises
`Malformed`; `each()` and `resource_rule()` turn it into a violation that says what is wrong.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Iterable, Optional

from pulumi_policy import ReportViolation, ResourceValidationArgs
from pulumi_policy.proxy import UnknownValueError

ABSENT = object()
# A numeric string longer than this is no setting (float() of a 5,000-digit string is infinity).
NUMERIC_TEXT_MAX_CHARS = 64


class Malformed(Exception):
    """A property is present but not of a shape AWS accepts; the message names the fix."""


# What a rule's reading of a hand-written value can raise when the value has a shape no rule
# expected (a string where an object belongs), is nested deeper than Python's recursion limit, or
# is a number no float holds (an integer above 1e308, which only a JSON string can carry):
# still a malformed value with a verdict, never a crashed pack (tests/test_policies_robustness.py).
UNEXPECTED_SHAPE = (TypeError, AttributeError, KeyError, IndexError, RecursionError, OverflowError, ValueError)


def unexpected(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return "a value is nested too deeply to read; AWS refuses such documents too"
    if isinstance(exc, OverflowError):
        return "a number is too large to compare (above 1e308); use a value AWS accepts"
    return (f"a value does not have the shape AWS expects ({type(exc).__name__}: {excerpt(str(exc))}); check the "
            "resource's properties")


# How much of a value a violation message quotes.
EXCERPT_CHARS = 80


def excerpt(text: str) -> str:
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "..."


def described(value: Any) -> str:
    """The start of `value` for a violation message (a string quoted, a list or object as JSON),
    whatever it holds (deep, huge or NaN)."""
    if isinstance(value, str):
        return repr(excerpt(value))
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return f"{value:.3e}"
    if not isinstance(value, (list, dict)):
        return excerpt(repr(value))
    try:
        return excerpt(json.dumps(value))
    except (TypeError, ValueError, RecursionError):
        return type(value).__name__


class Unverifiable(UnknownValueError):
    """A fact this stack cannot show (a DLQ given by the ARN of a queue in another stack). Like an
    unknown value, the SDK reports it as an advisory "can't run policy" note with this message, so
    the gap is said, not passed over in silence."""

    def __init__(self, message: str):
        Exception.__init__(self, message)
        self.unknown_type_sentinel = ""
        self.props = []
        self.message = message


def is_set(props: Mapping, key: str) -> bool:
    """Whether `key` is given at all. An unknown value is given (it just is not known yet), so this
    never raises: iterating the proxy yields keys without checking their values."""
    return any(k == key for k in props)


def given(props: Mapping, key: str) -> bool:
    """Whether `key` is set to something. An unknown value counts (it is known at deploy time); a
    blank string, an empty object or list does not: AWS reads "" as no ARN and {} as no setting
    (an empty retryPolicy is the 24-hour default), so they must not pass a rule that asks for one."""
    if not is_set(props, key):
        return False
    try:
        value = props[key]
    except UnknownValueError:
        return True
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, (Mapping, Sequence)):
        return len(value) > 0
    return True


def get(props: Mapping, *path: str, default: Any = None) -> Any:
    """props[path[0]][path[1]]..., or `default` where a step is absent. Unknowns raise."""
    value: Any = props
    for key in path:
        if not isinstance(value, Mapping) or not is_set(value, key):
            return default
        value = value[key]
        if value is None:
            return default
    return value


def known(read: Callable[[], Any]) -> Optional[str]:
    """A string value that narrows a check only when it is known (an ARN a condition or a
    statement's Resource is matched against), else None: the check decides without it."""
    try:
        value = read()
    except UnknownValueError:
        return None
    return value if isinstance(value, str) else None


def number(props: Mapping, key: str, default: Optional[float]) -> Optional[float]:
    """A numeric property, or the AWS default when it is absent. Pulumi sends numbers as floats;
    numeric strings are what a hand-written program sometimes passes and AWS accepts."""
    return to_number(get(props, key, default=default), key)


def to_number(value: Any, what: str) -> Optional[float]:
    """A number a rule can compare: a finite float or an int a float can hold. NaN, infinities and
    integers above 1e308 (a JSON document can hold 10**400) are no setting AWS accepts."""
    if value is None:
        return None
    number_: Any = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number_ = value
    elif isinstance(value, str) and len(value) <= NUMERIC_TEXT_MAX_CHARS:
        try:
            number_ = float(value.strip())
        except ValueError:
            pass
    if number_ is None:
        raise Malformed(f"{what} must be a number, got {described(value)}")
    try:
        finite = math.isfinite(number_)
    except OverflowError:
        finite = False
    if not finite:
        raise Malformed(f"{what} must be a finite number AWS accepts, got {described(value)}")
    return number_


def whole_number(value: Any, what: str) -> float:
    """A count: a number with no fraction (AWS refuses 4.5 receives)."""
    number_ = to_number(value, what)
    if number_ is None or not (isinstance(number_, int) or float(number_).is_integer()):
        raise Malformed(f"{what} must be a whole number, got {described(value)}")
    return number_


def within(value: Any, low: float, high: float, what: str, *, also: tuple = ()) -> float:
    """`value` (a number) if AWS accepts it: low..high, or one of `also` (like -1 for "no limit")."""
    if value is None:
        raise Malformed(f"{what} must be a number")
    if value in also or low <= value <= high:
        return value
    extra = "".join(f" or {shown(a)}" for a in also)
    raise Malformed(f"{what} is {shown(value)}; AWS accepts {shown(low)}-{shown(high)}{extra}")


def shown(value: float) -> str:
    """A number as written in a program: 1209600, not 1.2096e+06."""
    if isinstance(value, int):
        return str(value) if abs(value) < 10**30 else f"{value:.3e}"
    return str(int(value)) if math.isfinite(value) and float(value).is_integer() else str(value)


def a_list(value: Any, what: str) -> list:
    """A JSON list field (a Catch, a Retry, Branches): absent is empty, anything else is malformed."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise Malformed(f"{what} must be a list, got {type(value).__name__} {described(value)}")
    return value


def an_object(value: Any, what: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Malformed(f"{what} must be an object, got {type(value).__name__} {described(value)}")
    return value


def boolean(props: Mapping, key: str, default: bool) -> bool:
    value = get(props, key, default=default)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise Malformed(f"{key} must be true or false, got {described(value)}")


def json_document(props: Mapping, key: str) -> Optional[dict]:
    """A property that AWS takes as a JSON string (redrive policies, IAM policies, state machine
    definitions), parsed; None when absent."""
    raw = get(props, key)
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise Malformed(f"{key} must be a JSON string (json.dumps it), got {type(raw).__name__} {described(raw)}")
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise Malformed(f"{key} is not valid JSON ({exc.msg} at character {exc.pos}): {excerpt(raw)!r}") from None
    except RecursionError:
        raise Malformed(f"{key} is nested too deeply to read; AWS refuses such documents too") from None
    if not isinstance(document, dict):
        raise Malformed(f"{key} must be a JSON object, got {excerpt(raw)!r}")
    return document


def plain(value: Any) -> Any:
    """A proxied value as plain dicts and lists (unknowns still raise), for walking documents."""
    if isinstance(value, Mapping):
        return {k: plain(value[k]) for k in value}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [plain(value[i]) for i in range(len(value))]
    return value


def each(items: Iterable, check: Callable[[Any], None], report: ReportViolation,
         urn_of: Callable[[Any], str]) -> None:
    """Run `check` on every item of a stack policy. A malformed item is a violation on its URN; an
    unknown one is skipped, and once every other item is checked the unknowns are raised so the SDK
    says (as an advisory note) that part of the rule could not run during preview."""
    skipped = _judged(items, check, report, urn_of)
    if skipped:
        raise Unverifiable(skipped_items(skipped))


def _judged(items: Iterable, check: Callable[[Any], None], report: ReportViolation,
            urn_of: Callable[[Any], str]) -> list[tuple[str, UnknownValueError]]:
    """`check` run on every item (a malformed one reported on its URN); the items it could not judge."""
    skipped: list[tuple[str, UnknownValueError]] = []
    for item in items:
        try:
            check(item)
        except Malformed as exc:
            report(str(exc), urn_of(item))
        except UNEXPECTED_SHAPE as exc:
            report(unexpected(exc), urn_of(item))
        except UnknownValueError as exc:
            skipped.append((urn_of(item), exc))
    return skipped


def each_resource(index: Any, report: ReportViolation, checks: Mapping[Any, Callable[[Any], None]]) -> None:
    """`each` for a stack policy's checks by resource type (a type token, or a tuple of them, to the
    check of its resources, from the rule's StackIndex): every resource of every type is judged, and
    those that could not be are named together in one note at the end (a resource of one type that
    cannot be read never hides the verdict on another type's)."""
    skipped: list[tuple[str, UnknownValueError]] = []
    for types, check in checks.items():
        skipped += _judged(index.of_type(*((types,) if isinstance(types, str) else types)), check, report,
                           lambda resource: resource.urn)
    if skipped:
        raise Unverifiable(skipped_items(skipped))


# At most this many skipped items are named in one note; the rest are counted.
NAMED_SKIPPED_ITEMS = 5


def skipped_items(skipped: list[tuple[str, UnknownValueError]]) -> str:
    """"EventSourceMapping 'jobs': string value at .eventSourceArn can't be known during preview; ...":
    a stack policy's note names each resource it could not decide and the value it missed."""
    def about(urn: str) -> str:
        parts = urn.split("::")
        if len(parts) < 4:
            return "the stack"
        return f"{parts[2].rsplit('$', 1)[-1].rsplit(':', 1)[-1]} '{parts[-1]}'"
    named = [f"{about(urn)}: {getattr(exc, 'message', str(exc))}" for urn, exc in skipped[:NAMED_SKIPPED_ITEMS]]
    more = len(skipped) - NAMED_SKIPPED_ITEMS
    return "; ".join(named) + (f"; and {more} more" if more > 0 else "")


def resource_rule(check: Callable[[ResourceValidationArgs, ReportViolation], None],
                  *types: str) -> Callable[[ResourceValidationArgs, ReportViolation], None]:
    """Wrap a per-resource check: only `types` are checked, and a malformed value is a violation."""
    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        if args.resource_type not in types:
            return
        try:
            check(args, report)
        except Malformed as exc:
            report(str(exc), None)
        except UNEXPECTED_SHAPE as exc:
            report(unexpected(exc), None)
    return validate


def config_value(config: Mapping, key: str, default: Any) -> Any:
    """The SDK does not apply config schema defaults (the CLI does), so every read has one."""
    value = config.get(key) if config else None
    return default if value is None else value


def gather(items: Iterable, collect: Callable[[Any], None]) -> list[UnknownValueError]:
    """Run `collect` on every item for what it records, returning the unknowns met on the way.
    A malformed item is passed over here: the rule that owns that property reports it."""
    unknowns: list[UnknownValueError] = []
    for item in items:
        try:
            collect(item)
        except UnknownValueError as exc:
            unknowns.append(exc)
        except (Malformed, *UNEXPECTED_SHAPE):
            pass
    return unknowns
