"""The emulator's whole world after a run, read from moto's own backends: every table, bucket,
queue, stream, topic, state machine and function in every account and region a request reached,
with their settings, and whatever any other service holds. Nothing here knows which operations
write: a PartiQL INSERT, a multipart upload, an SES send, a Firehose record or a queue a function
created all show up as the state they left (drill/outcomes.py compares two runs' worlds).

A place is named as a person reads it (`table orders`, `queue receipts`, `ses sent_messages`) and
holds keys -> values: an item's key, an object's key, `(settings)` for a resource's configuration,
"" for what has no key of its own (the messages left in a queue, the records of a stream), compared
as a multiset.

What is set aside is named in one place, SET_ASIDE (fields) and DRIVEN (the contents of what the
drill itself feeds), each with why; outcomes.py adds what is compared as its kind (times, ids).
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
from collections import defaultdict
from decimal import Decimal
from typing import Any, Callable, Iterable, Iterator, Optional

# Fields set aside wherever they appear (moto's attribute names and AWS's), with why. Each differs
# between two correct runs by how the deliveries went, not by what the code did.
SET_ASIDE: dict[str, str] = {
    "receipt_handle": "a receipt handle is issued per receive",
    "ReceiptHandle": "a receipt handle is issued per receive",
    "sequence_number": "a sequence number counts every put and receive before it (Kinesis, FIFO SQS)",
    "SequenceNumber": "a sequence number counts every put and receive before it (Kinesis, FIFO SQS)",
    "approximate_receive_count": "how often a message was received: the faults' retries",
    "approximate_first_receive_timestamp": "when a message was first received",
    "visible_at": "a message's visibility: when the last receive happened",
    "delayed_until": "a message's delay: when it was sent",
    "sent_timestamp": "when a message was sent",
    "explicit_hash_key": "derived from the partition key, which is compared",
    "ApproximateNumberOfMessages": "a count of the queue's messages, which are compared themselves",
    "ApproximateNumberOfMessagesNotVisible": "in flight or not: when the last receive happened",
    "ApproximateNumberOfMessagesDelayed": "a count of the queue's messages, which are compared themselves",
    "ItemCount": "a count of the table's items, which are compared themselves",
    "TableSizeBytes": "the size of the table's items, which are compared themselves",
    "IndexSizeBytes": "the size of an index's items, which are compared themselves",
}

# The contents of what the drill itself feeds and drains are its input and the pattern's retry
# mechanism, not an outcome: the records of the streams it puts into (each mapping's source), the
# messages of the component's own queues (its lanes and DLQs, judged by the driver's own checks of
# what is parked), the executions of the state machines it starts. Their settings are compared.
DRIVEN = ("records of each stream a mapping reads (the drill's input)",
          "messages of the component's own queues (its lanes and DLQs: the driver checks what is parked)",
          "executions of the program's state machines (the drill starts them)",
          "objects of the component's own buckets (a Map's input files, which the drill writes with its duplicate "
          "rows, and the results its executions write)")

# Set aside in the models of a service without a reader of its own (and only there: never in what a
# function wrote, an item's or a message's own fields).
GENERIC_SET_ASIDE: dict[str, str] = {
    "id": "a model's id is drawn by the emulator (an SES message id)",
    "message_id": "a message id is drawn per send",
}

# Services whose backends hold nothing of a run's own (moto's control API, credentials).
NOT_STATE = {"moto_api", "sts"}
# Bodies above this are compared by their SHA-256.
BODY_TEXT_LIMIT = 65_536
SETTINGS = "(settings)"
# An object's own metadata (its other headers are how it was sent: checksums, content types).
USER_METADATA = "x-amz-meta-"
# How deep a model of a service without a reader of its own is followed.
GENERIC_DEPTH = 6

World = dict  # place -> key -> [values]


def backends() -> Iterator[tuple[str, Any]]:
    """(service, backend) for every account and region a request reached. moto keeps the services
    in use in BackendDict._instances, the registry its own reset walks (verified on moto 5.2)."""
    from moto.core.base_backend import BackendDict

    for service_backends in list(BackendDict._instances):  # type: ignore[misc]
        for per_region in list(dict.values(service_backends)):
            for backend in list(dict.values(per_region)):
                yield service_backends.service_name, backend


def read_world(sandbox: Any, own_queues: Iterable[str] = ()) -> World:
    """The whole world of `sandbox`'s emulator (see the module docstring). `own_queues`: the
    component's own queue URLs or names (DRIVEN)."""
    world: World = defaultdict(lambda: defaultdict(list))
    own = {_last(q) for q in own_queues}
    fed_streams = {m.stream_name for m in getattr(sandbox, "kinesis_mappings", [])}
    started = set(getattr(sandbox, "state_machines", {}).values())
    own_buckets = component_buckets(getattr(sandbox, "recorded", None))
    for service, backend in backends():
        reader = _READERS.get(service)
        if service in NOT_STATE:
            continue
        if reader is not None:
            reader(world, backend, own=own, fed_streams=fed_streams, started=started, own_buckets=own_buckets)
        else:
            _generic(world, service, backend)
    _sandbox_functions(world, sandbox)
    return world


