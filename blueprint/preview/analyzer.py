"""A policy pack, started the way the Pulumi CLI starts it and asked over its gRPC interface.

The CLI starts a pack through its runtime's language host (policy_packs.py: a Python pack as
`python -u -m pulumi.policy <engine-address> <pack-dir>`, a Node.js one through the policy SDK's
`run-policy-pack` entry); the pack's `PolicyPack(...)` starts a gRPC Analyzer server on a free
loopback port and prints the port as the first line of stdout. The CLI then calls
GetAnalyzerInfo, Configure (the resolved policy config), Analyze once per resource with its inputs,
and AnalyzeStack once with every resource's outputs, parent, dependencies and property
dependencies. This module does the same, the pack started through our host (pack_host.py,
node_pack_host.js), which puts its server on the run's private channel (a Unix socket in a 0700
folder, this process's token on every call), so no other process can ask the pack, and answers
Configure once, so nothing can reconfigure it after the gate did; the pack leads its own process
group, ended with it.

The tests and the benchmark start a pack once for many analyses (`reconfigurable=True`: Configure
may be called again between them), which keeps them from paying the start-up cost each time.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import shutil
import tempfile
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2

from integration_blueprint.core import patches
from integration_blueprint.preview import policy_config, policy_packs, private_channel
from integration_blueprint.preview.plugin_process import PluginDidNotStart, PluginProcess
from integration_blueprint.preview.pulumi_protos import analyzer_pb2, analyzer_pb2_grpc
from integration_blueprint.preview.recording import RecordedResource, RecordedStack

# The pack installed with this package (a folder of the namespace: integration_blueprint.policies).
DEFAULT_PACK_DIR = Path(importlib.import_module("integration_blueprint.policies").__file__ or "").parent
START_TIMEOUT_SECONDS = 60
# The pack never calls back into an engine offline; pulumi.policy only requires the argument.
NO_ENGINE = "127.0.0.1:0"
_LEVEL_NAMES = {
    analyzer_pb2.ADVISORY: "advisory",
    analyzer_pb2.MANDATORY: "mandatory",
    analyzer_pb2.REMEDIATE: "remediate",
    analyzer_pb2.DISABLED: "disabled",
}
_LEVELS = {name: value for value, name in _LEVEL_NAMES.items()}
_MAX_MESSAGE = 400 * 1024 * 1024  # the pack's own limit (pulumi_policy._MAX_RPC_MESSAGE_SIZE)


class AnalyzerError(Exception):
    """The policy pack could not be started or failed while analysing. `own_pack`: the pack is
    blueprint's own (no --policy-pack given), so its failure is the gate's."""

    # The run's secret values, set by the preview when the pack failed after the program ran: its
    # error may quote one, and the report masks them (run.py _secrets_kept).
    secrets: tuple[str, ...] = ()

    def __init__(self, message: str, *, pack_dir: Optional[Path] = None):
        super().__init__(message)
        self.own_pack = pack_dir is not None and Path(pack_dir).resolve() == DEFAULT_PACK_DIR.resolve()


# The pack's PolicySeverity (proto) as the SDK's Severity names; UNSPECIFIED is left out.
_SEVERITY_NAMES = {
    analyzer_pb2.POLICY_SEVERITY_LOW: "low",
    analyzer_pb2.POLICY_SEVERITY_MEDIUM: "medium",
    analyzer_pb2.POLICY_SEVERITY_HIGH: "high",
    analyzer_pb2.POLICY_SEVERITY_CRITICAL: "critical",
}


@dataclass(frozen=True)
class Rule:
    """One policy as the pack describes it over GetAnalyzerInfo: what the CLI shows for
    `pulumi policy ls` plus the metadata the SDK carries beside the description. A rule that has
    no remediation steps, url or severity yet has them empty (None / "" / ())."""
    name: str
    description: str
    level: str  # the pack's own enforcement level, before any policy config
    kind: str  # "resource" or "stack"
    config_schema: dict
    remediation: str
    url: Optional[str]
    severity: Optional[str]
    tags: tuple[str, ...]

    @classmethod
    def from_info(cls, info) -> "Rule":
        schema = json_format.MessageToDict(info.configSchema) if info.HasField("configSchema") else {}
        return cls(name=info.name, description=info.description,
                   level=_LEVEL_NAMES.get(info.enforcementLevel, "advisory"),
                   kind="stack" if info.policy_type == analyzer_pb2.POLICY_TYPE_STACK else "resource",
                   config_schema=schema, remediation=info.remediation_steps, url=info.url or None,
                   severity=_SEVERITY_NAMES.get(info.severity), tags=tuple(info.tags))


@dataclass(frozen=True)
class Violation:
    policy: str
    level: str  # "advisory" or "mandatory"
    urn: str  # "" for the stack as a whole
    message: str
    pack: str = ""  # the policy pack's name and version, as its diagnostic names them
    pack_version: str = ""

    def to_json(self) -> dict:
        return {"policy": self.policy, "level": self.level, "urn": self.urn, "message": self.message,
                "policyPack": self.pack, "policyPackVersion": self.pack_version}


def _tail(stderr: str, lines: int = 25) -> str:
    return "\n".join(stderr.strip().splitlines()[-lines:]) or "(no output on stderr)"


def _registry_paths() -> dict[str, str]:
    """Where a team's pack interpreter, which lacks this package, loads the patch registry from
    (pack_host.py): core/patches.py and the `packaging` it checks versions with."""
    packaging = importlib.util.find_spec("packaging")
    assert packaging is not None and packaging.submodule_search_locations, "packaging is a dependency"
    return {"registry": str(Path(patches.__file__).resolve()),
            "packaging": str(list(packaging.submodule_search_locations)[0])}


class PolicyAnalyzer:
    def __init__(self, pack_dir: Path = DEFAULT_PACK_DIR, *, project: str = "blueprint",
                 stack: str = "dev", config: Optional[dict[str, str]] = None, reconfigurable: bool = False):
        self.pack_dir = Path(pack_dir).resolve()
        try:
            start = policy_packs.start_command(self.pack_dir, engine=NO_ENGINE, project=project, stack=stack,
                                               config=config or {}, own_pack=self.pack_dir == DEFAULT_PACK_DIR.resolve())
        except policy_packs.PackError as exc:
            raise AnalyzerError(str(exc)) from None
        self.runtime = start.runtime
        stated = policy_packs.read_manifest(self.pack_dir).get("version")
        self._stated_version = str(stated) if stated is not None else ""
        self._folder = tempfile.mkdtemp(prefix="blueprint-pack-")
        address, token = private_channel.socket_address(self._folder, "analyzer"), private_channel.new_token()
        self.address = address  # the pack's private socket (a call without the run's token is refused)
        settings = {"address": address, "token": token, "reconfigurable": reconfigurable, **_registry_paths()}
        try:
            self._process = PluginProcess(start.argv, settings=settings, start_timeout=START_TIMEOUT_SECONDS,
                                          cwd=start.cwd, env=start.env)
        except PluginDidNotStart as failed:
            shutil.rmtree(self._folder, ignore_errors=True)
            cause = (f"\nLikely cause: {policy_packs.why_no_pack_served(self.pack_dir)}"
                     if failed.exited_without_serving else "")
            raise AnalyzerError(f"the policy pack in {self.pack_dir} did not start ({failed}; run by "
                                f"{start.started_by}){cause}\n{_tail(failed.stderr)}", pack_dir=self.pack_dir) from None
        try:
            self._channel = private_channel.with_token(grpc.insecure_channel(
                address, options=[("grpc.max_receive_message_length", _MAX_MESSAGE),
                                  ("grpc.max_send_message_length", _MAX_MESSAGE)]), token)
            self._stub = analyzer_pb2_grpc.AnalyzerStub(self._channel)
            # The first call waits for the connection itself: grpc.channel_ready_future would leave
            # a connectivity watcher on the channel that makes close() wait out its 0.2 s poll.
            self.info = self._call(functools.partial(self._stub.GetAnalyzerInfo, wait_for_ready=True,
                                                     timeout=START_TIMEOUT_SECONDS), empty_pb2.Empty())
        except BaseException:
            self.close()
            raise

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def own_pack(self) -> bool:
        """The pack is blueprint's own (the one this package ships)."""
        return self.pack_dir == DEFAULT_PACK_DIR.resolve()

    @property
    def version(self) -> str:
        """The version PulumiPolicy.yaml states, which the CLI shows for a local pack (the Python SDK
        always answers 0.0.1, expecting it), else the pack's own answer."""
        return self._stated_version or self.info.version

    # ---- process ---------------------------------------------------------------------------

    def _stderr_tail(self) -> str:
        return _tail(self._process.stderr_text())

    def _call(self, method, request):
        try:
            return method(request)
        except grpc.RpcError as exc:
            name = getattr(getattr(self, "info", None), "name", "") or self.pack_dir
            raise AnalyzerError(f"the policy pack {name} failed: {exc.details()}\n{self._stderr_tail()}",
                                pack_dir=self.pack_dir) from None

    def close(self) -> None:
        if getattr(self, "_channel", None) is not None:
            self._channel.close()
        if getattr(self, "_process", None) is not None:
            self._process.close()
        shutil.rmtree(self._folder, ignore_errors=True)

    def __enter__(self) -> "PolicyAnalyzer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- protocol ------------------------------------------------------------------------

    @property
    def rules(self) -> dict[str, Rule]:
        """Every policy of the pack by name, as GetAnalyzerInfo describes it."""
        return {info.name: Rule.from_info(info) for info in self.info.policies}

    def resolve(self, document: Optional[dict[str, Any]] = None,
                source: str = "policy config") -> dict[str, policy_config.ResolvedPolicyConfig]:
        """What a policy config document makes of each policy (level and settings), checked
        against the pack's schemas, without configuring the pack."""
        if document and not self.info.supportsConfig:  # the CLI's refusal (pkg/engine/update.go)
            raise policy_config.PolicyConfigError(f"{source}: policy pack {self.info.name} at {self.pack_dir} does not "
                                                  "support config; leave its config out")
        return policy_config.resolve(list(self.info.policies), document or {}, source, _LEVEL_NAMES,
                                     pack=self.info.name, initial=self.initial_config, defaults_fit=self.own_pack)

    @property
    def initial_config(self) -> dict[str, Any]:
        """The config the pack gives itself (AnalyzerInfo.initialConfig), as a config document."""
        return {name: {"enforcementLevel": _LEVEL_NAMES.get(entry.enforcementLevel, "advisory"),
                       **(json_format.MessageToDict(entry.properties) if entry.HasField("properties") else {})}
                for name, entry in self.info.initialConfig.items()}

    def configure(self, document: Optional[dict[str, Any]] = None,
                  source: str = "policy config") -> dict[str, policy_config.ResolvedPolicyConfig]:
        """Configure the pack from a policy config document (None: the pack's own defaults)."""
        resolved = self.resolve(document, source)
        request = analyzer_pb2.ConfigureAnalyzerRequest()
        for name, entry in resolved.items():
            config = request.policyConfig[name]
            config.enforcementLevel = _LEVELS[entry.enforcement_level]
            config.properties.SetInParent()  # always sent, as the CLI sends it: the Node.js SDK reads it unchecked
            config.properties.update(entry.properties)
        self._call(self._stub.Configure, request)
        return resolved

    def analyze(self, recorded: RecordedStack) -> list[Violation]:
        """Analyze per resource (inputs), then AnalyzeStack once (outputs and the links)."""
        analysis = self.begin(stack=recorded.stack, project=recorded.project, config=recorded.config)
        for resource in recorded.resources:
            analysis.add(resource)
        return analysis.finish(recorded)

    def begin(self, *, stack: str, project: str, config: dict[str, str]) -> "Analysis":
        """An analysis whose resources are sent as they come (as the engine sends each one when the
        program registers it), then finished with the whole stack."""
        self._call(self._stub.ConfigureStack, analyzer_pb2.AnalyzerStackConfigureRequest(
            stack=stack, project=project, dry_run=True, config=config))
        return Analysis(self)


