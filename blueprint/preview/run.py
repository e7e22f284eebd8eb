"""`blueprint preview`: run a Pulumi program offline and put what it declares through the policy pack.

Same verdicts as `pulumi preview --policy-pack policies --policy-pack-config <file>`, without the
Pulumi CLI or an AWS account: the program runs against the offline engine's gRPC interfaces
(integration_blueprint.preview.recording, .engine) and the real policy pack analyses the recording
over its gRPC Analyzer interface (integration_blueprint.preview.analyzer).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Optional, Sequence, Union

from integration_blueprint import __version__
from integration_blueprint.containment import probe_in_background
from integration_blueprint.preview import (
    fix_language,
    gate_rules,
    managed_policies,
    policy_config,
    policy_packs,
    redaction,
    stack_keys,
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
UNNAMED_PACK = "policy-pack"  # a result's pack when it was made from rules alone (no pack named them)


def stack_policy_config(program_dir: Path, stack: str) -> Optional[Path]:
    """The stack's own policy config, `<stackConfigDir>/policy.<stack>.json`, if the project has one."""
    project = load_project(program_dir)
    path = program_dir / project.get("stackConfigDir", ".") / f"policy.{stack}.json"
    return path if path.exists() else None


@dataclass(frozen=True)
class CliPolicyConfig:
    """The policy config `pulumi preview --policy-pack` is to take for a stack (`path`, None: the
    pack's own levels) and the suppressions only the gate can apply (those of other packs'
    policies, whose code does not read them), each as a line to show."""
    path: Optional[Path]
    gate_only: list[str]


def cli_policy_config(program_dir: Path, stack: str, *, output: Optional[Path] = None,
                      other_packs: Sequence[PolicyAnalyzer] = ()) -> CliPolicyConfig:
    """The stack's policy config with the run's suppressions (the program's `blueprint: ignore`
    comments and the stack's `blueprint:suppressions`) added to the blueprint pack's policies, so
    that the Pulumi CLI's run of the pack suppresses what the gate suppresses. Without suppressions:
    the stack's own file, as it is. With them, the program is run (offline, as `blueprint preview`
    runs it) to learn which resource each comment is on, and the config is written to `output`
    (default: <program>/.blueprint/policy.<stack>.json)."""
    from integration_blueprint.policies.rules import POLICIES

    program_dir = Path(program_dir).resolve()
    stack_file = stack_policy_config(program_dir, stack)
    if not suppressions.has_any(program_dir, load_config(program_dir, stack).values):
        return CliPolicyConfig(stack_file, [])
    ours = {policy.name for policy in POLICIES}
    others = {policy.name: one.name for one in other_packs for policy in one.info.policies}
    recorded = record_program(program_dir, stack=stack)
    found = suppressions.collect(recorded, ours | set(others) | set(gate_rules.RULES),
                                 stack_config_path(program_dir, stack))
    today = datetime.datetime.now(datetime.timezone.utc).date()
    document = policy_config.load(stack_file) if stack_file else {}
    merged = suppressions.in_policy_config(document, found, ours, today, base=program_dir)
    gate_only = [f"{s.policy} ({others.get(s.policy) or gate_rules.PACK}) on {s.resource.rsplit('::', 1)[-1]}: "
                 f"{s.describe(today)}" for s in found
                 if s.resource and not s.expired(today) and s.policy not in ours]
    path = Path(output) if output else program_dir / ".blueprint" / f"policy.{stack}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(merged, indent=2) + "\n")
    return CliPolicyConfig(path, gate_only)


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
    pack: str = ""  # the policy pack that reported it, and its version
    pack_version: str = ""
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
                "policyPack": self.pack, "policyPackVersion": self.pack_version,
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


@dataclass(frozen=True)
class PackRun:
    """One policy pack of the run: its name and version (as GetAnalyzerInfo gives them), its folder,
    its policies, their levels after its policy config, and that config's file."""
    name: str
    version: str
    directory: Path
    rules: dict[str, Rule]
    levels: dict[str, str]
    policy_config: Optional[Path] = None

    def to_json(self) -> dict:
        return {"name": self.name, "version": self.version, "path": str(self.directory),
                "policies": len(self.rules), "policyConfig": _path_text(self.policy_config)}


