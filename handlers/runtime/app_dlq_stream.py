"""Runtime for the NonIdempotentStreamConsumer: the handler parks failures in the Retry-DLQ itself.

    handler = make_handler(process_record=my_function)   # my_function(record: StreamRecord) -> None

With no idempotency, a record must never be processed twice, so the stream mapping has no retries
and no bisect. Event shapes:
1. Kinesis records: each is processed once; a failing record is inserted, in full (data, partition
   key, shard, sequence number, arrival time, error), into the Retry-DLQ and the batch goes on. The
   batch reports success for inserted records so the shard advances. Only a record whose insert
   itself failed is reported as a batch item failure, and processing stops there: Lambda treats
   everything from that record on as not processed (the mapping's on-failure destination receives
   the range), so nothing after it may have had an effect.
2. SQS messages this handler inserted: the carried record is processed again; a failure fails the
   message back to SQS, whose redrive parks it in the Unrecoverable-DLQ after maxReceiveCount.
3. Anything else on the Retry-DLQ (including Lambda's metadata-only on-failure records, which a
   crashed invocation produces): failed with a clear message. Without idempotency the range may be
   partly applied, so replaying it is a human decision, not an automatic one.

Why the Kinesis shape does not use Powertools' BatchProcessor: it processes every record and
reports all failures, but a Kinesis checkpoint is "everything before the lowest failed sequence
number"; records processed after a failed insert would be replayed and applied twice. It also
raises when every record fails, which with MaximumRetryAttempts=0 would hand the whole batch to the
on-failure destination as metadata only. The SQS shape uses BatchProcessor (both are fine there).

Environment (set by the component): RETRY_DLQ_URL.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import boto3
from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from integration_blueprint.handlers.runtime import config
from integration_blueprint.handlers.runtime.retry import call_with_retries
from integration_blueprint.handlers.runtime.stream_records import (
    StreamRecord,
    batch_info,
    is_inserted_record,
    is_kinesis_event,
    is_sqs_event,
    sqs_body,
)

ProcessRecord = Callable[[StreamRecord], Any]


class RetryFailed(Exception):
    """A record from the Retry-DLQ failed again; SQS will redeliver it."""


class UnrecognizedRetryMessage(Exception):
    """A Retry-DLQ message this handler did not insert."""


class AppDlqRuntime:
    def __init__(self, process_record: ProcessRecord, retry_dlq_url: str, *, logger: Logger, sqs=None):
        self.process_record = process_record
        self.retry_dlq_url = retry_dlq_url
        self.logger = logger
        self.sqs = sqs or boto3.client("sqs")

    # --- shape 1 ---------------------------------------------------------------------------------
    def handle_stream(self, event: dict) -> dict:
        for raw in event["Records"]:
            record = StreamRecord.from_kinesis_event(raw)
            self.logger.info("processing stream record", extra=record.log_fields())
            try:
                self.process_record(record)
                continue
            except Exception as exc:  # noqa: BLE001 - every failure goes to the Retry-DLQ
                error = exc
                self.logger.exception("stream record failed; inserting it into the Retry-DLQ",
                                      extra=record.log_fields())
            try:
                call_with_retries(lambda: self.sqs.send_message(
                    QueueUrl=self.retry_dlq_url, MessageBody=record.to_inserted_message(error)))
            except Exception:  # noqa: BLE001
                self.logger.exception("could not insert the failed record into the Retry-DLQ; reporting it "
                                      "as a batch item failure and stopping this batch", extra=record.log_fields())
                return {"batchItemFailures": [{"itemIdentifier": record.sequence_number}]}
        return {"batchItemFailures": []}

    # --- shapes 2 and 3 ----------------------------------------------------------------------------
    def handle_retry_message(self, record: SQSRecord) -> None:
        body = sqs_body(record.body)
        if not is_inserted_record(body):
            what = ("Lambda's on-failure record (metadata only: the invocation crashed, the range may be "
                    "partly applied; replay it by hand)") if batch_info(body) else "not a record this consumer inserted"
            raise UnrecognizedRetryMessage(f"message {record.message_id} on the Retry-DLQ is {what}; it "
                                           "will move to the Unrecoverable-DLQ after maxReceiveCount receives")
        carried = StreamRecord.from_inserted_message(body)
        self.logger.info("retrying stream record from the Retry-DLQ",
                         extra={**carried.log_fields(), "receive_count": record.attributes.approximate_receive_count})
        try:
            self.process_record(carried)
        except Exception as exc:
            self.logger.exception("retried stream record failed again", extra=carried.log_fields())
            raise RetryFailed(f"record {carried.shard_id}/{carried.sequence_number} failed again: "
                              f"{type(exc).__name__}: {exc}") from exc

    def handle(self, event: dict, context: Any) -> dict:
        if is_kinesis_event(event):
            return self.handle_stream(event)
        if is_sqs_event(event):
            # If every message fails, BatchProcessor raises: the whole SQS batch returns to the
            # queue, which is exactly what failing each message would do. Nothing is lost.
            return process_partial_response(event=event, record_handler=self.handle_retry_message,
                                            processor=BatchProcessor(event_type=EventType.SQS), context=context)
        raise ValueError("unsupported event: expected Kinesis records (stream mapping) or SQS records "
                         "(Retry-DLQ mapping)")


def make_handler(process_record: ProcessRecord, *, retry_dlq_url: Optional[str] = None,
                 logger: Optional[Logger] = None, sqs=None):
    """A Lambda handler running `process_record(record)`; it raises to report a failure."""
    runtime: list[AppDlqRuntime] = []

    def handler(event: dict, context: Any = None) -> dict:
        if not runtime:
            url = retry_dlq_url or config.required(config.RETRY_DLQ_URL, set_by="NonIdempotentStreamConsumer")
            runtime.append(AppDlqRuntime(
                process_record, url, sqs=sqs,
                logger=logger or Logger(service=config.service_name("stream-consumer"))))
        return runtime[0].handle(event, context)

    return handler
