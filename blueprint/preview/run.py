"""`blueprint preview`: run a Pulumi program offline and put what it declares through the policy pack.

Same verdicts as `pulumi preview --policy-pack policies --policy-pack-config <file>`, without the
Pulumi CLI or an AWS account: the program runs against the offline engine's gRPC interfaces
(integration_blueprint.preview.recording, .engine) and the real policy pack analyses the recording
over its gRPC Analyzer interface (integration_blueprint.preview.analyzer).
"""

from __future__ import annotations

import datetime
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Optional

from integration_blueprint.preview import (
    fix_language,
    gate_rules,
    managed_policies,
    policy_config,
    redaction,
    stack_sections,
    suppressions,
)
from integration_blueprint.preview.analyzer import (
    DEFAULT_PACK_DIR,
    Analysis,
    AnalyzerError,
    PolicyAnalyzer,
    Rule,
    Violation,
)
from integration_blueprint.preview.failure import RunFailure, from_exception
from integration_blueprint.preview.language_host import PROGRAM_TIMEOUT_SECONDS
from integration_blueprint.preview.locations import Location, Locator
from integration_blueprint.preview.project import load_config, load_project
from integration_blueprint.preview.recording import (
    RecordedResource,
    RecordedStack,
    record_program,
    runtime_name,
    stack_config_path,
)
from integration_blueprint.preview.redaction import Redactor
from integration_blueprint.preview.suppressions import Suppression

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
    suppression: Optional[suppressions.Suppression] = None  # the accepted risk that covers it
    location: Optional[Location] = None  # where the user's code declared the resource (locations.py)

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
                "url": self.url, "severity": self.severity, "tags": list(self.tags),
                "file": str(self.location.file) if self.location else None,
                "line": self.location.line or None if self.location else None}


def type_and_name(urn: str) -> tuple[str, str]:
    """A URN's resource type and name: urn:pulumi:<stack>::<project>::<parent types$>type::name."""
    parts = urn.split("::")
    if len(parts) < 4:
        return "", ""
    return parts[2].rsplit("$", 1)[-1], "::".join(parts[3:])


def secret_values(recorded: RecordedStack) -> list:
    """The values a recording holds as secret: each resource's secret inputs and the config values
    of secret keys."""
    return redaction.secret_values(recorded.resources, recorded.config, recorded.secrets)


@contextmanager
def _secrets_kept(recorded: RecordedStack):
    """A policy pack that fails after the program ran may have printed a secret in its error: the
    error carries the recording's secrets, so its report masks them."""
    try:
        yield
    except AnalyzerError as exc:
        exc.secrets = tuple(secret_values(recorded))
        raise