@dataclass(frozen=True)
class PackRequest:
    """A pack the run was asked for (--policy-pack) and its config file (the paired
    --policy-pack-config; None: the stack's own policy config if any, else the pack's defaults)."""
    directory: Path
    config: Optional[Path] = None


@dataclass
class PreviewResult:
    recorded: RecordedStack
    violations: list[Violation]
    policy_config: Optional[Path]
    rules: dict[str, Rule] = field(default_factory=dict)  # every pack's policies by name (the first pack's on a clash)
    levels: dict[str, str] = field(default_factory=dict)  # each policy's level after the policy config
    packs: list[PackRun] = field(default_factory=list)  # every pack that judged the program, in the order given
    gate: Optional[PackRun] = None  # the gate's own checks (gate_rules.py), reported under their own name
    strict: bool = False  # anything left unchecked fails the preview (`unchecked`)
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

    def shared_policy_config(self) -> Optional[Path]:
        """The policy config of the run where every pack read the same one (one pack: its own);
        None where they read different ones, or none."""
        configs = {pack.policy_config for pack in self.packs} if self.packs else {self.policy_config}
        return configs.pop() if len(configs) == 1 else None

    def count(self, level: str) -> int:
        return sum(1 for v in self.violations if v.level == level)

    def _all_packs(self) -> list[PackRun]:
        return self.packs + ([self.gate] if self.gate is not None else [])

    def judged_by(self) -> list[PackRun]:
        """The packs that judged the program; a result made without them (from rules alone) as one
        unnamed pack holding those rules."""
        packs = self.packs or [PackRun(name=UNNAMED_PACK, version="", directory=Path(), rules=self.rules,
                                       levels=self.levels, policy_config=self.policy_config)]
        return packs + ([self.gate] if self.gate is not None else [])

    def rule(self, pack: str, policy: str) -> Optional[Rule]:
        """A policy as the pack that reported it describes it (two packs may share a policy name)."""
        own = next((p.rules for p in self._all_packs() if p.name == pack), None)
        return own.get(policy) if own is not None else self.rules.get(policy)

    def level(self, pack: str, policy: str) -> Optional[str]:
        """A policy's level after its pack's policy config."""
        own = next((p.levels for p in self._all_packs() if p.name == pack), None)
        return own.get(policy) if own is not None else self.levels.get(policy)

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

    def unchecked(self) -> list[str]:
        """Everything this run did not check, one line each: what `--strict` refuses. A check a rule
        could not make (a value unknown during preview), a remote component not expanded, a lookup
        answered by invention, a referenced stack not read."""
        recorded = self.recorded
        lines = [f"check {f.policy}{f' on {f.name} ({f.type})' if f.urn else ''} not run: {f.skip_reason}"
                 for f in self.skipped_findings()]
        lines += [f"remote component {c.name} ({c.type}) not expanded: its resources were not checked"
                  for c in recorded.not_expanded]
        lines += [f"lookup {lookup} answered by invention, not looked up" for lookup in recorded.invented]
        lines += [f"stack reference {name} not read: what the program derives from it was not checked"
                  for name in recorded.unread_stack_references]
        lines += [key.note() for key in self.unread_stack_keys]
        if recorded.not_contained:
            lines.append("the program was not contained: what it did outside the engine's view was not checked")
        return [self.masked(line) for line in lines]

    @property
    def incomplete(self) -> bool:
        """Under --strict, a run that left something unchecked (`unchecked`): it exits 2."""
        return self.strict and self.failure is None and bool(self.unchecked())

    @property
    def exit_code(self) -> int:
        """2 when the run could not judge the program, or under --strict when anything went
        unchecked (`unchecked`); else 1 on a mandatory violation, else 0."""
        if self.failure is not None or self.incomplete:
            return 2
        return 1 if self.count_violations("mandatory") else 0

    def notes(self) -> list[str]:
        """What the preview could not do as the real engine would, one line each."""
        recorded, notes = self.recorded, []
        if recorded.not_contained:
            notes.append(recorded.not_contained + (" (--strict: this fails the preview)" if self.strict else ""))
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
                         f"of managed policies (snapshot {managed_policies.snapshot_date()}): what it grants was not "
                         "judged")
        notes.extend(recorded.notes)
        if recorded.program_dir is not None:
            stack_file = stack_config_path(recorded.program_dir, recorded.stack)
            notes.extend(stack_sections.unread_section_notes(
                recorded.config, recorded.program_dir, recorded.language,
                str(stack_file.relative_to(recorded.program_dir)) if stack_file.is_relative_to(recorded.program_dir)
                else str(stack_file)))
        notes.extend(key.note() + strict for key in self.unread_stack_keys)
        if recorded.unread_stack_references:
            notes.append(f"stack reference {', '.join(recorded.unread_stack_references)} was not read: what the program "
                         f"derives from its outputs was not checked{strict}")
        return [self.masked(note) for note in notes]

    @cached_property
    def unread_stack_keys(self) -> list[stack_keys.UnreadKey]:
        """The stack file's keys no code of the program reads (stack_keys.py); none for a failed run."""
        recorded = self.recorded
        if recorded.program_dir is None or self.failure is not None:
            return []
        return stack_keys.unread_keys(recorded.config, recorded.program_dir,
                                      stack_config_path(recorded.program_dir, recorded.stack))

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
            rule = self.rule(violation.pack, violation.policy)
            accepted = next((s for s in self.suppressions if not s.expired(self.today)
                             and s.covers(violation.policy, violation.urn, name)), None)
            found.append(Finding(
                policy=violation.policy, level=violation.level, urn=violation.urn, type=kind, name=name,
                message=self.shown(violation.message),
                remediation=self.shown(rule.remediation or rule.description) if rule else "",
                url=rule.url if rule else None, severity=rule.severity if rule else None,
                tags=rule.tags if rule else (), suppression=accepted, pack=violation.pack,
                pack_version=violation.pack_version, location=locate(violation.urn)))
        return tuple(sorted(found, key=lambda f: (LEVELS.index(f.level), f.policy, f.pack, f.urn, f.message)))

    def to_json(self) -> dict:
        skipped, shown = self.skipped_findings(), self.redactor.value
        failure = self.failure
        return {
            "stack": self.recorded.stack,
            "program": str(self.recorded.program_dir) if self.recorded.program_dir else None,
            # Why the run could not judge the program (null when it could): then the lists are empty.
            "error": None if failure is None else {
                "kind": failure.kind, "title": failure.title, "message": self.masked(failure.message),
                "file": failure.file or None, "line": failure.line or None, "fix": failure.fix,
                "part": failure.part or None},
            "resources": [{"urn": r.urn, "type": r.type, "name": r.name, "parent": r.parent,
                           "inputs": shown(r.inputs, r.secret_paths)}
                          for r in sorted(self.recorded.resources, key=lambda r: r.urn)],
            "violations": [f.to_json() for f in self.violation_findings()],
            # Violations accepted with a reason; every suppression (expired ones too, which suppress nothing).
            "suppressed": [{**f.to_json(), "suppression": f.suppression.to_json(self.today)}  # type: ignore[union-attr]
                           for f in self.suppressed_findings()],
            "suppressions": self.suppressions_json(),
            # Checks a rule could not make during preview (a value unknown until apply): not violations.
            "skippedChecks": [{"policy": f.policy, "policyPack": f.pack, "urn": f.urn, "type": f.type, "name": f.name,
                               "reason": f.skip_reason} for f in skipped],
            # Every pack that judged the program, in the order given.
            "policyPacks": [pack.to_json() for pack in self.packs],
            "notExpanded": [{"urn": c.urn, "type": c.type, "name": c.name, "package": c.package, "reason": c.reason}
                            for c in self.recorded.not_expanded],
            "secretPlaceholders": list(self.recorded.secrets),
            "unresolvedEnvironments": list(self.recorded.environments),
            "unreadStackReferences": list(self.recorded.unread_stack_references),
            "inventedLookups": [self.masked(lookup) for lookup in self.recorded.invented],
            "notes": self.notes(),
            # Whether the program ran inside the sandbox (false: the first note says why and the fix).
            "contained": not self.recorded.not_contained,
            # --strict: everything the run left unchecked, which made it exit 2 (empty otherwise).
            "incomplete": self.unchecked() if self.incomplete else [],
            # What the program itself printed (its console output), secrets masked.
            "programOutput": {"stdout": self.masked(self.recorded.stdout),
                              "stderr": self.masked(self.recorded.stderr)},
            "summary": {"resources": len(self.recorded.resources),
                        "mandatory": self.count_violations("mandatory"),
                        "advisory": self.count_violations("advisory"), "skippedChecks": len(skipped),
                        "suppressed": len(self.suppressed_findings()),
                        # The one config every pack read (null where packs read different ones, or
                        # none), and each pack's own, in the order given.
                        "policyConfig": _path_text(self.shared_policy_config()),
                        "policyConfigs": [{"policyPack": pack.name, "policyConfig": _path_text(pack.policy_config)}
                                          for pack in self.packs]},
        }


