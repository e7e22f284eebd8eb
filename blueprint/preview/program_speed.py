"""What the program's process need not pay for in an offline preview, as registered speed patches
(integration_blueprint.core.patches) that python_exec.py applies when the program's interpreter has this
package: outside their verified versions they are skipped and the program runs as it always does.

The SDK sends each DEBUG message (a few per resource: "Registering resource ...", "Preparing
resource ...") to the engine as a blocking gRPC call; the Pulumi CLI shows them only at high
verbosity, and the offline engine shows none of them. Dropped in the program's process, the
run registers the same resources with a fifth of the calls.

`pulumi/__init__.py` imports the Automation API and dynamic providers for its users (with yaml,
dill, http.client, email, ...), which a program that uses neither never runs, and OpenTelemetry's
SDK for a traced run: each is loaded the first time anything of it is read (importlib's
LazyLoader). What the eager import would have loaded before the program stays the SDK's: the
top-level modules those parts import (`SDK_PARTS_IMPORT`) resolve, whenever they are first
imported, from the search path the SDK was imported with, never from the program's folder. A
program that ships its own `yaml.py` gets PyYAML from `import yaml`, as under `pulumi preview`
(where the SDK loaded PyYAML first), and the Automation API, once read, gets PyYAML too.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

from integration_blueprint.core.patches import PULUMI_VERIFIED, SPEED, Patcher, patch

DEBUG_LOGS_PATCH = "engine_debug_logs_not_sent"
SDK_PARTS_PATCH = "program_sdk_parts_on_first_use"
# What pulumi/__init__.py imports for its users that a program's run need not execute (its last
# line in pulumi 3.272: `from . import runtime, dynamic, policy, automation`), and its OpenTelemetry
# set-up (its first line), which does nothing but import OpenTelemetry's SDK unless the process is
# traced (TRACEPARENT), and which nothing else of the SDK reads.
SDK_PARTS = ("pulumi.automation", "pulumi.dynamic", "pulumi.runtime._instrumentation")
# A traced process keeps the set-up eager: it must instrument grpc before grpc is imported.
TRACED_VARIABLE = "TRACEPARENT"
def sdk_parts() -> tuple[str, ...]:
    """The parts of the SDK this process loads on first use."""
    return SDK_PARTS if TRACED_VARIABLE not in os.environ else SDK_PARTS[:2]


# The top-level modules the eager import of SDK_PARTS loads that nothing else the SDK imports does
# (pulumi 3.272.0 with the dill and PyYAML it requires; interpreter builtins left out):
# tests/test_program_modules.py computes them from the two imports and compares.
SDK_PARTS_IMPORT = ("_blake2", "_ctypes", "_hashlib", "_pyio", "_queue", "ctypes", "dill", "email", "hashlib", "http",
                    "multiprocessing", "queue", "quopri", "yaml")


@patch(DEBUG_LOGS_PATCH, target="pulumi.log.debug", package="pulumi", verified=PULUMI_VERIFIED, kind=SPEED,
       buys="466 of the prod program's 582 blocking engine calls (DEBUG log messages the offline engine never "
            "shows): benchmarks/preview_overhead.py")
def engine_debug_logs_not_sent(patcher: Patcher) -> None:
    import pulumi.log

    def debug(msg, resource=None, stream_id=None, ephemeral=None) -> None:
        """Pulumi's log.debug, for an engine that shows no debug messages: nothing is sent."""

    patcher.replace(pulumi.log, "debug", debug)


class OnFirstUse:
    """A finder (first on sys.meta_path) for `parts`, each a module whose code runs the first time
    anything of it is read, and for `kept` top-level names, each found on `search` (the path the
    SDK is imported with) whatever comes before it on sys.path later."""

    def __init__(self, parts: tuple[str, ...], kept: tuple[str, ...] = (), search: list[str] | None = None):
        self.parts, self.kept, self.search = parts, kept, search

    def find_spec(self, fullname, path, target=None):
        if fullname in self.parts:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = importlib.util.LazyLoader(spec.loader)
            return spec
        if fullname in self.kept:
            return importlib.machinery.PathFinder.find_spec(fullname, self.search, target)
        return None


@patch(SDK_PARTS_PATCH, target="pulumi.automation, pulumi.dynamic and pulumi.runtime._instrumentation, as "
                               "pulumi/__init__.py imports them",
       package="pulumi", verified=PULUMI_VERIFIED, kind=SPEED,
       buys="the SDK's import in the program's process, with the modules the prod program imports itself, "
            "0.24 -> 0.18 s of CPU (best of 15; the SDK's alone 0.23 -> 0.15 s): benchmarks/preview_overhead.py")
def program_sdk_parts_on_first_use(patcher: Patcher) -> None:
    """Applied before the program's process imports the SDK; its search path is the process's
    own without the folder of the script that runs (python_exec.py's, which leaves the path)."""
    main_file = getattr(sys.modules.get("__main__"), "__file__", None) or ""
    script_dir = os.path.dirname(os.path.abspath(main_file)) if main_file else None
    search = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != script_dir]
    patcher.replace(sys, "meta_path", [OnFirstUse(sdk_parts(), SDK_PARTS_IMPORT, search), *sys.meta_path])
