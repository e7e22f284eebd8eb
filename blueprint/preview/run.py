"""`blueprint preview`: run a Pulumi program offline and put what it declares through the policy pack.

Same verdicts as `pulumi preview --policy-pack policies --policy-pack-config <file>`, without the
Pulumi CLI or an AWS account: the program runs under the SDK's mock engine (integration_blueprint.preview.recording) and
the real policy pack analyses the recording over its gRPC interface (integration_blueprint.preview.analyzer).
"""

from __future__ import annotations

import json
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from integration_blueprint.preview import policy_config
from integration_blueprint.preview.analyzer import DEFAULT_PACK_DIR, PolicyAnalyzer, Violation
from integration_blueprint.preview.recording import RecordedStack, load_project, load_stack_config, record_program

REPO_ROOT = Path(__file__).resolve().parents[2]
LEVELS = ("mandatory", "advisory")


def stack_policy_config(program_dir: Path, stack: str) -> Optional[Path]:
    """The stack's own policy config, `<stackConfigDir>/policy.<stack>.json`, if the project has one."""
    project = load_project(program_dir)
    path = program_dir / project.get("stackConfigDir", ".") / f"policy.{stack}.json"
    return path if path.exists() else None


@dataclass
class PreviewResult:
    recorded: RecordedStack
    violations: list[Violation]
    policy_config: Optional[Path]

    def count(self, level: str) -> int:
        return sum(1 for v in self.violations if v.level == level)

    @property
    def exit_code(self) -> int:
        return 1 if self.count("mandatory") else 0

    def to_json(self) -> dict:
        return {
            "stack": self.recorded.stack,
            "program": str(self.recorded.program_dir) if self.recorded.program_dir else None,
            "resources": [{"urn": r.urn, "type": r.type, "name": r.name, "parent": r.parent,
                           "inputs": r.inputs} for r in self.recorded.resources],
            "violations": [v.to_json() for v in self.violations],
            "summary": {"resources": len(self.recorded.resources),
                        "mandatory": self.count("mandatory"), "advisory": self.count("advisory"),
                        "policyConfig": str(self.policy_config) if self.policy_config else None},
        }


def run_preview(program_dir: Path = REPO_ROOT, *, stack: str = "dev",
                policy_config_path: Optional[Path] = None, unknowns: bool = False,
                pack_dir: Path = DEFAULT_PACK_DIR,
                analyzer: Optional[PolicyAnalyzer] = None) -> PreviewResult:
    """Record `program_dir` for `stack` and analyse it. `policy_config_path` None: the stack's own
    file if there is one. An already started `analyzer` is reused (and left running)."""
    program_dir = Path(program_dir).resolve()
    if policy_config_path is None:
        policy_config_path = stack_policy_config(program_dir, stack)
    document = policy_config.load(policy_config_path) if policy_config_path else {}
    if analyzer is not None:
        recorded = record_program(program_dir, stack=stack, unknowns=unknowns)
        return _analyse(analyzer, recorded, document, policy_config_path)
    # The pack starts (a Python process importing pulumi and the rules, about a second) while the
    # program runs, on the other core, instead of after it; a stack config error comes first.
    config = load_stack_config(program_dir, stack)
    with ThreadPoolExecutor(1) as pool:
        starting = pool.submit(PolicyAnalyzer, pack_dir, project=load_project(program_dir)["name"], stack=stack)
        try:
            recorded = record_program(program_dir, stack=stack, config=config, unknowns=unknowns)
        except BaseException:
            if starting.exception() is None:
                starting.result().close()
            raise
        with starting.result() as started:
            return _analyse(started, recorded, document, policy_config_path)


def _analyse(analyzer, recorded, document, path) -> PreviewResult:
    analyzer.configure(document, source=str(path) if path else "policy config")
    return PreviewResult(recorded, analyzer.analyze(recorded), path)


# ---- text output ---------------------------------------------------------------------------

def render_text(result: PreviewResult) -> str:
    recorded = result.recorded
    by_urn = recorded.by_urn()
    children = defaultdict(list)
    for resource in recorded.resources:
        parent = resource.parent if resource.parent in by_urn else ""
        children[parent].append(resource)

    lines = [f"Previewing stack '{recorded.stack}' of {recorded.program_dir or recorded.project}"
             f"{' (outputs unknown, as in a first preview)' if recorded.unknowns else ''}",
             f"Policy config: {result.policy_config or '(pack defaults)'}", "", "Resources:"]

    def tree(parent: str, depth: int) -> None:
        for resource in children.get(parent, []):
            lines.append(f"{'    ' * depth}+ {resource.type}  {resource.name}")
            tree(resource.urn, depth + 1)
    tree("", 1)

    for level in LEVELS:
        found = [v for v in result.violations if v.level == level]
        if not found:
            continue
        lines += ["", f"{level.capitalize()} policy violations ({len(found)}):"]
        for violation in found:
            resource = by_urn.get(violation.urn)
            where = f"{resource.name} ({resource.type})" if resource else "(stack)"
            lines.append(f"  [{violation.policy}] {where}")
            lines += [f"      {line}" for line in violation.message.splitlines() if line.strip()]
    lines += ["", f"{len(recorded.resources)} resources, {result.count('mandatory')} mandatory and "
                  f"{result.count('advisory')} advisory violations"
                  + (": the stack may not be deployed." if result.exit_code else ".")]
    return "\n".join(lines)


def render_json(result: PreviewResult) -> str:
    return json.dumps(result.to_json(), indent=2, default=str)
