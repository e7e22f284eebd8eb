"""Runtime for the NonIdempotentStreamConsumer: the handler parks failures in the Retry-DLQ itself.

    handler = make_handler(process_record=my_function)   # my_function(record: StreamRecord) -> None

With no idempotency, a record must never be processed twice, so the stream mapping has no retries
and no bisect. Event shapes:
1. Kinesis records: each is processed once; a failing record is inserted, in full (data, partition
   key, shard, sequence number, arrival time, error), into the Retry-DLQ and the batch goes on. A
   record too large for an SQS message once base64-encoded goes by reference instead (a one-record
   KinesisBatchInfo, read back from the stream on retry). A malformed record (no `kinesis` object
   or sequence number, data that is not base64) fails alone: it is inserted with the reason and
   never processed. The batch reports success for inserted records so the shard advances. Only a
   record whose insert still fails after retries is reported as a batch item failure, and
   processing stops there: Lambda treats everything from that record on as not processed (the
   mapping's on-failure destination receives the range), so nothing after it may have had an effect.
2. SQS messages this handler inserted: the carried (or re-read) record is processed again, marked
   `redelivered`; a failure fails the message back to SQS, whose redrive parks it in the
   Unrecoverable-DLQ after maxReceiveCount (the reason is logged at ERROR on every failed receive).
   This lane is at-least-once on SQS's side (a crash mid-batch, a duplicate delivery), so it is
   made exactly-once by the effect: `record.effect_key` (stream, shard, sequence number) is unique,
   and a process_record that records it conditionally in the same write as its effect (the
   reference ledger does, handlers/reference/reference_ledger.py) applies each record once.
   A by-reference message is read back only from the consumer's own stream (SOURCE_STREAM_ARN).
3. Anything else on the Retry-DLQ (including Lambda's metadata-only on-failure records, which a
   crashed invocation produces): failed with a clear message. Without idempotency the range may be
   partly applied, so replaying it is a human decision, not an automatic one.

Transient errors (throttling, 5xx) from process_record and from the Retry-DLQ insert are retried
in the handler, with backoff and full jitter within the invocation's time budget (retry.py).

Why the Kinesis shape does not use Powertools' BatchProcessor: it processes every record and
reports all failures, but a Kinesis checkpoint is "everything before the lowest failed sequence
number"; records processed after a failed insert would be replayed and applied twice. It also
raises when every record fails, which with MaximumRetryAttempts=0 would hand the whole batch to the
on-failure destination as metadata only. The SQS shape uses BatchProcessor (both are fine there).

Environment (set by the component): RETRY_DLQ_URL, SOURCE_STREAM_ARN.
"""

from __future__ import annotations

import dataclasses
from functools import cached_property
from typing import Any, Callable, Optional

import boto3
from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from integration_blueprint.core.aws_limits import SQS_MESSAGE_SIZE_DEFAULT_BYTES
from integration_blueprint.handlers.runtime import config
from integration_blueprint.handlers.runtime.redaction import PayloadFreeError, bounded, describe_error
from integration_blueprint.handlers.runtime.retry import call_with_retries, error_code, time_budget
from integration_blueprint.handlers.runtime.stream_records import (
    INSERTED_RECORD_KIND,
    INSERTED_REFERENCE_KIND,
    MALFORMED_RECORD_KIND,
    MalformedStreamRecord,
    StreamRecord,
    batch_info,
    inserted_kind,
    is_sequence_number,
    malformed_record_message,
    route,
    sqs_body,
)
from integration_blueprint.handlers.runtime.stream_refetch import OwnStream, range_problem, read_batch

ProcessRecord = Callable[[StreamRecord], Any]

# The Retry-DLQ insert is what keeps a failed record from being lost or parked with the rest of its
# batch: give it more attempts than a plain call (the time budget still bounds them).
INSERT_ATTEMPTS = 10
# Above this an inserted record goes by reference: the Retry-DLQ keeps SQS's default maximum
# message size unless its owner raised it (see aws_limits).
INSERTED_MESSAGE_MAX_BYTES = SQS_MESSAGE_SIZE_DEFAULT_BYTES


class RetryFailed(PayloadFreeError):
    """A record from the Retry-DLQ failed again; SQS will redeliver it."""


class UnrecognizedRetryMessage(PayloadFreeError):
    """A Retry-DLQ message this handler did not insert."""


class UnprocessableRetryMessage(PayloadFreeError):
    """A Retry-DLQ message this handler inserted that can never be processed (a malformed record, a
    reference to another stream or to records no longer in the stream); the message says why."""


