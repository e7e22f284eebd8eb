"""Run a policy pack as the Pulumi CLI does (`python -m pulumi.policy <engine> <pack-dir>`), with
its Analyzer server on the preview run's private channel (private_channel): its Unix socket in the
run's private folder, every call checked for the gate's token, both handed over on a pipe. The pack
prints its "port" (the SDK's add_insecure_port result) as the first line, as it always does.

`python -m integration_blueprint.preview.pack_host <engine> <pack-dir>`, started by analyzer.py.
"""

from __future__ import annotations

import runpy
import sys

import grpc

from integration_blueprint.core import patches
from integration_blueprint.core.patches import FIX, PULUMI_POLICY_VERIFIED, Patcher, patch
from integration_blueprint.preview import private_channel

PATCH_NAME = "policy_pack_private_channel"
_run: dict = {}  # the run's channel: {"address": ..., "token": ...}, as handed over


# pulumi-policy 1.21 (pulumi_policy/policy.py, PolicyPack.__init__) creates its server with
# grpc.server(...) and binds it to a loopback TCP port any local process can call (the CLI's only
# way in); nothing in its API chooses the address or adds an interceptor.
@patch(PATCH_NAME, package="pulumi-policy", verified=PULUMI_POLICY_VERIFIED, kind=FIX,
       target="pulumi_policy.policy.PolicyPack.__init__ (its grpc.server and add_insecure_port)",
       buys="the pack answers only the gate that started it (its Unix socket in the run's 0700 folder, the "
            "gate's token on every call): no other process can reconfigure or query it")
def _private_server(patcher: Patcher) -> None:
    import pulumi_policy.policy as policy_module

    def server(*args, **kwargs):
        kwargs["interceptors"] = [*(kwargs.get("interceptors") or ()), private_channel.TokenCheck(_run["token"])]
        created = grpc.server(*args, **kwargs)
        bind = created.add_insecure_port
        created.add_insecure_port = lambda address: bind(_run["address"])
        return created

    patcher.replace(policy_module, "grpc", private_channel.GrpcAsSeenBy(server=server))


def main() -> None:
    run = private_channel.handed_over()
    if run is None:
        sys.exit("pack_host runs a policy pack for `blueprint preview`, which hands it its channel")
    _run.update(run)
    with patches.applied([PATCH_NAME]):
        sys.argv = ["pulumi.policy", *sys.argv[1:]]
        runpy.run_module("pulumi.policy", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