def _path_text(path: Optional[Path]) -> Optional[str]:
    return str(path) if path else None


def run_preview(program_dir: Path = REPO_ROOT, *, stack: str = "dev",
                policy_config_path: Optional[Path] = None, unknowns: bool = False,
                pack_dir: Path = DEFAULT_PACK_DIR,
                analyzer: Union[None, PolicyAnalyzer, Sequence[PolicyAnalyzer]] = None, strict: bool = False,
                recorded: Optional[RecordedStack] = None,
                timeout: float = PROGRAM_TIMEOUT_SECONDS,
                stack_references: Optional[dict[str, Path]] = None,
                packs: Optional[Sequence[PackRequest]] = None, program_memory_mb: Optional[int] = None,
                allow_read: Sequence[Path] = ()) -> PreviewResult:
    """Record `program_dir` for `stack` and analyse it with every pack of `packs` (default: the one
    in `pack_dir`, configured by `policy_config_path`). A pack without a config file of its own is
    configured by the stack's policy config (`<stackConfigDir>/policy.<stack>.json`) if there is
    one. Already started analyzers (`analyzer`, one or several) are reused (and left running), and
    with them a `recorded` run of the same program and stack is analysed instead of recording it
    again. A program still running after `timeout` seconds is stopped (a ProgramError). `allow_read`:
    paths the program's sandbox shows beyond its walls (blueprint preview --allow-read)."""
    program_dir = Path(program_dir).resolve()
    if recorded is None:
        probe_in_background()  # whether the program can be sandboxed, answered while the packs start
    packs = list(packs or ()) or [PackRequest(Path(pack_dir), policy_config_path)]
    for request in packs:  # a pack that cannot start fails the run before the program runs
        try:
            policy_packs.require_startable(Path(request.directory).resolve())
        except policy_packs.PackError as exc:
            raise AnalyzerError(str(exc)) from None
    stack_default = stack_policy_config(program_dir, stack)
    # A file several packs take (the stack's, or --policy-config for every pack) is shared: each
    # pack takes its own entries of it.
    configs = [_PackConfig.of(request.config or stack_default,
                              shared=request.config is None or [r.config for r in packs].count(request.config) > 1)
               for request in packs]
    if analyzer is not None:
        started = [analyzer] if isinstance(analyzer, PolicyAnalyzer) else list(analyzer)
        configs = configs[:1] * len(started) if len(configs) < len(started) else configs
        if recorded is None:
            recorded = record_program(program_dir, stack=stack, unknowns=unknowns, timeout=timeout,
                                      stack_references=stack_references, program_memory_mb=program_memory_mb,
                                      allow_read=allow_read)
        with _secrets_kept(recorded):
            _PackConfig.check_shared(configs, started)
            runs = [(one, _configure(one, config), one.analyze(recorded)) for one, config in zip(started, configs)]
            result = _result(runs, recorded, configs)
        result.strict = strict
        return result
    # The packs start (each a process importing its SDK and its rules) while the program runs, on
    # the other core, all at once, and each resource is sent to every pack as the program
    # registers it, as the engine does; a stack config error comes first.
    config = load_config(program_dir, stack).values
    project = load_project(program_dir)["name"]
    streams = [_StreamedAnalysis(request.directory, pack_config, stack=stack, project=project, config=config)
               for request, pack_config in zip(packs, configs)]

    def each_resource(resource: RecordedResource) -> None:
        for stream in streams:
            stream.add(resource)

    with ThreadPoolExecutor(len(streams)) as pool:
        starting = [pool.submit(stream.start) for stream in streams]
        try:
            recorded = record_program(program_dir, stack=stack, unknowns=unknowns, on_resource=each_resource,
                                      timeout=timeout, stack_references=stack_references,
                                      program_memory_mb=program_memory_mb, allow_read=allow_read)
            with _secrets_kept(recorded):
                started = [future.result() for future in starting]  # the first pack that did not start raises
                _PackConfig.check_shared(configs, started)
                # Each pack's last answers (its AnalyzeStack) at once: the slowest pack's, not their sum.
                found = list(pool.map(lambda stream: stream.finish(recorded), streams))
                runs = [(one, stream.resolved, violations) for one, stream, violations in zip(started, streams, found)]
                result = _result(runs, recorded, configs)
        finally:
            for future in starting:  # each pack that started is ended, whatever happened
                if future.exception() is None:
                    future.result().close()
    result.strict = strict
    return result


