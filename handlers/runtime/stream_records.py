"""One Kinesis record, whichever way it reached the function, and the event shapes that carry it.

The stream consumers receive a record in one of three shapes:
1. a Kinesis event record (the stream mapping),
2. an SQS message holding Lambda's on-failure record for a stream batch (`KinesisBatchInfo`:
   metadata only; the records must be read back from the stream, see handlers/stream_refetch.py),
3. an SQS message the app-DLQ consumer inserted itself: the full record plus the error.
This module turns each into a `StreamRecord` so processing code sees one type.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Optional

from integration_blueprint.aws_limits import KINESIS_ON_FAILURE_BATCH_INFO_KEY

# Marks a message the app-DLQ consumer inserted, and the version of its layout.
INSERTED_RECORD_KIND = "blueprint.stream-record/v1"


class NotJson(ValueError):
    """The record's data is not a JSON document."""


@dataclass(frozen=True)
class StreamRecord:
    stream_arn: str
    shard_id: str
    sequence_number: str
    partition_key: str
    data: bytes
    approximate_arrival_timestamp: Optional[float] = None  # epoch seconds

    def json(self) -> Any:
        try:
            return json.loads(self.data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise NotJson(f"record {self.shard_id}/{self.sequence_number} is not JSON: {exc}") from exc

    def log_fields(self) -> dict:
        """What every log line about this record carries, so a replay tool can find it again."""
        return {"stream_arn": self.stream_arn, "shard_id": self.shard_id,
                "sequence_number": self.sequence_number, "partition_key": self.partition_key}

    # --- shape 1: Kinesis event record ---------------------------------------------------------
    @classmethod
    def from_kinesis_event(cls, record: dict) -> "StreamRecord":
        kinesis = record["kinesis"]
        return cls(
            stream_arn=record.get("eventSourceARN", ""),
            # eventID is "<shardId>:<sequenceNumber>"
            shard_id=record.get("eventID", "").split(":", 1)[0],
            sequence_number=kinesis["sequenceNumber"],
            partition_key=kinesis.get("partitionKey", ""),
            data=base64.b64decode(kinesis["data"]),
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
            "error": {"type": type(error).__name__, "message": str(error)[:2000]},
            "insertedAt": datetime.now(timezone.utc).isoformat(),
        })

    @classmethod
    def from_inserted_message(cls, body: dict) -> "StreamRecord":
        return cls(stream_arn=body["streamArn"], shard_id=body["shardId"],
                   sequence_number=body["sequenceNumber"], partition_key=body.get("partitionKey", ""),
                   data=base64.b64decode(body["data"]),
                   approximate_arrival_timestamp=body.get("approximateArrivalTimestamp"))


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
    except (ValueError, TypeError):
        return None
    return parsed if isinstance(parsed, dict) else None


def batch_info(body: Optional[dict]) -> Optional[dict]:
    """Shape 2: Lambda's on-failure record for a stream batch, or None."""
    if body and isinstance(body.get(KINESIS_ON_FAILURE_BATCH_INFO_KEY), dict):
        return body[KINESIS_ON_FAILURE_BATCH_INFO_KEY]
    return None


def is_inserted_record(body: Optional[dict]) -> bool:
    """Shape 3: a record the app-DLQ consumer inserted itself."""
    return bool(body) and body.get("kind") == INSERTED_RECORD_KIND
