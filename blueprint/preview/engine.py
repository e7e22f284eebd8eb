"""The engine side of Pulumi, offline: the ResourceMonitor and Engine gRPC services a program's SDK
talks to, answered without a Pulumi CLI, a backend or cloud credentials.

The program (in its own interpreter, started by python_host.py, or in this process for a test's
callable) meets the same SDK code paths as under `pulumi preview`: feature negotiation
(GetDeploymentInfo / SupportsFeature), RegisterResource with resource references, secrets and
output values, Invoke for data sources, ReadResource for `.get()`, RegisterResourceOutputs, and
the Engine's Log. What the real engine would ask a provider plugin, this engine asks the offline
Provider (provider/contract.py: Check, Create, Read, Invoke, typed as pulumi-aws declares them);
what it would construct through another plugin (a remote component) it constructs through our own
plugin when the package is ours and otherwise reports as not expanded.

Every preview is a dry run, as `pulumi preview` is: known-value mode answers as an update preview
of a deployed stack (every output known), `unknowns` as a first preview (what the provider
computes stays unknown, and the SDK skips `apply` on it).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence
from urllib.parse import unquote, urlparse

import grpc
from google.protobuf import struct_pb2
from google.rpc import status_pb2

from integration_blueprint.plugin import PLUGIN_DIR
from integration_blueprint.preview import assets, private_channel, redaction, wire
from integration_blueprint.preview.callbacks import CallbackFailed, ProgramCallbacks
from integration_blueprint.preview.engine_services import (
    EngineService,
    InProcessStub,
    ProgramFacingError,
    ResourceMonitorService,
    RunEndingError,
    read_deep_values,
)
from integration_blueprint.preview.plugin_process import PluginDidNotStart, PluginProcess
from integration_blueprint.preview.program_view import ProgramView
from integration_blueprint.preview.program_walls import Visibility
from integration_blueprint.preview.project import ProgramError
from integration_blueprint.preview.provider.contract import STACK_REFERENCE, Provider, UnknownInvoke
from integration_blueprint.preview.pulumi_protos import (
    engine_pb2,
    engine_pb2_grpc,
    errors_pb2,
    provider_pb2,
    provider_pb2_grpc,
    resource_pb2,
    resource_pb2_grpc,
)
from integration_blueprint.preview.stack_references import StackOutputs, StackReferences

ROOT_STACK_TYPE = "pulumi:pulumi:Stack"
DEFAULT_REGION = "us-east-1"
# Where our own component package lives in a checkout (plugin/ beside the packages); a wheel has
# none, and then our components used remotely are reported as not expanded like any other.
OUR_PACKAGE = "blueprint"
PLUGIN_START_SECONDS = 60
# Server threads: a remote component's Construct holds one while the plugin registers the
# component's children on others.
SERVER_THREADS = 32
_MAX_MESSAGE = 400 * 1024 * 1024
# A program's process may not answer an HTTP/2 ping for a long time: Node.js answers on its event
# loop, which ts-node blocks while it type-checks the program (a minute of CPU against @pulumi/aws's
# declarations on a busy machine). gRPC's server pings to probe bandwidth and, unanswered within
# 20 s, closes the connection (GOAWAY ENHANCE_YOUR_CALM "ping_timeout"), which the SDK reports as
# RESOURCE_EXHAUSTED on its next registration. On loopback there is no bandwidth to probe.
_PATIENT_PINGS = [("grpc.http2.bdp_probe", 0), ("grpc.keepalive_timeout_ms", 3_600_000)]

@dataclass
class RecordedResource:
    urn: str
    type: str
    name: str
    custom: bool
    parent: str
    inputs: dict  # plain values, as a rule reads them (wire.plain of the analyzer's view)
    raw_inputs: struct_pb2.Struct  # the inputs as the engine sends them to an analyzer
    dependencies: list[str]
    property_dependencies: dict[str, list[str]]
    id: str = ""
    outputs: dict = field(default_factory=dict)  # plain values, as after the provider answered
    provider: str = ""
    source_file: str = ""  # the program's own file (absolute) and line that declared the resource
    source_line: int = 0
    # Where the program's secrets sit in `inputs` (redaction.secret_paths): the reports show [secret] there.
    secret_paths: list[tuple] = field(default_factory=list)


@dataclass(frozen=True)
class NotExpanded:
    """A remote component the real engine would construct through its package's plugin."""
    urn: str
    type: str
    name: str
    package: str
    reason: str