@dataclass
class PreviewResult:
    recorded: RecordedStack
    violations: list[Violation]
    policy_config: Optional[Path]
    rules: dict[str, Rule] = field(default_factory=dict)
    levels: dict[str, str] = field(default_factory=dict)  # each policy's level after the policy config
    strict: bool = False  # a remote component that could not be expanded fails the preview
    suppressions: list[suppressions.Suppression] = field(default_factory=list)
    today: datetime.date = field(default_factory=lambda: datetime.datetime.now(datetime.timezone.utc).date())
    failure: Optional[RunFailure] = None  # why the run could not judge the program (then exit 2)

    @cached_property
    def redactor(self) -> Redactor:
        """Masks every value the run knows to be secret: the secrets in each resource's inputs, the
        config values of secret keys, and those a failed run's engine had seen."""
        secrets = secret_values(self.recorded)
        if self.failure is not None:
            secrets += self.failure.secrets
        return Redactor(secrets)

    def count(self, level: str) -> int:
        return sum(1 for v in self.violations if v.level == level)

    def violation_findings(self) -> list[Finding]:
        """The violations that count: not a check skipped during preview, not suppressed."""
        return [f for f in self.findings() if not f.skipped and f.suppression is None]

    def suppressed_findings(self) -> list[Finding]:
        """Violations accepted with a reason (in the program's code or the stack's config)."""
        return [f for f in self.findings() if not f.skipped and f.suppression is not None]

    def suppressions_json(self) -> list[dict]:
        """Every suppression of the run, with its reason, whether it expired and what it covered."""
        covered: dict[suppressions.Suppression, list[str]] = {}
        for finding in self.suppressed_findings():
            covered.setdefault(finding.suppression, []).append(finding.urn)  # type: ignore[arg-type]
        unmatched = set(self.unmatched_suppressions())
        return [{**s.to_json(self.today), "suppressed": covered.get(s, []), "matchesNothing": s in unmatched}
                for s in self.suppressions]

    def unmatched_suppressions(self) -> list[Suppression]:
        """Suppressions in force that cover no finding of the run (a comment on no resource's line,
        another resource's line, a policy that found nothing there): each report says so."""
        findings = self.findings()
        return [s for s in self.suppressions if not s.expired(self.today)
                and not any(s.covers(f.policy, f.urn, f.name) for f in findings)]

    def skipped_findings(self) -> list[Finding]:
        return [f for f in self.findings() if f.skipped]

    def count_violations(self, level: str) -> int:
        """Violations at `level`; checks that could not run during preview are not counted."""
        return sum(1 for f in self.violation_findings() if f.level == level)

    @property
    def exit_code(self) -> int:
        """2 when the run could not judge the program, or under --strict when a remote component's
        contents went unchecked, a lookup was answered by invention or a referenced stack's outputs
        could not be read; else 1 on a mandatory violation, else 0."""
        if self.failure is not None or (self.strict and (self.recorded.not_expanded or self.recorded.invented
                                                         or self.recorded.unread_stack_references)):
            return 2
        return 1 if self.count_violations("mandatory") else 0

    def notes(self) -> list[str]:
        """What the preview could not do as the real engine would, one line each."""
        recorded, notes = self.recorded, []
        if recorded.interpreter:
            notes.append(f"program run by {recorded.interpreter}")
        for environment in recorded.environments:
            notes.append(f"ESC environment {environment} imported by the stack was not resolved (offline): values it "
                         "would set are unset")
        if recorded.secrets:
            notes.append(f"secret config read as placeholders (not decrypted offline): {', '.join(recorded.secrets)}")
        strict = " (--strict: this fails the preview)" if self.strict else ""
        for component in recorded.not_expanded:
            notes.append(f"remote component {component.name} ({component.type}, package {component.package!r}) was "
                         f"not expanded: {component.reason}; its inputs were checked, the resources it would "
                         f"create were not{strict}")
        for lookup in recorded.invented:
            notes.append(f"lookup {lookup} was answered by invention, as if what it names existed, with made-up "
                         f"values (nothing is looked up offline): a program that branches on the answer took its "
                         f"'it exists' branch{strict}")
        for arn, holders in managed_policies.not_judged(recorded).items():
            notes.append(f"AWS managed policy {arn} (attached by {', '.join(holders)}) is not in the pack's catalogue "
                         f"of managed policies (snapshot {managed_policies.SNAPSHOT_DATE}): what it grants was not "
                         "judged")
        notes.extend(recorded.notes)
        if recorded.program_dir is not None:
            stack_file = stack_config_path(recorded.program_dir, recorded.stack)
            notes.extend(stack_sections.unread_section_notes(
                recorded.config, recorded.program_dir, recorded.language,
                str(stack_file.relative_to(recorded.program_dir)) if stack_file.is_relative_to(recorded.program_dir)
                else str(stack_file)))
        if recorded.unread_stack_references:
            notes.append(f"stack reference {', '.join(recorded.unread_stack_references)} was not read: what the program "
                         f"derives from its outputs was not checked{strict}")
        return [self.masked(note) for note in notes]

    def masked(self, text: str) -> str:
        """A text as every report shows it: secrets masked, unknowns as [unknown]."""
        return self.redactor.text(text)

    def shown(self, text: str) -> str:
        """A text of the policy pack (a message, a fix) as every report shows it: masked, and its
        code snippets in the program's language."""
        return fix_language.in_language(self.masked(text), self.recorded.language)

    def findings(self) -> list[Finding]:
        """Every violation with its resource and rule, mandatory first, then by policy, URN and
        message, so that two runs of the same program compare line by line."""
        return list(self._findings)

    @cached_property
    def _findings(self) -> tuple[Finding, ...]:
        """findings(), made once: every report asks for them several times, and each message is
        masked and written in the program's language."""
        by_urn = self.recorded.by_urn()
        locate = Locator(self.recorded)
        found = []
        for violation in self.violations:
            resource = by_urn.get(violation.urn)
            kind, name = (resource.type, resource.name) if resource else type_and_name(violation.urn)
            rule = self.rules.get(violation.policy)
            accepted = next((s for s in self.suppressions if not s.expired(self.today)
                             and s.covers(violation.policy, violation.urn, name)), None)
            found.append(Finding(
                policy=violation.policy, level=violation.level, urn=violation.urn, type=kind, name=name,
                message=self.shown(violation.message),
                remediation=self.shown(rule.remediation or rule.description) if rule else "",
                url=rule.url if rule else None, severity=rule.severity if rule else None,
                tags=rule.tags if rule else (), suppression=accepted, location=locate(violation.urn)))
        return tuple(sorted(found, key=lambda f: (LEVELS.index(f.level), f.policy, f.urn, f.message)))

    def to_json(self) -> dict:
        skipped, shown = self.skipped_findings(), self.redactor.value
        failure = self.failure
        return {
            "stack": self.recorded.stack,
            "program": str(self.recorded.program_dir) if self.recorded.program_dir else None,
            # Why the run could not judge the program (null when it could): then the lists are empty.
            "error": None if failure is None else {
                "kind": failure.kind, "title": failure.title, "message": self.masked(failure.message),
                "file": failure.file or None, "line": failure.line or None, "fix": failure.fix},
            "resources": [{"urn": r.urn, "type": r.type, "name": r.name, "parent": r.parent,
                           "inputs": shown(r.inputs, r.secret_paths)}
                          for r in sorted(self.recorded.resources, key=lambda r: r.urn)],
            "violations": [f.to_json() for f in self.violation_findings()],
            # Violations accepted with a reason; every suppression (expired ones too, which suppress nothing).
            "suppressed": [{**f.to_json(), "suppression": f.suppression.to_json(self.today)}  # type: ignore[union-attr]
                           for f in self.suppressed_findings()],
            "suppressions": self.suppressions_json(),
            # Checks a rule could not make during preview (a value unknown until apply): not violations.
            "skippedChecks": [{"policy": f.policy, "urn": f.urn, "type": f.type, "name": f.name,
                               "reason": f.skip_reason} for f in skipped],
            "notExpanded": [{"urn": c.urn, "type": c.type, "name": c.name, "package": c.package, "reason": c.reason}
                            for c in self.recorded.not_expanded],
            "secretPlaceholders": list(self.recorded.secrets),
            "unresolvedEnvironments": list(self.recorded.environments),
            "unreadStackReferences": list(self.recorded.unread_stack_references),
            "inventedLookups": [self.masked(lookup) for lookup in self.recorded.invented],
            "notes": self.notes(),
            # What the program itself printed (its console output), secrets masked.
            "programOutput": {"stdout": self.masked(self.recorded.stdout),
                              "stderr": self.masked(self.recorded.stderr)},
            "summary": {"resources": len(self.recorded.resources),
                        "mandatory": self.count_violations("mandatory"),
                        "advisory": self.count_violations("advisory"), "skippedChecks": len(skipped),
                        "suppressed": len(self.suppressed_findings()),
                        "policyConfig": str(self.policy_config) if self.policy_config else None},
        }