# Analyze requests sent before the oldest is answered: enough to keep the pack (4 server threads)
# busy. Unbounded, a 1,000-resource stack on a loaded machine had its requests cancelled by gRPC
# (twice in benchmarks/preview_scale.py; not reproduced on a quiet machine).
MAX_IN_FLIGHT = 32


class Analysis:
    """One stack's analysis in flight: Analyze requests go out without waiting for each answer, so
    the pack (its own process) works while the program goes on registering resources."""

    def __init__(self, analyzer: PolicyAnalyzer):
        self.analyzer = analyzer
        self._violations: list[Violation] = []  # of the answered resources, in registration order
        self._in_flight: deque = deque()  # (urn, future), in registration order

    def add(self, resource: RecordedResource) -> None:
        future = self.analyzer._stub.Analyze.future(analyzer_pb2.AnalyzeRequest(
            type=resource.type, properties=resource.raw_inputs, urn=resource.urn,
            name=resource.name, options=analyzer_pb2.AnalyzerResourceOptions(parent=resource.parent)))
        self._in_flight.append((resource.urn, future))
        while len(self._in_flight) > MAX_IN_FLIGHT:
            self._collect_oldest()

    def _collect_oldest(self) -> None:
        urn, future = self._in_flight.popleft()
        self._violations += _violations(self.analyzer._call(lambda _: future.result(), None), self.analyzer,
                                        default_urn=urn)

    def finish(self, recorded: RecordedStack) -> list[Violation]:
        """Every resource's verdicts in registration order, then AnalyzeStack's."""
        while self._in_flight:
            self._collect_oldest()
        violations = self._violations
        stack_request = analyzer_pb2.AnalyzeStackRequest()
        for resource in recorded.resources:
            entry = stack_request.resources.add(
                type=resource.type, urn=resource.urn, name=resource.name, parent=resource.parent,
                dependencies=resource.dependencies,
                options=analyzer_pb2.AnalyzerResourceOptions(parent=resource.parent))
            entry.properties.CopyFrom(_struct(resource.outputs))
            for key, urns in resource.property_dependencies.items():
                entry.propertyDependencies[key].urns.extend(urns)
        violations += _violations(self.analyzer._call(self.analyzer._stub.AnalyzeStack, stack_request),
                                  self.analyzer, default_urn="")
        return violations


def _struct(values: dict) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(values)
    return struct


def _violations(response, analyzer: PolicyAnalyzer, default_urn: str) -> list[Violation]:
    found = []
    for diagnostic in response.diagnostics:
        level = _LEVEL_NAMES.get(diagnostic.enforcementLevel, "advisory")
        if level == "disabled":
            continue
        found.append(Violation(policy=diagnostic.policyName,
                               level="mandatory" if level == "remediate" else level,
                               urn=diagnostic.urn or default_urn, message=diagnostic.message,
                               pack=diagnostic.policyPackName or analyzer.name,
                               pack_version=analyzer.version))
    return found
