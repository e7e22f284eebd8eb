"""IAM policy evaluation as AWS documents it, for one request: who asks (a role's session), for
which action, on which resource, with which request context; against the principal's identity
policies and the resource's own policy. The one evaluator of the project: the drill authorizes
every call a function makes with it (blueprint/sandbox/authorization.py) and the policy pack
matches actions and resources with its matchers (policies/rules/_iam.py).

What it follows (AWS docs, "Policy evaluation logic" and "Cross-account policy evaluation logic",
https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html):
- an explicit Deny in any applicable statement wins, identity or resource policy;
- within one account, an Allow in either the identity policies or the resource's policy allows
  (a resource policy naming the account, `arn:aws:iam::ACCOUNT:root`, delegates to the identity
  policies and allows nothing by itself); across accounts both must allow;
- a KMS key policy is required: identity policies count only where the key policy allows the
  account (https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-overview.html);
- `NotAction`, `NotResource`, `NotPrincipal` invert their element;
- action names are case-insensitive, ARNs and condition values case-sensitive (but the
  `...IgnoreCase` operators), condition keys case-insensitive; `*` and `?` wildcards; in an ARN a
  wildcard stays within its segment but for the last (the resource), which may hold colons;
- conditions: every operator of "IAM JSON policy elements: Condition operators", with `...IfExists`,
  `ForAllValues:`/`ForAnyValue:` and policy variables (`${aws:username}`, `${*}`); a key the request
  does not carry makes the condition false, but for negated operators (true), `...IfExists` (true)
  and `Null`.

Not evaluated (the caller says so): service control policies, resource control policies,
permission boundaries, session policies, and any condition key the caller cannot fill (evaluated as
absent from the request, as AWS evaluates a missing key, and named in the decision).

Policies are compiled once (`Policy.compile`), their wildcards to regular expressions; a decision
costs a few microseconds per statement, and callers cache decisions per request.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import operator as op
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, Optional, Union

# ---- matching ------------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _glob(pattern: str, ignore_case: bool, stop: str = "") -> re.Pattern:
    """A wildcard pattern (`*` any run, `?` one character, neither crossing `stop`) as a regex."""
    any_run = f"[^{re.escape(stop)}]*" if stop else ".*"
    one = f"[^{re.escape(stop)}]" if stop else "."
    parts = (any_run if c == "*" else one if c == "?" else re.escape(c) for c in pattern)
    return re.compile("".join(parts), (re.IGNORECASE if ignore_case else 0) | re.DOTALL)


def action_matches(pattern: str, action: str) -> bool:
    """Whether an IAM action pattern covers `action`: case-insensitive, `*` and `?` (`SNS:Publish` =
    `sns:publish`; `sqs:Send*` covers sqs:SendMessage)."""
    return _glob(pattern, True).fullmatch(action) is not None


def resource_matches(pattern: str, arn: str) -> bool:
    """Whether a Resource pattern covers `arn`: case-sensitive; `*` alone covers everything; in an
    ARN each of the first five segments is matched on its own (a wildcard does not cross a colon)
    and the resource segment takes the rest (`arn:aws:s3:::bucket/*` covers every key)."""
    if pattern == "*":
        return True
    if pattern.startswith("arn:") and arn.startswith("arn:"):
        wanted, given = pattern.split(":", 5), arn.split(":", 5)
        if len(wanted) != 6 or len(given) != 6:
            return _glob(pattern, False).fullmatch(arn) is not None
        return all(_glob(w, False, ":").fullmatch(g) is not None for w, g in zip(wanted[:5], given[:5])) \
            and _glob(wanted[5], False).fullmatch(given[5]) is not None
    return _glob(pattern, False).fullmatch(arn) is not None


# ---- the request --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Principal:
    """A role's session, as a Lambda function's calls carry it:
    `arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION` (Lambda names the session after the function)."""

    account: str
    role_name: str
    session: str
    partition: str = "aws"

    @property
    def role_arn(self) -> str:
        return f"arn:{self.partition}:iam::{self.account}:role/{self.role_name}"

    @property
    def session_arn(self) -> str:
        return f"arn:{self.partition}:sts::{self.account}:assumed-role/{self.role_name}/{self.session}"


@dataclass(frozen=True)
class Request:
    principal: Principal
    action: str  # service:Name, as the Service Authorization Reference names it
    resource: str  # the ARN the action is authorized on, or "*" for actions with no resource type
    resource_account: str = ""  # "" : the principal's
    # The request context: condition key (any case) -> value (a string, or a list for multivalued keys).
    context: tuple = ()

    def context_map(self) -> dict[str, Any]:
        return {key.lower(): value for key, value in self.context}


# ---- policies -----------------------------------------------------------------------------------


class PolicyError(ValueError):
    """A document that is not an IAM policy (AWS refuses it when it is put)."""


def _strings(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise PolicyError(f"{where} must be a string or a list of strings, got {json.dumps(value)[:80]}")


@dataclass
class Statement:
    effect: str
    where: str  # "<policy name> Statement[i]" (with its Sid)
    actions: Optional[list[str]] = None
    not_actions: Optional[list[str]] = None
    resources: Optional[list[str]] = None
    not_resources: Optional[list[str]] = None
    principal: Any = None  # a resource policy's Principal, as written
    not_principal: Any = None
    condition: dict = field(default_factory=dict)
    raw: dict = field(default_factory=dict)

    def covers_action(self, action: str) -> bool:
        if self.not_actions is not None:
            return not any(action_matches(p, action) for p in self.not_actions)
        return any(action_matches(p, action) for p in self.actions or [])

    def covers_resource(self, arn: str, variables: dict[str, Any]) -> bool:
        if self.not_resources is not None:
            return not any(resource_matches(_substitute(p, variables), arn) for p in self.not_resources)
        if self.resources is None:  # a resource policy may leave Resource out: the resource itself
            return True
        return any(resource_matches(_substitute(p, variables), arn) for p in self.resources)


@dataclass
class Policy:
    name: str  # where it comes from: "RolePolicy orders-policy", "queue policy of ..."
    statements: list[Statement]
    # Every condition key (lower case) its statements read, policy variables included (made once).
    keys: frozenset = frozenset()

    def __post_init__(self) -> None:
        if not self.keys:
            self.keys = frozenset(self.referenced_keys())

    @classmethod
    def compile(cls, name: str, document: Union[str, dict]) -> "Policy":
        """A policy document (JSON text or parsed) made ready to evaluate; PolicyError if it is not one."""
        if isinstance(document, str):
            try:
                document = json.loads(document)
            except ValueError as exc:
                raise PolicyError(f"{name}: not JSON ({exc})") from None
        if not isinstance(document, dict):
            raise PolicyError(f"{name}: a policy document is an object")
        raw = document.get("Statement", [])
        items = raw if isinstance(raw, list) else [raw]
        statements = []
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise PolicyError(f"{name} Statement[{i}] must be an object")
            sid = f" ({item['Sid']})" if isinstance(item.get("Sid"), str) and item["Sid"] else ""
            where = f"{name} Statement[{i}]{sid}"
            if item.get("Effect") not in ("Allow", "Deny"):
                raise PolicyError(f"{where}: Effect must be Allow or Deny")
            condition = item.get("Condition") or {}
            if not isinstance(condition, dict):
                raise PolicyError(f"{where}: Condition must be an object")
            statements.append(Statement(
                effect=item["Effect"], where=where,
                actions=_strings(item["Action"], f"{where} Action") if "Action" in item else None,
                not_actions=_strings(item["NotAction"], f"{where} NotAction") if "NotAction" in item else None,
                resources=_strings(item["Resource"], f"{where} Resource") if "Resource" in item else None,
                not_resources=_strings(item["NotResource"], f"{where} NotResource") if "NotResource" in item else None,
                principal=item.get("Principal"), not_principal=item.get("NotPrincipal"),
                condition=condition, raw=item))
        return cls(name, statements)

    def referenced_keys(self) -> set[str]:
        """Every condition key (lower case) its statements read, policy variables included."""
        keys: set[str] = set()
        for statement in self.statements:
            for block in statement.condition.values():
                if isinstance(block, dict):
                    keys.update(k.lower() for k in block)
            text = json.dumps([statement.resources, statement.not_resources, statement.condition])
            keys.update(v.lower() for v in _VARIABLE.findall(text) if v not in ("*", "?", "$"))
        return keys


# ---- conditions ---------------------------------------------------------------------------------

_VARIABLE = re.compile(r"\$\{([^}]+)\}")


def _substitute(text: str, variables: dict[str, Any]) -> str:
    """Policy variables replaced by the request's values (`${*}`, `${?}`, `${$}` by the character;
    a variable the request lacks, with a default `${key, 'x'}` by it, else left so it matches nothing)."""
    if "${" not in text:
        return text

    def value(match: re.Match) -> str:
        name, _, default = match.group(1).partition(",")
        name = name.strip()
        if name in ("*", "?", "$"):
            return name
        found = variables.get(name.lower())
        if isinstance(found, str):
            return found
        default = default.strip()
        if default.startswith("'") and default.endswith("'"):
            return default[1:-1]
        return "\0"  # an unresolved variable matches nothing (AWS: the statement does not apply)

    return _VARIABLE.sub(value, text)


def _number(value: Any) -> Optional[float]:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _date(value: Any) -> Optional[float]:
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.isdigit()):
        return float(value)
    try:
        return datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _boolean(value: Any) -> str:
    return str(value).lower()


def _ip(given: Any, wanted: str) -> bool:
    try:
        return ipaddress.ip_address(str(given)) in ipaddress.ip_network(wanted, strict=False)
    except ValueError:
        return False


def _arn_like(wanted: str, given: str) -> bool:
    return resource_matches(wanted, given) if wanted.startswith("arn:") else _glob(wanted, False).fullmatch(given) is not None


def _read_as(read: Callable[[Any], Any], compare: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    """A numeric or date operator: both values read as numbers or dates, false where either is not one."""
    def judged(given: Any, wanted: Any) -> bool:
        value, bound = read(given), read(wanted)
        return value is not None and bound is not None and compare(value, bound)
    return judged


# operator -> (compare(given, wanted) -> bool, negated)
_OPERATORS: dict[str, tuple] = {
    "stringequals": (lambda g, w: str(g) == w, False),
    "stringnotequals": (lambda g, w: str(g) == w, True),
    "stringequalsignorecase": (lambda g, w: str(g).lower() == w.lower(), False),
    "stringnotequalsignorecase": (lambda g, w: str(g).lower() == w.lower(), True),
    "stringlike": (lambda g, w: _glob(w, False).fullmatch(str(g)) is not None, False),
    "stringnotlike": (lambda g, w: _glob(w, False).fullmatch(str(g)) is not None, True),
    # Numeric<Comparison> and Date<Comparison>: the same six comparisons, of numbers or of dates.
    **{f"{kind}{comparison}": (_read_as(read, compare), negated)
       for kind, read in (("numeric", _number), ("date", _date))
       for comparison, compare, negated in (("equals", op.eq, False), ("notequals", op.eq, True),
                                            ("lessthan", op.lt, False), ("lessthanequals", op.le, False),
                                            ("greaterthan", op.gt, False), ("greaterthanequals", op.ge, False))},
    "bool": (lambda g, w: _boolean(g) == _boolean(w), False),
    "binaryequals": (lambda g, w: str(g) == w, False),
    "ipaddress": (_ip, False),
    "notipaddress": (_ip, True),
    "arnequals": (_arn_like, False),
    "arnlike": (_arn_like, False),
    "arnnotequals": (_arn_like, True),
    "arnnotlike": (_arn_like, True),
}


def _condition_holds(operator: str, key: str, wanted: Any, context: dict[str, Any]) -> bool:
    """One operator over one key (AWS: the values listed for a key are ORed; keys and operators ANDed)."""
    name = operator.lower()
    qualifier = ""
    if ":" in name:
        qualifier, _, name = name.partition(":")
    if_exists = name.endswith("ifexists")
    if if_exists:
        name = name[: -len("ifexists")]
    wanted_values = [str(v).lower() if isinstance(v, bool) else str(v)
                     for v in (wanted if isinstance(wanted, list) else [wanted])]
    wanted_values = [_substitute(v, context) for v in wanted_values]
    present = key.lower() in context
    given = context.get(key.lower())
    if name == "null":  # true: the key must be absent; false: present
        return (not present) == (wanted_values[0].lower() == "true")
    if name not in _OPERATORS:
        return False  # AWS refuses a policy with an unknown operator when it is put
    compare, negated = _OPERATORS[name]
    if not present:
        if qualifier == "forallvalues":
            return True  # vacuously true over an empty set (AWS's documented pitfall)
        if qualifier == "foranyvalue":
            return if_exists  # no value can match
        return if_exists or negated
    values = given if isinstance(given, list) else [given]
    if qualifier == "forallvalues":
        return all(_one(compare, negated, v, wanted_values) for v in values)
    return any(_one(compare, negated, v, wanted_values) for v in values)


def _one(compare, negated: bool, value: Any, wanted_values: list[str]) -> bool:
    hit = any(compare(value, w) for w in wanted_values)
    return not hit if negated else hit


def conditions_hold(condition: dict, context: dict[str, Any]) -> bool:
    for operator, block in condition.items():
        if not isinstance(block, dict):
            return False
        for key, wanted in block.items():
            if not _condition_holds(operator, key, wanted, context):
                return False
    return True


# ---- principals in a resource policy -------------------------------------------------------------

DIRECT, ACCOUNT = "direct", "account"


def _principal_values(principal: Any) -> Optional[list[str]]:
    """The AWS principals a Principal element names (["*"] for everyone); None: only services,
    federated users or canonical users, none of which is a role's session."""
    if principal == "*":
        return ["*"]
    if isinstance(principal, dict):
        values = principal.get("AWS")
        if values is None:
            return None
        return [values] if isinstance(values, str) else [v for v in values if isinstance(v, str)]
    return None


