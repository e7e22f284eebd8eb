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

import hashlib
import os
import runpy
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Union

import pulumi
import yaml
from google.protobuf import struct_pb2
from pulumi.runtime import mocks, rpc
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.config import set_all_config
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

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
        self.current_urn = ""

    def new_resource(self, args: mocks.MockResourceArgs):
        if not args.custom:
            return "", dict(args.inputs)  # components have no id or provider outputs
        if self.unknowns:
            # A first preview knows only the inputs; everything the provider computes is unknown.
            return "", dict(args.inputs)
        return placeholder_outputs(args.typ, args.name, self.current_urn, args.inputs, self.region)

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


class _RecordingMonitor(mocks.MockMonitor):
    def __init__(self, mocks_: _Mocks):
        super().__init__(mocks_)
        self.recorded: list[RecordedResource] = []
        # The SDK registers resources from several threads; the mocks name a resource's outputs
        # from `current_urn`, so one registration at a time keeps each name its own resource's.
        self._registering = threading.Lock()

    def RegisterResource(self, request):
        urn = self.make_urn(request.parent, request.type, request.name)
        with self._registering:
            self.mocks.current_urn = urn
            response = super().RegisterResource(request)
        if request.type == "pulumi:pulumi:Stack":
            return response
        raw = struct_pb2.Struct()
        raw.CopyFrom(request.object)
        registration = self.resources.get(urn)
        self.recorded.append(RecordedResource(
            urn=urn,
            type=request.type,
            name=request.name,
            custom=bool(request.custom),
            parent=request.parent,
            inputs=_plain(rpc.deserialize_properties(request.object, keep_unknowns=True)),
            raw_inputs=raw,
            dependencies=list(request.dependencies),
            property_dependencies={k: list(v.urns) for k, v in request.propertyDependencies.items()},
            id=registration.id if registration else "",
            outputs=_plain(registration.state) if registration else {},
            provider=request.provider,
        ))
        return response


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


def load_stack_config(program_dir: Path, stack: str) -> dict[str, str]:
    """The stack's config as the engine passes it to a program: `namespace:key` -> string
    (objects and lists JSON-encoded). A stack with no file has empty config."""
    import json

    project = load_project(program_dir)
    path = stack_config_path(program_dir, stack)
    if not path.exists():
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
                   unknowns: bool = False) -> RecordedStack:
    """Run `program` (a Pulumi project directory, or a callable that declares resources) and
    return every resource it registered.

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
    monitor = _RecordingMonitor(the_mocks)

    pulumi_settings.ROOT.set(None)
    set_all_config(config)
    mocks.set_mocks(the_mocks, project=project, stack=stack, preview=unknowns, monitor=monitor)
    pulumi_settings.SETTINGS.rpc_manager.clear()
    pulumi_settings.SETTINGS.outputs.clear()
    try:
        with _program_environment(program_dir):
            _sync_await(run_pulumi_func(body))
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

