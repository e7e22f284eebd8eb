"""The Kinesis patterns' redrive: the Unrecoverable-DLQ back into the Retry-DLQ, as the whitepaper
describes ("manually move the messages back to the Retry-DLQ to re-play them once the problem has
been resolved"). The consumer then replays them as it replays any Retry-DLQ message.

A message that carries the record (inserted by the app-DLQ consumer) moves as it is. A message that
carries only metadata (Lambda's KinesisBatchInfo on-failure record, or a range the consumer could
not replay) moves only while the stream still holds the range: an expired range cannot be replayed
from the Retry-DLQ, so it stays parked and is reported with the reason, never dropped.
"""

from __future__ import annotations

from typing import Optional

from integration_blueprint.handlers.runtime.stream_refetch import read_batch
from integration_blueprint.redrive.move import MoveResult, move_messages
from integration_blueprint.redrive.parked import ParkedMessage, RateLimit


def range_still_readable(kinesis, parked: ParkedMessage) -> Optional[str]:
    """None when the message's records can be replayed, else why not."""
    body = parked.json or {}
    info = body.get("KinesisBatchInfo")
    if not isinstance(info, dict):
        return None  # the record itself is in the message
    try:
        read = read_batch(kinesis, info)
    except Exception as exc:  # noqa: BLE001 - any read failure keeps the message parked, with the cause
        return f"the range could not be read ({type(exc).__name__}: {exc}); it stays parked"
    if read.missing_reason:
        return f"expired: {read.missing_reason}"
    return None


def redrive_stream(sqs, kinesis, unrecoverable_url: str, retry_url: str, *, rate: Optional[RateLimit] = None,
                   limit: Optional[int] = None, dry_run: bool = False) -> MoveResult:
    """Move the Unrecoverable-DLQ's replayable messages into the Retry-DLQ."""
    return move_messages(sqs, unrecoverable_url, retry_url, rate=rate, limit=limit, dry_run=dry_run,
                         select=lambda parked: range_still_readable(kinesis, parked))
