"""Asynchronous invocations Lambda parked in a function's on-failure destination, re-run.

Each message is Lambda's invocation record; its `requestPayload` is the original event (for the
billing dispatcher: the schedule's input, which names the month). The event is run again through
`invoke` (on AWS a synchronous lambda:Invoke, so the outcome is known); a run that succeeds deletes
the record, one that fails leaves it parked with the new error. Only functions whose runs are safe
to repeat belong here (the dispatcher: charges are deduplicated by their idempotency key).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from integration_blueprint.redrive.parked import (
    PEEK_VISIBILITY_SECONDS,
    RECEIVE_BATCH_MAX,
    ParkedMessage,
    RateLimit,
    describe,
    release,
)

Invoke = Callable[[dict], Any]  # runs the function with the event; raises if it failed


@dataclass
class RerunResult:
    rerun: list[ParkedMessage] = field(default_factory=list)
    failed: list[tuple[ParkedMessage, str]] = field(default_factory=list)
    dry_run: bool = False

    def to_json(self) -> dict:
        return {"dry_run": self.dry_run, "rerun" if not self.dry_run else "would_rerun": len(self.rerun),
                "payloads": [(m.json or {}).get("requestPayload") for m in self.rerun],
                "failed": [{**m.to_json(), "error": why} for m, why in self.failed]}


def lambda_invoke(lambda_client, function_name: str) -> Invoke:
    """On AWS: a synchronous invocation that raises when the function failed."""
    def invoke(event: dict) -> Any:
        response = lambda_client.invoke(FunctionName=function_name, InvocationType="RequestResponse",
                                        Payload=json.dumps(event).encode())
        payload = json.loads(response["Payload"].read() or b"null")
        if response.get("FunctionError"):
            raise RuntimeError(f"{function_name} failed again: {payload}")
        return payload
    return invoke


def rerun_async_failures(sqs, queue_url: str, invoke: Invoke, *, rate: Optional[RateLimit] = None,
                         limit: Optional[int] = None, dry_run: bool = False) -> RerunResult:
    result = RerunResult(dry_run=dry_run)
    held: list[str] = []
    try:
        while limit is None or len(result.rerun) + len(result.failed) < limit:
            batch = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=RECEIVE_BATCH_MAX,
                                        VisibilityTimeout=PEEK_VISIBILITY_SECONDS, WaitTimeSeconds=0,
                                        MessageSystemAttributeNames=["All"]).get("Messages", [])
            if not batch:
                break
            for message in batch:
                parked = describe(message)
                payload = (parked.json or {}).get("requestPayload")
                if parked.kind != "async-invocation" or not isinstance(payload, dict):
                    result.failed.append((parked, "not a Lambda asynchronous invocation record; left parked"))
                    held.append(message["ReceiptHandle"])
                    continue
                if dry_run or (limit is not None and len(result.rerun) + len(result.failed) >= limit):
                    if dry_run:
                        result.rerun.append(parked)
                    held.append(message["ReceiptHandle"])
                    continue
                if rate is not None:
                    rate.take()
                try:
                    invoke(payload)
                except Exception as exc:  # noqa: BLE001 - the record stays parked with the new error
                    result.failed.append((parked, f"{type(exc).__name__}: {exc}"))
                    held.append(message["ReceiptHandle"])
                    continue
                result.rerun.append(parked)
                sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
    finally:
        release(sqs, queue_url, held)
    return result
