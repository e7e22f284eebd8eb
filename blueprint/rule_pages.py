"""The rule reference (docs/rules.md, `blueprint docs rules`), generated from the rules themselves: each
rule of the policy pack (integration_blueprint.policies.rules, one module per AWS service) and the
gate's own (integration_blueprint.preview.gate_rules) with its level, severity, tags, why (its
description), fix (its remediation steps), the AWS page it rests on and its config settings.

Public: `render`, `PAGE`; run as a module (`make docs`) it writes the page.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from types import ModuleType
from typing import Any, Iterable, NamedTuple

from integration_blueprint.policies import rules as pack
from integration_blueprint.policies.rules import POLICIES
from integration_blueprint.preview import gate_rules

PAGE = Path("docs", "rules.md")  # in the repository


class RuleEntry(NamedTuple):
    """What the page says of a rule, read from a pack policy or a gate rule alike."""
    name: str
    display_name: str
    level: str
    severity: str
    tags: tuple[str, ...]
    why: str
    fix: str
    url: str
    settings: dict[str, dict[str, Any]]
    framework: str


def _text(value: Any) -> str:
    """An SDK enum (`EnforcementLevel.MANDATORY`) or a plain string as the reports show it."""
    return str(getattr(value, "value", value) or "").lower()


def _pack_entry(policy) -> RuleEntry:
    framework = policy.framework
    return RuleEntry(
        name=policy.name, display_name=policy.display_name or "", level=_text(policy.enforcement_level),
        severity=_text(policy.severity), tags=tuple(policy.tags or ()), why=policy.description,
        fix=policy.remediation_steps or "", url=policy.url or "",
        settings=dict(policy.config_schema.properties) if policy.config_schema else {},
        framework=f"[{framework.name}]({framework.specification}) {framework.reference}" if framework else "")


def _gate_entry(rule) -> RuleEntry:
    return RuleEntry(name=rule.name, display_name="", level=rule.level, severity=rule.severity or "",
                     tags=tuple(rule.tags), why=rule.description, fix=rule.remediation, url=rule.url or "",
                     settings=dict(rule.config_schema), framework="")


def _areas() -> list[tuple[str, list[RuleEntry]]]:
    """The pack's rules by the module (AWS service) that declares them, in the pack's order, then the
    gate's own."""
    modules: dict[str, ModuleType] = {name: module for name, module in inspect.getmembers(pack, inspect.ismodule)
                                      if not name.startswith("_")}
    areas: dict[str, list[RuleEntry]] = {}
    for policy in POLICIES:
        module = next(m for m in modules.values() if policy in getattr(m, "POLICIES", ()))
        title = " ".join((module.__doc__ or module.__name__).split()).split(":")[0].rstrip(".")
        areas.setdefault(title, []).append(_pack_entry(policy))
    gate = "The gate's own checks (they need the program's files, which a policy pack never sees)"
    return [*areas.items(), (gate, [_gate_entry(rule) for rule in gate_rules.RULES.values()])]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _settings(settings: dict[str, dict[str, Any]]) -> Iterable[str]:
    if not settings:
        return
    yield "| setting | type | default | range |"
    yield "| --- | --- | --- | --- |"
    for key, schema in settings.items():
        bounds = [f"at least {schema['minimum']}" if "minimum" in schema else "",
                  f"at most {schema['maximum']}" if "maximum" in schema else ""]
        default = f"`{json.dumps(schema['default'])}`" if "default" in schema else "-"
        yield f"| `{key}` | {schema.get('type', 'any')} | {_cell(default)} | {', '.join(b for b in bounds if b) or '-'} |"
    yield ""


def _rule(entry: RuleEntry) -> Iterable[str]:
    yield f"### {entry.name}"
    yield ""
    facts = [f"**{entry.level}** by default", f"severity {entry.severity or 'not set'}",
             "tags " + ", ".join(f"`{t}`" for t in entry.tags) if entry.tags else ""]
    if entry.display_name:
        yield f"*{entry.display_name}.* " + "; ".join(f for f in facts if f) + "."
    else:
        yield "; ".join(f for f in facts if f).capitalize() + "."
    yield ""
    yield f"**Why.** {' '.join(entry.why.split())}"
    yield ""
    yield f"**Fix.** {' '.join(entry.fix.split())}"
    yield ""
    if entry.url:
        yield f"**AWS.** <{entry.url}>"
        yield ""
    if entry.framework:
        yield f"**Control.** {entry.framework}"
        yield ""
    yield from _settings(entry.settings)


def render() -> str:
    """The rule reference page, every rule in the pack's order."""
    areas = _areas()
    count = sum(len(entries) for _, entries in areas)
    lines = ["# The rules", "",
             "<!-- Generated from the rules by `make docs` (blueprint/rule_pages.py); tests/test_reference_docs.py "
             "keeps it current. Do not edit by hand. -->", "",
             f"Every rule the gate judges a program by: the policy pack's, and the gate's own ({count} in all). Each "
             "says why it exists, how to fix what it finds and the AWS page its number or behaviour comes from; "
             "the level is the default, which a stack's policy config (`stacks/policy.<stack>.json`) may change "
             "(`blueprint policy ls` shows each stack's). How the rules read a stack: [The policy pack](policies.md).",
             ""]
    for title, entries in areas:
        lines += [f"- {title}: " + ", ".join(f"[`{e.name}`](#{e.name})" for e in entries)]
    lines.append("")
    for title, entries in areas:
        lines += [f"## {title}", ""]
        for entry in entries:
            lines += list(_rule(entry))
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    import sys

    Path(sys.argv[1] if len(sys.argv) > 1 else PAGE).write_text(render())
