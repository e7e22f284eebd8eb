"""Run a Python policy pack as the Pulumi CLI does (`python -m pulumi.policy <engine> <pack-dir>`), with
its Analyzer server on the preview run's private channel (private_channel): its Unix socket in the
run's private folder, every call checked for the gate's token, both handed over on a pipe, and
Configure and ConfigureStack answered once: the gate configures the pack before the program's
resources reach it, and a second call (the program under test, had it found the token) is refused. The pack prints its "port"
(the SDK's add_insecure_port result) as the first line, as it always does.

Started by policy_packs.py in one of two ways:
- `python -m integration_blueprint.preview.pack_host <engine> <pack-dir>`: blueprint's own pack, in
  this package's interpreter;
- `<pack's python> -u .../pack_host.py <engine> <pack-dir>`: a team's pack in the interpreter its
  PulumiPolicy.yaml chooses, which need not have this package (or has another version of it). Then
  this file imports only the standard library and grpc (which pulumi-policy brings), loads its
  sibling private_channel.py and the gate's patch registry (core/patches.py, its path handed over)
  by file, and takes its own folder off sys.path, so nothing here shadows a module of the pack.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import runpy
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or os.curdir) == _HERE:  # run as a script
    del sys.path[0]

PATCH_NAME = "policy_pack_private_channel"
SDK_PARTS_PATCH = "pack_sdk_parts_on_first_use"
# The calls that set what the pack judges by: answered once, for the gate.
CONFIGURE_ONCE = ("/pulumirpc.Analyzer/Configure", "/pulumirpc.Analyzer/ConfigureStack")
_run: dict = {}  # the run's channel: {"address": ..., "token": ..., "reconfigurable": ...}, as handed over


def _load(name: str, path: str, package_dir: str = ""):
    """A module (or package, from its folder) loaded by file, under `name`."""
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(package_dir, "__init__.py") if package_dir else path,
        submodule_search_locations=[package_dir] if package_dir else None)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


if __package__:  # `-m integration_blueprint.preview.pack_host`: this package's interpreter
    from integration_blueprint.core import patches
    from integration_blueprint.preview import private_channel
else:  # a script in a team's pack interpreter: the gate's own files, whatever that environment holds
    private_channel = _load("blueprint_private_channel", os.path.join(_HERE, "private_channel.py"))
    _run.update(private_channel.handed_over() or {})
    if "registry" not in _run:
        sys.exit("pack_host runs a policy pack for `blueprint preview`, which hands it its channel")
    if importlib.util.find_spec("packaging") is None:  # the registry's version checks need it
        _load("packaging", "", _run["packaging"])
    patches = _load("blueprint_patch_registry", _run["registry"])


# pulumi-policy 1.21 (pulumi_policy/policy.py, PolicyPack.__init__) creates its server with
# grpc.server(...) and binds it to a loopback TCP port any local process can call (the CLI's only
# way in); nothing in its API chooses the address or adds an interceptor.
@patches.patch(PATCH_NAME, package="pulumi-policy", verified=patches.PULUMI_POLICY_VERIFIED, kind=patches.FIX,
               target="pulumi_policy.policy.PolicyPack.__init__ (its grpc.server and add_insecure_port)",
               buys="the pack answers only the gate that started it (its Unix socket in the run's 0700 folder, "
                    "the gate's token on every call, Configure once): no other process can reconfigure or "
                    "query it")
def _private_server(patcher) -> None:
    import grpc
    import pulumi_policy.policy as policy_module

    once = () if _run.get("reconfigurable") else CONFIGURE_ONCE

    def server(*args, **kwargs):
        _resume_collector()  # the pack is loaded: its server is being made
        check = private_channel.TokenCheck(_run["token"], once=once)
        kwargs["interceptors"] = [*(kwargs.get("interceptors") or ()), check]
        created = grpc.server(*args, **kwargs)
        bind = created.add_insecure_port
        created.add_insecure_port = lambda address: bind(_run["address"])
        return created

    patcher.replace(policy_module, "grpc", private_channel.GrpcAsSeenBy(server=server))


@patches.patch(SDK_PARTS_PATCH, package="pulumi", verified=patches.PULUMI_VERIFIED, kind=patches.SPEED,
               target="pulumi.automation, pulumi.dynamic and pulumi.runtime._instrumentation, as pulumi/__init__.py "
                      "imports them",
               buys="blueprint's own pack starts without executing them (nor dill, yaml, urllib.request, OpenTelemetry's "
                    "SDK): 0.04-0.07 s of its CPU, a fifth of its SDK's import")
def _sdk_parts_on_first_use(patcher) -> None:
    """What pulumi/__init__.py imports for its users that no policy pack runs (the Automation API,
    dynamic providers, OpenTelemetry's SDK when the process is not traced: program_speed.SDK_PARTS),
    each a module whose code runs the first time anything of it is read (importlib's own
    LazyLoader): the same module, as the eager import would have made it, only later. Blueprint's own
    pack ships no module named like one they import."""
    from integration_blueprint.preview.program_speed import OnFirstUse, sdk_parts

    patcher.replace(sys, "meta_path", [OnFirstUse(sdk_parts()), *sys.meta_path])


def _pause_collector() -> None:
    """Loading a pack (its SDK, its rules) makes what lives as long as the process: the collector's
    passes while it loads (about ninety, 20-25 ms of CPU) free nothing. Paused until its server is
    made, when what it made is moved out of the collector's sight (gc.freeze) and it resumes."""
    _run["collecting"] = gc.isenabled()
    gc.disable()


def _resume_collector() -> None:
    if _run.pop("collecting", False):
        gc.freeze()
        gc.enable()


def main() -> None:
    if not _run:
        _run.update(private_channel.handed_over() or {})
    if "token" not in _run:
        sys.exit("pack_host runs a policy pack for `blueprint preview`, which hands it its channel")
    # blueprint's own pack (its rules use neither part of the SDK) in this package's interpreter; before
    # the private channel's patch, which imports the SDK
    own = [SDK_PARTS_PATCH] if __package__ else []
    _pause_collector()
    try:
        with patches.applied([*own, PATCH_NAME]):
            sys.argv = ["pulumi.policy", *sys.argv[1:]]
            runpy.run_module("pulumi.policy", run_name="__main__", alter_sys=True)
    except patches.PatchRefused as refused:
        sys.exit(f"{refused}")


if __name__ == "__main__":
    main()
