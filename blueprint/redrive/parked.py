"""What is parked in a queue, and why: one reason per message, read from the message itself.

The shapes this blueprint parks:
- Lambda's on-failure record of an asynchronous invocation (requestContext.condition and the last
  error in responsePayload) and of a stream batch (KinesisBatchInfo, metadata only);
- a stream record the app-DLQ consumer inserted (its `error`), or a range the idempotent consumer
  could not replay (its `reason`);
- a message SQS moved after maxReceiveCount receives (SQS records no reason: the receive count,
  and the consumer's log says why).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

# How long a listed message stays hidden while it is read; it is made visible again right after.
PEEK_VISIBILITY_SECONDS = 30
RECEIVE_BATCH_MAX = 10  # SQS ReceiveMessage MaxNumberOfMessages


@dataclass
class ParkedMessage:
    message_id: str
    reason: str
    kind: str  # async-invocation | stream-range | stream-record | unreplayable-range | message
    body: str
    group_id: Optional[str] = None
    receive_count: int = 0
    attributes: dict = field(default_factory=dict)  # the message's own MessageAttributes

    @property
    def json(self) -> Optional[dict]:
        try:
            parsed = json.loads(self.body)
        except (TypeError, ValueError):
            return None
        return parsed if isinstance(parsed, dict) else None

    def to_json(self) -> dict:
        return {"message_id": self.message_id, "kind": self.kind, "reason": self.reason,
                "group_id": self.group_id, "receive_count": self.receive_count}


def describe(message: dict) -> ParkedMessage:
    """A received SQS message (MessageSystemAttributeNames=All) as a ParkedMessage."""
    system = message.get("Attributes", {})
    parked = ParkedMessage(message_id=message["MessageId"], reason="", kind="message", body=message["Body"],
                           group_id=system.get("MessageGroupId"),
                           receive_count=int(system.get("ApproximateReceiveCount", 0)),
                           attributes=message.get("MessageAttributes") or {})
    body = parked.json or {}
    context = body.get("requestContext") if isinstance(body.get("requestContext"), dict) else None
    if "KinesisBatchInfo" in body and body.get("kind", "").startswith("blueprint.unreplayable"):
        parked.kind, parked.reason = "unreplayable-range", str(body.get("reason"))
    elif "KinesisBatchInfo" in body:
        info = body["KinesisBatchInfo"]
        response = body.get("responseContext") or {}
        parked.kind = "stream-range"
        parked.reason = (f"{(context or {}).get('condition', 'failed')} after "
                         f"{(context or {}).get('approximateInvokeCount', '?')} invocations "
                         f"({response.get('functionError') or 'function error'}): shard {info.get('shardId')} "
                         f"sequence {info.get('startSequenceNumber')}..{info.get('endSequenceNumber')} "
                         f"({info.get('batchSize')} records, metadata only)")
    elif context is not None and "requestPayload" in body:
        error = body.get("responsePayload") or {}
        parked.kind = "async-invocation"
        parked.reason = (f"{context.get('condition')} after {context.get('approximateInvokeCount')} attempts: "
                         f"{error.get('errorType', '')}{': ' if error.get('errorType') else ''}"
                         f"{error.get('errorMessage', 'no error message')}")
    elif isinstance(body.get("error"), dict) and "sequenceNumber" in body:
        parked.kind = "stream-record"
        parked.reason = f"{body['error'].get('type')}: {body['error'].get('message')}"
    else:
        key = body.get("idempotency_key") or body.get("id") or ""
        parked.reason = (f"received {parked.receive_count or 'maxReceiveCount'} times without success"
                         f"{' (' + str(key) + ')' if key else ''}; the consumer's log says why")
    return parked


def peek(sqs, queue_url: str) -> list[dict]:
    """Up to a batch of the queue's messages with every attribute, hidden from others while looked at."""
    return sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=RECEIVE_BATCH_MAX,
                               VisibilityTimeout=PEEK_VISIBILITY_SECONDS, WaitTimeSeconds=0,
                               MessageSystemAttributeNames=["All"], MessageAttributeNames=["All"]).get("Messages", [])


def list_parked(sqs, queue_url: str, limit: Optional[int] = None) -> list[ParkedMessage]:
    """The messages in a queue, read without consuming them (each is made visible again)."""
    seen: dict[str, ParkedMessage] = {}
    handles: list[str] = []
    try:
        while limit is None or len(seen) < limit:
            batch = peek(sqs, queue_url)
            if not batch:
                break
            for message in batch:
                handles.append(message["ReceiptHandle"])
                seen.setdefault(message["MessageId"], describe(message))
    finally:
        release(sqs, queue_url, handles)
    return list(seen.values())[:limit]


def release(sqs, queue_url: str, handles: list[str]) -> None:
    """Make received messages visible again at once."""
    for start in range(0, len(handles), RECEIVE_BATCH_MAX):
        sqs.change_message_visibility_batch(QueueUrl=queue_url, Entries=[
            {"Id": str(i), "ReceiptHandle": h, "VisibilityTimeout": 0}
            for i, h in enumerate(handles[start:start + RECEIVE_BATCH_MAX])])


class RateLimit:
    """At most `per_second` operations per second (sleeps as needed)."""

    def __init__(self, per_second: float, sleep: Callable[[float], Any] = time.sleep,
                 clock: Callable[[], float] = time.monotonic):
        if per_second <= 0:
            raise ValueError(f"rate {per_second} must be positive")
        self.interval = 1.0 / per_second
        self.sleep, self.clock = sleep, clock
        self._next = clock()

    def take(self, count: int = 1) -> None:
        now = self.clock()
        if self._next > now:
            self.sleep(self._next - now)
            now = self._next
        self._next = now + count * self.interval
