"""What the provider's Check makes of a resource's inputs, in any preview: the auto-name where the
program left the naming input out (naming.py), and values encoded as their declared type (an IAM
document given as a dict for a string property becomes its JSON).
"""

from __future__ import annotations

import json
from typing import Any

from integration_blueprint.preview.provider.naming import auto_name, naming_of
from integration_blueprint.preview.provider.sdk import Kind, object_fields, resource_decl
from integration_blueprint.preview.wire import SIG, UNKNOWN


def planned_inputs(type_token: str, name: str, urn: str, inputs: dict, *, region: str) -> dict:
    """What the provider's Check makes of the inputs in any preview (first or update): inputs plus the
    provider's auto-name where the resource declares a naming input the program left out. Known in
    both modes, as under `pulumi preview` (the aws provider auto-names in Check)."""
    decl = resource_decl(type_token)
    naming = naming_of(type_token, decl)
    planned = dict(inputs)
    if decl is not None:
        kinds = {field.wire: field.kind for field in decl.outputs}
        for key, value in inputs.items():
            if key in kinds:
                planned[key] = _as_declared(value, kinds[key])
    if naming is None or naming.prop in planned and planned[naming.prop] is not None:
        return planned
    if planned.get(naming.prefix_prop) is not None:
        return planned  # Terraform names it at create time from the prefix
    planned[naming.prop] = auto_name(type_token, name, urn, inputs, naming)
    return planned


def _as_declared(value: Any, kind: Kind, depth: int = 0) -> Any:
    """A value as the provider's Check makes it of its declared type: an object or list given for
    a string property (an IAM document written as a dict, pulumi-aws 7's PolicyDocument form) is
    encoded as JSON, and is unknown while any part of it is."""
    if isinstance(value, dict) and SIG in value:
        return value  # an asset or archive
    if kind == "str" and isinstance(value, (dict, list)):
        return UNKNOWN if _holds_unknown(value) else json.dumps(value)
    if depth > 8 or not isinstance(kind, tuple):
        return value
    if kind[0] == "list" and isinstance(value, list):
        return [_as_declared(item, kind[1], depth + 1) for item in value]
    if kind[0] == "map" and isinstance(value, dict):
        return {key: _as_declared(item, kind[1], depth + 1) for key, item in value.items()}
    if kind[0] == "object" and isinstance(value, dict):
        kinds = {field.wire: field.kind for field in object_fields(kind[1], kind[2])}
        return {key: _as_declared(item, kinds[key], depth + 1) if key in kinds else item
                for key, item in value.items()}
    return value


def _holds_unknown(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_holds_unknown(item) for item in value.values())
    if isinstance(value, list):
        return any(_holds_unknown(item) for item in value)
    return value == UNKNOWN
