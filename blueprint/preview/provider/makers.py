"""How one property's value is made when no AWS shape is tabled for it (shapes.py): the default the
SDK's docstring states ("Defaults to `128`"), rules by property name (ids, ARNs, URLs, endpoints,
addresses, timestamps...), then the declared type. Makers are built once per type and property, so
a resource after the first of its type costs tens of microseconds; completers add the fields the
provider computes to a nested setting the program gives.
"""

from __future__ import annotations

import base64
import re
from functools import lru_cache
from typing import Any, Callable, Optional

from integration_blueprint.preview.provider.facts import zone_id_prefix
from integration_blueprint.preview.provider.identifiers import (
    EC2_ID_PROPERTIES,
    IAM_PREFIXES,
    TRANSIT_GATEWAY_MODULES,
    Subject,
)
from integration_blueprint.preview.provider.sdk import Field, Kind, normalized, object_fields, snake_case
from integration_blueprint.preview.provider.values import (
    PARTITION,
    TIMESTAMP,
    alnum,
    digest,
    hex_id,
    ip_address,
    upper_id,
    uuid_of,
)
from integration_blueprint.preview.wire import UNKNOWN

# Nested output types can be recursive (WAF statements); deeper than this they come out empty.
MAX_DEPTH = 6

# How the SDK's docstrings state a default: "Defaults to `128`", "The default for this attribute is
# 30", "Minimum and default of -1", "either -1 (forever, and the default value)".
_DOC_DEFAULTS = (
    re.compile(r"(?:[Dd]efaults? (?:to|is|value is)|default for this attribute is|[Dd]efault:)\s+(`)?\"?([\w.$-]+)"),
    re.compile(r"[Dd]efault(?: value)? of (`)?(-?\d+)"),
    re.compile(r"(`)?(-?\d+)`? \([^)]*\bthe default(?: value)?\)"),
)
# "Defaults to `100` for DynamoDB, Kinesis, MQ and MSK, `10` for SQS": a default that depends on
# something else is no one value.
_CONDITIONAL = re.compile(r"`?\"?\s+(?:for|if|when|unless|on)\b")


def doc_default(field: Field) -> Any:
    """The default the SDK's docstring states for the property, converted to its declared type."""
    found = next((m for pattern in _DOC_DEFAULTS for m in [pattern.search(field.doc)] if m), None)
    if not found or _CONDITIONAL.match(field.doc, found.end()):
        return None
    quoted, text = found.group(1) is not None, found.group(2).rstrip(".")
    try:
        if field.kind == "int":
            return int(text)
        if field.kind == "float":
            return float(text)
    except ValueError:
        return None
    if field.kind == "bool":
        return {"true": True, "false": False}.get(text.lower())
    if field.kind == "str" and quoted:  # prose ("Default: System chosen") is no value
        return text
    return None


