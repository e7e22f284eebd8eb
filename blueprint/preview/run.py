"""`blueprint preview`: run a Pulumi program offline and put what it declares through the policy pack.

Same verdicts as `pulumi preview --policy-pack policies --policy-pack-config <file>`, without the
Pulumi CLI or an AWS account: the program runs against the offline engine's gRPC interfaces
(integration_blueprint.preview.recording, .engine) and the real policy pack analyses the recording
over its gRPC Analyzer interface (integration_blueprint.preview.analyzer).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from integration_blueprint.preview import policy_config
from integration_blueprint.preview.analyzer import DEFAULT_PACK_DIR, Analysis, PolicyAnalyzer, Rule, Violation
from integration_blueprint.preview.project import load_config, load_project
from integration_blueprint.preview.recording import RecordedResource, RecordedStack, record_program

REPO_ROOT = Path(__file__).resolve().parents[2]
# How the policy SDK words a check it could not make during preview (a value unknown until apply):
# "can't run policy '<rule>' from policy pack '<pack>' during preview: <what was unknown>".
NOTE_PREFIX = "can't run policy '"
NOTE_REASON = " during preview: "
LEVELS = ("mandatory", "advisory")


def stack_policy_config(program_dir: Path, stack: str) -> Optional[Path]:
    """The stack's own policy config, `<stackConfigDir>/policy.<stack>.json`, if the project has one."""
    project = load_project(program_dir)
    path = program_dir / project.get("stackConfigDir", ".") / f"policy.{stack}.json"
    return path if path.exists() else None


@dataclass(frozen=True)
class Finding:
    """A violation joined with its resource and its rule's metadata: what every output format
    shows. `remediation` falls back to the rule's description (which says the fix) while a rule
    has no remediation steps of its own; `url`, `severity` and `tags` stay empty then."""
    policy: str
    level: str
    urn: str
    type: str
    name: str
    message: str
    remediation: str
    url: Optional[str]
    severity: Optional[str]
    tags: tuple[str, ...]

    @property
    def skipped(self) -> bool:
        """A check the rule could not make during preview: not a violation."""
        return any(line.startswith(NOTE_PREFIX) for line in self.message.splitlines())

    @property
    def skip_reason(self) -> str:
        line = next((line for line in self.message.splitlines() if line.startswith(NOTE_PREFIX)), self.message)
        return line.partition(NOTE_REASON)[2] or line

    def to_json(self) -> dict:
        return {"policy": self.policy, "level": self.level, "urn": self.urn, "type": self.type,
                "name": self.name, "message": self.message, "remediation": self.remediation,
                "url": self.url, "severity": self.severity, "tags": list(self.tags)}


def type_and_name(urn: str) -> tuple[str, str]:
    """A URN's resource type and name: urn:pulumi:<stack>::<project>::<parent types$>type::name."""
    parts = urn.split("::")
    if len(parts) < 4:
        return "", ""
    return parts[2].rsplit("$", 1)[-1], "::".join(parts[3:])


@dataclass
class PreviewResult:
    recorded: RecordedStack
    violations: list[Violation]
    policy_config: Optional[Path]
    rules: dict[str, Rule] = field(default_factory=dict)
    levels: dict[str, str] = field(default_factory=dict)  # each policy's level after the policy config
    strict: bool = False  # a remote component that could not be expanded fails the preview

    def count(self, level: str) -> int:
        return sum(1 for v in self.violations if v.level == level)

    def violation_findings(self) -> list[Finding]:
        return [f for f in self.findings() if not f.skipped]

    def skipped_findings(self) -> list[Finding]:
        return [f for f in self.findings() if f.skipped]

    def count_violations(self, level: str) -> int:
        """Violations at `level`; checks that could not run during preview are not counted."""
        return sum(1 for f in self.violation_findings() if f.level == level)

    @property
    def exit_code(self) -> int:
        """2 when --strict and a remote component's contents went unchecked, else 1 on a
        mandatory violation, else 0."""
        if self.strict and self.recorded.not_expanded:
            return 2
        return 1 if self.count("mandatory") else 0

    def notes(self) -> list[str]:
        """What the preview could not do as the real engine would, one line each."""
        notes = []
        if self.recorded.interpreter:
            notes.append(f"program run by {self.recorded.interpreter}")
        for environment in self.recorded.environments:
            notes.append(f"ESC environment {environment} imported by the stack was not resolved (offline): values it "
                         "would set are unset")
        if self.recorded.secrets:
            notes.append(f"secret config read as placeholders (not decrypted offline): {', '.join(self.recorded.secrets)}")
        for component in self.recorded.not_expanded:
            notes.append(f"remote component {component.name} ({component.type}, package {component.package!r}) was "
                         f"not expanded: {component.reason}; its inputs were checked, the resources it would "
                         "create were not" + (" (--strict: this fails the preview)" if self.strict else ""))
        return notes

    def findings(self) -> list[Finding]:
        """Every violation with its resource and rule, mandatory first, then by policy, URN and
        message, so that two runs of the same program compare line by line."""
        by_urn = self.recorded.by_urn()
        found = []
        for violation in self.violations:
            resource = by_urn.get(violation.urn)
            kind, name = (resource.type, resource.name) if resource else type_and_name(violation.urn)
            rule = self.rules.get(violation.policy)
            found.append(Finding(
                policy=violation.policy, level=violation.level, urn=violation.urn, type=kind, name=name,
                message=violation.message,
                remediation=(rule.remediation or rule.description) if rule else "",
                url=rule.url if rule else None, severity=rule.severity if rule else None,
                tags=rule.tags if rule else ()))
        return sorted(found, key=lambda f: (LEVELS.index(f.level), f.policy, f.urn, f.message))

    def to_json(self) -> dict:
        skipped = self.skipped_findings()
        return {
            "stack": self.recorded.stack,
            "program": str(self.recorded.program_dir) if self.recorded.program_dir else None,
            "resources": [{"urn": r.urn, "type": r.type, "name": r.name, "parent": r.parent,
                           "inputs": r.inputs} for r in sorted(self.recorded.resources, key=lambda r: r.urn)],
            "violations": [f.to_json() for f in self.violation_findings()],
            # Checks a rule could not make during preview (a value unknown until apply): not violations.
            "skippedChecks": [{"policy": f.policy, "urn": f.urn, "type": f.type, "name": f.name,
                               "reason": f.skip_reason} for f in skipped],
            "notExpanded": [{"urn": c.urn, "type": c.type, "name": c.name, "package": c.package, "reason": c.reason}
                            for c in self.recorded.not_expanded],
            "secretPlaceholders": list(self.recorded.secrets),
            "unresolvedEnvironments": list(self.recorded.environments),
            "notes": self.notes(),
            "summary": {"resources": len(self.recorded.resources),
                        "mandatory": self.count_violations("mandatory"),
                        "advisory": self.count_violations("advisory"), "skippedChecks": len(skipped),
                        "policyConfig": str(self.policy_config) if self.policy_config else None},
        }


