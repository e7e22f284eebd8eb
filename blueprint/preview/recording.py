"""Run a Pulumi Python program without the Pulumi CLI and record what it would deploy.

The program runs under the Pulumi SDK's mock engine with a recording monitor: every resource is
kept with its type, name, inputs, parent, dependencies and property dependencies, which is exactly
what the CLI hands to a policy pack. Outputs either resolve to deterministic placeholders shaped
like the real ones (ARNs, queue URLs, `.fifo` names, ids: as after `pulumi up`) or stay unknown
(as in a first `pulumi preview`).

One engine, two uses: `blueprint preview` sends the recording to the policy pack, and the local
sandbox realizes it in an AWS emulator. Tests of the components use it too.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import os
import runpy
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Callable, Optional, Union

import pulumi
import yaml
from google.protobuf import struct_pb2
from pulumi.output import _OutputData
from pulumi.runtime import mocks, rpc
from pulumi.runtime import resource as pulumi_resource
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.config import set_all_config
from pulumi.runtime.proto import resource_pb2, source_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

PLACEHOLDER_ACCOUNT = "123456789012"
DEFAULT_REGION = "us-east-1"
# The wire value Pulumi uses for "not known until apply" (pulumi.runtime.rpc.UNKNOWN).
UNKNOWN = rpc.UNKNOWN


class ProgramError(Exception):
    """The program, its project file or its stack config could not be run."""


@dataclass
class RecordedResource:
    urn: str
    type: str
    name: str
    custom: bool
    parent: str
    inputs: dict
    raw_inputs: struct_pb2.Struct  # the inputs exactly as the SDK serialized them (unknowns included)
    dependencies: list[str]
    property_dependencies: dict[str, list[str]]
    id: str = ""
    outputs: dict = field(default_factory=dict)
    provider: str = ""
    source_file: str = ""  # absolute path of the user's file that declared the resource
    source_line: int = 0


@dataclass
class RecordedStack:
    project: str
    stack: str
    program_dir: Optional[Path]
    config: dict[str, str]
    unknowns: bool
    resources: list[RecordedResource]

    def of_type(self, type_token: str) -> list[RecordedResource]:
        return [r for r in self.resources if r.type == type_token]

    def by_urn(self) -> dict[str, RecordedResource]:
        return {r.urn: r for r in self.resources}

    def children_of(self, urn: str) -> list[RecordedResource]:
        return [r for r in self.resources if r.parent == urn]

    def within(self, component_urns: set[str]) -> "RecordedStack":
        """Only the given components and everything under them."""
        parents = {r.urn: r.parent for r in self.resources}

        def inside(urn: str) -> bool:
            while urn:
                if urn in component_urns:
                    return True
                urn = parents.get(urn, "")
            return False

        kept = [r for r in self.resources if inside(r.urn)]
        return RecordedStack(self.project, self.stack, self.program_dir, self.config, self.unknowns, kept)

    def named(self, name: str) -> RecordedResource:
        matches = [r for r in self.resources if r.name == name]
        if len(matches) != 1:
            raise KeyError(f"{len(matches)} resources named {name!r}")
        return matches[0]


# ---- placeholder outputs -------------------------------------------------------------------------

def _physical_name(name: str, urn: str, inputs: dict, max_len: int = 80) -> str:
    """Pulumi's auto-naming: the logical name plus a random suffix (here a stable hash)."""
    if inputs.get("name"):
        return inputs["name"]
    suffix = hashlib.sha256(urn.encode()).hexdigest()[:7]
    base = f"{name}-{suffix}"
    return base[:max_len]


