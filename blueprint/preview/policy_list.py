"""`blueprint policy ls`: the pack's rules, as `pulumi policy ls` lists a pack's policies, with the
enforcement level each stack of a project gives them.

Everything about a rule comes from the pack over its Analyzer interface (GetAnalyzerInfo), as the
Pulumi CLI reads it, never from importing the rules: a team's own pack (--policy-pack) lists the
same way. The levels per stack are the pack's own, resolved through each stack's policy config
(`<stackConfigDir>/policy.<stack>.json`), exactly as `blueprint preview --stack <stack>` resolves them.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from integration_blueprint.preview import policy_config, suppressions
from integration_blueprint.preview.analyzer import PolicyAnalyzer, Rule
from integration_blueprint.preview.recording import load_project

DEFAULT_COLUMN = "default"  # the pack's own level (and its initial config's), with no policy config


@dataclass
class RuleListing:
    pack: str
    version: str
    pack_dir: Path
    stack_dir: Optional[Path]  # None: no Pulumi project where we looked
    stacks: list[str]
    rules: list[Rule]
    levels: dict[str, dict[str, str]]  # rule -> column (DEFAULT_COLUMN or a stack) -> level

    def to_json(self) -> dict:
        return {"pack": self.pack, "version": self.version, "stacks": self.stacks,
                "policies": [{"name": r.name, "description": r.description, "kind": r.kind,
                              "levels": self.levels[r.name], "configSchema": r.config_schema,
                              "remediation": r.remediation or None, "url": r.url, "severity": r.severity,
                              "tags": list(r.tags)} for r in self.rules]}


def stacks_of(program_dir: Path) -> tuple[Optional[Path], list[str]]:
    """The project's stack config folder and the stacks found in it (a Pulumi.<stack>.yaml or a
    policy.<stack>.json); (None, []) where there is no Pulumi project."""
    if not any((program_dir / name).exists() for name in ("Pulumi.yaml", "Pulumi.yml")):
        return None, []  # no project here: the pack's own levels only
    project = load_project(program_dir)  # a broken Pulumi.yaml is an error, not "no stacks"
    folder = program_dir / project.get("stackConfigDir", ".")
    names = {p.name[len("Pulumi."):-len(".yaml")] for p in folder.glob("Pulumi.*.yaml")}
    names |= {p.name[len("policy."):-len(".json")] for p in folder.glob("policy.*.json")}
    return folder, sorted(names)


def list_rules(analyzer: PolicyAnalyzer, program_dir: Path, *, shared: bool = False) -> RuleListing:
    """`shared`: the stacks' policy configs configure other packs too (several listed at once), so
    this pack takes only `all` and its own policies' entries, as `blueprint preview` does."""
    folder, stacks = stacks_of(program_dir)
    own = {rule for rule in analyzer.rules} | {"all"}
    rules = sorted(analyzer.rules.values(), key=lambda r: r.name)
    # The pack's own levels after its initial config (AWSGuard's `all: "mandatory"`), as a run without
    # a policy config would judge with them.
    levels = {name: {DEFAULT_COLUMN: entry.enforcement_level} for name, entry in analyzer.resolve({}).items()}
    for stack in stacks:
        path = folder / f"policy.{stack}.json" if folder else None
        document = policy_config.load(path) if path and path.exists() else {}
        if shared:
            document = {key: value for key, value in document.items() if key in own}
        for name, entry in analyzer.resolve(document, source=str(path)).items():
            levels[name][stack] = entry.enforcement_level
    return RuleListing(pack=analyzer.info.name, version=analyzer.version, pack_dir=analyzer.pack_dir,
                       stack_dir=folder, stacks=stacks, rules=rules, levels=levels)


def _number(value):
    """Numbers come back from the pack as doubles (protobuf Struct): 4.0 was written 4."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _setting(name: str, schema: dict) -> str:
    parts = [schema.get("type", "any")]
    low, high = _number(schema.get("minimum")), _number(schema.get("maximum"))
    if low is not None and high is not None:
        parts.append(f"{low}..{high}")
    elif low is not None:
        parts.append(f">= {low}")
    elif high is not None:
        parts.append(f"<= {high}")
    if "default" in schema:
        parts.append(f"default {_number(schema['default'])!r}")
    text = f"{name} ({', '.join(parts)})"
    return f"{text}: {schema['description']}" if schema.get("description") else text


def render_text(listing: RuleListing) -> str:
    columns = [DEFAULT_COLUMN, *listing.stacks]
    width = max(len(r.name) for r in listing.rules) + 2 if listing.rules else 10
    where = (f"levels per stack from {listing.stack_dir}/policy.<stack>.json" if listing.stacks
             else "no stacks found: the pack's own levels")
    lines = [f"Policy pack {listing.pack} {listing.version} ({listing.pack_dir}): "
             f"{len(listing.rules)} policies; {where}", "",
             "NAME".ljust(width) + "".join(c.upper().ljust(11) for c in columns)]
    for rule in listing.rules:
        lines.append(rule.name.ljust(width) + "".join(listing.levels[rule.name][c].ljust(11) for c in columns))
        lines += textwrap.wrap(rule.description, 100, initial_indent="    ", subsequent_indent="    ")
        for name, schema in sorted((rule.config_schema.get("properties") or {}).items()):
            if name != suppressions.SETTING:  # every blueprint rule takes it: said once, below
                lines.append(f"    config: {_setting(name, schema)}")
    if any(suppressions.SETTING in (r.config_schema.get("properties") or {}) for r in listing.rules):
        lines += ["", f"Every policy also takes `{suppressions.SETTING}`: the findings accepted with a reason, which "
                      "`blueprint policy config --stack S` writes from the program's `blueprint: ignore` comments "
                      "and the stack's blueprint:suppressions."]
    return "\n".join(line.rstrip() for line in lines)


def render_json(listing) -> str:
    """One listing as its object, several (a list) as a list of them."""
    if isinstance(listing, list):
        return json.dumps([one.to_json() for one in listing], indent=2)
    return json.dumps(listing.to_json(), indent=2)
