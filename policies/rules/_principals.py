"""Whether a policy statement lets anyone in: a public principal, and conditions judged by what
they allow, not by which keys they name.

A statement is public when it Allows Principal "*" (or {"AWS": "*"}, or a list holding "*") or
Allows with NotPrincipal (everyone but the principals named). Its conditions (all must hold)
restrict it only when one of them ties the request to something specific:
- a positive operator (StringEquals, StringLike, ArnEquals, ArnLike, IpAddress, ForAnyValue:...):
  negated operators (StringNotEquals, NotIpAddress, ...) allow everyone but the values named;
  `...IfExists` and `ForAllValues:` hold when the key is absent (a direct call has no
  aws:SourceArn); `Null` only says whether a key is present;
- on a key that names the caller's or source's identity or network (aws:SourceArn,
  aws:SourceAccount, aws:PrincipalOrgID, aws:SourceIp, ...);
- with every value specific: an account id of 12 digits, an organization id, an ARN whose account
  is an account id (or, for ARNs with no account such as S3's, whose resource is named), a VPC or
  endpoint id, a network smaller than the whole address space. `ArnLike aws:SourceArn "*"` or
  `IpAddress aws:SourceIp 0.0.0.0/0` restrict nothing.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Callable

from ._iam import Statement

ACCOUNT_ID = re.compile(r"[0-9]{12}")
WILDCARDS = re.compile(r"[*?]")
# What each restricting key's values must look like to restrict (no wildcard where it matters).
ACCOUNT_KEYS = frozenset({"aws:sourceaccount", "aws:sourceowner", "aws:principalaccount", "aws:resourceaccount"})
ARN_KEYS = frozenset({"aws:sourcearn", "aws:principalarn"})
ORG_KEYS = frozenset({"aws:principalorgid", "aws:sourceorgid", "aws:principalorgpaths", "aws:sourceorgpaths",
                      "aws:resourceorgid", "aws:resourceorgpaths"})
NETWORK_ID_KEYS = frozenset({"aws:sourcevpc", "aws:sourcevpce"})
IP_KEYS = frozenset({"aws:sourceip"})
NEGATED = re.compile(r"(string|arn|numeric|date)?not|notipaddress", re.IGNORECASE)


def is_public_principal(principal: Any) -> bool:
    if principal == "*":
        return True
    if isinstance(principal, dict):
        aws = principal.get("AWS")
        return aws == "*" or (isinstance(aws, list) and "*" in aws)
    return False


def lets_anyone_in(statement: Statement) -> bool:
    """An Allow whose principal is public (or a NotPrincipal) and that no condition restricts."""
    if not statement.allows:
        return False
    public = is_public_principal(statement.principal) or statement.not_principal is not None
    return public and not restricted(statement.condition)


def restricted(condition: dict) -> bool:
    return any(_restricts(operator, key, values) for operator, test in condition.items() if isinstance(test, dict)
               for key, values in test.items())


def _restricts(operator: Any, key: Any, values: Any) -> bool:
    if not isinstance(operator, str) or not isinstance(key, str):
        return False
    op = operator.lower()
    if op.endswith("ifexists") or op.startswith("forallvalues:") or op == "null":
        return False
    op = op.split(":", 1)[-1]  # ForAnyValue:StringEquals -> stringequals
    if NEGATED.match(op):
        return False
    values = values if isinstance(values, list) else [values]
    check = _VALUE_CHECKS.get(key.lower())
    return bool(values) and check is not None and all(isinstance(v, str) and check(v) for v in values)


def _account(value: str) -> bool:
    return ACCOUNT_ID.fullmatch(value) is not None


def _arn(value: str) -> bool:
    parts = value.split(":", 5)
    if len(parts) < 6:
        return False
    account, resource = parts[4], parts[5]
    if account:
        return _account(account)
    return bool(WILDCARDS.sub("", resource).strip("/"))  # S3-style: no account, a named resource


def _org(value: str) -> bool:
    return value.startswith("o-") and not WILDCARDS.search(value.split("/", 1)[0])


def _network_id(value: str) -> bool:
    return value.startswith(("vpc-", "vpce-")) and not WILDCARDS.search(value)


def _ip(value: str) -> bool:
    try:
        return ipaddress.ip_network(value, strict=False).prefixlen > 0
    except ValueError:
        return False


_VALUE_CHECKS: dict[str, Callable[[str], bool]] = {
    **{key: _account for key in ACCOUNT_KEYS}, **{key: _arn for key in ARN_KEYS}, **{key: _org for key in ORG_KEYS},
    **{key: _network_id for key in NETWORK_ID_KEYS}, **{key: _ip for key in IP_KEYS}}