def placeholder_outputs(type_token: str, name: str, urn: str, inputs: dict,
                        region: str) -> tuple[str, dict]:
    """(id, outputs) for a resource, shaped like what AWS returns after `pulumi up`."""
    acct = PLACEHOLDER_ACCOUNT
    out = dict(inputs)
    physical = _physical_name(name, urn, inputs)
    if type_token == "aws:sqs/queue:Queue":
        if inputs.get("fifoQueue") and not physical.endswith(".fifo"):
            physical = f"{physical[:75]}.fifo"
        url = f"https://sqs.{region}.amazonaws.com/{acct}/{physical}"
        out.update(name=physical, arn=f"arn:aws:sqs:{region}:{acct}:{physical}", url=url)
        return url, out
    arn_formats = {
        "aws:lambda/function:Function": "arn:aws:lambda:{r}:{a}:function:{n}",
        "aws:iam/role:Role": "arn:aws:iam::{a}:role/{n}",
        "aws:iam/policy:Policy": "arn:aws:iam::{a}:policy/{n}",
        "aws:dynamodb/table:Table": "arn:aws:dynamodb:{r}:{a}:table/{n}",
        "aws:kinesis/stream:Stream": "arn:aws:kinesis:{r}:{a}:stream/{n}",
        "aws:kinesis/streamConsumer:StreamConsumer": "arn:aws:kinesis:{r}:{a}:stream/consumer/{n}:1",
        "aws:sfn/stateMachine:StateMachine": "arn:aws:states:{r}:{a}:stateMachine:{n}",
        "aws:cloudwatch/logGroup:LogGroup": "arn:aws:logs:{r}:{a}:log-group:{n}",
        "aws:cloudwatch/metricAlarm:MetricAlarm": "arn:aws:cloudwatch:{r}:{a}:alarm:{n}",
        "aws:scheduler/schedule:Schedule": "arn:aws:scheduler:{r}:{a}:schedule/default/{n}",
        "aws:sns/topic:Topic": "arn:aws:sns:{r}:{a}:{n}",
        "aws:s3/bucket:Bucket": "arn:aws:s3:::{n}",
        "aws:s3/bucketV2:BucketV2": "arn:aws:s3:::{n}",
        "aws:kms/key:Key": "arn:aws:kms:{r}:{a}:key/{n}",
        "aws:lambda/eventSourceMapping:EventSourceMapping": "arn:aws:lambda:{r}:{a}:event-source-mapping:{n}",
    }
    if type_token == "aws:kms/key:Key":
        physical = hashlib.sha256(urn.encode()).hexdigest()[:36]
    fmt = arn_formats.get(type_token)
    if fmt is not None:
        out.setdefault("name", physical)
        out["arn"] = fmt.format(r=region, a=acct, n=physical)
    if type_token == "aws:lambda/function:Function":
        out["invokeArn"] = (f"arn:aws:apigateway:{region}:lambda:path/2015-03-31/functions/"
                            f"{out['arn']}/invocations")
        out["qualifiedArn"] = f"{out['arn']}:$LATEST"
    if type_token == "aws:lambda/alias:Alias":
        # An alias's ARN is its function's ARN qualified by the alias name, so a mapping or a
        # permission that names `alias.arn` still links to the function.
        function = str(inputs.get("functionName") or physical)
        function_arn = function if function.startswith("arn:") else f"arn:aws:lambda:{region}:{acct}:function:{function}"
        out["arn"] = f"{function_arn}:{inputs.get('name') or physical}"
        out["invokeArn"] = f"arn:aws:apigateway:{region}:lambda:path/2015-03-31/functions/{out['arn']}/invocations"
    if type_token == "aws:kms/key:Key":
        out["keyId"] = physical
    if type_token in ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2"):
        out["bucket"] = inputs.get("bucket") or physical
        out["arn"] = f"arn:aws:s3:::{out['bucket']}"
        physical = out["bucket"]
    if type_token == "aws:dynamodb/table:Table":
        out["streamArn"] = f"{out['arn']}/stream/1970-01-01T00:00:00.000"
    if type_token == "aws:lambda/eventSourceMapping:EventSourceMapping":
        out["uuid"] = hashlib.sha256(urn.encode()).hexdigest()[:32]
        physical = out["uuid"]
    return physical, out


