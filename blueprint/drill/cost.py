"""What a pattern would cost on AWS per 1,000,000 records, from what its drill counted.

Measured in the drill (the handlers' own AWS calls, read from the sandbox's journal, so only calls
that succeeded): SQS requests in 64 KB chunks, DynamoDB write and read units, Kinesis PUT payload
units; and from the report: Lambda invocations and the records delivered to functions
(duplicates and re-reads included). Modelled, because Lambda and producers make these calls
outside the handlers: an SQS event source mapping's ReceiveMessage and DeleteMessageBatch per
invocation, one PUT payload unit per record produced to a stream, the stream's shard-hours for a
month that carries the million records. Step Functions as the sandbox's Distributed Map executor
counted it (transitions per child started and inside Standard children, Express requests and
duration); another state machine as a transition per state a record passes (plus one per retry).
Prices: aws_limits (us-east-1, free tiers not deducted).
S3 and CloudWatch are left out: they are cents per million here.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from decimal import Decimal
from typing import Any, Optional

from integration_blueprint.core import aws_limits as aws
from integration_blueprint.preview.recording import RecordedStack
from integration_blueprint.sandbox.distributed_map import ExpressChild, StateMachineUsage

RECORDS = 1_000_000
# Billed Lambda duration per record delivered to a function: the reference handlers do one or
# two DynamoDB round trips per record (about 5-10 ms each in-region) and under 1 ms of their own
# work (measured in the sandbox: 0.23 ms per invocation with a stubbed client).
LAMBDA_MS_PER_RECORD = 20

_SQS_OPERATIONS = {"SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessage", "DeleteMessageBatch",
                   "ChangeMessageVisibility", "ChangeMessageVisibilityBatch"}


# ---- DynamoDB units ----------------------------------------------------------------------------

def attribute_value_size(value: dict) -> int:
    """Bytes of one attribute value, per "Item sizes and formats" (DynamoDB developer guide)."""
    (kind, content), = value.items()
    if kind == "S":
        return len(content.encode())
    if kind == "N":
        digits = Decimal(content).normalize().as_tuple().digits
        return (len(digits) + 1) // 2 + 1  # two significant digits per byte, plus one
    if kind == "B":
        return len(content)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind in ("SS", "NS", "BS"):
        return sum(attribute_value_size({kind[0]: member}) for member in content)
    if kind == "L":
        return 3 + sum(1 + attribute_value_size(member) for member in content)
    if kind == "M":
        return 3 + sum(1 + len(name.encode()) + attribute_value_size(member) for name, member in content.items())
    raise ValueError(f"unknown attribute type {kind}")


def item_size(item: dict) -> int:
    return sum(len(name.encode()) + attribute_value_size(value) for name, value in item.items())


def write_units(size: int) -> int:
    return max(1, math.ceil(size / aws.DYNAMODB_WRITE_UNIT_BYTES))


def read_units(size: int, consistent: bool) -> float:
    units = max(1, math.ceil(size / aws.DYNAMODB_READ_UNIT_BYTES))
    return units if consistent else units * aws.DYNAMODB_EVENTUALLY_CONSISTENT_READ_FACTOR


# ---- the meter ---------------------------------------------------------------------------------

class UsageMeter:
    """Bills every successful handler call (the sandbox's journal, replayed) that AWS bills per request.

    Write units come from the item in the request (an update or delete bills its key's size: the
    stored item is not in the request; the reference items are all under 1 KB, one unit each);
    read units from the items returned."""

    def __init__(self) -> None:
        self.sqs_requests: Counter = Counter()  # "fifo" / "standard" -> billed requests
        self.dynamodb_write_units = 0.0
        self.dynamodb_read_units = 0.0
        self.kinesis_put_payload_units = 0

    def _write(self, request: dict, factor: int = 1) -> None:
        self.dynamodb_write_units += factor * write_units(item_size(request.get("Item") or request.get("Key") or {}))

    def __call__(self, operation: str, params: dict, response: dict) -> None:
        if operation in _SQS_OPERATIONS:
            kind = "fifo" if str(params.get("QueueUrl", "")).endswith(".fifo") else "standard"
            payload = sum(len(str(entry.get("MessageBody", "")).encode()) for entry in params.get("Entries", [params]))
            self.sqs_requests[kind] += max(1, math.ceil(payload / aws.SQS_BILLING_CHUNK_BYTES))
        elif operation in ("PutItem", "UpdateItem", "DeleteItem"):
            self._write(params)
        elif operation == "BatchWriteItem":
            for requests in params.get("RequestItems", {}).values():
                for request in requests:
                    self._write(request.get("PutRequest") or request.get("DeleteRequest") or {})
        elif operation == "TransactWriteItems":
            for entry in params.get("TransactItems", []):
                for request in entry.values():
                    self._write(request, aws.DYNAMODB_TRANSACTION_FACTOR)
        elif operation == "GetItem":
            self.dynamodb_read_units += read_units(item_size(response.get("Item") or {}),
                                                   bool(params.get("ConsistentRead")))
        elif operation in ("Query", "Scan"):
            self.dynamodb_read_units += read_units(sum(item_size(i) for i in response.get("Items", [])),
                                                   bool(params.get("ConsistentRead")))
        elif operation in ("PutRecord", "PutRecords"):
            for record in params.get("Records", [params]):
                data = record.get("Data", b"")
                size = len(data if isinstance(data, bytes) else str(data).encode())
                self.kinesis_put_payload_units += max(1, math.ceil(size / aws.KINESIS_PUT_PAYLOAD_UNIT_BYTES))


# ---- per million records -----------------------------------------------------------------------

def usage_per_million(meter: UsageMeter, scope: RecordedStack, report: Any,
                      state_machines: Optional[StateMachineUsage] = None) -> dict:
    """The pattern's AWS usage scaled to 1,000,000 records sent, and its cost in USD.

    `scope` is the pattern's part of the recording; its functions' largest configured memory is
    billed for every record delivered. `state_machines` is what the sandbox's Distributed Map
    executor counted as it ran (sandbox/distributed_map.py): Standard transitions (every state
    entered and retry, one per child execution a Map Run started, a Standard child's own), and
    each Express child's request and duration; a state machine it did not run is modelled from its
    definition (a transition per state per record)."""
    scale = RECORDS / max(report.sent, 1)
    memory_mb = max((r.inputs.get("memorySize") or aws.LAMBDA_MEMORY_DEFAULT_MB
                     for r in scope.of_type("aws:lambda/function:Function")), default=aws.LAMBDA_MEMORY_DEFAULT_MB)
    delivered = report.sent + report.injected.get("duplicates", 0) + report.injected.get("records_reread", 0)
    invocations = report.invocations * scale
    usage: dict[str, float] = {
        "lambda_requests": invocations,
        "lambda_gb_seconds": delivered * scale * LAMBDA_MS_PER_RECORD / 1000 * memory_mb / 1024,
        "sqs_fifo_requests": meter.sqs_requests["fifo"] * scale,
        "sqs_standard_requests": meter.sqs_requests["standard"] * scale,
        "dynamodb_write_units": meter.dynamodb_write_units * scale,
        "dynamodb_read_units": meter.dynamodb_read_units * scale,
        "kinesis_put_payload_units": meter.kinesis_put_payload_units * scale,
        "kinesis_shard_hours": 0.0,
        "state_transitions": 0.0,
        "express_requests": 0.0,
        "express_gb_seconds": 0.0,
    }
    queues = {r.outputs.get("arn"): r for r in scope.of_type("aws:sqs/queue:Queue")}
    streams = scope.of_type("aws:kinesis/stream:Stream")
    for mapping in scope.of_type("aws:lambda/eventSourceMapping:EventSourceMapping"):
        queue = queues.get(mapping.inputs.get("eventSourceArn"))
        if queue is not None:  # Lambda's poller: a receive and a batch delete per invocation
            usage["sqs_fifo_requests" if queue.inputs.get("fifoQueue") else "sqs_standard_requests"] += 2 * invocations
    if streams:
        usage["kinesis_put_payload_units"] += RECORDS  # the producer's records, each under 25 KB
        usage["kinesis_shard_hours"] = sum(s.inputs.get("shardCount") or 1 for s in streams) * aws.HOURS_PER_MONTH
    counted = False
    if state_machines is not None and state_machines.standard_transitions > 0:
        counted = True
        usage["state_transitions"] = state_machines.standard_transitions * scale
        usage["express_requests"] = len(state_machines.express_children) * scale
        usage["express_gb_seconds"] = sum((express_gb_seconds(c) for c in state_machines.express_children), 0.0) * scale
    for machine in scope.of_type("aws:sfn/stateMachine:StateMachine") if not counted else []:
        top, per_item = _state_counts(machine.inputs.get("definition", "{}"))
        usage["state_transitions"] += top * scale + per_item * RECORDS + max(0.0, invocations - RECORDS)
    usage["lambda_memory_mb"] = memory_mb
    usage["cost_usd"] = cost_usd(usage)  # type: ignore[assignment]
    return usage


def express_gb_seconds(child: ExpressChild) -> float:
    """An Express child's billed duration: its Lambda work (LAMBDA_MS_PER_RECORD per record it
    handed a function) and its retry waits, in 100 ms increments, at the smallest memory chunk
    (64 MB: its payloads are a few KB)."""
    milliseconds = child.records * LAMBDA_MS_PER_RECORD + child.waited_seconds * 1000
    increments = max(1, math.ceil(milliseconds / aws.SFN_EXPRESS_BILLING_INCREMENT_MS))
    return increments * aws.SFN_EXPRESS_BILLING_INCREMENT_MS / 1000 * aws.SFN_EXPRESS_MEMORY_CHUNK_MB / 1024


def _state_counts(definition: str) -> tuple[int, int]:
    """(top-level states, states of a Map's item processor) of a state machine definition."""
    try:
        states = json.loads(definition).get("States", {})
    except (TypeError, ValueError):
        return 0, 0
    per_item = sum(len((s.get("ItemProcessor") or s.get("Iterator") or {}).get("States", {}))
                   for s in states.values() if s.get("Type") == "Map")
    return len(states), per_item


def cost_usd(usage: dict) -> dict:
    lambda_ = (usage["lambda_requests"] / 1e6 * aws.PRICE_LAMBDA_PER_MILLION_REQUESTS_USD
               + usage["lambda_gb_seconds"] * aws.PRICE_LAMBDA_PER_GB_SECOND_USD)
    sqs = (usage["sqs_fifo_requests"] / 1e6 * aws.PRICE_SQS_FIFO_PER_MILLION_REQUESTS_USD
           + usage["sqs_standard_requests"] / 1e6 * aws.PRICE_SQS_STANDARD_PER_MILLION_REQUESTS_USD)
    dynamodb = (usage["dynamodb_write_units"] / 1e6 * aws.PRICE_DYNAMODB_PER_MILLION_WRITE_UNITS_USD
                + usage["dynamodb_read_units"] / 1e6 * aws.PRICE_DYNAMODB_PER_MILLION_READ_UNITS_USD)
    kinesis = (usage["kinesis_shard_hours"] * aws.PRICE_KINESIS_PER_SHARD_HOUR_USD
               + usage["kinesis_put_payload_units"] / 1e6 * aws.PRICE_KINESIS_PER_MILLION_PUT_PAYLOAD_UNITS_USD)
    step_functions = (usage["state_transitions"] / 1000 * aws.PRICE_STEP_FUNCTIONS_PER_THOUSAND_TRANSITIONS_USD
                      + usage["express_requests"] / 1e6 * aws.PRICE_STEP_FUNCTIONS_EXPRESS_PER_MILLION_REQUESTS_USD
                      + usage["express_gb_seconds"] * aws.PRICE_STEP_FUNCTIONS_EXPRESS_PER_GB_SECOND_USD)
    parts = {"lambda": lambda_, "sqs": sqs, "dynamodb": dynamodb, "kinesis": kinesis, "step_functions": step_functions}
    return {**{k: round(v, 4) for k, v in parts.items()}, "total": round(sum(parts.values()), 4)}


def summary(usage: dict) -> str:
    """One line for the drill's report."""
    cost = usage["cost_usd"]
    parts = ", ".join(f"{name} ${cost[name]:.2f}" for name in ("lambda", "sqs", "dynamodb", "kinesis", "step_functions")
                      if cost[name])
    return (f"AWS cost per {RECORDS:,} records: ${cost['total']:.2f} ({parts}; us-east-1 on-demand prices, "
            f"this run's faults, {LAMBDA_MS_PER_RECORD} ms at {usage['lambda_memory_mb']} MB billed per record delivered)")