@dataclass(frozen=True)
class _PackConfig:
    """A pack's policy config: its own file (a paired --policy-pack-config), or the stack's, which
    every pack without its own shares: each pack takes `all` and the entries of its own policies,
    and an entry no pack has is refused (a misspelled name would otherwise configure nothing)."""
    path: Optional[Path]
    document: dict
    shared: bool

    @classmethod
    def of(cls, path: Optional[Path], *, shared: bool) -> "_PackConfig":
        return cls(path, policy_config.load(path) if path else {}, shared and path is not None)

    def for_pack(self, analyzer: PolicyAnalyzer) -> dict:
        """What the pack is configured with: its entries, without the suppressions a config may
        list (the gate applies those itself and reports them as suppressed)."""
        document = suppressions.without_setting(self.document)
        if not self.shared:
            return document
        names = {policy.name for policy in analyzer.info.policies} | {"all"}
        return {key: value for key, value in document.items() if key in names}

    @staticmethod
    def check_shared(configs: Sequence["_PackConfig"], analyzers: Sequence[PolicyAnalyzer]) -> None:
        sharing = [(config, one) for config, one in zip(configs, analyzers) if config.shared]
        if not sharing:
            return
        known = {policy.name for _, one in sharing for policy in one.info.policies} | {"all"}
        unknown = sorted(set(sharing[0][0].document) - known)
        if unknown:
            packs = ", ".join(one.name for _, one in sharing)
            raise policy_config.PolicyConfigError(
                f"{sharing[0][0].path}: no policy named {', '.join(unknown)} in the policy packs it configures "
                f"({packs}); add the pack those entries are for (the blueprint's: --policy-pack \"$(blueprint "
                "policy path)\"), give each pack a config of its own with --policy-pack-config, or see the packs' "
                "policies with `blueprint policy ls --policy-pack DIR`")


