"""A resource's outputs, typed from the provider SDK's declarations (sdk.py): after `pulumi up`
(known_outputs, the provider's Create in known-value mode) and for `Resource.get` (read_outputs).

Each type's Plan is built once from its declared outputs: the AWS shape tabled for a property
(shapes.py), else a map with the keys AWS documents (maps.py), else a maker (makers.py); the
resource's own values come from its `Subject` (identifiers.py). Every made-up value is a hash of
the resource's URN and the property's path (values.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Optional

from integration_blueprint.preview.provider.check import planned_inputs
from integration_blueprint.preview.provider.identifiers import (
    EC2_ID_PREFIXES,
    ID_SHAPES,
    TRANSIT_GATEWAY_ID_PREFIXES,
    Subject,
)
from integration_blueprint.preview.provider.makers import (
    OUTPUT,
    SETTING_EMPTY,
    SETTING_UNSET,
    Completer,
    Constant,
    Maker,
    completer,
    constant,
    doc_default,
    field_maker,
)
from integration_blueprint.preview.provider.maps import map_maker
from integration_blueprint.preview.provider.naming import naming_of
from integration_blueprint.preview.provider.sdk import Field, resource_decl, sdk_root
from integration_blueprint.preview.provider.shapes import COMPUTED_IN_SETTINGS, SHAPES
from integration_blueprint.preview.provider.values import PLACEHOLDER_ACCOUNT, known, last_segment, uuid_of
from integration_blueprint.preview.wire import UNKNOWN


@dataclass(frozen=True)
class Plan:
    """How a type's outputs (or a data source's result) are made, built once per type and SDK."""

    constants: dict  # property -> the value every resource of the type has (immutable scalars)
    makers: tuple  # (property, Maker) for the values made per resource
    completers: tuple = ()  # (property, Completer) for nested objects the program may give
    # A resource's outputs hold what has a value: an output nobody set and nobody knows stays absent,
    # so the SDK reads it as it reads an unset output (None; unknown in a preview) and a policy sees
    # what the program wrote. A data source's result holds every declared field, None included.
    keep_none: bool = False


def _shape_maker(shape: Callable[[Subject], Any]) -> Maker:
    return lambda s, path: shape(s)


def make_plan(token: str, fields: tuple[Field, ...], inputs: frozenset, naming_prop: str, left_out: str) -> Plan:
    module = token.split(":")[1].split("/")[0] if token.count(":") == 2 else ""
    shapes = SHAPES.get(token, {})
    constants: dict[str, Any] = {}
    makers = []
    completers: list[tuple[str, Completer]] = []
    for field in fields:
        documented_map = map_maker(token, field.wire)
        if field.wire in shapes:
            make = _shape_maker(shapes[field.wire])
        elif documented_map is not None:
            make = _shape_maker(documented_map)
        elif field.required:
            setting = field.wire in inputs or field.wire.endswith("s") and field.wire[:-1] in inputs
            make = field_maker(field, module, naming_prop, left_out if setting else OUTPUT, 0)
        else:
            make = constant(doc_default(field))
        if isinstance(make, Constant):
            if make.value is not None or left_out == SETTING_EMPTY:
                constants[field.wire] = make.value
        else:
            makers.append((field.wire, make))
        complete = completer(field.kind, module, naming_prop, 0)
        if complete is not None and field.wire not in shapes:
            completers.append((field.wire, complete))
    return Plan(constants, tuple(makers), tuple(completers), keep_none=left_out == SETTING_EMPTY)


def _resource_plan(token: str) -> Optional[Plan]:
    return _resource_plan_of(token, sdk_root(token.split(":")[0]))


@lru_cache(maxsize=None)
def _resource_plan_of(token: str, root: Optional[Path]) -> Optional[Plan]:
    """The plan for `token` as the SDK in `root` (the program's) declares it."""
    decl = resource_decl(token)
    if decl is None:
        return None
    naming = naming_of(token, decl)
    return make_plan(token, decl.outputs, decl.inputs, naming.prop if naming else "name", SETTING_UNSET)


def fill(s: Subject, plan: Plan, props: dict) -> dict:
    out = dict(plan.constants)
    for wire, value in props.items():
        if value is not None or wire not in out:
            out[wire] = value
    for wire, make in plan.makers:
        if props.get(wire) is None:
            value = unknown_if_derived(make(s, wire))
            if value is not None or plan.keep_none:
                out[wire] = value
    for wire, complete in plan.completers:
        if props.get(wire) is not None:
            out[wire] = complete(s, wire, props[wire])
    for wire, computed in COMPUTED_IN_SETTINGS.get(s.token, {}).items():
        if isinstance(out.get(wire), dict):
            out[wire] = computed(s, out[wire])
    return out


def unknown_if_derived(value: Any) -> Any:
    """A made-up string built from an unknown input (an ARN from an unknown name, a URL from an
    unknown API id) is unknown itself, as the provider would report it."""
    if isinstance(value, str):
        return UNKNOWN if UNKNOWN in value else value
    if isinstance(value, list):
        return [unknown_if_derived(v) for v in value]
    if isinstance(value, dict):
        return {k: unknown_if_derived(v) for k, v in value.items()}
    return value


def known_outputs(type_token: str, name: str, urn: str, inputs: dict, *, region: str,
                  account: str = PLACEHOLDER_ACCOUNT) -> tuple[str, dict]:
    """(id, outputs) as after `pulumi up` of a deployed stack: the planned inputs plus every output
    property the provider SDK declares for this type, typed from the SDK's declarations. Every output
    the provider computes is there (ARNs, ids, URLs, endpoints...), never None; a setting the program
    left out is there with AWS's default where the SDK states one (a function's 128 MB, a mapping's
    -1 record age), else absent, as the program wrote it (the SDK reads an absent output as it reads
    an unset one). Deterministic: the same URN gives the same values."""
    planned = planned_inputs(type_token, name, urn, inputs, region=region)
    if type_token.startswith("pulumi:providers:"):
        return uuid_of(urn), planned  # a provider's id is a UUID; its outputs are its inputs
    decl = resource_decl(type_token)
    s = Subject(type_token, name, urn, planned, region, account, decl)
    plan = _resource_plan(type_token)
    id_ = unknown_if_derived(s.id)
    # An id made from an unknown input is not known in this preview: the engine answers "" for it.
    return "" if id_ == UNKNOWN else id_, planned if plan is None else fill(s, plan, planned)


STACK_REFERENCE = "pulumi:pulumi:StackReference"


def read_outputs(type_token: str, name: str, id_: str, props: dict, *, region: str,
                 account: str = PLACEHOLDER_ACCOUNT) -> dict:
    """A `Resource.get(name, id)` lookup (ReadResource): the resource's state for that id. The id
    names the resource where it holds the name (most AWS types; an ARN's or a queue URL's last part)
    unless the program's state props already do; an EC2 id (sg-..., vpc-...) names nothing."""
    if type_token == STACK_REFERENCE:
        # Another stack's outputs are not known offline: none, so `get_output` answers None.
        return {"name": id_, "outputs": {}, "secretOutputNames": [], **props}
    decl = resource_decl(type_token)
    naming = naming_of(type_token, decl)
    state = dict(props)
    module, cls = (type_token.split(":") + ["", ""])[1:3]
    id_is_name = id_.startswith("arn:") or type_token == "aws:sqs/queue:Queue" or not (
        type_token in ID_SHAPES or module.startswith("ec2") and cls in {**EC2_ID_PREFIXES, **TRANSIT_GATEWAY_ID_PREFIXES})
    if naming is not None and not known(state.get(naming.prop)) and id_is_name:
        state[naming.prop] = id_.rstrip("/").rsplit("/", 1)[-1] if id_.startswith("https://") else last_segment(id_)
    urn = f"read::{type_token}::{name}::{id_}"
    if decl is None:
        return state
    s = Subject(type_token, name, urn, state, region, account, decl, id_=id_)
    if id_.startswith("arn:"):
        s.__dict__["arn"] = id_
    return fill(s, _resource_plan(type_token) or Plan({}, ()), state)

