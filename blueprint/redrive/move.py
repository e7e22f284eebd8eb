"""Moving a dead-letter queue's messages back to their source (or another queue).

Two ways, with the same outcome:
- `start_move_task`: SQS's own StartMessageMoveTask (rate-limited by SQS with
  MaxNumberOfMessagesPerSecond, tracked with ListMessageMoveTasks). It moves everything in the DLQ,
  to the queue each message came from unless a destination is given.
- `move_messages`: receive, send, delete, a batch at a time under our own rate limit, for a
  selective move (a Kinesis range that has expired must stay parked) and where StartMessageMoveTask
  is not available (moto 5 does not implement it; see tests/test_redrive.py). It keeps the body,
  the message attributes and, for a FIFO queue, the group and the order within it: a group whose
  message is kept is kept whole, so no message overtakes an earlier one of its group. The FIFO
  deduplication id becomes `redrive-<DLQ message id>`: the original id would be dropped as a
  duplicate within SQS's 5-minute window, and a move repeated after a crash (sent, not yet deleted)
  is then dropped instead of delivered twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from integration_blueprint.redrive.parked import (
    ParkedMessage,
    RateLimit,
    describe,
    peek,
    release,
)

# Returns None to move the message, or the reason it stays parked.
Selector = Callable[[ParkedMessage], Optional[str]]


@dataclass
class MoveResult:
    moved: list[ParkedMessage] = field(default_factory=list)
    kept: list[tuple[ParkedMessage, str]] = field(default_factory=list)
    dry_run: bool = False
    task_handle: Optional[str] = None

    def to_json(self) -> dict:
        return {"dry_run": self.dry_run, "moved" if not self.dry_run else "would_move": len(self.moved),
                "kept": [{**m.to_json(), "kept_because": why} for m, why in self.kept],
                **({"task_handle": self.task_handle} if self.task_handle else {})}


def queue_arn(sqs, queue_url: str) -> str:
    return sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]


def start_move_task(sqs, source_arn: str, *, max_per_second: Optional[int] = None,
                    destination_arn: Optional[str] = None) -> str:
    """SQS moves every message of the DLQ `source_arn` back (to its source unless a destination is
    given). Returns the task handle; follow it with `move_tasks`."""
    kwargs: dict = {"SourceArn": source_arn}
    if destination_arn:
        kwargs["DestinationArn"] = destination_arn
    if max_per_second:
        kwargs["MaxNumberOfMessagesPerSecond"] = int(max_per_second)
    return sqs.start_message_move_task(**kwargs)["TaskHandle"]


def move_tasks(sqs, source_arn: str) -> list[dict]:
    """The DLQ's recent move tasks (status, messages moved, failure reason), newest first."""
    return sqs.list_message_move_tasks(SourceArn=source_arn).get("Results", [])


def move_messages(sqs, source_url: str, destination_url: str, *, rate: Optional[RateLimit] = None,
                  limit: Optional[int] = None, select: Optional[Selector] = None,
                  dry_run: bool = False) -> MoveResult:
    """Move up to `limit` messages the selector accepts from `source_url` to `destination_url`."""
    fifo = destination_url.endswith(".fifo")
    result = MoveResult(dry_run=dry_run)
    held: list[str] = []  # receipt handles of messages left where they are (made visible at the end)
    kept_groups: set = set()
    try:
        while limit is None or len(result.moved) < limit:
            batch = peek(sqs, source_url)
            if not batch:
                break
            for message in batch:
                parked = describe(message)
                why = select(parked) if select else None
                if why is None and parked.group_id is not None and parked.group_id in kept_groups:
                    why = "an earlier message of its FIFO group stays parked"
                if why is None and limit is not None and len(result.moved) >= limit:
                    why = f"beyond this batch's limit of {limit}"
                if why is not None:
                    result.kept.append((parked, why))
                    if parked.group_id is not None:
                        kept_groups.add(parked.group_id)
                    held.append(message["ReceiptHandle"])
                    continue
                result.moved.append(parked)
                if dry_run:
                    held.append(message["ReceiptHandle"])
                    continue
                if rate is not None:
                    rate.take()
                send: dict = {"QueueUrl": destination_url, "MessageBody": message["Body"]}
                if parked.attributes:
                    send["MessageAttributes"] = parked.attributes
                if fifo:
                    send["MessageGroupId"] = parked.group_id or "redrive"
                    send["MessageDeduplicationId"] = f"redrive-{parked.message_id}"[:128]
                sqs.send_message(**send)
                sqs.delete_message(QueueUrl=source_url, ReceiptHandle=message["ReceiptHandle"])
    finally:
        release(sqs, source_url, held)
    return result