def _names(value: str, principal: Principal) -> Optional[str]:
    if value == "*":
        return DIRECT
    if value in (principal.account, f"arn:{principal.partition}:iam::{principal.account}:root"):
        return ACCOUNT
    if value in (principal.role_arn, principal.session_arn):
        return DIRECT
    return None


def principal_match(statement: Statement, principal: Principal) -> Optional[str]:
    """How a resource policy's statement names the principal: DIRECT (everyone, the role or its
    session), ACCOUNT (its account: a delegation to the account's identity policies) or None."""
    if statement.not_principal is not None:
        excluded = _principal_values(statement.not_principal) or []
        return None if any(_names(v, principal) for v in excluded) else DIRECT
    named = _principal_values(statement.principal)
    if not named:
        return None
    found = [how for how in (_names(v, principal) for v in named) if how]
    return DIRECT if DIRECT in found else (ACCOUNT if found else None)


# ---- the decision -------------------------------------------------------------------------------

ALLOWED = "allowed"
EXPLICIT_IDENTITY_DENY = "explicit deny in an identity-based policy"
EXPLICIT_RESOURCE_DENY = "explicit deny in a resource-based policy"
NO_IDENTITY_ALLOW = "no identity-based policy allows"
NO_RESOURCE_ALLOW = "no resource-based policy allows"


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str  # ALLOWED or one of AWS's reasons, as its AccessDenied message words them
    statement: str = ""  # the deciding statement's place (an allow's or a deny's), if any
    # Condition keys a statement read that the request did not carry: evaluated as absent.
    absent_keys: tuple = ()


