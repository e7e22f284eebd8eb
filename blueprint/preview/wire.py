"""Property values on the wire between a Pulumi program, the engine, providers and analyzers.

A program's SDK sends a resource's inputs as a protobuf Struct in which special values are objects
carrying a signature key: secrets, resource references, output values, assets and archives; an
unknown value is a fixed string. The engine passes them on to each party as that party accepts them
(pulumi/pulumi sdk/go/common/resource/plugin/rpc.go, MarshalPropertyValue, with the options the
engine uses for each call):

- an analyzer (policy pack) gets `KeepUnknowns, KeepSecrets` and not `KeepResources` or
  `KeepOutputValues`: a resource reference becomes the referenced resource's id (a custom
  resource with an id) or its URN; an output value becomes its value, an unknown one the unknown
  string, a secret one a secret; assets stay assets (analyzer_plugin.go, Analyze/AnalyzeStack);
- a provider that does not accept resource references (the AWS provider) gets the same
  downgrade, with secrets unwrapped for the values it computes from;
- the program gets back what the provider returned, secrets kept where its inputs were secret.

Values here are the JSON form of the Struct (dicts, lists, strings, floats, bools, None), the form
the engine's own code keeps them in; `plain()` turns one into the plain Python value a rule or the
sandbox reads.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from google.protobuf import struct_pb2

from integration_blueprint.core.conventions import DEEPEST_JUDGED_NESTING

# The SDK's wire constants (pulumi.runtime.rpc; the same values in every SDK language).
SIG = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
OUTPUT_VALUE_SIG = "d0e6a833031e9bbcd3f4e8bde6ca49a4"
ASSET_SIG = "c44067f5952c0a294b673a41bacd8c17"
ARCHIVE_SIG = "0def7320c3a5731c473e5ecbe6d01bc7"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


class TooDeep(ValueError):
    """A value nested deeper than the gate reads (conventions.DEEPEST_JUDGED_NESTING)."""


def from_struct(struct: struct_pb2.Struct) -> dict:
    """The Struct's JSON form (as json_format.MessageToDict gives it), one frame per level of
    nesting, so inputs nested as deep as an SDK sends them are read (MessageToDict spends six);
    TooDeep past DEEPEST_JUDGED_NESTING levels, so everything after this reads every value it gets."""
    return _from_fields(struct.fields, 1)


def _from_fields(fields, depth: int) -> dict:
    if depth > DEEPEST_JUDGED_NESTING:
        raise TooDeep(depth)
    converted = {}
    for key, value in fields.items():
        converted[key] = _from_value(value, depth)
    return converted


def _from_value(value: struct_pb2.Value, depth: int) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        return _from_fields(value.struct_value.fields, depth + 1)
    if kind == "list_value":
        if depth + 1 > DEEPEST_JUDGED_NESTING:
            raise TooDeep(depth + 1)
        items = []
        for item in value.list_value.values:
            items.append(_from_value(item, depth + 1))
        return items
    if kind == "null_value" or kind is None:
        return None
    return getattr(value, kind)


def nesting(struct: struct_pb2.Struct) -> int:
    """How many levels of objects and lists a Struct nests (itself one), counted without recursion:
    how deep a value is when it was too deep to read."""
    deepest, waiting = 0, [(struct, 1)]
    while waiting:
        message, depth = waiting.pop()
        deepest = max(deepest, depth)
        values = message.fields.values() if isinstance(message, struct_pb2.Struct) else message.values
        for value in values:
            kind = value.WhichOneof("kind")
            if kind in ("struct_value", "list_value"):
                waiting.append((getattr(value, kind), depth + 1))
    return deepest


def to_struct(values: dict) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(values)
    return struct


def _sig(value: Any) -> Any:
    return value.get(SIG) if isinstance(value, dict) else None


def is_unknown(value: Any) -> bool:
    return value == UNKNOWN or (_sig(value) == OUTPUT_VALUE_SIG and "value" not in value)


def secret(value: Any) -> dict:
    return {SIG: SECRET_SIG, "value": value}


def downgrade(value: Any) -> Any:
    """The value as the engine sends it to an analyzer or a provider that keeps neither resource
    references nor output values (MarshalOptions{KeepUnknowns, KeepSecrets})."""
    sig = _sig(value)
    if sig == RESOURCE_SIG:
        # A custom resource's reference carries its id ("" or unknown in a first preview);
        # a component's carries none and is sent as its URN.
        if "id" in value:
            return UNKNOWN if value["id"] in ("", UNKNOWN) else value["id"]
        return value.get("urn", "")
    if sig == OUTPUT_VALUE_SIG:
        inner = downgrade(value["value"]) if "value" in value else UNKNOWN
        return secret(inner) if value.get("secret") else inner
    if sig == SECRET_SIG:
        return secret(downgrade(value.get("value")))
    return _each_item(value, downgrade)


def unwrap_secrets(value: Any) -> Any:
    """The value with every secret replaced by what it holds (what a provider computes from)."""
    sig = _sig(value)
    if sig == SECRET_SIG:
        return unwrap_secrets(value.get("value"))
    return _each_item(value, unwrap_secrets)


def _each_item(value: Any, convert: Callable[[Any], Any]) -> Any:
    """A map's or list's items each converted; an asset or archive (a map on the wire) and a
    scalar as they are."""
    if _sig(value) in (ASSET_SIG, ARCHIVE_SIG):
        return value
    if isinstance(value, dict):
        return {key: convert(item) for key, item in value.items()}
    if isinstance(value, list):
        return [convert(item) for item in value]
    return value


def has_secret(value: Any) -> bool:
    if _sig(value) == SECRET_SIG:
        return True
    if isinstance(value, dict):
        return any(has_secret(item) for item in value.values())
    if isinstance(value, list):
        return any(has_secret(item) for item in value)
    return False


def resource_urns(value: Any) -> set[str]:
    """The URNs of the resources a value refers to (references and output values' dependencies)."""
    found: set[str] = set()
    sig = _sig(value)
    if sig == RESOURCE_SIG:
        found.add(value.get("urn", ""))
    elif sig == OUTPUT_VALUE_SIG:
        found.update(value.get("dependencies") or [])
        found |= resource_urns(value.get("value"))
    elif isinstance(value, dict):
        for item in value.values():
            found |= resource_urns(item)
    elif isinstance(value, list):
        for item in value:
            found |= resource_urns(item)
    return found


def leaves(value: Any) -> Iterator[Any]:
    """Every scalar a value holds (strings, numbers, booleans, None), at any depth."""
    if isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from leaves(item)
    else:
        yield value


def strings(value: Any) -> Iterator[str]:
    """Every string a value holds, at any depth."""
    return (leaf for leaf in leaves(value) if isinstance(leaf, str))


def plain(value: Any) -> Any:
    """A downgraded value as plain Python: secrets unwrapped, unknowns as UNKNOWN, whole numbers as
    ints (the wire has only doubles), an asset or archive as its kind and where its content comes
    from (an AssetArchive with each member), so a rule or the sandbox can see what an archive holds."""
    sig = _sig(value)
    if sig == SECRET_SIG:
        return plain(value.get("value"))
    if sig == ASSET_SIG or sig == ARCHIVE_SIG:
        return _plain_asset(value)
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return value


def _plain_asset(value: dict) -> dict:
    archive = value.get(SIG) == ARCHIVE_SIG
    if "assets" in value:
        kind = "AssetArchive"
    elif "path" in value:
        kind = "FileArchive" if archive else "FileAsset"
    elif "uri" in value:
        kind = "RemoteArchive" if archive else "RemoteAsset"
    else:
        kind = "StringAsset"
    described: dict[str, Any] = {"archive" if archive else "asset": kind}
    if "assets" in value:
        described["assets"] = {name: _plain_asset(member) for name, member in sorted(value["assets"].items())}
    for attribute in ("path", "uri"):
        if isinstance(value.get(attribute), str):
            described[attribute] = value[attribute]
    return described
