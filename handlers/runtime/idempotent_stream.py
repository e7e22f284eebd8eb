"""Runtime for the IdempotentStreamConsumer: one handler for the stream and for its Retry-DLQ.

    handler = make_handler(process_record=my_function)   # my_function(record: StreamRecord) -> None

Event shapes:
1. Kinesis records (stream mapping with BisectBatchOnFunctionError): records are processed in order,
   each at most once through Powertools idempotency; the first failure raises, so Lambda bisects
   the batch and retries the halves. Records of a retried half that already succeeded are skipped
   by the idempotency store, so every effect happens once.
2. SQS messages holding Lambda's on-failure record (`KinesisBatchInfo`, metadata only): the range
   is read back from the stream and processed with the same idempotency. Records already trimmed
   from the stream are reported to the Unrecoverable-DLQ with the reason (never dropped).
   The message is checked first: metadata that is not a range Lambda writes (missing fields, start
   after end), or a range of another stream than the consumer's own (SOURCE_STREAM_ARN), is never
   read: it is parked in the Unrecoverable-DLQ at once with the reason. A stream that cannot be
   verified yet (SOURCE_STREAM_ARN unset, no records from it seen) fails the message for a later
   receive instead.
3. A record this runtime parked itself, in full (a conflicting duplicate, `to_inserted_message`),
   moved back by the runbook's redrive: processed again as the record it carries (a conflict still
   there is parked again, with its reason; one a person resolved is applied).
4. Any other SQS message: failed with the reason logged at ERROR; the Retry-DLQ's redrive parks it
   in the Unrecoverable-DLQ.
SQS shapes answer with partial batch failures (Powertools BatchProcessor).

Transient errors (throttling, 5xx) are retried in the handler, with backoff and full jitter within
the invocation's time budget (handlers/runtime/retry.py): the idempotency store's calls (so a failed
delete never leaves an INPROGRESS record behind) and a record whose processing raised one (its
idempotency record was released, so running it again is safe), before bisect or a receive is spent.

The idempotency key is a business key taken from the decoded JSON payload by a JMESPath expression
(IDEMPOTENCY_KEY_JMESPATH), falling back to shard + sequence number when the expression finds
nothing. The fallback only protects replays of the same stream record; a producer that sends the
same business event twice needs the business key.

A record whose key was applied with a different payload (Powertools' payload validation over the
payload's fingerprint) is a conflicting duplicate (conflicts.py): neither applied nor skipped, it is
parked in the Unrecoverable-DLQ at once, in full, with the reason, and the batch goes on.

Environment (set by the component): IDEMPOTENCY_TABLE_NAME, UNRECOVERABLE_DLQ_URL, SOURCE_STREAM_ARN,
and optionally IDEMPOTENCY_KEY_JMESPATH, IDEMPOTENCY_EXPIRY_SECONDS.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Optional

import boto3
import jmespath
from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function
from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyValidationError

from integration_blueprint.core.aws_limits import (
    KINESIS_GET_RECORDS_LIMIT_MAX,
    POWERTOOLS_IDEMPOTENCY_EXPIRY_DEFAULT_SECONDS,
)
from integration_blueprint.handlers.runtime import config
from integration_blueprint.handlers.runtime.conflicts import (
    PAYLOAD_FINGERPRINT_FIELD,
    ConflictingDuplicate,
    conflict,
    fingerprint,
)
from integration_blueprint.handlers.runtime.idempotency_store import RetryingDynamoDBPersistenceLayer
from integration_blueprint.handlers.runtime.redaction import PayloadFreeError, bounded, describe_error
from integration_blueprint.handlers.runtime.retry import call_with_retries, error_code, time_budget
from integration_blueprint.handlers.runtime.stream_records import (
    MalformedStreamRecord,
    StreamRecord,
    batch_info,
    is_inserted_record,
    route,
    sqs_body,
)
from integration_blueprint.handlers.runtime.stream_refetch import OwnStream, range_problem, read_batch

ProcessRecord = Callable[[StreamRecord], Any]

# Prefix of every idempotency key in the table; stable across deployments and handler modules so a
# renamed handler still recognises what it already did.
IDEMPOTENCY_KEY_PREFIX = "stream-record"
PARKED_KEY_PREFIX = "stream-range-parked"
CONFLICT_KEY_PREFIX = "stream-conflict-parked"
UNREPLAYABLE_KIND = "blueprint.unreplayable-stream-range/v1"
SET_BY = "IdempotentStreamConsumer"


# A failed replay names this many of its failed records (each is logged on its own line).
FAILURES_NAMED_MAX = 10


class RecordFailed(PayloadFreeError):
    """A record could not be processed; the message names its shard and sequence number and the
    error's type and place, never its message (see redaction.py)."""