class AppDlqRuntime:
    def __init__(self, process_record: ProcessRecord, retry_dlq_url: str, *, logger: Logger, sqs=None,
                 kinesis=None, stream_arn: Optional[str] = None):
        self.process_record = process_record
        self.retry_dlq_url = retry_dlq_url
        self.logger = logger
        self.sqs = sqs or boto3.client("sqs")
        self._kinesis = kinesis
        self.own_stream = OwnStream(stream_arn)

    @cached_property
    def kinesis(self):
        """Only the by-reference retry lane reads the stream: create the client when it first does."""
        return self._kinesis or boto3.client("kinesis")

    def _process(self, record: StreamRecord) -> None:
        call_with_retries(lambda: self.process_record(record), on_retry=lambda exc, attempt: self.logger.warning(
            "transient error, retrying the record", extra={**record.log_fields(), "attempt": attempt,
                                                           "error": error_code(exc)}))

    def _insert(self, body: str) -> None:
        call_with_retries(lambda: self.sqs.send_message(QueueUrl=self.retry_dlq_url, MessageBody=body),
                          attempts=INSERT_ATTEMPTS)

    # --- shape 1 ---------------------------------------------------------------------------------
    def handle_stream(self, event: dict) -> dict:
        for raw in event["Records"]:
            try:
                record = StreamRecord.from_kinesis_event(raw)
            except MalformedStreamRecord as exc:
                failure = self._insert_malformed(raw, str(exc))
                if failure is not None:
                    return failure
                continue
            self.own_stream.saw(record.stream_arn)
            self.logger.info("processing stream record", extra=record.log_fields())
            try:
                self._process(record)
                continue
            except Exception as exc:  # noqa: BLE001 - every failure goes to the Retry-DLQ
                error = exc
                # The error's type and place, never its message: it may quote the payload (redaction.py).
                self.logger.error("stream record failed; inserting it into the Retry-DLQ",
                                  extra={**record.log_fields(), "error": describe_error(exc)})
            body = record.to_inserted_message(error)
            if len(body.encode("utf-8")) > INSERTED_MESSAGE_MAX_BYTES:
                reason = (f"the record is too large for an SQS message once encoded ({len(body)} bytes > "
                          f"{INSERTED_MESSAGE_MAX_BYTES}); it is read back from the stream on retry")
                self.logger.warning("inserting the failed record by reference", extra={**record.log_fields(),
                                                                                       "reason": reason})
                body = record.to_reference_message(error, reason)
            try:
                self._insert(body)
            except Exception as exc:  # noqa: BLE001
                return self._stop_at(record.sequence_number, record.log_fields(), exc)
        return {"batchItemFailures": []}

    def _insert_malformed(self, raw: Any, reason: str) -> Optional[dict]:
        """Insert an unreadable event record with its reason; the batch failure to return if that fails."""
        event_id = str(raw.get("eventID") or "") if isinstance(raw, dict) else ""
        self.logger.error("malformed stream record; inserting it into the Retry-DLQ with the reason",
                          extra={"event_id": bounded(event_id), "reason": reason})
        try:
            self._insert(malformed_record_message(raw, reason, max_bytes=INSERTED_MESSAGE_MAX_BYTES))
        except Exception as exc:  # noqa: BLE001
            # eventID is "<shardId>:<sequenceNumber>": the record's own position, if it has one.
            sequence_number = event_id.rpartition(":")[2]
            if is_sequence_number(sequence_number):
                return self._stop_at(sequence_number, {"event_id": bounded(event_id)}, exc)
            self.logger.critical("a malformed record without a sequence number could not be inserted into the "
                                 "Retry-DLQ and is lost; it cannot be read anyway", extra={"event_id": bounded(event_id)})
        return None

    def _stop_at(self, sequence_number: str, fields: dict, exc: BaseException) -> dict:
        self.logger.error("could not insert the failed record into the Retry-DLQ; reporting it as a batch "
                          "item failure and stopping this batch", extra={**fields, "error": describe_error(exc)})
        return {"batchItemFailures": [{"itemIdentifier": sequence_number}]}

    # --- shapes 2 and 3 ----------------------------------------------------------------------------
    def handle_retry_message(self, record: SQSRecord) -> None:
        body = sqs_body(record.body)
        kind = inserted_kind(body)
        where = {"message_id": record.message_id, "receive_count": record.attributes.approximate_receive_count}
        try:
            carried = self._carried_record(record.message_id, body, kind)
        except (UnrecognizedRetryMessage, UnprocessableRetryMessage) as exc:
            # Powertools logs a failed record only at DEBUG: say why here, at ERROR.
            self.logger.error("Retry-DLQ message cannot be processed; it moves to the Unrecoverable-DLQ after "
                              "maxReceiveCount receives", extra={**where, "reason": str(exc)})
            raise
        self.logger.info("retrying stream record from the Retry-DLQ", extra={**carried.log_fields(), **where})
        try:
            self._process(carried)
        except Exception as exc:
            error = describe_error(exc)  # never the message: it may quote the payload (redaction.py)
            self.logger.error("retried stream record failed again", extra={**carried.log_fields(), "error": error})
            raise RetryFailed(f"record {bounded(carried.shard_id)}/{carried.sequence_number} failed again: "
                              f"{error}") from None

    def _carried_record(self, message_id: str, body: Optional[dict], kind: Optional[str]) -> StreamRecord:
        """The record a Retry-DLQ message carries (marked redelivered), or why there is none."""
        if body is None or kind is None:
            what = ("Lambda's on-failure record (metadata only: the invocation crashed, the range may be "
                    "partly applied; replay it by hand)") if batch_info(body) else "not a record this consumer inserted"
            raise UnrecognizedRetryMessage(f"message {message_id} on the Retry-DLQ is {what}; it "
                                           "will move to the Unrecoverable-DLQ after maxReceiveCount receives")
        if kind == MALFORMED_RECORD_KIND:
            raise UnprocessableRetryMessage(f"message {message_id} holds a malformed stream record: "
                                            f"{bounded(str(body.get('reason')))}")
        if kind == INSERTED_RECORD_KIND:
            try:
                carried = StreamRecord.from_inserted_message(body)
            except MalformedStreamRecord as exc:
                raise UnprocessableRetryMessage(f"message {message_id}: {exc}") from None
            # Anyone allowed to send to the queue could write a full record naming any stream: only
            # records of the consumer's own stream are processed, as for by-reference messages.
            problem = self.own_stream.refusal(carried.stream_arn)
            if problem is not None:
                raise UnprocessableRetryMessage(f"message {message_id}: {problem}")
            return carried
        assert kind == INSERTED_REFERENCE_KIND  # inserted_kind() knows no other
        return self._read_back(message_id, body)

    def _read_back(self, message_id: str, body: dict) -> StreamRecord:
        """The record a by-reference message names, read back from the consumer's own stream."""
        info = batch_info(body)
        problem = range_problem(info)
        if info is None or problem is not None:
            raise UnprocessableRetryMessage(f"message {message_id}: {problem}")
        problem = self.own_stream.refusal(info["streamArn"])
        if problem is None and info["startSequenceNumber"] != info["endSequenceNumber"]:
            problem = "a by-reference message names one record; this one names a range"
        if problem is not None:
            raise UnprocessableRetryMessage(f"message {message_id}: {problem}")
        read = read_batch(self.kinesis, info)
        if read.missing_reason or len(read.records) != 1:
            raise UnprocessableRetryMessage(f"message {message_id}: the record cannot be read back: "
                                            f"{read.missing_reason or 'not found'}")
        return dataclasses.replace(read.records[0], redelivered=True,
                                   partition_key=str(body.get("partitionKey") or read.records[0].partition_key))

    def handle(self, event: dict, context: Any) -> dict:
        with time_budget(context):  # retries end in time to report failures instead of being killed
            return route(event, context, stream_batch=self.handle_stream, retry_message=self.handle_retry_message)


def make_handler(process_record: ProcessRecord, *, retry_dlq_url: Optional[str] = None,
                 logger: Optional[Logger] = None, sqs=None, kinesis=None, stream_arn: Optional[str] = None):
    """A Lambda handler running `process_record(record)`; it raises to report a failure."""
    runtime: list[AppDlqRuntime] = []

    def handler(event: dict, context: Any = None) -> dict:
        if not runtime:
            url = retry_dlq_url or config.required(config.RETRY_DLQ_URL, set_by="NonIdempotentStreamConsumer")
            runtime.append(AppDlqRuntime(
                process_record, url, sqs=sqs, kinesis=kinesis,
                stream_arn=stream_arn or config.optional(config.SOURCE_STREAM_ARN),
                logger=logger or Logger(service=config.service_name("stream-consumer"))))
        return runtime[0].handle(event, context)

    return handler
