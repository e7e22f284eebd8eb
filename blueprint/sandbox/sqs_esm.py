"""An SQS event source mapping, run locally: polls a queue and invokes a handler the way Lambda does.

Documented semantics it follows (https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html and
services-sqs-errorhandling.html):
- up to `batch_size` messages per invocation, delivered as the `aws:sqs` event shape;
- a handler that returns normally with no `batchItemFailures` succeeds: every message is deleted;
- with ReportBatchItemFailures, only the listed ids stay; a malformed response (missing, empty or
  unknown itemIdentifier) fails the whole batch;
- a handler that raises fails the whole batch;
- failed messages become visible again when their visibility timeout expires, and the queue's own
  redrive policy moves them to the DLQ after maxReceiveCount receives (done by the emulator);
- FIFO queues never hand out a message while an earlier one of its group is in flight (also done by
  the emulator's ReceiveMessage).

Time compression: instead of waiting out the visibility timeout, a failed message is made visible
at once (ChangeMessageVisibility 0). Everything else, receive counts included, is real.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from integration_blueprint.sandbox.lambda_context import LocalLambdaContext

Handler = Callable[[dict, Any], Any]


@dataclass
class SqsPollStats:
    invocations: int = 0
    messages_delivered: int = 0
    messages_deleted: int = 0
    messages_failed: int = 0
    handler_errors: int = 0


@dataclass
class SqsEventSourceMapping:
    sqs: Any  # boto3 SQS client
    queue_url: str
    queue_arn: str
    handler: Handler
    batch_size: int = 10
    report_batch_item_failures: bool = True
    region: str = "us-east-1"
    context: LocalLambdaContext = field(default_factory=LocalLambdaContext)
    stats: SqsPollStats = field(default_factory=SqsPollStats)
    on_error: Optional[Callable[[BaseException], None]] = None
    function: Any = None  # the sandbox's LocalFunction `handler` invokes (None: a bare handler)

    def poll_once(self) -> int:
        """One receive + invoke + checkpoint. Returns how many messages were delivered."""
        messages = self.sqs.receive_message(
            QueueUrl=self.queue_url, MaxNumberOfMessages=min(self.batch_size, 10),
            MessageSystemAttributeNames=["All"], MessageAttributeNames=["All"], WaitTimeSeconds=0,
        ).get("Messages", [])
        if not messages:
            return 0
        self.stats.invocations += 1
        self.stats.messages_delivered += len(messages)
        event = {"Records": [self._record(m) for m in messages]}
        failed_ids = self._invoke(event, {m["MessageId"] for m in messages})
        done = [m for m in messages if m["MessageId"] not in failed_ids]
        failed = [m for m in messages if m["MessageId"] in failed_ids]
        self.stats.messages_deleted += len(done)
        self.stats.messages_failed += len(failed)
        if done:
            self.sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=[
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)])
        if failed:
            self.sqs.change_message_visibility_batch(QueueUrl=self.queue_url, Entries=[
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
                for i, m in enumerate(failed)])
        return len(messages)

    def drain(self, max_polls: int = 10_000) -> None:
        """Poll until the queue hands out nothing (including messages redriven to the DLQ)."""
        for _ in range(max_polls):
            if self.poll_once() == 0:
                return
        raise RuntimeError(f"{self.queue_url} still had messages after {max_polls} polls")

    def _invoke(self, event: dict, ids: set[str]) -> set[str]:
        """The ids Lambda would treat as failed after this invocation."""
        try:
            response = self.handler(event, self.context.fresh())
        except Exception as exc:  # noqa: BLE001 - a raising handler fails the batch, as in Lambda
            self.stats.handler_errors += 1
            if self.on_error is not None:
                self.on_error(exc)
            return set(ids)
        if not self.report_batch_item_failures or not response:
            return set()
        failures = response.get("batchItemFailures") if isinstance(response, dict) else None
        if not failures:
            return set()
        failed = set()
        for item in failures:
            identifier = item.get("itemIdentifier") if isinstance(item, dict) else None
            if not identifier or identifier not in ids:
                return set(ids)  # Lambda treats a malformed response as a complete failure
            failed.add(identifier)
        return failed

    def _record(self, message: dict) -> dict:
        return {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": message["Body"],
            "attributes": dict(message.get("Attributes", {})),
            "messageAttributes": message.get("MessageAttributes", {}),
            "md5OfBody": message.get("MD5OfBody") or hashlib.md5(message["Body"].encode()).hexdigest(),
            "eventSource": "aws:sqs",
            "eventSourceARN": self.queue_arn,
            "awsRegion": self.region,
        }