class UnrecognizedRetryMessage(PayloadFreeError):
    """A Retry-DLQ message that is not Lambda's on-failure record for a stream."""


class UnverifiedStream(PayloadFreeError):
    """A Retry-DLQ message names a stream this consumer cannot verify as its own yet; retried later."""


@dataclass
class IdempotentStreamSettings:
    idempotency_table: str
    unrecoverable_dlq_url: str
    key_jmespath: Optional[str] = None
    expiry_seconds: int = POWERTOOLS_IDEMPOTENCY_EXPIRY_DEFAULT_SECONDS
    get_records_page_limit: int = KINESIS_GET_RECORDS_LIMIT_MAX
    stream_arn: Optional[str] = None  # the consumer's own stream; see OwnStream for the fallback

    @classmethod
    def from_environment(cls) -> "IdempotentStreamSettings":
        return cls(
            idempotency_table=config.required(config.IDEMPOTENCY_TABLE_NAME, set_by=SET_BY),
            unrecoverable_dlq_url=config.required(config.UNRECOVERABLE_DLQ_URL, set_by=SET_BY),
            key_jmespath=config.optional(config.IDEMPOTENCY_KEY_JMESPATH),
            stream_arn=config.optional(config.SOURCE_STREAM_ARN),
            expiry_seconds=config.optional_int(config.IDEMPOTENCY_EXPIRY_SECONDS,
                                               POWERTOOLS_IDEMPOTENCY_EXPIRY_DEFAULT_SECONDS),
        )


def idempotency_key(record: StreamRecord, key_jmespath: Optional[str]) -> str:
    """`business:<value>` from the payload, else `sequence:<shard>:<sequence number>`."""
    if key_jmespath:
        try:
            value = jmespath.search(key_jmespath, record.json())
        except ValueError:  # not JSON (NotJson) or a bad expression on this payload
            value = None
        if value not in (None, "", [], {}):
            return f"business:{json.dumps(value, sort_keys=True, default=str)}"
    return f"sequence:{record.shard_id}:{record.sequence_number}"


def parked_message(reason: str, missing: Optional[int], info: Any, original: Optional[dict]) -> str:
    """The Unrecoverable-DLQ message for a range: the reason, the metadata and the message it came in."""
    message = {"kind": UNREPLAYABLE_KIND, "reason": reason, "missingRecords": missing, "KinesisBatchInfo": info,
               "onFailureRecord": original, "parkedAt": datetime.now(timezone.utc).isoformat()}
    try:
        return json.dumps(message, default=str)
    except (RecursionError, ValueError):  # a forged message nested too deep to write back out
        return json.dumps({**message, "KinesisBatchInfo": batch_info_fields(info), "onFailureRecord": None,
                           "reason": f"{reason} (the original message was nested too deep to keep)"}, default=str)


def batch_info_fields(info: Any) -> Any:
    """A KinesisBatchInfo for a log line: its known fields, each bounded (a forged one can hold anything)."""
    if not isinstance(info, dict):
        return type(info).__name__
    return {name: bounded(info.get(name)) for name in ("streamArn", "shardId", "startSequenceNumber",
                                                        "endSequenceNumber", "batchSize") if name in info}