def evaluate(request: Request, identity: Iterable[Policy], resource_policy: Optional[Policy] = None,
             key_policy_required: bool = False) -> Decision:
    """AWS's decision on `request`. `resource_policy`: the resource's own policy where the service
    reads one (a queue's, topic's, bucket's, key's); `key_policy_required`: the resource is a KMS key,
    whose key policy must allow (directly, or the account, to let identity policies count)."""
    context = request.context_map()
    principal = request.principal
    cross_account = bool(request.resource_account) and request.resource_account != principal.account
    absent: set[str] = set()

    def applies(statement: Statement) -> bool:
        if not statement.covers_action(request.action) or not statement.covers_resource(request.resource, context):
            return False
        for block in statement.condition.values():
            if isinstance(block, dict):
                absent.update(k for k in block if k.lower() not in context)
        return conditions_hold(statement.condition, context)

    identity_allow = resource_allow = account_allow = ""
    for policy in identity:
        for statement in policy.statements:
            if applies(statement):
                if statement.effect == "Deny":
                    return Decision(False, EXPLICIT_IDENTITY_DENY, statement.where, tuple(sorted(absent)))
                identity_allow = identity_allow or statement.where
    for statement in resource_policy.statements if resource_policy else []:
        how = principal_match(statement, principal)
        if how is None or not applies(statement):
            continue
        if statement.effect == "Deny":
            return Decision(False, EXPLICIT_RESOURCE_DENY, statement.where, tuple(sorted(absent)))
        if how == DIRECT:
            resource_allow = resource_allow or statement.where
        else:
            account_allow = account_allow or statement.where
    keys = tuple(sorted(absent))
    if key_policy_required:
        if resource_allow:
            return Decision(True, ALLOWED, resource_allow, keys)
        if account_allow and identity_allow:
            return Decision(True, ALLOWED, identity_allow, keys)
        return Decision(False, NO_RESOURCE_ALLOW if identity_allow else NO_IDENTITY_ALLOW, "", keys)
    if cross_account:
        if not identity_allow:
            return Decision(False, NO_IDENTITY_ALLOW, "", keys)
        if not (resource_allow or account_allow):
            return Decision(False, NO_RESOURCE_ALLOW, "", keys)
        return Decision(True, ALLOWED, resource_allow or account_allow, keys)
    if identity_allow or resource_allow:
        return Decision(True, ALLOWED, identity_allow or resource_allow, keys)
    return Decision(False, NO_IDENTITY_ALLOW, "", keys)


def denial_message(principal: Principal, action: str, resource: str, reason: str, action_shown: str = "") -> str:
    """AWS's AccessDenied message: `User: <session ARN> is not authorized to perform: <action> on
    resource: <ARN> because <reason> [the <action> action]`."""
    shown = action_shown or action
    tail = f"{reason} the {shown} action" if reason in (NO_IDENTITY_ALLOW, NO_RESOURCE_ALLOW) else reason
    return f"User: {principal.session_arn} is not authorized to perform: {shown} on resource: {resource} because {tail}"


def statement_to_add(action: str, resource: str) -> dict:
    """The least statement that grants `action` on `resource` (what a report tells the team to add)."""
    return {"Effect": "Allow", "Action": action, "Resource": resource}