class _Mocks(mocks.Mocks):
    def __init__(self, region: str, unknowns: bool):
        self.region = region
        self.unknowns = unknowns

    def outputs(self, type_token: str, name: str, urn: str, custom: bool, inputs: dict) -> tuple[str, dict]:
        """(id, outputs) of a resource: placeholders after `pulumi up`; in a first preview (and
        for components) the inputs alone, everything the provider computes left unknown."""
        if not custom or self.unknowns:
            return "", dict(inputs)
        return placeholder_outputs(type_token, name, urn, inputs, self.region)

    def new_resource(self, args: mocks.MockResourceArgs):
        # Only read resources (`Resource.get`) come here; registrations go through the monitor,
        # which knows the URN. A read resource has no parent, so its URN is its type and name.
        urn = _urn("", args.typ, args.name)
        return self.outputs(args.typ, args.name, urn, True, args.inputs)

    def call(self, args: mocks.MockCallArgs):
        token = args.token
        if token == "aws:index/getRegion:getRegion":
            return {"name": self.region, "region": self.region, "id": self.region,
                    "description": self.region, "endpoint": f"ec2.{self.region}.amazonaws.com"}
        if token == "aws:index/getCallerIdentity:getCallerIdentity":
            return {"accountId": PLACEHOLDER_ACCOUNT, "id": PLACEHOLDER_ACCOUNT,
                    "arn": f"arn:aws:iam::{PLACEHOLDER_ACCOUNT}:user/preview", "userId": "PREVIEW"}
        if token == "aws:index/getPartition:getPartition":
            return {"partition": "aws", "id": "aws", "dnsSuffix": "amazonaws.com",
                    "reverseDnsPrefix": "com.amazonaws"}
        if token == "aws:iam/getPolicyDocument:getPolicyDocument":
            return policy_document_result(args.args)
        return {}


def policy_document_result(args: dict) -> dict:
    """aws.iam.get_policy_document as the provider computes it (it is evaluated locally, never by
    AWS): the document as `json` (2-space indented) and `minifiedJson`. Lists of one collapse to a
    string and actions/resources are sorted, as the provider writes them; source documents come
    first, statements with the same Sid are replaced by later ones, override documents last."""
    import json

    def field(value: dict, camel: str):
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
        return value.get(camel, value.get(snake))

    def one_or_many(values) -> Any:
        values = sorted(set(values or []))
        return values[0] if len(values) == 1 else values

    def principals(entries) -> Any:
        found: dict[str, list] = {}
        for entry in entries or []:
            found.setdefault(field(entry, "type"), []).extend(field(entry, "identifiers") or [])
        if list(found) == ["*"]:
            return "*"
        return {kind: one_or_many(ids) for kind, ids in found.items()}

    def statement(raw: dict) -> dict:
        out: dict[str, Any] = {}
        if field(raw, "sid"):
            out["Sid"] = field(raw, "sid")
        out["Effect"] = field(raw, "effect") or "Allow"
        for camel, key in (("actions", "Action"), ("notActions", "NotAction"),
                           ("resources", "Resource"), ("notResources", "NotResource")):
            if field(raw, camel):
                out[key] = one_or_many(field(raw, camel))
        for camel, key in (("principals", "Principal"), ("notPrincipals", "NotPrincipal")):
            if field(raw, camel):
                out[key] = principals(field(raw, camel))
        conditions: dict[str, dict] = {}
        for condition in field(raw, "conditions") or []:
            values = field(condition, "values") or []
            conditions.setdefault(field(condition, "test"), {})[field(condition, "variable")] = (
                values[0] if len(values) == 1 else list(values))
        if conditions:
            out["Condition"] = conditions
        return out

    def merge(into: list, statements: list) -> None:
        for item in statements:
            sid = item.get("Sid")
            same = [i for i, existing in enumerate(into) if sid and existing.get("Sid") == sid]
            if same:
                into[same[0]] = item
            else:
                into.append(item)

    merged: list = []
    for source in field(args, "sourcePolicyDocuments") or []:
        merge(merged, json.loads(source).get("Statement", []))
    merge(merged, [statement(raw) for raw in field(args, "statements") or []])
    for override in field(args, "overridePolicyDocuments") or []:
        merge(merged, json.loads(override).get("Statement", []))
    document: dict[str, Any] = {"Version": field(args, "version") or "2012-10-17"}
    if field(args, "policyId"):
        document["Id"] = field(args, "policyId")
    document["Statement"] = merged
    pretty = json.dumps(document, indent=2)
    return {"id": hashlib.sha256(pretty.encode()).hexdigest()[:10], "json": pretty,
            "minifiedJson": json.dumps(document, separators=(",", ":")), "version": document["Version"],
            "statements": field(args, "statements") or []}