# The kinds of resource whose settings are the program's infrastructure: a function changing one (a
# queue's redrive re-pointed) or making one (a queue of its own) changed what the program declares.
INFRASTRUCTURE = ("table", "bucket", "queue", "stream", "topic", "state machine", "function", "mapping")


def infrastructure(world: World) -> dict[str, list]:
    """The settings of every resource of an INFRASTRUCTURE kind in `world`, by place."""
    return {place: list(keyed[SETTINGS]) for place, keyed in world.items()
            if SETTINGS in keyed and any(place.startswith(f"{kind} ") for kind in INFRASTRUCTURE)}


def _tables(world: World, backend: Any, **_: Any) -> None:
    for name, table in list(backend.tables.items()):
        place = f"table {name}"
        world[place][SETTINGS].append(plain(table.describe()["TableDescription"]))
        keys = [k for k in (table.hash_key_attr, table.range_key_attr) if k]
        for item in table.all_items():
            values = item.to_regular_json()
            world[place][", ".join(f"{k}={_scalar(values.get(k))}" for k in keys)].append(data(values))


def component_buckets(recorded: Any) -> set[str]:
    """The buckets a blueprint component declares (not the program's own): DRIVEN."""
    if recorded is None:
        return set()
    components = {r.urn for r in recorded.resources if r.type.startswith("blueprint:index:")}
    return {str(r.outputs.get("bucket")) for token in ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2")
            for r in recorded.of_type(token) if r.parent in components}


def _buckets(world: World, backend: Any, *, own_buckets: set, **_: Any) -> None:
    for name, bucket in list(backend.buckets.items()):
        place = f"bucket {name}"
        settings = {k: v for k, v in vars(bucket).items() if k not in ("keys", "multiparts") and not k.startswith("_")}
        world[place][SETTINGS].append(plain(settings))
        if name in own_buckets:
            continue
        for key in list(bucket.keys):
            for version in bucket.keys.getlist(key, []):
                value = getattr(version, "value", None)
                if value is None:  # a delete marker
                    world[place][key].append({"deleted": True})
                    continue
                metadata = {k.lower(): v for k, v in dict(getattr(version, "metadata", {}) or {}).items()
                            if k.lower().startswith(USER_METADATA)}
                world[place][key].append({"body": body_text(value), "metadata": data(metadata)})
        for upload in list(bucket.multiparts.values()):  # started, neither completed nor aborted
            world[place][f"(multipart upload) {upload.key_name}"].append(
                {"parts": len(getattr(upload, "parts", {}) or {})})


