"""How every rule of the pack is declared: its metadata and a config the pack itself checks.

The pulumi-policy SDK publishes a policy's description, display name, severity, tags, remediation
steps and URL in GetAnalyzerInfo (the CLI and `blueprint` show them). `rule()` reads them from the
rule's entry in catalogue.toml and requires each of them, so no rule ships without its fix and its
AWS source (a missing entry, field or value stops the pack from loading, naming the rule).

The SDK sends only a config schema's `properties` and `required` to the engine (no
`additionalProperties`), and its Configure accepts anything. So the rule checks its own config
before it runs: an unknown property, a wrong type or an out-of-range value stops the analysis with
an error that names the rule and the property (a typo in a threshold must not silently keep the
default).
"""

from __future__ import annotations

import functools
import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Optional

from pulumi_policy import (
    EnforcementLevel,
    PolicyComplianceFramework,
    PolicyConfigSchema,
    ResourceValidationPolicy,
    Severity,
    StackValidationPolicy,
)

from integration_blueprint.core import aws_limits, conventions
from integration_blueprint.core.conventions import SUPPRESSIONS_SECTION

from ._nested import judged_with_nested

# AWS Security Hub's "AWS Foundational Security Best Practices" standard: the only compliance
# framework some of these rules implement one to one (the others are AWS guidance, cited by url).
FSBP = "AWS Foundational Security Best Practices"
FSBP_URL = "https://docs.aws.amazon.com/securityhub/latest/userguide/fsbp-standard.html"

# Every rule's texts (title, level, severity, tags, description, fix, AWS link), by rule name.
CATALOGUE = Path(__file__).with_name("catalogue.toml")
TEXT_MODULES = {"aws_limits": aws_limits, "conventions": conventions}
TEXT_FIELDS = ("display_name", "level", "severity", "tags", "description", "remediation", "url")


class PolicyConfigError(ValueError):
    """The policy config given for a rule does not fit the rule's schema."""


def _check_type(value: Any, schema: Mapping[str, Any]) -> bool:
    kinds = {"integer": lambda v: isinstance(v, int) or (isinstance(v, float) and v.is_integer()),
             "number": lambda v: isinstance(v, (int, float)),
             "string": lambda v: isinstance(v, str),
             "boolean": lambda v: isinstance(v, bool)}
    expected = schema.get("type")
    if expected is None:
        return True
    if isinstance(value, bool) and expected != "boolean":
        return False
    return kinds[expected](value)


def check_config(rule_name: str, schema: Mapping[str, Mapping[str, Any]], config: Mapping[str, Any]) -> None:
    """Raise PolicyConfigError naming the rule and the property when `config` does not fit."""
    for key in config:
        if key not in schema:
            takes = ", ".join(sorted(schema)) if schema else "no settings"
            raise PolicyConfigError(f"policy config for {rule_name}: unknown property {key!r} "
                                    f"({rule_name} takes {takes})")
        value, prop = config[key], schema[key]
        if not _check_type(value, prop):
            raise PolicyConfigError(f"policy config for {rule_name}: {key} must be a {prop['type']}, "
                                    f"got {json.dumps(value)}")
        if "minimum" in prop and value < prop["minimum"]:
            raise PolicyConfigError(f"policy config for {rule_name}: {key} must be at least "
                                    f"{prop['minimum']}, got {value}")
        if "maximum" in prop and value > prop["maximum"]:
            raise PolicyConfigError(f"policy config for {rule_name}: {key} must be at most "
                                    f"{prop['maximum']}, got {value}")
        if "pattern" in prop and not re.search(prop["pattern"], value):
            raise PolicyConfigError(f"policy config for {rule_name}: {key} must match {prop['pattern']} "
                                    f"({prop.get('description', 'its description')}), got {json.dumps(value)}")


# Every rule takes the findings a team accepted, each with its reason, as the setting
# `suppressions`: `blueprint policy config` writes them into the policy config from the
# `# blueprint: ignore[rule] reason` comments and the stack's `blueprint:suppressions`, so that
# `pulumi preview --policy-pack` leaves out the same findings the offline gate reports as suppressed.
SUPPRESSIONS = SUPPRESSIONS_SECTION
SUPPRESSIONS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "description": "findings accepted with a reason (written by `blueprint policy config`): each entry's "
                   "`resource` is the resource's URN or name, `reason` why the finding is accepted, "
                   "`where` the comment or stack file that says so",
    "items": {"type": "object", "required": ["resource", "reason"],
              "properties": {"resource": {"type": "string"}, "reason": {"type": "string"},
                             "where": {"type": "string"}}},
}