def _string_rule(wire: str, module: str, naming_prop: str, input_like: bool = False) -> Optional[Maker]:
    """The AWS shape of a string property, judged by its name (None: the name says nothing). A
    setting the program left out (`input_like`) is judged by the names that identify the resource
    only: AWS leaves the others empty (no KMS key, no DLQ, no image...)."""
    low = wire.lower()

    def nested(s: Subject, path: str) -> bool:  # a property inside a nested object
        return path != wire

    if low == "arn":
        return lambda s, path: f"{s.arn}/{hex_id(s.seed(path), 8)}" if nested(s, path) else s.arn
    if low == "id":
        return lambda s, path: hex_id(s.seed(path), 17) if nested(s, path) else s.id
    if low in ("name", naming_prop.lower()):
        return lambda s, path: f"{s.logical}-{hex_id(s.seed(path), 7)}" if nested(s, path) else s.physical
    if low.endswith("region"):
        return lambda s, path: s.region
    if low in ("accountid", "ownerid", "owner", "registryid", "owneraccountid"):
        return lambda s, path: s.account
    if low == "availabilityzone":
        return lambda s, path: f"{s.region}a"
    if low == "availabilityzoneid":
        return lambda s, path: f"{zone_id_prefix(s.region)}-az1"
    if low == "partition":
        return constant(PARTITION)
    if low.endswith("ip") or low.endswith("ipaddress"):  # AWS assigns addresses nobody asked for
        private = "private" in low
        return lambda s, path: ip_address(s.seed(path), private)
    if input_like:
        return None
    if low.endswith("description") or low.endswith("ipv6cidrblock"):
        return constant("")
    if low.endswith("arn"):
        service = IAM_PREFIXES.get(module, module)
        kind = snake_case(wire[:-3]).replace("_", "-")
        return lambda s, path: f"arn:{PARTITION}:{service}:{s.region}:{s.account}:{kind}/{hex_id(s.seed(path), 12)}"
    if low.endswith("id"):
        stem = normalized(wire[:-2])
        if module in TRANSIT_GATEWAY_MODULES and stem.endswith("routetable"):
            stem = "transitgatewayroutetable"
        prefix = next((p for key, p in EC2_ID_PROPERTIES.items() if stem.endswith(key)), None)
        if prefix is not None:
            return lambda s, path: f"{prefix}-{hex_id(s.seed(path), 17)}"
        if low.endswith("zoneid"):
            return lambda s, path: "Z" + upper_id(s.seed(path), 13)
        if low.endswith("keyid"):
            return lambda s, path: uuid_of(s.seed(path))
        if module.startswith("apigateway"):
            return lambda s, path: alnum(s.seed(path), 10)
        return lambda s, path: hex_id(s.seed(path), 17)
    if low.endswith("dns"):
        return lambda s, path: f"{s.physical.lower()}-{hex_id(s.seed(path), 8)}.{s.region}.{module}.amazonaws.com"
    if low.endswith("url") or low.endswith("uri"):
        return lambda s, path: f"https://{s.physical.lower()}.{module}.{s.region}.amazonaws.com/"
    if low.endswith(("endpoint", "dnsname", "domainname")) or low == "fqdn":
        return lambda s, path: (f"{s.physical.lower()}.{alnum(s.seed(path), 10)}.{s.region}."
                                f"{module}.amazonaws.com")
    if low.endswith("address"):  # an endpoint's host name (an ElastiCache primary endpoint...)
        return lambda s, path: (f"{s.physical.lower()}.{alnum(s.seed(path), 6)}.{zone_id_prefix(s.region)}."
                                f"{module}.amazonaws.com")
    if low.endswith("cidrblock"):
        return constant("10.0.0.0/16")
    if (low.endswith(("date", "time", "timestamp", "createdat", "updatedat", "modifiedat")) or low == "lastmodified"
            ) and not low.endswith("runtime"):
        return constant(TIMESTAMP)
    if low.endswith("sha256") or low.endswith("hash"):
        return lambda s, path: base64.b64encode(digest(s.seed(path))).decode()
    if low in ("etag", "checksum") or low.endswith("checksum"):
        return lambda s, path: hex_id(s.seed(path), 32)
    if low == "version" or low.endswith("version"):
        return constant("1")
    if low in ("status", "state"):
        return constant(RESOURCE_STATES.get(module, "ACTIVE"))
    return None


# What a service reports as a healthy resource's state, where it is not "ACTIVE" (its API reference).
RESOURCE_STATES = {"ec2": "available", "rds": "available", "elasticache": "available", "lambda": "Active",
                   "acm": "ISSUED", "cloudfront": "Deployed", "ec2transitgateway": "available"}


# A maker answers one property of one resource: (subject, property path) -> value. Makers are built
# once per type and property, so the per-resource cost is the values' own (a hash, an f-string).
Maker = Callable[[Subject, str], Any]


def _tags_all(tags: Any) -> Any:
    """The resource's tags with the provider's default tags (none offline): its own, or unknown."""
    return dict(tags) if isinstance(tags, dict) else UNKNOWN if tags == UNKNOWN else {}


class Constant:
    """A maker whose value is the same for every resource (an immutable scalar)."""

    def __init__(self, value: Any):
        self.value = value

    def __call__(self, s: Subject, path: str) -> Any:
        return self.value


def constant(value: Any) -> Maker:
    return Constant(value)