class _StreamedAnalysis:
    """Resources go to the pack as the program registers them; those registered before the pack
    has started and been configured wait here until it has."""

    def __init__(self, pack_dir: Path, pack_config: _PackConfig, *, stack: str, project: str,
                 config: dict[str, str]):
        self.pack_dir, self.pack_config = pack_dir, pack_config
        self.stack, self.project, self.config = stack, project, config
        self._lock = threading.Lock()
        self._waiting: list[RecordedResource] = []
        self._analysis: Optional[Analysis] = None
        self.resolved: dict = {}

    def start(self) -> PolicyAnalyzer:
        analyzer = PolicyAnalyzer(self.pack_dir, project=self.project, stack=self.stack, config=self.config)
        try:
            self.resolved = _configure(analyzer, self.pack_config)
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


def _configure(analyzer: PolicyAnalyzer, pack_config: _PackConfig) -> dict:
    """Configure the pack from its policy config; what it made of each rule."""
    path = pack_config.path
    return analyzer.configure(pack_config.for_pack(analyzer), source=str(path) if path else "policy config")


def _result(runs: Sequence[tuple[PolicyAnalyzer, dict, list[Violation]]], recorded: RecordedStack,
            configs: Sequence[_PackConfig]) -> PreviewResult:
    """The run's result from each pack's (analyzer, resolved config, violations)."""
    packs = [PackRun(name=one.name, version=one.version, directory=one.pack_dir, rules=one.rules,
                     levels={name: entry.enforcement_level for name, entry in resolved.items()},
                     policy_config=config.path)
             for (one, resolved, _), config in zip(runs, configs)]
    rules: dict[str, Rule] = {}
    levels: dict[str, str] = {}
    for pack in reversed(packs):  # the first pack's on a clash of names
        rules.update(pack.rules)
        levels.update(pack.levels)
    # The gate's own checks (those that need the program's files, which no pack sees), reported
    # under the gate's name beside the packs' (gate_rules.py).
    gate = PackRun(name=gate_rules.PACK, version=__version__, directory=Path(gate_rules.__file__).parent,
                   rules=dict(gate_rules.RULES), levels={name: rule.level for name, rule in gate_rules.RULES.items()})
    rules = {**gate.rules, **rules}
    levels = {**gate.levels, **levels}
    found = [v for _, _, found in runs for v in found] + gate_rules.violations(recorded)
    stack_file = stack_config_path(recorded.program_dir, recorded.stack) if recorded.program_dir else None
    accepted = suppressions.collect(recorded, rules, stack_file)
    read: set[Optional[Path]] = {None}
    for config in configs:  # a config file's own suppressions (`blueprint policy config` writes them)
        if config.path not in read:
            read.add(config.path)
            accepted += suppressions.from_policy_config(config.document, str(config.path), rules, accepted)
    return PreviewResult(recorded, found, packs[0].policy_config if packs else None,
                         rules=rules, levels=levels, packs=packs, gate=gate, suppressions=accepted)


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
                             stdout=getattr(exc, "stdout", ""), stderr=getattr(exc, "stderr", ""),
                             not_contained=getattr(exc, "not_contained", ""))
    failure = from_exception(exc)
    if failure.kind == "refused" and failure.file and failure.line:
        failure = _with_stack_origin(failure, program_dir, stack)
    return PreviewResult(recorded, [], policy_config_path, strict=strict, failure=failure)


def _with_stack_origin(failure: RunFailure, program_dir: Path, stack: str) -> RunFailure:
    """A refusal whose value the program read from the stack file names that file and line too."""
    try:
        config = load_config(program_dir, stack).values
        path = Path(failure.file) if Path(failure.file).is_absolute() else program_dir / failure.file
        line = path.read_text(errors="replace").splitlines()[failure.line - 1]
    except Exception:  # noqa: BLE001 - no stack or source to read: the refusal as it is
        return failure
    origin = stack_keys.origin_of(line, path, config, stack_config_path(program_dir, stack), program_dir)
    return dataclasses.replace(failure, message=f"{failure.message}\n({origin})") if origin else failure


def _language(program_dir: Path) -> str:
    try:
        return runtime_name(load_project(program_dir))
    except Exception:  # noqa: BLE001 - no readable project file
        return "python"
