"""A local Kinesis event source mapping: Lambda's documented stream semantics, in-process.

Used by the poison-isolation benchmark and the local sandbox to drive the real handlers against a
real (emulated) stream. Semantics follow the Lambda developer guide for Kinesis:
- one shard is read in order; a batch holds up to BatchSize records;
- the function's error retries the batch; with BisectBatchOnFunctionError the failed batch is split
  in two (first half first) and each half is retried; splitting does not consume retry attempts;
- MaximumRetryAttempts bounds retries of a batch that cannot be split further (-1 = until expiry);
- MaximumRecordAgeInSeconds: older records are not sent to the function, they are discarded;
- with ReportBatchItemFailures, the records before the lowest reported sequence number are
  checkpointed and the rest is treated as a failed batch (an invalid or empty identifier fails the
  whole batch);
- discarded records go to the on-failure destination (an SQS queue) as Lambda's on-failure record:
  metadata only (`KinesisBatchInfo`), never the data;
- the checkpoint then moves past the batch and the shard goes on.
Not modelled: parallelization factor > 1, batching window (time), tumbling windows, throttling.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Optional

from integration_blueprint.sandbox.lambda_context import LocalLambdaContext

Handler = Callable[[dict, Any], Any]

# A safety net for MaximumRetryAttempts=-1 without a record age: Lambda would retry until the
# records expire (days); a local run stops here instead of spinning forever.
UNBOUNDED_RETRY_CAP = 10_000


@dataclass
class KinesisMappingSettings:
    batch_size: int = 100
    bisect_batch_on_function_error: bool = False
    maximum_retry_attempts: int = -1
    maximum_record_age_seconds: int = -1
    report_batch_item_failures: bool = False
    on_failure_queue_url: Optional[str] = None
    function_arn: str = "arn:aws:lambda:eu-west-1:123456789012:function:local-function"


@dataclass
class _Batch:
    records: list  # GetRecords records (boto3 shape)
    retries: int = 0


@dataclass
class MappingStats:
    invocations: int = 0
    function_errors: int = 0
    records_discarded: int = 0
    on_failure_records: list = field(default_factory=list)  # KinesisBatchInfo of each discarded batch
    batch_sizes: list = field(default_factory=list)  # size of every invocation, in order


class KinesisEventSourceMapping:
    """Polls every shard of a stream and invokes `handler` the way Lambda would."""

    def __init__(self, *, kinesis, stream_name: str, handler: Handler, settings: KinesisMappingSettings,
                 sqs=None, region: str = "eu-west-1", clock: Callable[[], float] = time.time,
                 context: Optional[LocalLambdaContext] = None, function: Any = None):
        self.kinesis = kinesis
        self.function = function  # the sandbox's LocalFunction `handler` invokes (None: a bare handler)
        self.sqs = sqs
        self.stream_name = stream_name
        self.handler = handler
        self.settings = settings
        self.region = region
        self.clock = clock
        self.context = context or LocalLambdaContext(region=region)
        self.stats = MappingStats()
        description = kinesis.describe_stream_summary(StreamName=stream_name)["StreamDescriptionSummary"]
        self.stream_arn = description["StreamARN"]
        self._iterators: dict[str, Optional[str]] = {}

    # --- polling -----------------------------------------------------------------------------------
    def shard_ids(self) -> list[str]:
        return [s["ShardId"] for s in self.kinesis.list_shards(StreamName=self.stream_name)["Shards"]]

    def poll(self, starting_position: str = "TRIM_HORIZON") -> int:
        """One GetRecords per shard and the delivery of what it returned; returns records read."""
        read = 0
        for shard_id in self.shard_ids():
            if shard_id not in self._iterators:
                self._iterators[shard_id] = self.kinesis.get_shard_iterator(
                    StreamName=self.stream_name, ShardId=shard_id,
                    ShardIteratorType=starting_position)["ShardIterator"]
            iterator = self._iterators[shard_id]
            if not iterator:
                continue
            page = self.kinesis.get_records(ShardIterator=iterator, Limit=self.settings.batch_size)
            self._iterators[shard_id] = page.get("NextShardIterator")
            if page["Records"]:
                read += len(page["Records"])
                self._deliver(shard_id, page["Records"])
        return read

    def drain(self, max_polls: int = 100_000) -> MappingStats:
        """Poll until every shard is caught up."""
        for _ in range(max_polls):
            if not self.poll():
                return self.stats
        raise RuntimeError(f"stream {self.stream_name} still had records after {max_polls} polls")

    # --- one batch ---------------------------------------------------------------------------------
    def _deliver(self, shard_id: str, records: list) -> None:
        pending = deque([_Batch(records)])
        limit = self.settings.maximum_retry_attempts
        if limit < 0:
            limit = UNBOUNDED_RETRY_CAP
        while pending:
            batch = pending.popleft()
            fresh, expired = self._split_by_age(batch.records)
            if expired:
                self._discard(shard_id, expired, "RecordAgeExceeded", batch.retries + 1)
            if not fresh:
                continue
            failed_from = self._invoke(shard_id, fresh)
            if failed_from is None:
                continue  # the whole batch is checkpointed
            failed = fresh[failed_from:]
            if self.settings.bisect_batch_on_function_error and len(failed) > 1:
                half = (len(failed) + 1) // 2
                pending.appendleft(_Batch(failed[half:], batch.retries))
                pending.appendleft(_Batch(failed[:half], batch.retries))
            elif batch.retries < limit:
                pending.appendleft(_Batch(failed, batch.retries + 1))
            else:
                self._discard(shard_id, failed, "RetryAttemptsExhausted", batch.retries + 1)

    def _split_by_age(self, records: list) -> tuple[list, list]:
        max_age = self.settings.maximum_record_age_seconds
        if max_age is None or max_age < 0:
            return records, []
        now = self.clock()
        fresh: list[dict] = []
        expired: list[dict] = []
        for record in records:
            arrival = record["ApproximateArrivalTimestamp"]
            arrival = arrival.timestamp() if isinstance(arrival, datetime) else float(arrival)
            (expired if now - arrival > max_age else fresh).append(record)
        return fresh, expired

    def _invoke(self, shard_id: str, records: list) -> Optional[int]:
        """Invoke the function; None on success, else the index of the first unprocessed record."""
        self.stats.invocations += 1
        self.stats.batch_sizes.append(len(records))
        event = {"Records": [self._event_record(shard_id, r) for r in records]}
        try:
            response = self.handler(event, self.context.fresh())
        except Exception:  # noqa: BLE001 - a function error, as Lambda sees it
            self.stats.function_errors += 1
            return 0
        if not self.settings.report_batch_item_failures:
            return None
        failures = (response or {}).get("batchItemFailures") if isinstance(response, dict) else None
        if not failures:
            return None
        positions = {r["SequenceNumber"]: i for i, r in enumerate(records)}
        indexes = [positions.get((f or {}).get("itemIdentifier")) for f in failures]
        known = [i for i in indexes if i is not None]
        if len(known) < len(indexes):
            return 0  # an unknown or empty identifier fails the whole batch
        return min(known)

    def _event_record(self, shard_id: str, record: dict) -> dict:
        arrival = record["ApproximateArrivalTimestamp"]
        arrival = arrival.timestamp() if isinstance(arrival, datetime) else float(arrival)
        return {
            "kinesis": {
                "kinesisSchemaVersion": "1.0",
                "partitionKey": record["PartitionKey"],
                "sequenceNumber": record["SequenceNumber"],
                "data": base64.b64encode(record["Data"]).decode("ascii"),
                "approximateArrivalTimestamp": arrival,
            },
            "eventSource": "aws:kinesis",
            "eventVersion": "1.0",
            "eventID": f"{shard_id}:{record['SequenceNumber']}",
            "eventName": "aws:kinesis:record",
            "invokeIdentityArn": "arn:aws:iam::123456789012:role/local",
            "awsRegion": self.region,
            "eventSourceARN": self.stream_arn,
        }

    def _discard(self, shard_id: str, records: list, condition: str, invoke_count: int) -> None:
        """Send Lambda's on-failure record (metadata only) and move on."""
        self.stats.records_discarded += len(records)

        def iso(record):
            arrival = record["ApproximateArrivalTimestamp"]
            if not isinstance(arrival, datetime):
                arrival = datetime.fromtimestamp(float(arrival), timezone.utc)
            return arrival.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")

        info = {
            "shardId": shard_id,
            "startSequenceNumber": records[0]["SequenceNumber"],
            "endSequenceNumber": records[-1]["SequenceNumber"],
            "approximateArrivalOfFirstRecord": iso(records[0]),
            "approximateArrivalOfLastRecord": iso(records[-1]),
            "batchSize": len(records),
            "streamArn": self.stream_arn,
        }
        self.stats.on_failure_records.append(info)
        if not self.settings.on_failure_queue_url:
            return  # no destination: Lambda drops the records (the components never allow this)
        body = {
            "requestContext": {"requestId": str(uuid.uuid4()), "functionArn": self.settings.function_arn,
                               "condition": condition, "approximateInvokeCount": invoke_count},
            "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
            "version": "1.0",
            "timestamp": datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "KinesisBatchInfo": info,
        }
        self.sqs.send_message(QueueUrl=self.settings.on_failure_queue_url, MessageBody=json.dumps(body))
