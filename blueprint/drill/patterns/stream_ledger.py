"""The two Kinesis patterns' drill drivers (they share the ledger and the stream traffic)."""

from __future__ import annotations

import base64
import json
import re
from typing import Optional

from integration_blueprint.drill import hot_key
from integration_blueprint.drill.patterns.base import PatternDriver, Step
from integration_blueprint.drill.report import PatternReport
from integration_blueprint.handlers.reference.reference_ledger import guard_item_key
from integration_blueprint.handlers.runtime import config as handler_config
from integration_blueprint.handlers.runtime.conflicts import ConflictingDuplicate
from integration_blueprint.handlers.runtime.stream_records import effect_key
from integration_blueprint.redrive.parked import list_parked
from integration_blueprint.redrive.stream import redrive_stream

# How the stream runtime names a conflicting duplicate it parked (handlers/runtime/conflicts.py).
CONFLICT_ERROR = ConflictingDuplicate.__name__

# The account that takes hot_key.HOT_KEY_SHARE of the stream's events.
HOT_ACCOUNT = "acct-hot"


def hot_account_outcome(count: int, balance: float, amounts: dict[str, int], parked: set) -> tuple[set, int, int]:
    """The hot account's events share one item: its count and balance tell them apart only in sum.
    `amounts`: its event ids and amounts; `parked`: the event ids still parked. Returns (its event
    ids, if all were processed once; else how many were; effects done twice). All were when both
    match them all (a parked copy of one is then not unrecoverable, as for any account); otherwise
    its parked events are unrecoverable and the others are judged by the count: a shortfall is lost,
    an excess done twice, and a balance that disagrees with a matching count means one event lost
    and another done twice."""
    if (count, balance) == (len(amounts), float(sum(amounts.values()))):
        return set(amounts), 0, 0
    expected = [amount for event_id, amount in amounts.items() if event_id not in parked]
    if count == len(expected):
        return (set(), count, 0) if balance == float(sum(expected)) else (set(), count - 1, 1)
    return set(), min(count, len(expected)), max(0, count - len(expected))


