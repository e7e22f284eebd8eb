"""The blueprint's components as a Pulumi component package: programs in TypeScript, Go, C#, Java
or YAML use the same four components as Python programs.

The engine (and `pulumi package add`) runs this folder as it runs every Python plugin: `python <this
folder> <engine address>`; it serves Pulumi's ResourceProvider interface over gRPC on a loopback
port and prints the port. Started by `blueprint preview`, it serves on the run's private channel
instead (integration_blueprint.preview.private_channel: a Unix socket in the run's folder, the
gate's token on every call, and the engine's token on its own calls to the engine). The provider
itself (schema, refusals) is integration_blueprint.plugin.provider.
"""

import asyncio
import sys

import grpc
from pulumi.provider import main
from pulumi.provider.server import ProviderServicer
from pulumi.runtime.proto import provider_pb2_grpc

from integration_blueprint.core import patches
from integration_blueprint.core.patches import FIX, PULUMI_VERIFIED, Patcher, patch
from integration_blueprint.plugin.provider import BlueprintProvider
from integration_blueprint.preview import private_channel

ENGINE_TOKEN_PATCH = "plugin_engine_calls_carry_run_token"
# The preview run's channel, handed over when `blueprint preview` started this plugin.
_run: dict = {}


# pulumi 3.272 (pulumi/runtime/settings.py, Settings.__init__) dials the engine and monitor addresses
# a Construct names with grpc.insecure_channel and nothing else: no API adds call metadata. Those
# are the only channels Settings dials.
@patch(ENGINE_TOKEN_PATCH, package="pulumi", verified=PULUMI_VERIFIED, kind=FIX,
       target="pulumi.runtime.settings.Settings.__init__ (its grpc.insecure_channel)",
       buys="a component's children reach the preview's private engine, which refuses calls without the run's token")
def _engine_calls_carry_run_token(patcher: Patcher) -> None:
    from pulumi.runtime import settings

    def insecure_channel(target, *args, **kwargs):
        return private_channel.with_token(grpc.insecure_channel(target, *args, **kwargs), _run["engine_token"])

    patcher.replace(settings, "grpc", private_channel.GrpcAsSeenBy(insecure_channel=insecure_channel))


async def _serve_privately(provider: BlueprintProvider) -> None:
    """pulumi.provider.main's server, on the run's socket and checking the gate's token."""
    server = grpc.aio.server(options=[("grpc.max_receive_message_length", _MAX_MESSAGE)],
                             interceptors=[private_channel.AsyncTokenCheck(_run["token"])])
    provider_pb2_grpc.add_ResourceProviderServicer_to_server(
        ProviderServicer(provider, sys.argv[1:], engine_address=_run["engine_address"]), server)
    port = server.add_insecure_port(_run["address"])
    await server.start()
    sys.stdout.buffer.write(f"{port}\n".encode())
    sys.stdout.buffer.flush()
    await server.wait_for_termination()


_MAX_MESSAGE = 400 * 1024 * 1024  # the SDK's own limit (pulumi.runtime._grpc_settings)


if __name__ == "__main__":
    run = private_channel.handed_over()
    if run is None:
        # As pulumi.provider.experimental.component_provider_host runs a component provider: the
        # arguments after the program are the engine's address and its flags.
        with patches.applied(["plugin_integer_inputs_stay_whole"]):
            main(BlueprintProvider(), sys.argv[1:])
    else:
        _run.update(run)
        with patches.applied(["plugin_integer_inputs_stay_whole", ENGINE_TOKEN_PATCH]):
            asyncio.run(_serve_privately(BlueprintProvider()))