ROOT_STACK_TYPE = "pulumi:pulumi:Stack"


def _urn(parent: str, type_token: str, name: str, *, stack: Optional[str] = None, project: Optional[str] = None) -> str:
    """The URN the Pulumi engine gives a resource: `urn:pulumi:<stack>::<project>::<type>::<name>`,
    where a child's type is prefixed by its parent's whole type chain (`parent$child`) and the
    root Stack is not part of any chain (pulumi/pulumi sdk/go/common/resource/urn.go, NewURN).
    The SDK's MockMonitor chains only the parent's last type and keeps the Stack in it."""
    if parent:
        parent_type = parent.split("::")[2]
        if parent_type != ROOT_STACK_TYPE:
            type_token = f"{parent_type}${type_token}"
    return f"urn:pulumi:{stack or pulumi.get_stack()}::{project or pulumi.get_project()}::{type_token}::{name}"


class _RecordingMonitor(mocks.MockMonitor):
    """The mock engine's resource monitor, recording every registration.

    RegisterResource and Invoke are answered here rather than by MockMonitor: the URN is the real
    engine's, each registration's inputs are deserialized once (MockMonitor deserializes them and
    serializes the outputs back through a nested event loop), and the outputs sent back to the
    program are the inputs exactly as the program serialized them (unknowns stay unknown, as in
    the engine's preview) plus the placeholder fields."""

    def __init__(self, mocks_: _Mocks, on_resource: Optional[Callable[[RecordedResource], None]] = None):
        super().__init__(mocks_)
        self.placeholders = mocks_
        self.recorded: list[RecordedResource] = []
        self.on_resource = on_resource

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        return _urn(parent, type_, name)

    def RegisterResource(self, request):
        urn = self.make_urn(request.parent, request.type, request.name)
        if request.type == ROOT_STACK_TYPE:
            return resource_pb2.RegisterResourceResponse(urn=urn)
        inputs = _plain(rpc.deserialize_properties(request.object, keep_unknowns=True))
        # What MockMonitor hands its mocks: after `pulumi up` nothing is unknown (the SDK drops such
        # values), in a first preview the unknowns are kept.
        known = inputs if self.placeholders.unknowns else _without_unknowns(inputs)
        id_, outputs = self.placeholders.outputs(request.type, request.name, urn, bool(request.custom), known)
        response_object = struct_pb2.Struct()
        response_object.CopyFrom(request.object)
        for key, value in outputs.items():
            if value is not known.get(key):  # what the placeholders added to the inputs
                response_object[key] = value
        self.resources[urn] = mocks.MockMonitor.ResourceRegistration(urn, id_, outputs)
        raw = struct_pb2.Struct()
        raw.CopyFrom(request.object)
        self.recorded.append(RecordedResource(
            urn=urn,
            type=request.type,
            name=request.name,
            custom=bool(request.custom),
            parent=request.parent,
            inputs=inputs,
            raw_inputs=raw,
            dependencies=list(request.dependencies),
            property_dependencies={k: list(v.urns) for k, v in request.propertyDependencies.items()},
            id=id_,
            outputs=outputs,
            provider=request.provider,
        ))
        if self.on_resource is not None:
            self.on_resource(self.recorded[-1])
        return resource_pb2.RegisterResourceResponse(urn=urn, id=id_, object=response_object)

    def Invoke(self, request):
        if request.tok == "pulumi:pulumi:getResource":
            return super().Invoke(request)
        args = rpc.deserialize_properties(request.args)
        result = self.mocks.call(mocks.MockCallArgs(token=request.tok, args=args, provider=request.provider))
        returned = struct_pb2.Struct()
        returned.update(result)  # the mocks answer plain JSON values
        return resource_pb2.ResourceInvokeResponse(failures=None, **{"return": returned})