class StreamLedgerDriver(PatternDriver):
    """N events into the stream: a hot account takes HOT_KEY_SHARE of them, the others one account
    each, so every account's final `applied` count must be exactly its events (fewer = lost, more =
    done twice), with the balance they add up to. Poison: events the reference ledger rejects. The
    hot account's items in the ledger must stay within their bound (drill/hot_key.py)."""

    consumer_handler = ""
    record_ids = re.compile(r"\b(?:non_)?idempotent_stream-\d{6}\b")

    @classmethod
    def deploys(cls, handler: str) -> bool:
        return handler == cls.consumer_handler

    def prepare(self) -> None:
        function = self.functions(self.sandbox)[0]
        self.stream_mapping = next(m for m in self.sandbox.kinesis_mappings if m.function is function)
        self.retry_mappings = [m for m in self.sandbox.sqs_mappings if m.function is function]
        self.invoker_ = self.invoker(function, self.stream_mapping.settings.batch_size)
        self.sandbox.interception.wrap(function.name, self.invoker_)  # both lanes invoke the same function
        self.ledger = function.environment[handler_config.LEDGER_TABLE_NAME]
        self.parking_urls = [self.sandbox.dead_letter_queue(m.queue_arn).url for m in self.retry_mappings]
        self.kinesis = self.client("kinesis")
        poison = set(self.rng.sample(range(self.options.records), self.poison_count))
        hot = hot_key.pick_hot(self.rng, [i for i in range(self.options.records) if i not in poison],
                               self.options.records)
        self.expected: dict[str, int] = {}  # account -> amount, for the accounts of one event
        self.hot_amounts: dict[str, int] = {}  # event id -> amount, for the hot account's events
        self.poison_ids = set()
        events = []
        for i in range(self.options.records):
            event_id = f"{self.name}-{i:06d}"
            if i in poison:
                events.append({"eventId": event_id, "account": f"acct-{i:06d}", "poison": True})
                self.poison_ids.add(event_id)
                continue
            amount = 1 + self.rng.randrange(100)
            account = HOT_ACCOUNT if i in hot else f"acct-{i:06d}"
            events.append({"eventId": event_id, "account": account, "amount": amount})
            if i in hot:
                self.hot_amounts[event_id] = amount
            else:
                self.expected[account] = amount
        self.event_of_account = {e["account"]: e["eventId"] for e in events if e["account"] != HOT_ACCOUNT}
        self.hot_effect_keys: list[str] = []  # the hot events' records (stream, shard, sequence number)
        self.refetched = 0
        stream = self.stream_mapping.stream_name
        for start in range(0, len(events), 500):
            chunk = events[start:start + 500]
            put = self.kinesis.put_records(StreamName=stream, Records=[
                {"Data": json.dumps(e).encode(), "PartitionKey": e["account"]} for e in chunk])
            self.hot_effect_keys.extend(
                effect_key(self.stream_mapping.stream_arn, r["ShardId"], r["SequenceNumber"])
                for e, r in zip(chunk, put["Records"]) if e["account"] == HOT_ACCOUNT)

    def _audit(self, operation: str, _params: dict, response: dict) -> None:
        if operation == "GetRecords":  # the handler reading an on-failure range back
            self.refetched += len(response.get("Records", []))

    def records_reread(self) -> int:
        """Records delivered or read more than once: re-invocations (bisect, retries, duplicate
        deliveries) and ranges the handler read back from the stream."""
        delivered = sum(self.stream_mapping.stats.batch_sizes)
        # A pattern stopped before every record was delivered once (its deadline, an early stop)
        # has re-read at least none.
        return max(0, delivered - self.options.records) + self.refetched

    def drive(self, step: Step) -> None:
        total = max(self.options.records, 1)
        read = polls = 0
        conflicts_due = self.conflict_count() > 0
        while True:
            self.check_deadline(f"reading the stream ({read} of {self.options.records} records read)")
            moved = self.poll_stream(polls)
            polls += 1
            read += moved
            for mapping in self.retry_mappings:
                moved += mapping.poll_once()
            step(min(read / total, 0.9))
            if not moved and conflicts_due:
                conflicts_due = False
                moved = self.send_conflicts()
            if not moved:
                return

    def send_conflicts(self) -> int:
        """Events already applied, sent again with their id and another amount (a producer that
        changed an event and re-sent it): the consumer must park each, neither applied nor skipped.
        Sent once the stream is read, so the first payload is the one applied."""
        ddb = self.client("dynamodb")
        conflicts: list[dict] = []
        for account, amount in sorted(self.expected.items()):
            if len(conflicts) == self.conflict_count():
                break
            item = ddb.get_item(TableName=self.ledger, Key={"account": {"S": account}}).get("Item") or {}
            if item.get("applied", {}).get("N") == "1":
                conflicts.append({"eventId": self.event_of_account[account], "account": account, "amount": amount + 1})
        if conflicts:
            self.kinesis.put_records(StreamName=self.stream_mapping.stream_name, Records=[
                {"Data": json.dumps(e).encode(), "PartitionKey": e["account"]} for e in conflicts])
        self.conflicts_sent = len(conflicts)
        return len(conflicts)

    def poll_stream(self, index: int) -> int:
        """The index-th read of the stream (one batch per shard); returns the records read."""
        return self.stream_mapping.poll()

    def recover(self, step: Step) -> None:
        """The runbook: the Unrecoverable-DLQ back into the Retry-DLQ, then let the consumer replay it."""
        before: set = set()
        for url in self.parking_urls:
            for message in list_parked(self.sandbox.sqs, url):
                before |= self._ids_of(message.json or {})
        self.parked_before = len(before)
        redriven: set = set()
        self.kept: list[str] = []
        for mapping, url in zip(self.retry_mappings, self.parking_urls):
            result = redrive_stream(self.sandbox.sqs, self.kinesis, url, mapping.queue_url)
            for message in result.moved:
                redriven |= self._ids_of(message.json or {})
            self.kept.extend(why for _, why in result.kept)
        self.redriven = len(redriven)
        while sum(mapping.poll_once() for mapping in self.retry_mappings):
            self.check_deadline("replaying the redriven messages")
            step(0.95)

    def _ids_of(self, body: dict) -> set:
        if "data" in body:
            return known_ids({self._record_id(base64.b64decode(body["data"]))})
        if "KinesisBatchInfo" in body:
            return self._read_range(body["KinesisBatchInfo"])
        return set()

    def _record_id(self, data: bytes) -> Optional[str]:
        """Which of the drill's records a stream record's data is."""
        return json.loads(data)["eventId"]

    def _parked_event_ids(self) -> tuple[set, int]:
        """Event ids of everything parked for a human, and the messages that held them; the
        conflicting duplicates the consumer parked are counted apart (conflicts_parked)."""
        ids, messages, conflicts = set(), 0, set()
        for url in self.parking_urls:
            for message in self.drain_queue_messages(url):
                messages += 1
                body = json.loads(message["Body"])
                if (body.get("error") or {}).get("type") == CONFLICT_ERROR:
                    # A record's position, not its sequence number alone: those restart on every shard.
                    conflicts.add((body.get("shardId"), body.get("sequenceNumber")))
                else:
                    ids |= self._ids_of(body)
        self.conflicts_parked = len(conflicts)
        return ids, messages

    def _read_range(self, info: dict) -> set:
        iterator = self.kinesis.get_shard_iterator(
            StreamName=self.stream_mapping.stream_name, ShardId=info["shardId"],
            ShardIteratorType="AT_SEQUENCE_NUMBER", StartingSequenceNumber=info["startSequenceNumber"])["ShardIterator"]
        end = int(info["endSequenceNumber"])
        # The range's records are consecutive in the shard: a page of batchSize covers it (moto
        # builds every record of a page, so a page of 1,000 for a range of one costs a thousandfold).
        limit = min(max(int(info.get("batchSize") or 1000), 1), 1000)
        ids: set[str] = set()
        while iterator:
            page = self.kinesis.get_records(ShardIterator=iterator, Limit=limit)
            for record in page["Records"]:
                if int(record["SequenceNumber"]) > end:
                    return ids
                ids |= known_ids({self._record_id(record["Data"])})
            if not page["Records"]:
                return ids
            iterator = page.get("NextShardIterator")
        return ids

    def verify(self) -> PatternReport:
        self.replay(self._audit)
        ddb = self.client("dynamodb")
        items = {item["account"]["S"]: item for page in ddb.get_paginator("scan").paginate(TableName=self.ledger)
                 for item in page["Items"]}
        applied = {account: (int(item.get("applied", {}).get("N", "0")), float(item.get("balance", {}).get("N", "0")))
                   for account, item in items.items()}
        processed_ids = {self.event_of_account[account] for account, amount in self.expected.items()
                         if applied.get(account) == (1, float(amount))}
        duplicates = sum(count - 1 for account, (count, _) in applied.items() if count > 1 and account != HOT_ACCOUNT)
        parked, messages = self._parked_event_ids()
        hot_count, hot_balance = applied.get(HOT_ACCOUNT, (0, 0.0))
        hot_ids, hot_processed, hot_duplicates = hot_account_outcome(hot_count, hot_balance, self.hot_amounts, parked)
        unrecoverable = parked - processed_ids - hot_ids
        report = PatternReport(
            sent=self.options.records, processed_once=len(processed_ids | hot_ids) + hot_processed,
            duplicate_effects=duplicates + hot_duplicates,
            unrecoverable=len(unrecoverable), expected_unrecoverable=self.poison_count,
            parked_before_redrive=self.parked_before, redriven=self.redriven,
            invocations=self.invoker_.invocations,
            retries=self.stream_mapping.stats.function_errors + sum(m.stats.messages_failed for m in self.retry_mappings))
        report.lost = report.sent - report.processed_once - report.unrecoverable
        report.hot_key = self._hot_key_state(items, ddb)
        wrong = unrecoverable - self.poison_ids
        if wrong:
            report.notes.append(f"{len(wrong)} valid events were parked, e.g. {sorted(wrong)[:3]}")
        if len(hot_ids) != len(self.hot_amounts):  # not all processed once
            report.notes.append(f"hot account {HOT_ACCOUNT}: {hot_count} events applied, balance {hot_balance:g}; "
                                f"sent {len(self.hot_amounts)} adding up to {sum(self.hot_amounts.values())}")
        if self.kept:
            report.notes.append(f"{len(self.kept)} parked message(s) not redriven: {sorted(set(self.kept))[:3]}")
        report.notes.append(f"{messages} messages still parked in the Unrecoverable-DLQ after the redrive; "
                            f"{self.records_reread()} records re-delivered or re-read")
        report.injected["records_reread"] = self.records_reread()
        report.notes.extend(self.fault_notes())
        return report

    def _hot_key_state(self, items: dict, ddb) -> Optional[hot_key.HotKeyState]:
        """The hot account's items: its account item (balance and count, kept for good) and the
        guard items of its events (the guarded ledger's, keyed by event id, and the retry lane's,
        keyed by the record), each expiring. None when too few records were sent for a hot key."""
        if not self.hot_amounts:
            return None
        guards = {guard_item_key(HOT_ACCOUNT, key) for key in [*self.hot_amounts, *self.hot_effect_keys]}
        own = [item for key, item in items.items() if key == HOT_ACCOUNT or key in guards]
        return hot_key.measure(HOT_ACCOUNT, own, table=self.ledger, ttl_attribute=hot_key.ttl_attribute(ddb, self.ledger),
                               records=len(self.hot_amounts), sent=self.options.records, lasting_items_bound=1)


