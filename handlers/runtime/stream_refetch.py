"""Read back the records of Lambda's on-failure record for a stream batch.

Lambda's on-failure record for Kinesis holds only metadata (`KinesisBatchInfo`: shardId,
startSequenceNumber, endSequenceNumber, batchSize, streamArn), never the data. To replay the batch
the consumer reads the records again: GetShardIterator AT_SEQUENCE_NUMBER start, then GetRecords
(following NextShardIterator) until endSequenceNumber. This only works while the records are inside
the stream's retention: whatever has been trimmed is reported as missing, with the reason, so the
caller can park its metadata in the Unrecoverable-DLQ instead of dropping it.

A Retry-DLQ message is not trusted blindly (anyone allowed to send to the queue could write one):
`range_problem` refuses metadata that is not a range Lambda writes (missing or non-numeric fields,
start after end), and `OwnStream` refuses to read any stream but the consumer's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from botocore.exceptions import ClientError

from integration_blueprint.core.aws_limits import KINESIS_GET_RECORDS_LIMIT_MAX
from integration_blueprint.handlers.runtime import config
from integration_blueprint.handlers.runtime.redaction import bounded
from integration_blueprint.handlers.runtime.retry import call_with_retries
from integration_blueprint.handlers.runtime.stream_records import StreamRecord, is_sequence_number

# GetRecords allows 5 calls/s per shard, shared with every other reader: throughput errors are
# expected under load, so retry them longer than a single DynamoDB call would be.
READ_ATTEMPTS = 8
# A shard can return empty pages while behind the tip (sparse data); stop after this many in a row.
MAX_EMPTY_PAGES = 20
# Errors meaning the range cannot be read at all: the stream or (expired, closed) shard is gone, or
# the sequence number is no longer valid for it.
UNREADABLE_ERRORS = frozenset({"ResourceNotFoundException", "InvalidArgumentException"})


BATCH_INFO_FIELDS = ("streamArn", "shardId", "startSequenceNumber", "endSequenceNumber")
# Kinesis's own bounds on the names a range carries (API reference: StreamARN, ShardId).
STREAM_ARN_MAX_CHARS = 2048
SHARD_ID_MAX_CHARS = 128


def range_problem(info: object) -> Optional[str]:
    """Why `info` is not a KinesisBatchInfo range that can be read back, or None if it is one."""
    if not isinstance(info, dict):
        return "KinesisBatchInfo is not an object"
    missing = [name for name in BATCH_INFO_FIELDS if not isinstance(info.get(name), str) or not info.get(name)]
    if missing:
        return f"KinesisBatchInfo lacks {', '.join(missing)} (or they are not strings)"
    if len(info["streamArn"]) > STREAM_ARN_MAX_CHARS or len(info["shardId"]) > SHARD_ID_MAX_CHARS:
        return (f"KinesisBatchInfo's streamArn or shardId is longer than Kinesis allows ({STREAM_ARN_MAX_CHARS} "
                f"and {SHARD_ID_MAX_CHARS} characters)")
    start, end = info["startSequenceNumber"], info["endSequenceNumber"]
    if not is_sequence_number(start) or not is_sequence_number(end):
        return "KinesisBatchInfo's sequence numbers are not Kinesis sequence numbers (1-129 ASCII digits)"
    if int(start) > int(end):
        return (f"KinesisBatchInfo's startSequenceNumber {start} is after its endSequenceNumber {end}: not a "
                "range Lambda writes, the metadata is corrupt or forged")
    size = info.get("batchSize", 0)
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        return "KinesisBatchInfo's batchSize is not a whole number >= 0"
    return None


class OwnStream:
    """Which stream a consumer may read ranges back from: the stream named by SOURCE_STREAM_ARN (the
    component sets it), else, when it is not set, only streams this container has received records
    from. `refusal` says why a stream is refused; `certain` tells a foreign stream (refused for
    good) from one that could not be verified yet (worth a later retry)."""

    def __init__(self, configured: Optional[str] = None):
        self.configured = configured
        self.seen: set[str] = set()

    def saw(self, stream_arn: str) -> None:
        if stream_arn:
            self.seen.add(stream_arn)

    def refusal(self, stream_arn: str) -> Optional[str]:
        if self.configured:
            if stream_arn == self.configured:
                return None
            return f"stream {bounded(stream_arn)} is not this consumer's stream ({self.configured}); it is never read"
        if stream_arn in self.seen:
            return None
        return (f"stream {bounded(stream_arn)} cannot be verified as this consumer's stream: {config.SOURCE_STREAM_ARN} "
                "is not set and this container has received no records from it; set it to the consumer's stream ARN "
                "(the components do)")

    @property
    def certain(self) -> bool:
        return bool(self.configured)


@dataclass
class RangeRead:
    records: list[StreamRecord] = field(default_factory=list)
    expected: int = 0
    missing_reason: Optional[str] = None  # set when some or all records could not be read

    @property
    def missing_count(self) -> int:
        return max(self.expected - len(self.records), 0) if self.missing_reason else 0


def read_batch(kinesis, info: dict, *, page_limit: int = KINESIS_GET_RECORDS_LIMIT_MAX,
               sleep: Optional[Callable[[float], None]] = None) -> RangeRead:
    """Every record from info.startSequenceNumber to info.endSequenceNumber still in the stream."""
    stream_arn, shard_id = info["streamArn"], info["shardId"]
    start, end = int(info["startSequenceNumber"]), int(info["endSequenceNumber"])
    result = RangeRead(expected=int(info.get("batchSize") or 0))

    def iterator(kind: str, sequence: int) -> str:
        return call_with_retries(lambda: kinesis.get_shard_iterator(
            StreamARN=stream_arn, ShardId=shard_id, ShardIteratorType=kind,
            StartingSequenceNumber=str(sequence)), attempts=READ_ATTEMPTS, sleep=sleep)["ShardIterator"]

    try:
        shard_iterator: Optional[str] = iterator("AT_SEQUENCE_NUMBER", start)
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        if code not in UNREADABLE_ERRORS:
            raise
        result.missing_reason = (f"the range cannot be read from the stream any more ({code}: "
                                 f"{exc.response.get('Error', {}).get('Message', '')}); the records "
                                 "expired from the stream's retention or the stream/shard was deleted")
        return result

    empty_pages = 0
    # The first page asks for batchSize records (Lambda's count: the whole range in one call), and
    # each further page for twice the last: a batchSize that understates the range (forged or
    # corrupt) costs O(log n) GetRecords calls, not one per record, on a shard that allows 5 a second.
    page_size = 0
    while shard_iterator:
        remaining = max(result.expected - len(result.records), 1)
        page_size = min(page_limit, KINESIS_GET_RECORDS_LIMIT_MAX, max(remaining, 2 * page_size))
        try:
            page = call_with_retries(lambda: kinesis.get_records(
                ShardIterator=shard_iterator, StreamARN=stream_arn, Limit=page_size),
                attempts=READ_ATTEMPTS, sleep=sleep)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ExpiredIteratorException":
                raise
            # Iterators live 5 minutes: continue right after the last record read.
            last_read = int(result.records[-1].sequence_number) if result.records else start - 1
            shard_iterator = iterator("AFTER_SEQUENCE_NUMBER", last_read) if result.records else \
                iterator("AT_SEQUENCE_NUMBER", start)
            continue
        done = False
        for raw in page.get("Records", []):
            sequence = int(raw["SequenceNumber"])
            if sequence > end:
                done = True
                break
            if sequence >= start:
                result.records.append(StreamRecord.from_get_records(raw, stream_arn=stream_arn, shard_id=shard_id))
        if done or (result.records and int(result.records[-1].sequence_number) >= end):
            break
        if page.get("Records"):
            empty_pages = 0
        else:
            empty_pages += 1
            if not page.get("MillisBehindLatest") or empty_pages >= MAX_EMPTY_PAGES:
                break  # at the tip of the shard: nothing more will come
        shard_iterator = page.get("NextShardIterator")  # None once a closed shard is exhausted

    first = int(result.records[0].sequence_number) if result.records else None
    last = int(result.records[-1].sequence_number) if result.records else None
    if first != start:
        # Retention trims the oldest records first, so what is missing is the start of the range.
        result.missing_reason = (
            f"records from sequence number {start} up to {first - 1 if first else end} are no longer in "
            "the stream (trimmed by its retention period); they cannot be replayed")
    elif last != end:
        result.missing_reason = (f"records after sequence number {last} up to {end} could not be read "
                                 "(the shard ended or the stream was resharded)")
    if result.missing_reason and not result.expected:
        result.expected = len(result.records) + 1
    return result