def _without_unknowns(value: Any) -> Any:
    """Inputs as the SDK deserializes them outside a preview: a property not known until apply is
    absent (an unknown list item is None)."""
    if isinstance(value, dict):
        return {k: _without_unknowns(v) for k, v in value.items() if v != UNKNOWN}
    if isinstance(value, list):
        return [_without_unknowns(v) for v in value]
    return None if value == UNKNOWN else value


def _plain(value: Any) -> Any:
    """Deserialized properties with Pulumi's sentinels replaced by plain markers."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is rpc.UNKNOWN or type(value).__name__ == "Unknown":
        return UNKNOWN
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the wire format has only doubles; whole numbers were ints in the program
    if isinstance(value, (pulumi.Asset, pulumi.Archive)):
        return _plain_asset(value)
    return value


def _plain_asset(value: Any) -> dict:
    """An asset or archive as its kind and where its content comes from (for an AssetArchive, each
    member's path in the archive), so a check can see what a Lambda archive would hold."""
    plain: dict[str, Any] = {"archive" if isinstance(value, pulumi.Archive) else "asset": type(value).__name__}
    if isinstance(value, pulumi.AssetArchive):
        plain["assets"] = {name: _plain_asset(member) for name, member in sorted(value.assets.items())}
    for attribute in ("path", "uri"):
        if isinstance(getattr(value, attribute, None), str):
            plain[attribute] = getattr(value, attribute)
    return plain


# ---- config ----------------------------------------------------------------------------------

def load_project(program_dir: Path) -> dict:
    path = program_dir / "Pulumi.yaml"
    if not path.exists():
        path = program_dir / "Pulumi.yml"
    if not path.exists():
        raise ProgramError(f"{program_dir} has no Pulumi.yaml; point --program at a Pulumi project")
    try:
        project = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ProgramError(f"{path} is not valid YAML: {exc}") from exc
    if not project.get("name"):
        raise ProgramError(f"{path} has no 'name'")
    return project


def stack_config_path(program_dir: Path, stack: str) -> Path:
    project = load_project(program_dir)
    return program_dir / project.get("stackConfigDir", ".") / f"Pulumi.{stack}.yaml"


def stack_names(program_dir: Path) -> list[str]:
    """The stacks that have a config file in the project's stack config folder."""
    folder = stack_config_path(program_dir, "_").parent
    return sorted(path.name[len("Pulumi."):-len(".yaml")] for path in folder.glob("Pulumi.*.yaml"))


def load_stack_config(program_dir: Path, stack: str) -> dict[str, str]:
    """The stack's config as the engine passes it to a program: `namespace:key` -> string
    (objects and lists JSON-encoded).

    A project without any stack file runs with empty config. In a project that has stack files,
    a stack without one is unknown (a typo in a CI matrix must not pass the gate on empty config)."""
    import json

    project = load_project(program_dir)
    path = stack_config_path(program_dir, stack)
    if not path.exists():
        known = stack_names(program_dir)
        if known:
            raise ProgramError(f"no stack {stack!r}: {path} does not exist; the project's stacks are "
                               f"{', '.join(known)} (create {path.name} to add one)")
        return {}
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ProgramError(f"{path} is not valid YAML: {exc}") from exc
    raw = doc.get("config") or {}
    if not isinstance(raw, dict):
        raise ProgramError(f"{path}: 'config' must be a mapping of keys to values")
    config = {}
    for key, value in raw.items():
        full = key if ":" in key else f"{project['name']}:{key}"
        if isinstance(value, dict) and "secure" in value:
            raise ProgramError(f"{path}: {key} is a secret; offline runs cannot decrypt secrets, "
                               "give a plain placeholder value in a separate stack file")
        config[full] = value if isinstance(value, str) else json.dumps(value)
    return config


# ---- running ---------------------------------------------------------------------------------

class _InlineExecutor(ThreadPoolExecutor):
    """The event loop's default executor while a program is recorded: a submitted call runs at
    once on the loop's thread.

    The SDK hands every monitor call (RegisterResource, Invoke, ...) to `run_in_executor` because a
    real engine answers over gRPC. The recording monitor answers in microseconds, so the hand-off
    to a worker thread cost more than the call (a third of the SDK's time per resource), and
    concurrent calls registered resources in whatever order the threads ran: resource order
    changed from run to run. Inline, registrations happen in the order the program's tasks reach
    them, the same every run. (A ThreadPoolExecutor subclass because set_default_executor accepts
    nothing else; it never starts a thread.)"""

    def submit(self, fn, /, *args, **kwargs):
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - the caller awaits the future and sees it
            future.set_exception(exc)
        return future


_FILE_URIS: dict[str, Optional[str]] = {}


def _file_uri(filename: str) -> Optional[str]:
    if filename not in _FILE_URIS:
        try:
            _FILE_URIS[filename] = Path(filename).as_uri() if filename else None
        except ValueError:
            _FILE_URIS[filename] = None
    return _FILE_URIS[filename]


def _stack_trace() -> source_pb2.StackTrace:
    """pulumi.runtime.resource._get_stack_trace without traceback.extract_stack: the same frames
    (those outside the third `__init__` from the top, innermost first) with the same file URI and
    line, read from the frame objects instead of building a FrameSummary, with its source line
    looked up, for every frame of the stack on every resource."""
    frame: Optional[FrameType] = sys._getframe(1)
    inits = 0
    while frame is not None and inits < 3:
        if frame.f_code.co_name == "__init__":
            inits += 1
        frame = frame.f_back
    if inits < 3 or frame is None:
        return source_pb2.StackTrace()
    frames = []
    while frame is not None:
        uri = _file_uri(frame.f_code.co_filename)
        position = source_pb2.SourcePosition(uri=uri, line=frame.f_lineno) if uri else None
        frames.append(source_pb2.StackFrame(pc=position))
        frame = frame.f_back
    return source_pb2.StackTrace(frames=frames)


class _OutputResolver:
    """Settles one output property's future: what _transfer_properties hands the SDK as the
    property's resolver. (An object with slots: a closure was three objects per property for the
    garbage collector to scan, a closure, its defaults and its cells.)"""

    __slots__ = ("resource", "data")

    def __init__(self, resource, data: asyncio.Future):
        self.resource, self.data = resource, data

    def __call__(self, value, is_known: bool, is_secret: bool, deps, failed: Optional[Exception]) -> None:
        data = self.data
        if failed is not None:
            data.get_loop().call_soon(data.set_exception, failed)
            return
        resources = set(deps) if deps else set()
        resources.add(self.resource)
        data.get_loop().call_soon(data.set_result, _OutputData(
            resources=resources, value=value, is_known=is_known, is_secret=is_secret))


def _transfer_properties(res, props, custom: bool) -> dict[str, Callable]:
    """pulumi.runtime.rpc.transfer_properties with one future per output property.

    The SDK (3.272) gives each output property of a resource (30-odd per resource) four futures
    (value, known, secret, dependencies) and an Output whose task awaits them, though the resolver
    always settles all four at once, and tracks every Output in SETTINGS.outputs (a lock, a set and
    a done callback): a third of the recording's time. Here the resolver settles one future with
    the _OutputData that task would have built, as the SDK's own resource_output does for `urn`
    and `id`, with two more differences that change nothing a program sees:
    - it settles the future one loop turn later (call_soon), when the task would have woken up,
      so whatever awaits the output runs in the same order and resources register in the same
      order as under the SDK alone;
    - the Output is not tracked: the SDK tracks outputs so that the program's end waits for those
      still pending, and these resolve with their resource's registration, which the end of the
      program waits for anyway (and which raises the registration's error, if any)."""
    resolvers: dict[str, Callable] = {}
    for name in props:
        if name == "urn" or (name == "id" and custom):
            continue  # register_resource resolves these itself
        data: asyncio.Future = asyncio.Future()
        resolvers[name] = _OutputResolver(res, data)
        output = object.__new__(pulumi.Output)  # Output._from_data without _track
        output._data = data
        res.__dict__[name] = output
    return resolvers


_sdk_serialize_properties = rpc.serialize_properties


async def _serialize_properties(inputs, property_deps, *args, **kwargs):
    """pulumi.runtime.rpc.serialize_properties without the properties that are None.

    The SDK (3.272) serializes every argument a resource class declares, though most are None
    (25 of a Function's 35), each through serialize_property's type unwrapping and checks, and
    then leaves out each property that serialized to None (from the struct and from the property
    dependencies). Leaving them out first gives the same struct and dependencies."""
    present = {key: inputs[key] for key in inputs if inputs[key] is not None}
    return await _sdk_serialize_properties(present, property_deps, *args, **kwargs)


_sdk_contains_unknowns = rpc.contains_unknowns
_SCALARS = frozenset({type(None), str, int, float, bool})


def _contains_unknowns(value: Any) -> bool:
    """pulumi.runtime.rpc.contains_unknowns answering False at once for a scalar.

    The SDK (3.272) asks it of every output's value as the output resolves (_OutputData's
    __post_init__), mostly None or a string, each time through a new closure and set of seen ids
    to find no Unknown (an instance of pulumi.output.Unknown, never a plain scalar)."""
    if type(value) in _SCALARS:
        return False
    return _sdk_contains_unknowns(value)


@contextmanager
def _collector_paused():
    """No garbage collection while a program is recorded; what it built goes to the oldest
    generation when the recording ends.

    The SDK allocates a few hundred container objects per resource (outputs, futures, closures)
    and keeps nearly all of them until the program ends (each registration's task holds its
    resource). Collecting them young found almost nothing to free: with the collector running
    every 50,000 objects, a 4,000-resource recording freed under 40,000 of 2 million and spent an
    eighth of its CPU scanning them, each twice (young, then middle-aged), more per object the
    larger the recording. Paused, nothing is scanned while recording; at the end gc.freeze() and
    gc.unfreeze() move every tracked object into the oldest generation without scanning it, where
    the next full collection looks at it once (garbage the recording made is freed then). When
    something else has frozen objects (a fork server keeping pages shared), unfreezing would
    release them too: then the young objects are collected as usual instead."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()


@contextmanager
def _engine_shortcuts():
    """Work around the costs of the Pulumi Python SDK (3.272) under the mock engine, for the
    length of one recording: monitor calls run inline (_InlineExecutor), the per-resource stack
    trace skips source-line lookups (_stack_trace), output properties take one future each
    (_transfer_properties), properties that are None are not serialized (_serialize_properties),
    a scalar is seen at once to hold no unknowns (_contains_unknowns) and the garbage collector
    pauses (_collector_paused). The program and what it registers are unchanged
    (tests/test_recording.py records with and without them)."""
    loop = _ensure_event_loop()
    previous_executor = getattr(loop, "_default_executor", None)
    replaced = [(pulumi_resource, "_get_stack_trace", _stack_trace),
                (rpc, "transfer_properties", _transfer_properties),
                (rpc, "serialize_properties", _serialize_properties),
                (rpc, "contains_unknowns", _contains_unknowns)]
    previous = [(module, name, getattr(module, name)) for module, name, _ in replaced]
    loop.set_default_executor(_InlineExecutor())
    for module, name, replacement in replaced:
        setattr(module, name, replacement)
    try:
        with _collector_paused():
            yield
    finally:
        for module, name, value in previous:
            setattr(module, name, value)
        loop._default_executor = previous_executor  # set_default_executor refuses None


@contextmanager
def _program_environment(program_dir: Optional[Path]):
    if program_dir is None:
        yield
        return
    old_cwd, old_path, old_modules = os.getcwd(), list(sys.path), set(sys.modules)
    os.chdir(program_dir)
    sys.path.insert(0, str(program_dir))
    try:
        yield
    finally:
        os.chdir(old_cwd)
        sys.path[:] = old_path
        # Modules the program imported from its own folder (a team's `components/`, say) belong to
        # that program: the next program recorded in this process imports its own.
        for name in set(sys.modules) - old_modules:
            top = name.partition(".")[0]
            if (program_dir / top).is_dir() or (program_dir / f"{top}.py").is_file():
                del sys.modules[name]


def record_program(program: Union[Path, str, Callable[[], Any]], *, stack: str = "dev",
                   config: Optional[dict[str, str]] = None, project: Optional[str] = None,
                   unknowns: bool = False,
                   on_resource: Optional[Callable[[RecordedResource], None]] = None) -> RecordedStack:
    """Run `program` (a Pulumi project directory, or a callable that declares resources) and
    return every resource it registered (each also handed to `on_resource` as it registers).

    For a directory, the project name and stack config come from its Pulumi.yaml and stack file
    unless `config` is given."""
    program_dir: Optional[Path] = None
    if callable(program):
        body = program
        project = project or "blueprint"
    else:
        program_dir = Path(program).resolve()
        manifest = load_project(program_dir)
        project = project or manifest["name"]
        if config is None:
            config = load_stack_config(program_dir, stack)
        main = program_dir / (manifest.get("main") or "__main__.py")
        if main.is_dir():
            main = main / "__main__.py"
        if not main.exists():
            raise ProgramError(f"{program_dir} has no {main.name}; a Python Pulumi program needs one")

        def body():
            runpy.run_path(str(main), run_name="__main__")

    config = dict(config or {})
    region = config.get("aws:region") or DEFAULT_REGION
    the_mocks = _Mocks(region=region, unknowns=unknowns)
    monitor = _RecordingMonitor(the_mocks, on_resource)

    pulumi_settings.ROOT.set(None)
    set_all_config(config)
    mocks.set_mocks(the_mocks, project=project, stack=stack, preview=unknowns, monitor=monitor)
    pulumi_settings.SETTINGS.rpc_manager.clear()
    pulumi_settings.SETTINGS.outputs.clear()
    try:
        with _program_environment(program_dir), _engine_shortcuts():
            _sync_await(run_pulumi_func(body))
    except SyntaxError as exc:
        # The traceback of a SyntaxError runs through runpy and asyncio, never through the user's
        # file: the error itself says where it is.
        where = f" (at {exc.filename}:{exc.lineno})" if exc.filename else ""
        raise ProgramError(f"SyntaxError: {exc.msg}{where}") from None
    except pulumi.RunError as exc:
        raise ProgramError(str(exc)) from exc
    except ProgramError:
        raise
    except Exception as exc:
        raise ProgramError(f"{type(exc).__name__}: {exc}") from exc
    finally:
        set_all_config({})
    return RecordedStack(project=project, stack=stack, program_dir=program_dir, config=config,
                         unknowns=unknowns, resources=monitor.recorded)

