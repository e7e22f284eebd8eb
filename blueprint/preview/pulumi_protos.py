"""Pulumi's generated protobuf and gRPC modules (pulumi.runtime.proto), as the gate takes them: the
engine's services, the analyzer's client and the callbacks' client use these and nothing else of
the Pulumi SDK.

Imported the usual way, each is loaded after its parent packages, and `pulumi/__init__.py` imports
the whole SDK (its runtime, its automation API, OpenTelemetry): a third of the gate's imports, about
0.17 s of CPU of every `blueprint preview` (benchmarks/preview_overhead.py,
BLUEPRINT_PATCHES_WITHOUT=pulumi_protos_without_the_sdk to see it). The speed patch below loads the
same files from the SDK's own folder without running its packages' `__init__` files: the parent
packages are stood in for while they load, then everything is taken out of sys.modules again, so a
later `import pulumi` (a drill, a test's in-process program) imports the SDK exactly as it would
have. The message classes are the SDK's own all the same: protobuf keeps one class per message of
its default pool, whichever module object built it (the equivalence test checks it). Where the
SDK is imported already, or its version is not one the patch was verified on, they are the SDK's
own modules.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING

from integration_blueprint.core import patches

PACKAGE = "pulumi.runtime.proto"
# The generated modules the gate uses (each loads those it needs of its own: plugin_pb2, alias_pb2, ...).
__all__ = ["analyzer_pb2", "analyzer_pb2_grpc", "callback_pb2", "callback_pb2_grpc", "engine_pb2", "engine_pb2_grpc",
           "errors_pb2", "provider_pb2", "provider_pb2_grpc", "resource_pb2", "resource_pb2_grpc"]
NAMES = tuple(__all__)
PATCH_NAME = "pulumi_protos_without_the_sdk"
# The packages above the generated modules, each with its folder inside the SDK's.
_PARENTS = (("pulumi", ""), ("pulumi.runtime", "runtime"), (PACKAGE, "runtime/proto"))


def _sdk_modules(names: tuple[str, ...]) -> dict[str, types.ModuleType]:
    """The generated modules as `import pulumi.runtime.proto.<name>` gives them."""
    return {name: importlib.import_module(f"{PACKAGE}.{name}") for name in names}


_imported = _sdk_modules  # how this module takes them (the patch replaces it)


@patches.patch(PATCH_NAME, package="pulumi", verified=patches.PULUMI_VERIFIED, kind=patches.SPEED,
               target="pulumi.runtime.proto's generated *_pb2 modules, loaded without pulumi/__init__.py and "
                      "pulumi/runtime/__init__.py (their packages stood in for while they load)",
               buys="about 0.17 s of CPU of each blueprint preview's gate: a third of its imports")
def _without_the_sdk(patcher) -> None:
    patcher.replace(sys.modules[__name__], "_imported", _loaded_alone)


def _loaded_alone(names: tuple[str, ...]) -> dict[str, types.ModuleType]:
    """The generated modules loaded from the SDK's folder with its packages stood in for, and every
    module of the SDK's taken out of sys.modules again; the SDK's own when it is imported already."""
    if "pulumi" in sys.modules:
        return _sdk_modules(names)
    spec = importlib.util.find_spec("pulumi")
    assert spec is not None and spec.submodule_search_locations, "pulumi is installed (a dependency)"
    folder = Path(list(spec.submodule_search_locations)[0])
    for package, below in _PARENTS:
        stand_in = types.ModuleType(package)
        stand_in.__path__ = [str(folder / below)]
        sys.modules[package] = stand_in
    try:
        return _sdk_modules(names)
    finally:
        for name in [name for name in sys.modules if name == "pulumi" or name.startswith("pulumi.")]:
            del sys.modules[name]


def _load() -> dict[str, types.ModuleType]:
    """Once, as this module is imported (by the gate's modules, before the gate starts a thread)."""
    with patches.applied([PATCH_NAME]):
        return _imported(NAMES)


if TYPE_CHECKING:  # what they are, for the type checker: the SDK's own
    import pulumi.runtime.proto.analyzer_pb2 as analyzer_pb2
    import pulumi.runtime.proto.analyzer_pb2_grpc as analyzer_pb2_grpc
    import pulumi.runtime.proto.callback_pb2 as callback_pb2
    import pulumi.runtime.proto.callback_pb2_grpc as callback_pb2_grpc
    import pulumi.runtime.proto.engine_pb2 as engine_pb2
    import pulumi.runtime.proto.engine_pb2_grpc as engine_pb2_grpc
    import pulumi.runtime.proto.errors_pb2 as errors_pb2
    import pulumi.runtime.proto.provider_pb2 as provider_pb2
    import pulumi.runtime.proto.provider_pb2_grpc as provider_pb2_grpc
    import pulumi.runtime.proto.resource_pb2 as resource_pb2
    import pulumi.runtime.proto.resource_pb2_grpc as resource_pb2_grpc
else:
    globals().update(_load())