def run_preview(program_dir: Path = REPO_ROOT, *, stack: str = "dev",
                policy_config_path: Optional[Path] = None, unknowns: bool = False,
                pack_dir: Path = DEFAULT_PACK_DIR,
                analyzer: Optional[PolicyAnalyzer] = None, strict: bool = False,
                recorded: Optional[RecordedStack] = None,
                timeout: float = PROGRAM_TIMEOUT_SECONDS,
                stack_references: Optional[dict[str, Path]] = None) -> PreviewResult:
    """Record `program_dir` for `stack` and analyse it. `policy_config_path` None: the stack's own
    file if there is one. An already started `analyzer` is reused (and left running), and with it
    a `recorded` run of the same program and stack is analysed instead of recording it again. A
    program still running after `timeout` seconds is stopped (a ProgramError)."""
    program_dir = Path(program_dir).resolve()
    if policy_config_path is None:
        policy_config_path = stack_policy_config(program_dir, stack)
    document = policy_config.load(policy_config_path) if policy_config_path else {}
    if analyzer is not None:
        if recorded is None:
            recorded = record_program(program_dir, stack=stack, unknowns=unknowns, timeout=timeout,
                                      stack_references=stack_references)
        with _secrets_kept(recorded):
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
            recorded = record_program(program_dir, stack=stack, unknowns=unknowns, on_resource=streamed.add,
                                      timeout=timeout, stack_references=stack_references)
        except BaseException:
            if starting.exception() is None:
                starting.result().close()
            raise
        with _secrets_kept(recorded), starting.result() as started:
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
    # The gate's own checks (those that need the program's files) join the pack's rules and findings.
    rules = {**analyzer.rules, **gate_rules.RULES}
    violations = violations + gate_rules.violations(recorded)
    stack_file = stack_config_path(recorded.program_dir, recorded.stack) if recorded.program_dir else None
    return PreviewResult(recorded, violations, path, rules=rules,
                         levels={name: entry.enforcement_level for name, entry in resolved.items()},
                         suppressions=suppressions.collect(recorded, rules, stack_file))


def failed_preview(program_dir: Path, exc: BaseException, *, stack: str, unknowns: bool = False,
                   policy_config_path: Optional[Path] = None, strict: bool = False) -> PreviewResult:
    """The report of a run that could not judge the program: no resources, no violations, the
    failure (what, where, how to fix) and what the program printed; every format shows it and the
    run exits 2."""
    program_dir = Path(program_dir).resolve()
    try:
        project = load_project(program_dir)["name"]
    except Exception:  # noqa: BLE001 - no readable project file: the failure says so
        project = program_dir.name
    recorded = RecordedStack(project=project, stack=stack, program_dir=program_dir, config={}, unknowns=unknowns,
                             resources=[], language=_language(program_dir),
                             stdout=getattr(exc, "stdout", ""), stderr=getattr(exc, "stderr", ""))
    return PreviewResult(recorded, [], policy_config_path, strict=strict, failure=from_exception(exc))


def _language(program_dir: Path) -> str:
    try:
        return runtime_name(load_project(program_dir))
    except Exception:  # noqa: BLE001 - no readable project file
        return "python"
