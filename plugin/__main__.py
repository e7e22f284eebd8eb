"""The blueprint's components as a Pulumi component package: programs in TypeScript, Go, C#, Java
or YAML use the same four components as Python programs.

`pulumi package add` runs this file as the engine runs every plugin: `python <this folder>
<engine address>`; it serves Pulumi's ResourceProvider interface over gRPC on a loopback port and
prints the port. Started by `blueprint preview`, it serves on the run's private channel instead
(integration_blueprint.preview.private_channel: a Unix socket in the run's folder, the gate's
token on every call, and the engine's token on its own calls to the engine).

The schema (resources, typed inputs and outputs) is inferred from the components' annotations,
then described from the settings rows (`integration_blueprint.components.reference`: every input's
why, default and allowed values, fixed value sets as enums, every output and resource). A
generated SDK sends the inputs back camelCase, and Construct builds the component here, exactly as
a Python program would. A refused input answers as Pulumi's input-property error for that input,
named and explained as the calling language spells it (camelCase), without a Python traceback.
"""

import asyncio
import dataclasses
import difflib
import json
import re
import sys

import grpc
import pulumi
from pulumi.errors import InputPropertiesError, InputPropertyError
from pulumi.provider import main
from pulumi.provider.experimental.analyzer import PropertyType
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.server import ComponentInitError, ProviderServicer
from pulumi.runtime.proto import provider_pb2_grpc

from integration_blueprint import __version__, patches
from integration_blueprint.components.reference import COMPONENTS, document_schema
from integration_blueprint.components.validation import ComponentArgumentError
from integration_blueprint.patches import FIX, PULUMI_VERIFIED, Patcher, patch
from integration_blueprint.preview import private_channel

# The package name is the first part of the components' type tokens (`blueprint:index:<Class>`).
PACKAGE_NAME = "blueprint"
ENGINE_TOKEN_PATCH = "plugin_engine_calls_carry_run_token"
# The preview run's channel, handed over when `blueprint preview` started this plugin.
_run: dict = {}


class BlueprintProvider(ComponentProvider):
    """Pulumi's component provider with the documented schema and the components' refusals as
    input-property errors."""

    def __init__(self) -> None:
        super().__init__(list(COMPONENTS), PACKAGE_NAME, version=__version__)
        self.schema = json.dumps(document_schema(json.loads(self.schema or "{}")))

    def construct(self, name, resource_type, inputs, options=None):
        component = resource_type.rsplit(":", 1)[-1]
        definition = self._component_defs.get(component)
        if definition is not None:
            for key in inputs:
                if key not in definition.inputs:
                    close = difflib.get_close_matches(key, list(definition.inputs), n=1)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    raise InputPropertyError(key, f"{component}: unknown input {key!r}{hint}; {component} takes "
                                                  f"{', '.join(sorted(definition.inputs))}")
        try:
            return super().construct(name, resource_type, inputs, options)
        except ComponentInitError as failed:
            refusal = failed.inner
            if not isinstance(refusal, ComponentArgumentError) or definition is None:
                raise
            to_schema = {python: schema for schema, python in definition.inputs_mapping.items()}
            message = re.sub(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b",
                             lambda found: to_schema.get(found.group(0), found.group(0)), str(refusal))
            if refusal.arg in to_schema:
                raise InputPropertyError(to_schema[refusal.arg], message) from None
            # errors=[] and not None: pulumi 3.272's server reads the status's trailing metadata,
            # which it only sets when a list of property errors is given.
            raise InputPropertiesError(message, errors=[]) from None


# Workaround for pulumi 3.272.0 (pulumi/provider/experimental/component.py,
# ComponentProvider.map_input_properties): an integer input is converted with int() and then
# overwritten with the wire value, so `maxReceiveCount: 5` from a generated SDK reaches the
# component as 5.0 (the redrive policy would say "maxReceiveCount": 5.0, the Powertools layer ARN
# would end ":27.0"), and an integer input that is an Output (it depends on another resource)
# fails with "int() argument must be ... not 'Output'". Here the SDK maps integer properties as
# plain numbers and they are made whole numbers afterwards, Outputs through apply. Remove this
# when the SDK keeps its int() result.
@patch("plugin_integer_inputs_stay_whole", package="pulumi", verified=PULUMI_VERIFIED, kind=FIX,
       target="pulumi.provider.experimental.component.ComponentProvider.map_input_properties",
       buys="an integer input from a generated SDK reaches the component as an int (not 5.0), and one that "
            "is an Output no longer fails")
def _integer_inputs_stay_whole(patcher: Patcher) -> None:
    sdk_map_input_properties = ComponentProvider.map_input_properties

    def map_input_properties(self, inputs, properties, mapping, component_name, property_path):
        integers = {name for name, prop in properties.items() if prop.type == PropertyType.INTEGER}
        as_numbers = {name: dataclasses.replace(prop, type=PropertyType.NUMBER) if name in integers else prop
                      for name, prop in properties.items()}
        mapped = dict(sdk_map_input_properties(self, inputs, as_numbers, mapping, component_name, property_path))
        for name in integers:
            if mapping[name] in mapped:
                path = f"{property_path}.{name}" if property_path else name
                mapped[mapping[name]] = _whole_number(mapped[mapping[name]], path)
        return mapped

    patcher.replace(ComponentProvider, "map_input_properties", map_input_properties)


def _whole_number(value, path: str):
    if isinstance(value, pulumi.Output):
        return value.apply(lambda known: _whole_number(known, path))
    if isinstance(value, float):
        if not value.is_integer():
            raise InputPropertyError(path, f"{path} must be a whole number, not {value}")
        return int(value)
    return value


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