@dataclass(frozen=True)
class LogEntry:
    severity: str
    message: str
    urn: str


class EngineFailure(Exception):
    """The offline engine itself failed while answering the program: our bug, not the program's.
    `part`: the part of the gate that failed, when not the engine itself (the component plugin)."""

    def __init__(self, message: str, part: str = ""):
        super().__init__(message)
        self.part = part


def make_urn(parent: str, type_token: str, name: str, *, stack: str, project: str) -> str:
    """The URN the Pulumi engine gives a resource: `urn:pulumi:<stack>::<project>::<type>::<name>`,
    where a child's type is prefixed by its parent's whole type chain (`parent$child`) and the
    root Stack is not part of any chain (pulumi/pulumi sdk/go/common/resource/urn.go, NewURN)."""
    if parent:
        parent_type = parent.split("::")[2]
        if parent_type != ROOT_STACK_TYPE:
            type_token = f"{parent_type}${type_token}"
    return f"urn:pulumi:{stack}::{project}::{type_token}::{name}"


_SEVERITIES = {engine_pb2.DEBUG: "debug", engine_pb2.INFO: "info", engine_pb2.WARNING: "warning",
               engine_pb2.ERROR: "error"}


class OfflineEngine:
    """One program run's engine: serve it, let the program run against `address`, read what it
    registered. `on_resource` is called with each recorded resource as it registers. Only callers
    with `token` are answered (a new one by default; engines serving one plugin share it)."""

    def __init__(self, *, project: str, stack: str, config: dict[str, str], secret_keys: Sequence[str] = (),
                 region: Optional[str] = DEFAULT_REGION, unknowns: bool = False, program_dir: Optional[Path] = None,
                 region_fix: str = "set aws:region in the stack's config or AWS_REGION",
                 organization: str = "organization",
                 on_resource: Optional[Callable[[RecordedResource], None]] = None, token: Optional[str] = None,
                 stack_references: Optional[StackReferences] = None):
        self.project, self.stack, self.organization = project, stack, organization
        # Where another stack's outputs are read from; None: none are known (their outputs are empty).
        self.stack_references = stack_references
        self.config, self.secret_keys = dict(config), list(secret_keys)
        self.region, self.region_fix, self.unknowns = region, region_fix, unknowns
        self.program_dir = program_dir
        # Where the program runs (its host sets it): relative asset and archive paths are read from there.
        self.working_directory = program_dir or Path.cwd()
        # Where a path the program wrote inside its sandbox is read (its host sets it; program_view).
        self.view: Optional[ProgramView] = None
        # Paths the user granted the program beyond its walls (blueprint preview --allow-read).
        self.allow_read: tuple[Path, ...] = ()
        # What the program's sandbox showed (its host sets it; program_walls.Visibility), for the blame
        # of a failure that met its walls; None when it ran uncontained.
        self.seen: Optional[Visibility] = None
        # The error that ended the run (message, the program's file and line), set with `ending`: the
        # program's host stops it then (RunEndingError).
        self.ended_by: Optional[tuple[str, str, int]] = None
        self.ending = threading.Event()
        self.on_resource = on_resource
        self.resources: list[RecordedResource] = []
        self.not_expanded: list[NotExpanded] = []
        self.logs: list[LogEntry] = []
        self.failures: list[str] = []  # the engine's own failures, with their tracebacks
        self.failure_part = ""  # the part of the gate the first failure was in, when not the engine (the plugin)
        self.refusals: list[str] = []  # what a remote component's Construct refused
        self.invented: list[str] = []  # lookups answered by invention (nothing is looked up offline)
        self._constructed_secrets: list = []  # secrets a remote component was given (it may refuse them)
        self.program_stdout = self.program_stderr = ""  # what the program printed (its host sets them)
        # Why the program ran outside the sandbox, as the reports say it (its host sets it); "" when contained.
        self.not_contained = ""
        self.program_memory_mb: Optional[int] = None  # blueprint preview --program-memory (language_host)
        self.limit_notes: list[str] = []  # what the program's limits left out or could not bound (language_host)
        self.stack_outputs: dict = {}
        self.root_urn = ""
        self._lock = threading.Lock()
        self._by_urn: dict[str, RecordedResource] = {}
        self._read: dict[str, dict] = {}  # URN -> state of resources read with `.get()`
        self._provider_regions: dict[str, str] = {}  # provider URN -> its region
        self._remote_sources: dict[str, tuple[str, int]] = {}  # remote component URN -> the program's line
        # The program interpreter's import path (sys.path), where its own provider SDKs are read
        # (provider.sdk.searching); None: the tool's own. Set by the host that starts the program.
        self.sdk_search_path: Optional[Callable[[], Optional[Sequence[str]]]] = None
        self.callbacks = ProgramCallbacks()
        self.provider = Provider()
        read_deep_values()
        self._plugin: Optional[ComponentPlugin] = None
        # The run's private folder (0700) holds the engine's socket, the plugin's and the program's
        # captured output; only callers with `token` are answered (private_channel).
        self.folder = tempfile.mkdtemp(prefix="blueprint-run-")
        self.token = token or private_channel.new_token()
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=SERVER_THREADS),
                                   interceptors=[private_channel.TokenCheck(self.token)],
                                   options=[("grpc.max_receive_message_length", _MAX_MESSAGE),
                                            ("grpc.max_send_message_length", _MAX_MESSAGE), *_PATIENT_PINGS])
        self._monitor_service, self._engine_service = ResourceMonitorService(self), EngineService(self)
        resource_pb2_grpc.add_ResourceMonitorServicer_to_server(self._monitor_service, self._server)
        engine_pb2_grpc.add_EngineServicer_to_server(self._engine_service, self._server)
        self.address = private_channel.socket_address(self.folder, "engine")
        self._server.add_insecure_port(self.address)
        self._server.start()

    def close(self) -> None:
        if self._plugin is not None:
            self._plugin.close()
        self.callbacks.close()
        self._server.stop(None)
        shutil.rmtree(self.folder, ignore_errors=True)

    def end_run(self, message: str, file: str, line: int) -> None:
        """End the run at this error (the first one told stands): the host stops the program."""
        with self._lock:
            if self.ended_by is None:
                self.ended_by = (message, file, line)
        self.ending.set()

    def __enter__(self) -> "OfflineEngine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def in_process_stubs(self) -> tuple["InProcessStub", "InProcessStub"]:
        """(monitor, engine) for an SDK running in this process: the same services and the same
        protobuf requests and responses, handed over by a call instead of a loopback socket (a
        gRPC round trip costs a few hundred microseconds of CPU, and the SDK makes five per
        resource). Remote components and plugins still reach the engine over gRPC."""
        return InProcessStub(self._monitor_service), InProcessStub(self._engine_service)

    def urn(self, parent: str, type_token: str, name: str) -> str:
        return make_urn(parent, type_token, name, stack=self.stack, project=self.project)

    def secret_values(self) -> list:
        """Every value the run knows to be secret so far: the secrets in the recorded inputs, those
        given to a remote component and the config values of secret keys."""
        with self._lock:
            resources = list(self.resources)
        return redaction.secret_values(resources, self.config, self.secret_keys) + self._constructed_secrets

    def errors(self) -> list[str]:
        return [entry.message for entry in self.logs if entry.severity == "error"]

    # ---- registration ----------------------------------------------------------------------

    def register(self, request) -> resource_pb2.RegisterResourceResponse:
        urn = self.urn(request.parent, request.type, request.name)
        if request.type == ROOT_STACK_TYPE:
            self.root_urn = urn
            return resource_pb2.RegisterResourceResponse(urn=urn)
        try:
            request = self.callbacks.transform_resource(request, urn, self._ancestors(request.parent))
        except CallbackFailed as exc:
            raise ProgramFacingError(f"a transform of {request.type} {request.name!r} failed: {exc}") from None
        inputs = wire.from_struct(request.object)
        unreadable = assets.unreadable(inputs, self.working_directory, self.view)
        if unreadable is not None:
            # The engine hashes every asset and archive as it registers the resource, in a preview too.
            raise RunEndingError(unreadable)
        if request.remote:
            return self._register_remote(request, urn, inputs)
        analyzer_view = wire.downgrade(inputs)
        provider_view = wire.unwrap_secrets(analyzer_view)
        region = self._region(request.provider, request.type) if request.custom else self.region or DEFAULT_REGION
        if request.custom:
            planned = self.provider.check(request.type, request.name, urn, provider_view, region=region)
            if request.type.startswith("pulumi:providers:"):
                id_, outputs = ("" if self.unknowns else f"{urn.rsplit('::', 1)[-1]}-provider"), planned
                if isinstance(planned.get("region"), str) and planned["region"] != wire.UNKNOWN:
                    self._provider_regions[urn] = planned["region"]
            else:
                id_, outputs = self.provider.create(request.type, request.name, urn, planned, region=region,
                                                    preview=self.unknowns)
            returned = self._returned(analyzer_view, outputs, secret_outputs=set(request.additionalSecretOutputs))
            analyzer_view = _checked(analyzer_view, provider_view, planned)
        else:
            id_, outputs, returned = "", wire.plain(analyzer_view), inputs
        self._record(request, urn, analyzer_view, id_, outputs)
        return resource_pb2.RegisterResourceResponse(urn=urn, id=id_, object=wire.to_struct(returned))

    def _returned(self, analyzer_view: dict, outputs: dict, secret_outputs: set[str]) -> dict:
        """The state the program gets back: the provider's outputs, secret where the input was
        secret or the program asked (additionalSecretOutputs), assets as the program sent them."""
        returned = {}
        for key, value in outputs.items():
            sent = analyzer_view.get(key)
            if isinstance(sent, dict) and sent.get(wire.SIG) in (wire.ASSET_SIG, wire.ARCHIVE_SIG):
                value = sent
            elif isinstance(sent, dict) and sent.get(wire.SIG) == wire.SECRET_SIG and not wire.has_secret(value):
                value = wire.secret(value)
            if key in secret_outputs:
                value = wire.secret(value)
            returned[key] = value
        return returned

    def _record(self, request, urn: str, analyzer_view: dict, id_: str, outputs: dict) -> None:
        source_file, source_line = self._remote_sources.get(urn) or self._source(request)
        if not self._is_program_file(source_file):
            # Registered from outside the program (a plugin constructing a remote component, a
            # library's component): the program's line is the one that declared its parent.
            parent = self._by_urn.get(request.parent)
            if parent is not None and parent.source_file:
                source_file, source_line = parent.source_file, parent.source_line
        recorded = RecordedResource(
            urn=urn, type=request.type, name=request.name, custom=bool(request.custom), parent=request.parent,
            inputs=wire.plain(analyzer_view), raw_inputs=wire.to_struct(analyzer_view),
            dependencies=list(request.dependencies),
            property_dependencies={key: list(value.urns) for key, value in request.propertyDependencies.items()},
            id=id_, outputs=wire.plain(outputs), provider=request.provider,
            source_file=source_file, source_line=source_line, secret_paths=redaction.secret_paths(analyzer_view))
        with self._lock:
            if urn in self._by_urn:
                return  # a remote component's own registration, made again by its plugin
            self._by_urn[urn] = recorded
            self.resources.append(recorded)
        if self.on_resource is not None:
            self.on_resource(recorded)

    def _source(self, request) -> tuple[str, int]:
        """The innermost frame of the program's own code that led to the registration (a
        component's children point at the line that declared the component)."""
        positions = [frame.pc for frame in request.stackTrace.frames if frame.HasField("pc")]
        if request.HasField("sourcePosition"):
            positions.insert(0, request.sourcePosition)
        first = ("", 0)
        for position in positions:
            path = unquote(urlparse(position.uri).path)
            if not path:
                continue
            if not first[0]:
                first = (path, position.line)
            if self._is_program_file(path):
                return path, position.line
        return first

    def _ancestors(self, parent: str) -> list[str]:
        """A resource's parent, its parent's parent... (the stack included), nearest first."""
        chain = []
        with self._lock:
            while parent and parent not in chain:
                chain.append(parent)
                known = self._by_urn.get(parent)
                parent = known.parent if known is not None else ""
        return chain

    def _is_program_file(self, path: str) -> bool:
        if not path:
            return False
        if self.program_dir is None:
            return "site-packages" not in path
        inside = path.startswith(str(self.program_dir) + os.sep)
        installed = ("site-packages", f"{os.sep}venv{os.sep}", f"{os.sep}node_modules{os.sep}")
        return inside and not any(part in path for part in installed)

    def _region(self, provider_ref: str, type_token: str) -> str:
        """The region of the provider a resource or data source uses (a provider reference is
        `<provider URN>::<id>`): an explicit provider's `region`, else the stack's."""
        region = self._provider_regions.get(provider_ref.rsplit("::", 1)[0]) if provider_ref else None
        region = region or self.region
        if region is None and type_token.startswith("aws:"):
            # The AWS provider refuses to configure without a region: the first AWS resource fails.
            raise ProgramFacingError(f"the AWS provider has no region for {type_token}: {self.region_fix}")
        return region or DEFAULT_REGION

    def register_outputs(self, request) -> None:
        outputs = wire.plain(wire.downgrade(wire.from_struct(request.outputs)))
        if request.urn == self.root_urn:
            self.stack_outputs = outputs
            return
        with self._lock:
            resource = self._by_urn.get(request.urn)
        if resource is not None and not resource.custom:
            resource.outputs = {**resource.outputs, **outputs}

    # ---- remote components -----------------------------------------------------------------

    def _register_remote(self, request, urn: str, inputs: dict) -> resource_pb2.RegisterResourceResponse:
        package = request.type.split(":", 1)[0]
        if package == OUR_PACKAGE and (PLUGIN_DIR / "__main__.py").exists():
            self._remote_sources[urn] = self._source(request)
            state = self._construct(request, inputs)
            return resource_pb2.RegisterResourceResponse(urn=urn, object=state)
        reason = ("its package's plugin is not available offline" if package != OUR_PACKAGE
                  else "this installation has no plugin folder to construct it")
        with self._lock:
            self.not_expanded.append(NotExpanded(urn=urn, type=request.type, name=request.name,
                                                 package=package, reason=reason))
        # Recorded as the component it is, its inputs checked; what it would contain is not.
        analyzer_view = wire.downgrade(inputs)
        self._record(request, urn, analyzer_view, "", wire.plain(analyzer_view))
        return resource_pb2.RegisterResourceResponse(urn=urn)

    def _construct(self, request, inputs: dict) -> struct_pb2.Struct:
        given = wire.downgrade(inputs)
        self._constructed_secrets += [redaction.at(wire.plain(given), path) for path in redaction.secret_paths(given)]
        with self._lock:
            if self._plugin is None:
                self._plugin = ComponentPlugin(PLUGIN_DIR, self)
        construct = provider_pb2.ConstructRequest(
            project=self.project, stack=self.stack, organization=self.organization, config=self.config,
            configSecretKeys=self.secret_keys, dryRun=True, parallel=16, monitorEndpoint=self.address,
            type=request.type, name=request.name, parent=request.parent, dependencies=list(request.dependencies),
            accepts_output_values=True)
        construct.inputs.CopyFrom(wire.to_struct(inputs))
        for key, value in request.propertyDependencies.items():
            construct.inputDependencies[key].urns.extend(value.urns)
        for key, value in request.providers.items():
            construct.providers[key] = value
        try:
            response = self._plugin.provider.Construct(construct)
        except grpc.RpcError as exc:
            # A refused setting is the component's message to the program, as under `pulumi preview`.
            refusal = _construct_error(exc, request.type, request.name)
            self.refusals.append(refusal)
            raise ProgramFacingError(refusal) from None
        return response.state

    # ---- data sources and reads ------------------------------------------------------------

    def invoke(self, request) -> resource_pb2.ResourceInvokeResponse:
        try:
            request = self.callbacks.transform_invoke(request)
        except CallbackFailed as exc:
            raise ProgramFacingError(f"an invoke transform of {request.tok} failed: {exc}") from None
        args = wire.plain(wire.downgrade(wire.from_struct(request.args)))
        if request.tok == "pulumi:pulumi:getResource":
            return self._get_resource(args.get("urn", ""))
        region = self._region(request.provider, request.tok)
        try:
            invoked = self.provider.invoke(request.tok, args, region=region)
            if not invoked.from_facts:
                self._invented(f"{request.tok}({_arguments(args)})", request)
        except UnknownInvoke:
            failure = provider_pb2.CheckFailure(
                property="", reason=f"the data source {request.tok} is not declared by any provider SDK installed "
                                    "beside blueprint; install the provider's Python package next to it")
            return resource_pb2.ResourceInvokeResponse(failures=[failure])
        return resource_pb2.ResourceInvokeResponse(**{"return": wire.to_struct(invoked.result)})

    def _get_resource(self, urn: str) -> resource_pb2.ResourceInvokeResponse:
        with self._lock:
            resource = self._by_urn.get(urn)
        state = self._read.get(urn) if resource is None else resource.outputs
        result = {"urn": urn, "id": resource.id if resource else (state or {}).get("id", ""), "state": state or {}}
        return resource_pb2.ResourceInvokeResponse(**{"return": wire.to_struct(result)})

    def read(self, request) -> resource_pb2.ReadResourceResponse:
        urn = self.urn(request.parent, request.type, request.name)
        if request.type == STACK_REFERENCE and self.stack_references is not None:
            return self._read_stack_reference(request, urn)
        props = wire.plain(wire.downgrade(wire.from_struct(request.properties)))
        state = self.provider.read(request.type, request.name, request.id, props,
                                   region=self._region(request.provider, request.type))
        self._read[urn] = {**state, "id": request.id}
        self._invented(f"{request.type}.get({request.name!r}, {request.id!r})", request)
        return resource_pb2.ReadResourceResponse(urn=urn, properties=wire.to_struct(state))

    def _read_stack_reference(self, request, urn: str) -> resource_pb2.ReadResourceResponse:
        """Another stack's outputs (stack_references.py), secret where that stack has them secret;
        unknown when they could not be read, so that the program runs on as in a first preview."""
        assert self.stack_references is not None
        declared = self._source(request)
        try:
            found = self.stack_references.lookup(request.id, declared if self._is_program_file(declared[0]) else ("", 0))
        except ProgramError as exc:
            raise ProgramFacingError(str(exc)) from None
        if isinstance(found, StackOutputs):
            outputs = {key: wire.secret(value) if key in found.secret_names else value
                       for key, value in found.outputs.items()}
            state = {"name": request.id, "outputs": outputs, "secretOutputNames": list(found.secret_names)}
        else:
            state = {"name": request.id, "outputs": wire.UNKNOWN, "secretOutputNames": wire.UNKNOWN}
        self._read[urn] = {**wire.plain(state), "id": request.id}
        return resource_pb2.ReadResourceResponse(urn=urn, properties=wire.to_struct(state))

    def _invented(self, lookup: str, request) -> None:
        """Note a lookup answered as if what it names existed, with the program's line that made it."""
        file, line = self._source(request) if hasattr(request, "stackTrace") else ("", 0)
        if self._is_program_file(file):
            lookup += f" at {file}:{line}"
        with self._lock:
            if lookup not in self.invented:
                self.invented.append(lookup)

    def log(self, request) -> None:
        self.logs.append(LogEntry(_SEVERITIES.get(request.severity, "info"), request.message, request.urn))
        if request.severity == engine_pb2.ERROR:
            # A failing program stops its Callbacks service next: close our channels to it first, as
            # at a normal end (SignalAndWaitForShutdown); a later transform opens one again.
            self.callbacks.close()