def suppressed_resources(rule_name: str, entries: Any) -> frozenset[str]:
    """The URNs and names a rule's `suppressions` setting covers (refused when malformed: a
    suppression that silently covered nothing would let the CLI block what the gate passes)."""
    if entries is None:
        return frozenset()
    if not isinstance(entries, list):
        raise PolicyConfigError(f"policy config for {rule_name}: {SUPPRESSIONS} must be a list of "
                                f"{{resource, reason}}, got {json.dumps(entries)}")
    covered = set()
    for index, entry in enumerate(entries):
        resource = entry.get("resource") if isinstance(entry, Mapping) else None
        reason = entry.get("reason") if isinstance(entry, Mapping) else None
        if not isinstance(resource, str) or not resource or not isinstance(reason, str) or not reason.strip():
            raise PolicyConfigError(f"policy config for {rule_name}: {SUPPRESSIONS}[{index}] needs a `resource` "
                                    f"(URN or name) and a `reason`, got {json.dumps(entry)}")
        covered.add(resource)
    return frozenset(covered)


def _urn_name(urn: str) -> str:
    """A URN's resource name: urn:pulumi:<stack>::<project>::<type>::<name>."""
    parts = urn.split("::")
    return "::".join(parts[3:]) if len(parts) >= 4 else ""


def _checked(name: str, schema: Mapping[str, Mapping[str, Any]], validate: Callable) -> Callable:
    def run(args, report):
        config = dict(args.get_config() or {})
        covered = suppressed_resources(name, config.pop(SUPPRESSIONS, None))
        check_config(name, schema, config)
        if not covered:
            return validate(args, report)
        own_urn = getattr(args, "urn", None)  # a resource policy's resource; a stack policy names it per violation

        def report_unless_suppressed(message: str, urn: Optional[str] = None) -> None:
            target = own_urn or urn or ""
            if not target or ({target, _urn_name(target)} & covered) == set():
                report(message, urn)
        return validate(args, report_unless_suppressed)
    return run


def rule(kind: str, name: str, validate: Callable, *, config: Optional[dict[str, dict[str, Any]]] = None,
         text_values: Mapping[str, object] = MappingProxyType({})):
    """The rule `name` of catalogue.toml as a ResourceValidationPolicy (kind "resource") or a
    StackValidationPolicy (kind "stack") that runs `validate`; `config` is its settings' schema and
    `text_values` the values its texts name beside the AWS limits and conventions."""
    texts = _catalogue().get(name)
    if texts is None:
        raise KeyError(f"rule {name!r} has no entry in {CATALOGUE.name}: add its texts there")
    missing = [field for field in TEXT_FIELDS if field not in texts]
    if missing:
        raise ValueError(f"{CATALOGUE.name} [{name!r}] lacks {', '.join(missing)}: every rule states each of "
                         f"{', '.join(TEXT_FIELDS)}")
    try:
        filled = {field: _filled(texts[field], text_values) for field in ("description", "remediation")}
        schema = config or {}
        policy_class = ResourceValidationPolicy if kind == "resource" else StackValidationPolicy
        return policy_class(
            name=name, description=filled["description"], enforcement_level=EnforcementLevel(texts["level"]),
            config_schema=PolicyConfigSchema(properties={**schema, SUPPRESSIONS: SUPPRESSIONS_SCHEMA}),
            validate=_checked(name, schema, judged_with_nested(validate, kind)), display_name=texts["display_name"],
            severity=Severity(texts["severity"]), framework=fsbp(texts["fsbp"]) if "fsbp" in texts else None,
            tags=list(texts["tags"]), remediation_steps=filled["remediation"], url=texts["url"])
    except (KeyError, ValueError) as exc:
        raise ValueError(f"{CATALOGUE.name} [{name!r}]: {exc.args[0]}") from None


@functools.cache
def _catalogue() -> dict[str, dict[str, Any]]:
    with CATALOGUE.open("rb") as catalogue:
        return tomllib.load(catalogue)


_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][\w.]*)\}")


def _filled(text: str, values: Mapping[str, object]) -> str:
    """`text` with each ${name} replaced: an AWS limit (aws_limits.X), a convention (conventions.X)
    or one of the rule's own values."""
    def value(match: re.Match) -> str:
        reference = match.group(1)
        module, _, constant = reference.partition(".")
        if module in TEXT_MODULES and hasattr(TEXT_MODULES[module], constant):
            return str(getattr(TEXT_MODULES[module], constant))
        if reference in values:
            return str(values[reference])
        raise KeyError(f"${{{reference}}} names no AWS limit, convention or value the rule passes")
    return _PLACEHOLDER.sub(value, text)


def fsbp(control: str) -> PolicyComplianceFramework:
    return PolicyComplianceFramework(name=FSBP, reference=control, specification=FSBP_URL)
