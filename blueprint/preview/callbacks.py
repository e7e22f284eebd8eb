"""Transforms: the engine calling back into the program, as Pulumi's engine does.

A program registers a transform (`pulumi.runtime.register_resource_transform`,
`ResourceOptions(transforms=[...])`, `register_invoke_transform`) by serving it on its own Callbacks
gRPC service and handing the engine a `Callback` (target address + token). Before it records a
resource, the engine runs the resource's own transforms, then its parents', then the stack's, each
over `Callbacks.Invoke` with a serialized TransformRequest, and continues with what the program
answered (pulumi/pulumi pkg/resource/deploy/source_eval.go: resmon.RegisterResource,
wrapTransformCallback, RegisterStackTransform; invoke transforms likewise before a data source).

Resource hooks (`ResourceOptions(hooks=...)`) are registered but not run: the engine runs them
around the create/update/delete steps of a deployment, which a preview does not execute, and the
few marked to run on dry runs are listed in the report as not run.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

import grpc
from google.protobuf import struct_pb2

from integration_blueprint.preview.pulumi_protos import callback_pb2, callback_pb2_grpc, resource_pb2

# A transform is the program's own code; one that hangs holds the preview, so it gets this long.
CALLBACK_TIMEOUT_SECONDS = 120


class CallbackFailed(Exception):
    """The program's transform raised (its message, as the program's Callbacks service gave it)."""


@dataclass(frozen=True)
class Registered:
    """A resource hook the program registered (run on dry runs or not)."""
    name: str
    on_dry_run: bool


class ProgramCallbacks:
    """The program's Callbacks services, one channel per target, called from the engine's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._channels: dict[str, grpc.Channel] = {}
        self.stack_transforms: list[callback_pb2.Callback] = []
        self.invoke_transforms: list[callback_pb2.Callback] = []
        self.resource_transforms: dict[str, list[callback_pb2.Callback]] = {}  # URN -> its own transforms
        self.hooks: list[Registered] = []
        # Where the engine dials a target the program names (a sandboxed program's loopback is reached
        # through a relay: loopback_relay.py); the target itself otherwise.
        self.reach: Callable[[str], str] = lambda target: target

    def close(self) -> None:
        with self._lock:
            for channel in self._channels.values():
                channel.close()
            self._channels.clear()

    def add_stack_transform(self, callback: callback_pb2.Callback) -> None:
        with self._lock:
            self.stack_transforms.append(callback)

    def add_invoke_transform(self, callback: callback_pb2.Callback) -> None:
        with self._lock:
            self.invoke_transforms.append(callback)

    def add_hook(self, name: str, on_dry_run: bool) -> None:
        with self._lock:
            self.hooks.append(Registered(name, on_dry_run))

    def _invoke(self, callback: callback_pb2.Callback, request: bytes) -> bytes:
        with self._lock:
            channel = self._channels.get(callback.target)
            if channel is None:
                channel = self._channels[callback.target] = grpc.insecure_channel(self.reach(callback.target))
        stub = callback_pb2_grpc.CallbacksStub(channel)
        try:
            answer = stub.Invoke(callback_pb2.CallbackInvokeRequest(token=callback.token, request=request),
                                 timeout=CALLBACK_TIMEOUT_SECONDS)
        except grpc.RpcError as exc:
            raise CallbackFailed(exc.details() or str(exc.code())) from None
        return answer.response

    def transform_resource(self, request, urn: str, parents: list[str]):
        """`request` (a RegisterResourceRequest) after the resource's own transforms, its parents'
        (`parents`: its ancestors' URNs, nearest first) and the stack's; the same request when none
        applies."""
        own = list(request.transforms)
        with self._lock:
            if own:
                self.resource_transforms[urn] = own
            chain = own + [t for parent in parents for t in self.resource_transforms.get(parent, [])]
            chain += self.stack_transforms
        if not chain:
            return request
        properties, options = request.object, _resource_options(request)
        for callback in chain:
            asked = resource_pb2.TransformRequest(type=request.type, name=request.name, custom=request.custom,
                                                  parent=request.parent, properties=properties, options=options)
            answer = resource_pb2.TransformResponse.FromString(self._invoke(callback, asked.SerializeToString()))
            if answer.HasField("properties"):
                properties = answer.properties
            if answer.HasField("options"):
                options = answer.options
        return _with_options(request, properties, options)

    def transform_invoke(self, request):
        """`request` (a ResourceInvokeRequest) after the stack's invoke transforms."""
        with self._lock:
            chain = list(self.invoke_transforms)
        if not chain:
            return request
        args = request.args
        options = resource_pb2.TransformInvokeOptions(provider=request.provider, version=request.version,
                                                      plugin_download_url=request.pluginDownloadURL)
        for callback in chain:
            asked = resource_pb2.TransformInvokeRequest(token=request.tok, args=args, options=options)
            answer = resource_pb2.TransformInvokeResponse.FromString(self._invoke(callback, asked.SerializeToString()))
            if answer.HasField("args"):
                args = answer.args
            if answer.HasField("options"):
                options = answer.options
        changed = resource_pb2.ResourceInvokeRequest()
        changed.CopyFrom(request)
        changed.args.CopyFrom(args)
        changed.provider = options.provider
        return changed

    def not_run_hooks(self) -> list[str]:
        """Hooks the program asked to run on previews, which this preview did not run."""
        return [hook.name for hook in self.hooks if hook.on_dry_run]


def _resource_options(request) -> resource_pb2.TransformResourceOptions:
    """The options a transform sees, from the registration (source_eval.go builds the same)."""
    options = resource_pb2.TransformResourceOptions(
        depends_on=list(request.dependencies), ignore_changes=list(request.ignoreChanges),
        replace_on_changes=list(request.replaceOnChanges), version=request.version, provider=request.provider,
        plugin_download_url=request.pluginDownloadURL, retain_on_delete=request.retainOnDelete,
        deleted_with=request.deletedWith, additional_secret_outputs=list(request.additionalSecretOutputs),
        aliases=list(request.aliases))
    options.providers.update(dict(request.providers))
    if request.HasField("protect"):
        options.protect = request.protect
    if request.deleteBeforeReplaceDefined:
        options.delete_before_replace = request.deleteBeforeReplace
    if request.HasField("customTimeouts"):
        options.custom_timeouts.CopyFrom(request.customTimeouts)
    if request.HasField("hooks"):
        options.hooks.CopyFrom(request.hooks)
    return options


def _with_options(request, properties: struct_pb2.Struct, options: resource_pb2.TransformResourceOptions):
    """The registration as the transforms left it: their properties, provider, dependencies and
    secret outputs (what the recording and the analyzer read)."""
    changed = resource_pb2.RegisterResourceRequest()
    changed.CopyFrom(request)
    changed.object.CopyFrom(properties)
    changed.provider = options.provider
    del changed.dependencies[:]
    changed.dependencies.extend(options.depends_on)
    del changed.additionalSecretOutputs[:]
    changed.additionalSecretOutputs.extend(options.additional_secret_outputs)
    changed.providers.clear()
    changed.providers.update(dict(options.providers))
    if options.HasField("protect"):
        changed.protect = options.protect
    del changed.transforms[:]
    return changed