def _arguments(args: dict) -> str:
    """A lookup's arguments as the program wrote them, briefly: name=value for each one given."""
    given = ", ".join(f"{key}={value!r}" for key, value in args.items() if value not in (None, "", [], {}))
    return given if len(given) <= 120 else given[:117] + "..."


def _construct_error(error: grpc.RpcError, type_token: str, name: str) -> str:
    """What a component package's Construct refused, as the engine reports it: each input property
    error (google.rpc.Status details, InputPropertiesError) with its property, else the status text."""
    reasons = []
    for key, value in getattr(error, "trailing_metadata", lambda: ())() or ():
        if key != "grpc-status-details-bin":
            continue
        for detail in status_pb2.Status.FromString(value).details:
            properties = errors_pb2.InputPropertiesError()
            if detail.Unpack(properties):
                reasons += [f"{e.reason} (input {e.property_path})" if e.property_path not in e.reason else e.reason
                            for e in properties.errors]
    message = "\n".join(reasons) or error.details() or str(error.code())
    return f"{type_token} {name!r} could not be constructed: {message}"


def _checked(analyzer_view: dict, provider_view: dict, planned: dict) -> dict:
    """The inputs after the provider's Check, as the engine sends them to an analyzer: what Check
    added or changed (an auto-name, a document encoded as JSON) in place of what the program sent,
    still secret where the program's value was."""
    checked = {}
    for key, value in planned.items():
        sent = analyzer_view.get(key)
        if key in provider_view and provider_view[key] == value:
            checked[key] = sent
        else:
            checked[key] = wire.secret(value) if wire.has_secret(sent) else value
    return checked


class ComponentPlugin:
    """A component package's plugin run as the engine runs a Python plugin, `python <folder>
    <engine address>`, which serves the ResourceProvider interface and prints its port; here on the
    run's private channel (private_channel): its socket in the engine's folder, its own token and
    the engine's handed over on a pipe. Its own process group, ended with the engine."""

    def __init__(self, folder: Path, engine: OfflineEngine):
        token, address = private_channel.new_token(), private_channel.socket_address(engine.folder, "plugin")
        try:
            self.process = PluginProcess(
                [sys.executable, str(folder), engine.address], start_timeout=PLUGIN_START_SECONDS,
                settings={"address": address, "token": token, "engine_address": engine.address,
                          "engine_token": engine.token})
        except PluginDidNotStart as failed:
            raise EngineFailure(f"the component plugin in {folder} did not start: {failed.stderr[-2000:]}",
                                part="the component plugin") from None
        self.channel = private_channel.with_token(grpc.insecure_channel(address), token)
        self.provider = provider_pb2_grpc.ResourceProviderStub(self.channel)

    def stderr_text(self) -> str:
        return self.process.stderr_text()

    def close(self) -> None:
        if getattr(self, "channel", None) is not None:
            self.channel.close()
        self.process.close()