def run_preview(program_dir: Path = REPO_ROOT, *, stack: str = "dev",
                policy_config_path: Optional[Path] = None, unknowns: bool = False,
                pack_dir: Path = DEFAULT_PACK_DIR,
                analyzer: Optional[PolicyAnalyzer] = None, strict: bool = False,
                recorded: Optional[RecordedStack] = None) -> PreviewResult:
    """Record `program_dir` for `stack` and analyse it. `policy_config_path` None: the stack's own
    file if there is one. An already started `analyzer` is reused (and left running), and with it
    a `recorded` run of the same program and stack is analysed instead of recording it again."""
    program_dir = Path(program_dir).resolve()
    if policy_config_path is None:
        policy_config_path = stack_policy_config(program_dir, stack)
    document = policy_config.load(policy_config_path) if policy_config_path else {}
    if analyzer is not None:
        if recorded is None:
            recorded = record_program(program_dir, stack=stack, unknowns=unknowns)
        result = _analyse(analyzer, recorded, document, policy_config_path)
        result.strict = strict
        return result
    # The pack starts (a Python process importing pulumi and the rules) while the program runs, on
    # the other core, and each resource is sent to it as the program registers it, as the engine
    # does; a stack config error comes first.
    config = load_config(program_dir, stack).values
    streamed = _StreamedAnalysis(pack_dir, document, policy_config_path, stack=stack,
                                 project=load_project(program_dir)["name"], config=config)
    with ThreadPoolExecutor(1) as pool:
        starting = pool.submit(streamed.start)
        try:
            recorded = record_program(program_dir, stack=stack, unknowns=unknowns, on_resource=streamed.add)
        except BaseException:
            if starting.exception() is None:
                starting.result().close()
            raise
        with starting.result() as started:
            result = _result(started, recorded, streamed.finish(recorded), policy_config_path, streamed.resolved)
            result.strict = strict
            return result


class _StreamedAnalysis:
    """Resources go to the pack as the program registers them; those registered before the pack
    has started and been configured wait here until it has."""

    def __init__(self, pack_dir: Path, document: dict, path: Optional[Path], *, stack: str, project: str,
                 config: dict[str, str]):
        self.pack_dir, self.document, self.path = pack_dir, document, path
        self.stack, self.project, self.config = stack, project, config
        self._lock = threading.Lock()
        self._waiting: list[RecordedResource] = []
        self._analysis: Optional[Analysis] = None
        self.resolved: dict = {}

    def start(self) -> PolicyAnalyzer:
        analyzer = PolicyAnalyzer(self.pack_dir, project=self.project, stack=self.stack)
        try:
            self.resolved = _configure(analyzer, self.document, self.path)
            analysis = analyzer.begin(stack=self.stack, project=self.project, config=self.config)
        except BaseException:
            analyzer.close()
            raise
        with self._lock:
            for resource in self._waiting:
                analysis.add(resource)
            self._waiting.clear()
            self._analysis = analysis
        return analyzer

    def add(self, resource: RecordedResource) -> None:
        with self._lock:
            if self._analysis is None:
                self._waiting.append(resource)
            else:
                self._analysis.add(resource)

    def finish(self, recorded: RecordedStack) -> list[Violation]:
        assert self._analysis is not None, "finish() follows a successful start()"
        return self._analysis.finish(recorded)


def _analyse(analyzer, recorded, document, path) -> PreviewResult:
    resolved = _configure(analyzer, document, path)
    return _result(analyzer, recorded, analyzer.analyze(recorded), path, resolved)


def _configure(analyzer: PolicyAnalyzer, document: dict, path: Optional[Path]) -> dict:
    """Configure the pack from the policy config document (read from `path`); what it made of each rule."""
    return analyzer.configure(document, source=str(path) if path else "policy config")


def _result(analyzer: PolicyAnalyzer, recorded: RecordedStack, violations: list[Violation],
            path: Optional[Path], resolved: dict) -> PreviewResult:
    return PreviewResult(recorded, violations, path, rules=analyzer.rules,
                         levels={name: entry.enforcement_level for name, entry in resolved.items()})
