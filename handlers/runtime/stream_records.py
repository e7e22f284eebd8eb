"""One Kinesis record, whichever way it reached the function, and the event shapes that carry it.

The stream consumers receive a record in one of three shapes:
1. a Kinesis event record (the stream mapping),
2. an SQS message holding Lambda's on-failure record for a stream batch (`KinesisBatchInfo`:
   metadata only; the records must be read back from the stream, see handlers/stream_refetch.py),
3. an SQS message the app-DLQ consumer inserted itself: the full record plus the error, or, for a
   record too large for an SQS message, a reference to it (a one-record `KinesisBatchInfo`, read
   back from the stream like shape 2), or a malformed event record with the reason it is unusable.
This module turns each into a `StreamRecord` so processing code sees one type.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Optional, TypeGuard

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

from integration_blueprint.core.aws_limits import KINESIS_ON_FAILURE_BATCH_INFO_KEY
from integration_blueprint.handlers.runtime.redaction import PayloadFreeError, bounded

# Mark the messages the app-DLQ consumer inserts, and the version of their layout.
INSERTED_RECORD_KIND = "blueprint.stream-record/v1"
INSERTED_REFERENCE_KIND = "blueprint.stream-record-ref/v1"
MALFORMED_RECORD_KIND = "blueprint.malformed-stream-record/v1"
# How much of an exception's message an inserted record keeps.
ERROR_MESSAGE_MAX_CHARS = 2000
# A Kinesis sequence number: ASCII digits, at most 129 of them (the API's SequenceNumber pattern,
# `0|([1-9]\d{0,128})`). str.isdigit() also accepts other scripts' digits and superscripts, which
# int() then refuses or reads differently, and int() refuses more than 4,300 digits.
SEQUENCE_NUMBER_PATTERN = re.compile(r"[0-9]{1,129}")


def is_sequence_number(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and SEQUENCE_NUMBER_PATTERN.fullmatch(value) is not None


class MalformedStreamRecord(PayloadFreeError, ValueError):
    """A Kinesis event record that cannot be read (no `kinesis` object or sequence number, data that
    is not base64). The message gives the reason, never the data."""


class NotJson(PayloadFreeError, ValueError):
    """The record's data is not a JSON document."""


def effect_key(stream_arn: str, shard_id: str, sequence_number: str) -> str:
    """A stream record's unique key (StreamRecord.effect_key), for a record known by its parts."""
    return f"{stream_arn}|{shard_id}|{sequence_number}"


@dataclass(frozen=True)
class StreamRecord:
    stream_arn: str
    shard_id: str
    sequence_number: str
    partition_key: str
    data: bytes
    approximate_arrival_timestamp: Optional[float] = None  # epoch seconds
    # True when the record came back through the Retry-DLQ (the app-DLQ pattern's retry lane).
    redelivered: bool = False

    @property
    def effect_key(self) -> str:
        """Unique per record of a stream (stream, shard, sequence number): an effect that records it
        conditionally in the same write happens once however often the record is redelivered."""
        return effect_key(self.stream_arn, self.shard_id, self.sequence_number)

    def json(self) -> Any:
        try:
            return json.loads(self.data)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            # RecursionError: JSON nested deeper than the parser's recursion limit (~1,000 levels).
            raise NotJson(f"record {self.shard_id}/{self.sequence_number} is not a JSON document this "
                          f"runtime can read ({type(exc).__name__})") from None

    def log_fields(self) -> dict:
        """What every log line about this record carries, so a replay tool can find it again."""
        return {"stream_arn": bounded(self.stream_arn), "shard_id": bounded(self.shard_id),
                "sequence_number": bounded(self.sequence_number), "partition_key": bounded(self.partition_key)}

    # --- shape 1: Kinesis event record ---------------------------------------------------------
    @classmethod
    def from_kinesis_event(cls, record: Any) -> "StreamRecord":
        """The record, or MalformedStreamRecord saying what is wrong with it."""
        kinesis = record.get("kinesis") if isinstance(record, dict) else None
        if not isinstance(kinesis, dict):
            raise MalformedStreamRecord("the event record has no 'kinesis' object")
        sequence_number = kinesis.get("sequenceNumber")
        if not is_sequence_number(sequence_number):
            raise MalformedStreamRecord("the event record has no valid kinesis.sequenceNumber")
        encoded = kinesis.get("data")
        try:
            data = base64.b64decode(encoded, validate=True) if isinstance(encoded, str) else None
        except (binascii.Error, ValueError):
            data = None
        if data is None:
            raise MalformedStreamRecord(f"record {sequence_number}: kinesis.data is missing or not valid base64")
        return cls(
            stream_arn=str(record.get("eventSourceARN") or ""),
            # eventID is "<shardId>:<sequenceNumber>"
            shard_id=str(record.get("eventID") or "").split(":", 1)[0],
            sequence_number=sequence_number,
            partition_key=str(kinesis.get("partitionKey") or ""),
            data=data,
            approximate_arrival_timestamp=kinesis.get("approximateArrivalTimestamp"),
        )

    # --- records read back with GetRecords -----------------------------------------------------
    @classmethod
    def from_get_records(cls, record: dict, *, stream_arn: str, shard_id: str) -> "StreamRecord":
        arrival = record.get("ApproximateArrivalTimestamp")
        if isinstance(arrival, datetime):
            arrival = arrival.timestamp()
        return cls(stream_arn=stream_arn, shard_id=shard_id, sequence_number=record["SequenceNumber"],
                   partition_key=record.get("PartitionKey", ""), data=bytes(record["Data"]),
                   approximate_arrival_timestamp=arrival)

    # --- shape 3: a record the app-DLQ consumer inserted -----------------------------------------
    def to_inserted_message(self, error: BaseException) -> str:
        return json.dumps({
            "kind": INSERTED_RECORD_KIND,
            "streamArn": self.stream_arn,
            "shardId": self.shard_id,
            "sequenceNumber": self.sequence_number,
            "partitionKey": self.partition_key,
            "approximateArrivalTimestamp": self.approximate_arrival_timestamp,
            "data": base64.b64encode(self.data).decode("ascii"),
            "error": _error(error),
            "insertedAt": _now(),
        })

    def to_reference_message(self, error: BaseException, reason: str) -> str:
        """The record by reference: a one-record KinesisBatchInfo the retry lane reads back from the
        stream (while it is retained), for a record whose data does not fit in an SQS message."""
        return json.dumps({
            "kind": INSERTED_REFERENCE_KIND,
            KINESIS_ON_FAILURE_BATCH_INFO_KEY: {
                "streamArn": self.stream_arn, "shardId": self.shard_id, "batchSize": 1,
                "startSequenceNumber": self.sequence_number, "endSequenceNumber": self.sequence_number},
            "partitionKey": self.partition_key,
            "reason": reason,
            "error": _error(error),
            "insertedAt": _now(),
        })

    @classmethod
    def from_inserted_message(cls, body: dict) -> "StreamRecord":
        """The carried record, marked as redelivered; MalformedStreamRecord if the body is not one."""
        fields: dict[str, str] = {}
        for name in ("streamArn", "shardId", "sequenceNumber", "data"):
            value = body.get(name)
            if not isinstance(value, str):
                raise MalformedStreamRecord("the inserted record lacks streamArn, shardId, sequenceNumber or data")
            fields[name] = value
        if not is_sequence_number(fields["sequenceNumber"]):
            raise MalformedStreamRecord("the inserted record's sequenceNumber is not a Kinesis sequence number")
        try:
            data = base64.b64decode(fields["data"], validate=True)
        except (binascii.Error, ValueError):
            raise MalformedStreamRecord("the inserted record's data is not valid base64") from None
        return cls(stream_arn=fields["streamArn"], shard_id=fields["shardId"],
                   sequence_number=fields["sequenceNumber"], partition_key=str(body.get("partitionKey") or ""),
                   data=data, approximate_arrival_timestamp=body.get("approximateArrivalTimestamp"),
                   redelivered=True)


