"""The blueprint's component provider: Pulumi's ComponentProvider over the four components, with
the documented schema and the components' refusals as input-property errors.

The schema (resources, typed inputs and outputs) is inferred from the components' annotations, then
described from the settings rows (`integration_blueprint.components.reference`: every input's why,
default and allowed values, fixed value sets as enums, every output and resource). A generated SDK
sends the inputs back camelCase, and Construct builds the component here, exactly as a Python
program would. A refused input answers as Pulumi's input-property error for that input, named and
explained as the calling language spells it (camelCase), without a Python traceback.

Public: `BlueprintProvider`, `PACKAGE_NAME`.
"""

import dataclasses
import difflib
import json
import re

import pulumi
from pulumi.errors import InputPropertiesError, InputPropertyError, InputPropertyErrorDetails
from pulumi.provider.experimental.analyzer import PropertyType
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.server import ComponentInitError

from integration_blueprint import __version__
from integration_blueprint.components.reference import COMPONENTS, document_schema
from integration_blueprint.components.validation import ComponentArgumentError
from integration_blueprint.core.patches import FIX, PULUMI_VERIFIED, Patcher, patch

__all__ = ["PACKAGE_NAME", "BlueprintProvider"]

# The package name is the first part of the components' type tokens (`blueprint:index:<Class>`).
PACKAGE_NAME = "blueprint"


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
            unknown = [InputPropertyErrorDetails(property_path=key, reason=_unknown_input(component, key, definition))
                       for key in inputs if key not in definition.inputs]
            _refuse(unknown)
        try:
            return super().construct(name, resource_type, inputs, options)
        except ComponentInitError as failed:
            refusal = failed.inner
            if not isinstance(refusal, ComponentArgumentError) or definition is None:
                raise
            to_schema = {python: schema for schema, python in definition.inputs_mapping.items()}

            def in_schema_names(text: str) -> str:
                return re.sub(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b",
                              lambda found: to_schema.get(found.group(0), found.group(0)), text)

            if all(each.arg in to_schema for each in refusal.refusals):  # every refusal of the call, each named
                _refuse([InputPropertyErrorDetails(property_path=to_schema[str(each.arg)], reason=in_schema_names(str(each)))
                         for each in refusal.refusals])
            # errors=[] and not None: pulumi 3.272's server reads the status's trailing metadata,
            # which it only sets when a list of property errors is given.
            raise InputPropertiesError(in_schema_names(str(refusal)), errors=[]) from None


def _unknown_input(component: str, key: str, definition) -> str:
    close = difflib.get_close_matches(key, list(definition.inputs), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"{component}: unknown input {key!r}{hint}; {component} takes {', '.join(sorted(definition.inputs))}"


def _refuse(errors: list[InputPropertyErrorDetails]) -> None:
    """Pulumi's input-property error for each refused input, all in one answer (none: nothing)."""
    if len(errors) == 1:
        raise InputPropertyError(errors[0]["property_path"], errors[0]["reason"]) from None
    if errors:
        raise InputPropertiesError("\n".join(error["reason"] for error in errors), errors=errors) from None


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