def known_ids(ids: set[Optional[str]]) -> set[str]:
    """The ids of the drill's own records among `ids` (None: a record it did not send)."""
    return {i for i in ids if i is not None}


class IdempotentStreamDriver(StreamLedgerDriver):
    name = "idempotent_stream"
    component = "IdempotentStreamConsumer"
    consumer_handler = "integration_blueprint.handlers.reference.ledger_idempotent_consumer.lambda_handler"


# Why the non-idempotent stream gets no conflicting duplicates.
NO_IDEMPOTENCY_KEY = ("the pattern keeps no idempotency key by definition: an event id seen before arrives as another "
                      "record (its own sequence number) and is applied")


class RetryLaneOutage(StreamLedgerDriver):
    """The non-idempotent stream's own fault: what the handler writes to is down (every call
    throttled) while one stream batch is read, so the handler inserts each of its records into the
    Retry-DLQ, and once it is back the Retry-DLQ lane must apply them, through duplicate deliveries
    and crashes, exactly once. A stream driver of its own, or mixed before another (the team's)."""

    # What is down: one botocore service (None: every one), except the spared (the Retry-DLQ's SQS).
    outage_service: Optional[str] = "dynamodb"
    outage_spared: frozenset = frozenset()
    outage_described = "ledger table"  # what the report says was down

    def prepare(self) -> None:
        self.inserted_in_outage = 0
        self.retry_queue_urls: set = set()
        super().prepare()
        self.retry_queue_urls = {m.queue_url for m in self.retry_mappings}
        # A read takes a batch from every shard.
        per_read = max(self.stream_mapping.settings.batch_size, 1) * len(self.stream_mapping.shard_ids())
        reads = -(-self.options.records // per_read)
        # A third of the way in (the first read of a short stream); only when there are duplicates
        # or crashes for that lane to meet (a poison-only run measures the pattern's own cost).
        faulted = self.options.duplicates > 0 or self.options.crashes > 0
        self.outage_read: int | None = reads // 3 if faulted else None

    def poll_stream(self, index: int) -> int:
        if index != self.outage_read:
            return super().poll_stream(index)
        before = len(self.sandbox.journal)
        self.faults.outage_service, self.faults.outage_spared = self.outage_service, self.outage_spared
        self.faults.outage = True
        try:
            return super().poll_stream(index)
        finally:
            self.faults.outage, self.faults.outage_service, self.faults.outage_spared = False, None, frozenset()
            # The failed records the handler inserted into the Retry-DLQ during that read.
            self.inserted_in_outage = sum(
                1 for _, call in self.sandbox.journal.calls(before)
                if call.operation == "SendMessage" and call.params.get("QueueUrl") in self.retry_queue_urls)

    def verify(self) -> PatternReport:
        report = super().verify()
        report.injected["outage_calls"] = self.faults.outage_injected
        if self.outage_read is not None:
            report.notes.append(f"{self.outage_described} down during stream read {self.outage_read + 1}: "
                                f"{self.inserted_in_outage} record(s) inserted into the Retry-DLQ")
        return report


class NonIdempotentStreamDriver(RetryLaneOutage):
    """Besides the common mix (with duplicates or crashes in it), the ledger's table is down while
    one stream batch is read (RetryLaneOutage)."""

    name = "non_idempotent_stream"
    component = "NonIdempotentStreamConsumer"
    consumer_handler = "integration_blueprint.handlers.reference.ledger_app_dlq_consumer.lambda_handler"
    not_covered = {"conflicts": NO_IDEMPOTENCY_KEY}
    # The Retry-DLQ lane is at-least-once on SQS's side and made exactly-once by the effect key
    # (handlers/runtime/app_dlq_stream.py): it gets duplicates and crashes like every other pattern.
    faulted_lane = "aws:sqs"
    faulted_lane_reason = (
        "the stream lane has no idempotency by definition (the mapping never retries; a redelivered "
        "Kinesis record would repeat its effect), and a batch that crashes there goes, as Lambda's "
        "metadata-only on-failure record, to the Unrecoverable-DLQ for a person to replay what was not "
        "applied (components/non_idempotent_stream_consumer.py)")