def malformed_record_message(raw: Any, reason: str, *, max_bytes: int) -> str:
    """A Retry-DLQ message for an event record that cannot be read: the reason, the record's ids and
    the record itself when it fits in `max_bytes` (it is data for the person who looks, never logged)."""
    ids = {key: raw.get(key) for key in ("eventID", "eventSourceARN")} if isinstance(raw, dict) else {}
    message = {"kind": MALFORMED_RECORD_KIND, "reason": reason, **ids, "eventRecord": raw, "insertedAt": _now()}
    body = json.dumps(message, default=str)
    if len(body.encode("utf-8")) > max_bytes:
        message["eventRecord"] = None
        message["reason"] = f"{reason} (the event record itself was too large to keep)"
        body = json.dumps(message, default=str)
    return body


def _error(error: BaseException) -> dict:
    return {"type": type(error).__name__, "message": str(error)[:ERROR_MESSAGE_MAX_CHARS]}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def is_kinesis_event(event: dict) -> bool:
    records = event.get("Records") or []
    return bool(records) and records[0].get("eventSource") == "aws:kinesis"


def is_sqs_event(event: dict) -> bool:
    records = event.get("Records") or []
    return bool(records) and records[0].get("eventSource") == "aws:sqs"


def sqs_body(body: str) -> Optional[dict]:
    """The SQS body as a JSON object, or None when it is not one."""
    try:
        parsed = json.loads(body)
    except (ValueError, TypeError, RecursionError):  # RecursionError: nested deeper than the parser goes
        return None
    return parsed if isinstance(parsed, dict) else None


def batch_info(body: Optional[dict]) -> Optional[dict]:
    """Shape 2: Lambda's on-failure record for a stream batch, or None."""
    if body and isinstance(body.get(KINESIS_ON_FAILURE_BATCH_INFO_KEY), dict):
        return body[KINESIS_ON_FAILURE_BATCH_INFO_KEY]
    return None


def is_inserted_record(body: Optional[dict]) -> bool:
    """Shape 3: a record the app-DLQ consumer inserted itself (in full)."""
    return body is not None and body.get("kind") == INSERTED_RECORD_KIND


def inserted_kind(body: Optional[dict]) -> Optional[str]:
    """The kind of a message the app-DLQ consumer inserted (full, by reference, malformed), or None."""
    kind = body.get("kind") if body else None
    return kind if kind in (INSERTED_RECORD_KIND, INSERTED_REFERENCE_KIND, MALFORMED_RECORD_KIND) else None


def route(event: dict, context: Any, *, stream_batch: Callable[[dict], dict],
          retry_message: Callable[[Any], Any]) -> dict:
    """Both stream runtimes' entry: Kinesis records come from the stream mapping and go to
    `stream_batch`; SQS records come from the Retry-DLQ mapping and go one by one to `retry_message`
    under Powertools' partial batch response. If every message fails, BatchProcessor raises: the
    whole SQS batch returns to the queue, which is exactly what failing each message would do."""
    if is_kinesis_event(event):
        return stream_batch(event)
    if is_sqs_event(event):
        return dict(process_partial_response(event=event, record_handler=retry_message,
                                             processor=BatchProcessor(event_type=EventType.SQS), context=context))
    raise ValueError("unsupported event: expected Kinesis records (stream mapping) or SQS records "
                     "(Retry-DLQ mapping)")