# What a setting the program left out (an input the provider also reports) comes back as, when the
# SDK states no default for it: a resource keeps it unset, as the program wrote it (an empty
# placeholder such as a "" redrive policy would read as set to whoever checks the resource); a data
# source answers AWS's empty value ("", 0, false, []) for what the resource it describes lacks.
OUTPUT = ""  # not a setting: the provider makes the value
SETTING_UNSET = "unset"
SETTING_EMPTY = "empty"


def field_maker(field: Field, module: str, naming_prop: str, left_out: str, depth: int) -> Maker:
    stated = doc_default(field)
    if stated is not None:
        return constant(stated)
    return _kind_maker(field.kind, field.wire, module, naming_prop, left_out, depth)


@lru_cache(maxsize=None)
def _kind_maker(kind: Kind, wire: str, module: str, naming_prop: str, left_out: str, depth: int) -> Maker:
    """A value of the declared kind for a property the provider always sets: made up by its name or
    from its type; a setting the program left out as `left_out` says (see SETTING_UNSET)."""
    unset = left_out == SETTING_UNSET
    if kind == "str":
        rule = _string_rule(wire, module, naming_prop, input_like=bool(left_out))
        if rule is not None:
            return rule
        if left_out:
            return constant(None if unset else "")
        label = snake_case(wire).replace("_", "-")
        return lambda s, path: f"{label}-{hex_id(s.seed(path), 8)}"
    if unset and kind != "any" and not (isinstance(kind, tuple) and kind[0] == "map" and wire == "tagsAll"):
        return constant(None)
    if kind == "int":
        return constant(1 if wire.lower().endswith("version") or wire.lower() == "revision" else 0)
    if kind == "float":
        return constant(0.0)
    if kind == "bool":
        return constant(False)
    if kind == "any":
        return lambda s, path: {}
    tag = kind[0]
    if tag == "map":
        if wire == "tagsAll":
            return lambda s, path: _tags_all(s.get("tags"))
        return lambda s, path: {}
    if tag == "list":
        if left_out or depth >= MAX_DEPTH:
            return lambda s, path: []
        item = _kind_maker(kind[1], wire[:-1] if wire.endswith("s") else wire, module, naming_prop, OUTPUT, depth + 1)
        return lambda s, path: [item(s, f"{path}[0]")]
    if tag == "object":
        if depth >= MAX_DEPTH:
            return lambda s, path: {}
        # A nested object: the fields the provider always sets filled, the others their stated
        # default or None. Inside a setting the program left out, the fields are AWS's empty values.
        fields = [(f.wire, field_maker(f, module, naming_prop, left_out, depth + 1) if f.required
                   else constant(doc_default(f))) for f in object_fields(kind[1], kind[2])]
        return lambda s, path: {wire: make(s, f"{path}.{wire}") for wire, make in fields}
    return constant(None)


Completer = Callable[[Subject, str, Any], Any]


@lru_cache(maxsize=None)
def completer(kind: Kind, module: str, naming_prop: str, depth: int) -> Optional[Completer]:
    """For a nested object (or a list of them) the program gave: the value with the fields the
    provider computes added (an EKS cluster's `vpcConfig.clusterSecurityGroupId`, a security group
    rule's defaults...). None for a kind that has no fields."""
    if not isinstance(kind, tuple) or depth >= MAX_DEPTH:
        return None
    if kind[0] == "list":
        item = completer(kind[1], module, naming_prop, depth + 1)
        if item is None:
            return None
        return lambda s, path, value: ([item(s, f"{path}[{i}]", v) for i, v in enumerate(value)]
                                       if isinstance(value, list) else value)
    if kind[0] != "object":
        return None
    fields = [(f.wire, field_maker(f, module, naming_prop, OUTPUT, depth + 1) if f.required
               else constant(doc_default(f)), completer(f.kind, module, naming_prop, depth + 1))
              for f in object_fields(kind[1], kind[2])]

    def complete(s: Subject, path: str, value: Any) -> Any:
        if not isinstance(value, dict):
            return value  # unknown, or a shape the SDK does not declare: as given
        out = dict(value)
        for wire, make, nested in fields:
            given = value.get(wire)
            if given is None:
                out[wire] = make(s, f"{path}.{wire}")
            elif nested is not None:
                out[wire] = nested(s, f"{path}.{wire}", given)
        return out
    return complete