class IdempotentStreamRuntime:
    """Clients, idempotency store and the three event shapes. Built once per container."""

    def __init__(self, process_record: ProcessRecord, settings: IdempotentStreamSettings, *,
                 logger: Logger, kinesis=None, sqs=None, dynamodb=None):
        self.process_record = process_record
        self.settings = settings
        self.logger = logger
        self.kinesis = kinesis or boto3.client("kinesis")
        self.sqs = sqs or boto3.client("sqs")
        # use_local_cache: a bisected or retried batch usually lands on the same warm container,
        # which then skips records it completed without a DynamoDB round trip each.
        # payload_validation_jmespath: the same key with another payload raises IdempotencyValidationError
        # (a conflicting duplicate) instead of returning the stored result; parking claims carry none.
        self.config = IdempotencyConfig(event_key_jmespath="key", raise_on_no_idempotency_key=True,
                                        payload_validation_jmespath=PAYLOAD_FINGERPRINT_FIELD,
                                        expires_after_seconds=settings.expiry_seconds, use_local_cache=True)
        self.own_stream = OwnStream(settings.stream_arn)
        persistence = RetryingDynamoDBPersistenceLayer(table_name=settings.idempotency_table,
                                                       boto3_client=dynamodb or boto3.client("dynamodb"))

        @idempotent_function(data_keyword_argument="claim", persistence_store=persistence,
                             config=self.config, key_prefix=IDEMPOTENCY_KEY_PREFIX)
        def process_once(*, claim: dict, record: StreamRecord) -> dict:
            self._ran = True
            self.process_record(record)
            return {"sequenceNumber": record.sequence_number}

        self._process_once = process_once

        # A range whose readable records fail comes back on every receive; park its missing part once.
        @idempotent_function(data_keyword_argument="claim", persistence_store=persistence,
                             config=self.config, key_prefix=PARKED_KEY_PREFIX)
        def park_once(*, claim: dict, body: str) -> dict:
            # If this send fails the exception fails the SQS message, which then comes back: not lost.
            call_with_retries(lambda: self.sqs.send_message(QueueUrl=self.settings.unrecoverable_dlq_url,
                                                            MessageBody=body))
            return {"parked": claim["key"]}

        self._park_once = park_once

    # --- one record ----------------------------------------------------------------------------
    def process(self, record: StreamRecord) -> None:
        """Process `record` once, or raise RecordFailed; whatever the record holds (a payload nested
        too deep to parse, a key expression that fails on it), only this record fails."""
        key: Optional[str] = None
        self._ran = False
        try:
            key = idempotency_key(record, self.settings.key_jmespath)
            self.logger.info("processing stream record", extra={**record.log_fields(), "idempotency_key": bounded(key)})
            # A transient error from process_record released its idempotency record (Powertools
            # deletes it, with retries), so running it again here is safe and costs no redelivery.
            claim = {"key": key, PAYLOAD_FINGERPRINT_FIELD: fingerprint(record.data)}
            try:
                call_with_retries(lambda: self._process_once(claim=claim, record=record),
                                  on_retry=lambda exc, attempt: self.logger.warning(
                                      "transient error, retrying the record",
                                      extra={**record.log_fields(), "attempt": attempt, "error": error_code(exc)}))
            except IdempotencyValidationError:
                raise conflict(key, "payload") from None
        except ConflictingDuplicate as exc:
            self._park_conflict(record, key, exc)
            return
        except Exception as exc:
            # Neither the log line nor the raised error repeats the exception's message: a team's
            # process_record may put a payload value in it (redaction.py).
            error = describe_error(exc)
            self.logger.error("stream record failed", extra={**record.log_fields(), "idempotency_key": bounded(key),
                                                             "error": error})
            raise RecordFailed(f"record {bounded(record.shard_id)}/{bounded(record.sequence_number)} failed: "
                               f"{error}") from None
        self.logger.info("stream record processed" if self._ran else "stream record already processed; skipped",
                         extra={**record.log_fields(), "idempotency_key": bounded(key)})

    # --- shape 1 ---------------------------------------------------------------------------------
    def handle_stream(self, event: dict) -> dict:
        # Raise at the first failure: Lambda's bisect isolates it, idempotency skips the rest.
        for raw in event["Records"]:
            try:
                record = StreamRecord.from_kinesis_event(raw)
            except MalformedStreamRecord as exc:
                # Bisect isolates it too; its range is read back from the stream on the retry lane.
                event_id = raw.get("eventID") if isinstance(raw, dict) else None
                self.logger.error("malformed stream record", extra={"reason": str(exc), "event_id": bounded(event_id)})
                raise RecordFailed(str(exc)) from None
            self.own_stream.saw(record.stream_arn)
            self.process(record)
        return {}

    # --- shapes 2 and 3 ----------------------------------------------------------------------------
    def handle_retry_message(self, record: SQSRecord) -> None:
        body = sqs_body(record.body)
        if is_inserted_record(body):
            self.handle_parked_record(record.message_id, body)
            return
        info = batch_info(body)
        if info is None:
            reason = (f"message {record.message_id} on the Retry-DLQ is not Lambda's on-failure record for a "
                      "stream (no KinesisBatchInfo); it cannot be replayed and will move to the "
                      "Unrecoverable-DLQ after maxReceiveCount receives")
            # Powertools logs a failed record only at DEBUG: say why here, at ERROR.
            self.logger.error("unrecognized Retry-DLQ message", extra={
                "message_id": record.message_id, "reason": reason,
                "receive_count": record.attributes.approximate_receive_count})
            raise UnrecognizedRetryMessage(reason)
        problem = range_problem(info)
        if problem is None:
            problem = self.own_stream.refusal(info["streamArn"])
            if problem is not None and not self.own_stream.certain:
                self.logger.error("Retry-DLQ message names a stream not verified as this consumer's; failing it "
                                  "for a later receive", extra={"message_id": record.message_id, "reason": problem})
                raise UnverifiedStream(problem)
        if problem is not None:
            self._park_refused(record.message_id, info, body, problem)
            return
        self.logger.info("replaying stream range", extra={"batch_info": batch_info_fields(info),
                                                          "message_id": record.message_id})
        read = read_batch(self.kinesis, info, page_limit=self.settings.get_records_page_limit)
        if read.missing_reason:
            self._park_unreplayable(info, body, read.missing_reason, read.missing_count)
        # Unlike the stream shape, keep going after a failure: these records were isolated
        # already, one failing must not hold back the others (done ones are skipped next time).
        failures = []
        for stream_record in read.records:
            try:
                self.process(stream_record)
            except RecordFailed as exc:
                failures.append(str(exc))
        if failures:
            named = "; ".join(failures[:FAILURES_NAMED_MAX]) + ("; ..." if len(failures) > FAILURES_NAMED_MAX else "")
            raise RecordFailed(f"{len(failures)} of {len(read.records)} replayed records failed: {named}")

    def handle_parked_record(self, message_id: str, body: Optional[dict]) -> None:
        """Shape 3: a record this runtime parked in full (a conflicting duplicate), redriven."""
        try:
            stream_record = StreamRecord.from_inserted_message(body or {})
        except MalformedStreamRecord as exc:
            reason = f"message {message_id} on the Retry-DLQ is a parked stream record that cannot be read: {exc}"
            self.logger.error("unrecognized Retry-DLQ message", extra={"message_id": message_id, "reason": reason})
            raise UnrecognizedRetryMessage(reason) from None
        self.logger.info("replaying a parked stream record", extra={**stream_record.log_fields(),
                                                                     "message_id": message_id})
        self.process(stream_record)

    def _park_unreplayable(self, info: dict, original: Optional[dict], reason: str, missing: int) -> None:
        self.logger.error("stream range cannot be replayed; parking it in the Unrecoverable-DLQ",
                          extra={"batch_info": batch_info_fields(info), "reason": reason, "missing_records": missing})
        body = parked_message(reason, missing, info, original)
        key = f"{info.get('streamArn')}:{info.get('shardId')}:{info.get('startSequenceNumber')}:{info.get('endSequenceNumber')}"
        self._park_once(claim={"key": key}, body=body)

    def _park_conflict(self, record: StreamRecord, key: Optional[str], exc: ConflictingDuplicate) -> None:
        """Park a conflicting duplicate, in full, with the reason (once per stream record); the
        record is then handled: retrying it cannot change the answer."""
        self.logger.error("conflicting duplicate; parking it in the Unrecoverable-DLQ",
                          extra={**record.log_fields(), "idempotency_key": bounded(key), "reason": str(exc)})
        body = record.to_inserted_message(exc)
        if record.redelivered:
            # It came back from the Unrecoverable-DLQ (the runbook's redrive): the parking claim says it
            # was parked once already, so it goes back now or it would leave the queue unparked.
            call_with_retries(lambda: self.sqs.send_message(QueueUrl=self.settings.unrecoverable_dlq_url,
                                                            MessageBody=body))
            return
        self._park_once(claim={"key": f"{CONFLICT_KEY_PREFIX}:{record.effect_key}"}, body=body)

    def _park_refused(self, message_id: str, info: Any, original: Optional[dict], reason: str) -> None:
        """Park a Retry-DLQ message that must not be read, once, with the reason; it leaves the queue."""
        self.logger.error("Retry-DLQ message refused; parking it in the Unrecoverable-DLQ",
                          extra={"message_id": message_id, "reason": reason})
        body = parked_message(reason, None, info, original)
        self._park_once(claim={"key": f"refused:{message_id}"}, body=body)

    def handle(self, event: dict, context: Any) -> dict:
        if context is not None:
            self.config.register_lambda_context(context)  # INPROGRESS expires with the invocation
        with time_budget(context):
            return route(event, context, stream_batch=self.handle_stream, retry_message=self.handle_retry_message)


def make_handler(process_record: ProcessRecord, *, settings: Optional[IdempotentStreamSettings] = None,
                 logger: Optional[Logger] = None, kinesis=None, sqs=None, dynamodb=None):
    """A Lambda handler that runs `process_record(record)` at most once per record.

    `process_record` raises to report a failure. Settings default to the environment, read at the
    first invocation (so importing the module never needs AWS or the variables)."""
    runtime: list[IdempotentStreamRuntime] = []

    def handler(event: dict, context: Any = None) -> dict:
        if not runtime:
            runtime.append(IdempotentStreamRuntime(
                process_record, settings or IdempotentStreamSettings.from_environment(),
                logger=logger or Logger(service=config.service_name("stream-consumer")),
                kinesis=kinesis, sqs=sqs, dynamodb=dynamodb))
        return runtime[0].handle(event, context)

    return handler
