"""The engine's gRPC services as a program (and a component plugin) calls them: ResourceMonitor and
Engine, each method answered by the offline engine's resource registry (engine.OfflineEngine), and the
same services called in-process, with the same protobuf requests and responses and no socket (a
callable program the tests and benchmarks record).

A failure of the engine itself is recorded with its traceback and reported as the tool's own, and
so is a value nested deeper than the gate reads (conventions.DEEPEST_JUDGED_NESTING, named with
the resource); an answer the program must see as its own error (a component's refusal, an archive
the engine cannot read) is the gRPC error the real engine would give it, at the program's line.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any, Optional

import grpc
from google.protobuf import empty_pb2, struct_pb2

from integration_blueprint.core.conventions import DEEPEST_JUDGED_NESTING
from integration_blueprint.preview import wire
from integration_blueprint.preview.provider import sdk
from integration_blueprint.preview.pulumi_protos import engine_pb2, engine_pb2_grpc, provider_pb2, resource_pb2, resource_pb2_grpc

# The registry the services answer from: engine.OfflineEngine, which builds them (typed loosely, so
# this module does not import the one that imports it).
Registry = Any

# The engine reads a value recursively: wire.from_struct spends two frames per level of nesting, the
# rest (downgrade, plain, to_struct, redaction) one or two.
ENGINE_FRAMES_PER_LEVEL = 3

# What this engine supports, as the SDK asks for it (GetDeploymentInfo; SupportsFeature's legacy
# names for older SDKs). Transforms call back into the program (callbacks.py); hooks are
# registered and, as in any preview, not run around steps that are not executed.
_FEATURES = [resource_pb2.RESOURCE_MONITOR_FEATURE_SECRETS,
             resource_pb2.RESOURCE_MONITOR_FEATURE_RESOURCE_REFERENCES,
             resource_pb2.RESOURCE_MONITOR_FEATURE_OUTPUT_VALUES,
             resource_pb2.RESOURCE_MONITOR_FEATURE_ALIAS_SPECS,
             resource_pb2.RESOURCE_MONITOR_FEATURE_DELETED_WITH,
             resource_pb2.RESOURCE_MONITOR_FEATURE_REPLACE_WITH,
             resource_pb2.RESOURCE_MONITOR_FEATURE_TRANSFORMS,
             resource_pb2.RESOURCE_MONITOR_FEATURE_INVOKE_TRANSFORMS,
             resource_pb2.RESOURCE_MONITOR_FEATURE_RESOURCE_HOOKS,
             resource_pb2.RESOURCE_MONITOR_FEATURE_ERROR_HOOKS,
             resource_pb2.RESOURCE_MONITOR_FEATURE_INVOKE_DEPENDS_ON,
             resource_pb2.RESOURCE_MONITOR_FEATURE_INVOKE_PARENT]
_LEGACY_FEATURES = {"secrets", "resourceReferences", "outputValues", "aliasSpecs", "deletedWith", "replaceWith",
                    "transforms", "invokeTransforms", "resourceHooks", "errorHooks"}


class ProgramFacingError(Exception):
    """An answer the program must see as its own error (a component's refusal), not ours."""


class RunEndingError(ProgramFacingError):
    """A program-facing error that ends the run, as the Pulumi engine ends a deployment at a resource
    it could not register (an archive it could not read): the program is stopped once it is told,
    not left to fail every resource that depends on this one (the Node.js SDK re-throws the one
    error through each of them, its message growing each time: minutes and gigabytes)."""


def _answer(method):
    """Run a service method; a failure of the engine itself is recorded with its traceback (and
    reported as the tool's own failure), while the program sees the gRPC error the real engine
    would give it. A method that returns nothing answers google.protobuf.Empty (the rpcs that return
    nothing declare it)."""
    def answered(self, request, context):
        search_path = self.engine.sdk_search_path() if self.engine.sdk_search_path else None
        try:
            with sdk.searching(search_path):
                answer = method(self, request, context)
            return empty_pb2.Empty() if answer is None else answer
        except (RecursionError, wire.TooDeep):
            # A value deeper than the engine reads: the gate's limit, not the program's error.
            _too_deep(self.engine, request, method.__name__)
            context.abort(grpc.StatusCode.INTERNAL, f"offline engine failure in {method.__name__}: {self.engine.failures[-1]}")
        except ProgramFacingError as exc:
            return _answer_program(self, request, context, exc)
        except Exception as exc:  # noqa: BLE001 - reported as the engine's own failure
            if not self.engine.failures:
                self.engine.failure_part = getattr(exc, "part", "")
            self.engine.failures.append(f"{method.__name__}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
            context.abort(grpc.StatusCode.INTERNAL, f"offline engine failure in {method.__name__}: {exc}")
    answered.__name__ = method.__name__
    return answered


def _answer_program(service, request, context, exc: "ProgramFacingError"):
    where = service.engine._source(request) if hasattr(request, "stackTrace") else ("", 0)
    declared = f" (declared at {where[0]}:{where[1]})" if service.engine._is_program_file(where[0]) else ""
    if isinstance(exc, RunEndingError):
        service.engine.end_run(str(exc), *(where if declared else ("", 0)))
    context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"{exc}{declared}")


def read_deep_values() -> None:
    """Python's recursion limit raised (never lowered) so that the engine reads a value nested as
    deep as the gate judges (conventions.DEEPEST_JUDGED_NESTING; Python's default of 1,000 frames
    stopped it near 400 levels, which the Pulumi engine reads). Protobuf's own parser stops at 100
    levels unless oversize messages are allowed: the Pulumi SDK allows them when it is imported
    (pulumi/runtime/rpc.py), and the gate, which reads the SDK's protocol modules without importing it
    (preview/pulumi_protos.py), allows them the same way, or a deep request fails to deserialize."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), DEEPEST_JUDGED_NESTING * ENGINE_FRAMES_PER_LEVEL + 2_000))
    from google.protobuf.pyext import cpp_message

    if cpp_message._message is not None:
        cpp_message._message.SetAllowOversizeProtos(True)


def _too_deep(engine: Registry, request, method: str) -> None:
    """A value the engine did not read: deeper than the gate judges (its limit and the resource
    named), or else (Python's recursion limit within it) the engine's own bug, its traceback kept.
    Either way the gate's failure."""
    depth = max((wire.nesting(value) for _, value in request.ListFields() if isinstance(value, struct_pb2.Struct)),
                default=0)
    if depth <= DEEPEST_JUDGED_NESTING:
        engine.failures.append(f"{method}: RecursionError at {depth} levels of nesting\n{traceback.format_exc()}")
        return
    kind, name = getattr(request, "type", "") or getattr(request, "tok", ""), getattr(request, "name", "")
    what = f"{kind} {name!r}" if name else kind or getattr(request, "urn", "") or "a value"
    engine.failures.append(
        f"{method}: {what} holds a value nested {depth} levels deep; the offline preview reads values nested up to "
        f"{DEEPEST_JUDGED_NESTING} levels (the Pulumi engine reads about 5,000), so it cannot judge this program: "
        "judge it with `pulumi preview --policy-pack`, or pass the value as a JSON string")


class ResourceMonitorService(resource_pb2_grpc.ResourceMonitorServicer):
    def __init__(self, engine: Registry):
        self.engine = engine

    @_answer
    def GetDeploymentInfo(self, request, context):
        engine = self.engine
        return resource_pb2.DeploymentInfo(
            project=engine.project, stack=engine.stack, organization=engine.organization, dryRun=True,
            parallel=16, config=engine.config, configSecretKeys=engine.secret_keys, supportedFeatures=_FEATURES)

    @_answer
    def SupportsFeature(self, request, context):
        supported = request.id in _LEGACY_FEATURES
        return resource_pb2.SupportsFeatureResponse(hasSupport=supported)

    @_answer
    def RegisterResource(self, request, context):
        return self.engine.register(request)

    @_answer
    def RegisterResourceOutputs(self, request, context):
        self.engine.register_outputs(request)

    @_answer
    def Invoke(self, request, context):
        return self.engine.invoke(request)

    @_answer
    def ReadResource(self, request, context):
        return self.engine.read(request)

    @_answer
    def Call(self, request, context):
        failure = provider_pb2.CheckFailure(
            property="", reason=f"{request.tok} is a method of a provider or remote component, which the offline "
                                "preview cannot call (it needs the provider's plugin)")
        return provider_pb2.CallResponse(failures=[failure])

    @_answer
    def RegisterPackage(self, request, context):
        return resource_pb2.RegisterPackageResponse(ref=f"{request.name}@{request.version}")

    @_answer
    def SignalAndWaitForShutdown(self, request, context):
        # The program is done; its Callbacks service stops next: our channels to it close first
        # (a channel the service closes under it makes gRPC log a GOAWAY on our stderr).
        self.engine.callbacks.close()

    @_answer
    def RegisterStackTransform(self, request, context):
        self.engine.callbacks.add_stack_transform(request)

    @_answer
    def RegisterStackInvokeTransform(self, request, context):
        self.engine.callbacks.add_invoke_transform(request)

    @_answer
    def RegisterResourceHook(self, request, context):
        self.engine.callbacks.add_hook(request.name, request.on_dry_run)

    @_answer
    def RegisterErrorHook(self, request, context):
        self.engine.callbacks.add_hook(request.name, False)  # error hooks run only when a step fails


class EngineService(engine_pb2_grpc.EngineServicer):
    def __init__(self, engine: Registry):
        self.engine = engine

    @_answer
    def Log(self, request, context):
        self.engine.log(request)

    @_answer
    def GetRootResource(self, request, context):
        return engine_pb2.GetRootResourceResponse(urn=self.engine.root_urn)

    @_answer
    def SetRootResource(self, request, context):
        self.engine.root_urn = request.urn
        return engine_pb2.SetRootResourceResponse()

    @_answer
    def RequirePulumiVersion(self, request, context):
        return empty_pb2.Empty()  # any version the program asks for


class _InProcessRpcError(grpc.RpcError):
    """What a gRPC stub raises when the call fails: the SDK reads code() and details()."""

    def __init__(self, code: grpc.StatusCode, details: str):
        super().__init__(details)
        self._code, self._details = code, details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


class _InProcessContext:
    """The part of a gRPC servicer context the services use."""

    def __init__(self):
        self.code: Optional[grpc.StatusCode] = None
        self.details = ""

    def abort(self, code: grpc.StatusCode, details: str):
        raise _InProcessRpcError(code, details)

    def set_code(self, code: grpc.StatusCode) -> None:
        self.code = code

    def set_details(self, details: str) -> None:
        self.details = details


class InProcessStub:
    """A service called as its gRPC stub is (`stub.Method(request)`), within this process."""

    def __init__(self, service):
        self._service = service

    def __getattr__(self, name: str):
        method = getattr(self._service, name)

        def call(request, *args, **kwargs):
            context = _InProcessContext()
            try:
                return method(request, context)
            except NotImplementedError:
                # The generated servicer's default: the method is not served.
                raise _InProcessRpcError(context.code or grpc.StatusCode.UNIMPLEMENTED,
                                         context.details or f"{name} is not implemented") from None
        return call