def _queues(world: World, backend: Any, *, own: set, **_: Any) -> None:
    for name, queue in list(backend.queues.items()):
        place = f"queue {name}"
        world[place][SETTINGS].append(plain(queue.attributes))
        if name in own:
            continue
        for message in list(queue._messages):  # every message, in flight or not (moto keeps them here)
            world[place][""].append({"body": body_text(message.body),
                                     "attributes": data(message.message_attributes),
                                     "group": message.group_id})


def _streams(world: World, backend: Any, *, fed_streams: set, **_: Any) -> None:
    for name, stream in list(backend.streams.items()):
        place = f"stream {name}"
        world[place][SETTINGS].append(plain({"shards": len(stream.shards), "retention_hours": stream.retention_period_hours,
                                             "mode": getattr(stream, "stream_mode", None),
                                             "encryption": getattr(stream, "encryption_type", None)}))
        if name in fed_streams:
            continue
        for shard in list(stream.shards.values()):
            for record in list(shard.records.values()):
                world[place][""].append({"partition_key": record.partition_key,
                                         "data": body_text(base64.b64decode(record.data))})


def _topics(world: World, backend: Any, **_: Any) -> None:
    for arn, topic in list(backend.topics.items()):
        place = f"topic {_last(arn)}"
        world[place][SETTINGS].append(plain({"fifo": topic.fifo_topic, "policy": topic.policy,
                                             "delivery_policy": topic.delivery_policy}))
        sent = [{"message": body_text(m), "subject": s, "attributes": data(a), "group": g}
                for _, m, s, a, g in list(topic.sent_notifications)]
        if topic.fifo_topic:
            # moto keeps each publish; SNS drops a FIFO repeat (its deduplication id) within 5 minutes.
            sent = list({json.dumps(m, sort_keys=True, default=str): m for m in sent}.values())
        world[place][""].extend(sent)
    for subscription in list(backend.subscriptions.values()):
        world[f"topic {_last(subscription.topic.arn)}"][f"subscription {subscription.endpoint}"].append(
            plain({"protocol": subscription.protocol, "attributes": subscription.attributes}))


def _state_machines(world: World, backend: Any, *, started: set, **_: Any) -> None:
    for machine in list(backend.state_machines):
        place = f"state machine {machine.name}"
        world[place][SETTINGS].append(plain({"definition": machine.definition, "type": machine.type,
                                             "role": machine.roleArn}))
        if machine.name in started:
            continue
        for execution in list(machine.executions):
            world[place][""].append(data({"name": execution.name, "input": execution.execution_input}))


def _lambda(world: World, backend: Any, **_: Any) -> None:
    """Functions and mappings made through moto's Lambda API (the sandbox runs the program's own
    functions itself: _sandbox_functions)."""
    for function in backend.list_functions():
        world[f"function {function.function_name}"][SETTINGS].append(plain(function.get_configuration()))
    for mapping in backend.list_event_source_mappings(event_source_arn=None, function_name=None):
        world[f"mapping {mapping.event_source_arn} -> {_last(mapping.function_arn)}"][SETTINGS].append(
            plain(mapping.get_configuration()))


def _iam(world: World, backend: Any, **_: Any) -> None:
    """What an account holds of its own (AWS's managed policies aside: every account has them)."""
    for kind in ("roles", "users", "groups"):
        for name, model in list(getattr(backend, kind, {}).items()):
            world[f"iam {kind}"][getattr(model, "name", name)].append(
                plain({"policies": getattr(model, "policies", {}),
                       "managed": sorted(getattr(model, "managed_policies", {}) or {})}))
    for arn, policy in list(getattr(backend, "managed_policies", {}).items()):
        if ":iam::aws:policy" not in arn:
            world["iam policies"][policy.name].append(plain(policy.default_version.document))


