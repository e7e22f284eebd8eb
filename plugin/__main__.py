"""The blueprint's components as a Pulumi component package: programs in TypeScript, Go, C#, Java
or YAML use the same four components as Python programs.

`pulumi package add` runs this file as the engine runs every plugin: `python <this folder>
<engine address>`; it serves Pulumi's ResourceProvider interface over gRPC on a loopback port and
prints the port. The schema (resources, typed inputs and outputs, their descriptions) is inferred
from the components' annotations; a generated SDK sends the inputs back camelCase, and Construct
builds the component here, exactly as a Python program would.
"""

import dataclasses

import pulumi
from pulumi.errors import InputPropertyError
from pulumi.provider.experimental import component_provider_host
from pulumi.provider.experimental.analyzer import PropertyType
from pulumi.provider.experimental.component import ComponentProvider

from integration_blueprint import __version__, patches
from integration_blueprint.components import (
    DistributedMapBatch,
    FifoBillingQueue,
    IdempotentStreamConsumer,
    NonIdempotentStreamConsumer,
)
from integration_blueprint.patches import FIX, PULUMI_VERIFIED, Patcher, patch

# The package name is the first part of the components' type tokens (`blueprint:index:<Class>`).
PACKAGE_NAME = "blueprint"
COMPONENTS = [FifoBillingQueue, IdempotentStreamConsumer, NonIdempotentStreamConsumer, DistributedMapBatch]


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


if __name__ == "__main__":
    with patches.applied(["plugin_integer_inputs_stay_whole"]):
        component_provider_host(COMPONENTS, PACKAGE_NAME, version=__version__)