def _sandbox_functions(world: World, sandbox: Any) -> None:
    """The program's functions and their mappings as the sandbox runs them: their configuration."""
    for function in {f.arn: f for f in getattr(sandbox, "functions", {}).values()}.values():
        world[f"function {function.name}"][SETTINGS].append(plain({
            "handler": function.handler, "timeout": function.timeout, "memory_mb": function.memory_mb,
            "environment": {k: v for k, v in function.environment.items() if not k.startswith("AWS_")}}))
    for mapping in getattr(sandbox, "kinesis_mappings", []):
        world[f"mapping {mapping.stream_name} -> {mapping.function.name}"][SETTINGS].append(plain(mapping.settings))
    for mapping in getattr(sandbox, "sqs_mappings", []):
        world[f"mapping {_last(mapping.queue_url)} -> {getattr(mapping.function, 'name', '')}"][SETTINGS].append(
            plain({"batch_size": mapping.batch_size, "reports_failures": mapping.report_batch_item_failures}))


def _generic(world: World, service: str, backend: Any) -> None:
    """A service without a reader of its own: each collection its backend holds (SES's sent
    messages, Firehose's delivery streams, EventBridge's rules), model by model."""
    set_aside = {**SET_ASIDE, **GENERIC_SET_ASIDE}
    for name, value in sorted(vars(backend).items()):
        if name.startswith("_") or name in set_aside:
            continue
        if isinstance(value, dict) and value:
            for key, model in list(value.items()):
                world[f"{service} {name}"][str(key)].append(plain(model, set_aside=set_aside))
        elif isinstance(value, (list, tuple, set)) and value:
            world[f"{service} {name}"][""].extend(plain(model, set_aside=set_aside) for model in list(value))


_READERS: dict[str, Callable[..., None]] = {
    "dynamodb": _tables, "s3": _buckets, "sqs": _queues, "kinesis": _streams, "sns": _topics,
    "stepfunctions": _state_machines, "lambda": _lambda, "iam": _iam}


def data(value: Any) -> Any:
    """What a function wrote (an item, a message's attributes), as JSON-like data, every field kept."""
    return plain(value, set_aside={})


def plain(value: Any, depth: int = 0, seen: frozenset = frozenset(), set_aside: Optional[dict] = None) -> Any:
    """`value` as JSON-like data: a model as its public attributes (`set_aside`, by default
    SET_ASIDE, dropped), bytes as text, a datetime as ISO text; a backend or a callable as nothing."""
    from moto.core.base_backend import BaseBackend

    set_aside = SET_ASIDE if set_aside is None else set_aside
    if value is None or isinstance(value, (bool, int, float, str, Decimal)):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return body_text(bytes(value))
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if depth >= GENERIC_DEPTH or id(value) in seen or isinstance(value, BaseBackend) or callable(value):
        return None
    seen = seen | {id(value)}
    if isinstance(value, dict):
        return {str(k): plain(v, depth + 1, seen, set_aside) for k, v in list(value.items()) if str(k) not in set_aside}
    if isinstance(value, (list, tuple)):
        return [plain(v, depth + 1, seen, set_aside) for v in list(value)]
    if isinstance(value, (set, frozenset)):
        return sorted((plain(v, depth + 1, seen, set_aside) for v in list(value)), key=lambda v: json.dumps(v, default=str))
    attributes = getattr(value, "__dict__", None)
    if attributes is None:
        return str(value)
    return {k: plain(v, depth + 1, seen, set_aside) for k, v in list(attributes.items())
            if not k.startswith("_") and k not in set_aside and not callable(v)}


def body_text(body: Any) -> str:
    """A body as text; above BODY_TEXT_LIMIT, its SHA-256."""
    if hasattr(body, "read"):
        body = body.read()
    if isinstance(body, str):
        body = body.encode()
    data = bytes(body or b"")
    if len(data) > BODY_TEXT_LIMIT:
        return "sha256:" + hashlib.sha256(data).hexdigest()
    return data.decode("utf-8", "replace")


def _scalar(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _last(target: str) -> str:
    """A queue URL, topic or stream ARN as its last part (the name)."""
    text = str(target)
    return text.replace(":", "/").rsplit("/", 1)[-1] if text.startswith(("https://", "http://", "arn:")) else text
