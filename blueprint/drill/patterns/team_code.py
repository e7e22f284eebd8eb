"""Drill drivers for component instances that run the team's own code (a stream consumer's
`handler`/`code`, a FIFO billing queue's `consumer_handler`/`consumer_code`): the traffic, faults and
recovery the reference drivers use, judged by effects (drill/effects.py), since the drill cannot
read a ledger it did not write.

Each sends records in the shape the component's contract gives its handler (stream events as the
reference producers write them; charges as the blueprint's dispatcher enqueues them), all valid: a
record the team's code refuses is parked and counted as such, and fails the drill.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import math
import re
from collections import defaultdict
from typing import Any, Callable, Optional

from integration_blueprint.drill.effects import EffectLog, judge
from integration_blueprint.drill.patterns.base import PatternDriver, Step
from integration_blueprint.drill.patterns.distributed_map import DistributedMapDriver
from integration_blueprint.drill.patterns.fifo_billing import FifoBillingDriver
from integration_blueprint.drill.patterns.stream_ledger import (
    CONFLICT_ERROR,
    RetryLaneOutage,
    StreamLedgerDriver,
    known_ids,
)
from integration_blueprint.drill.report import PatternReport
from integration_blueprint.drill.samples import (
    SAMPLE_PARTITION_KEY,
    SampleIndex,
    identifying_values,
    partition_key_of,
    record_ids,
)
from integration_blueprint.drill.team_errors import EarlyStop, distinct_errors, summary
from integration_blueprint.drill.world import infrastructure, read_world
from integration_blueprint.handlers.runtime import config as handler_config
from integration_blueprint.handlers.runtime.billing import Charge
from integration_blueprint.preview.recording import RecordedStack
from integration_blueprint.redrive.move import move_messages
from integration_blueprint.sandbox.errors import SandboxError
from integration_blueprint.sandbox.realization import LocalFunction, is_team_code

FUNCTION = "aws:lambda/function:Function"
MAPPING = "aws:lambda/eventSourceMapping:EventSourceMapping"
QUEUE = "aws:sqs/queue:Queue"
STREAM = "aws:kinesis/stream:Stream"
STREAM_CONSUMER = "aws:kinesis/streamConsumer:StreamConsumer"
STATE_MACHINE = "aws:sfn/stateMachine:StateMachine"

# What code meeting a payload of another shape than it was written for raises (a missing field, a
# wrong type), the type of the team's own exception: the report then points at --sample-records.
# (Named in a runtime's message too: the blueprint's stream runtime names the type, never the message.)
PAYLOAD_ERRORS = ("KeyError", "TypeError", "AttributeError", "IndexError")
# How the runtime's conflict reason names the key (handlers/runtime/conflicts.py `conflict`).
SHARED_KEY = re.compile(r"idempotency key (.+?) was already applied")
PAYLOAD_ERROR = re.compile(r"\b(?:" + "|".join(PAYLOAD_ERRORS) + r")\b")

TEAM_NOT_COVERED = {"poison": "the drill cannot know which records a team's code refuses: every record it sends "
                              "is valid, and one the code parks fails the drill",
                    "conflicts": "the drill cannot know what the team's code takes for the same record (its "
                                 "idempotency key), so it cannot change a record and keep its id"}


class TeamCodeDriver(PatternDriver):
    """What the team-code drivers share: the team's own records if it gave some, the effect log and
    the report it gives."""

    not_covered = TEAM_NOT_COVERED
    lane = ""  # which function of the component the drill feeds, in words

    def __init__(self, sandbox, options, faults, rng):
        # The team's own records for this instance (--sample-records), sent each once: the record
        # count is theirs, and the crashes are planned over the invocations they make.
        self.sample: Optional[list] = options.samples.get(self.instances(sandbox.recorded)[0].name)
        if self.sample is not None:
            options = dataclasses.replace(options, records=len(self.sample))
        super().__init__(sandbox, options, faults, rng)
        self.index = SampleIndex()  # every record the drill sends, by its payload
        # The infrastructure as realized from the program, before any of the team's code ran: what
        # the judge holds the end state's settings to (drill/outcomes.py, infrastructure_changes).
        self.declared_infrastructure = infrastructure(read_world(sandbox, self.own_queue_urls()))
        self.early_stop: Optional[EarlyStop] = None  # made at the first deadline check, once the lane runs

    def sample_note(self) -> list[str]:
        return [f"sent the team's own {len(self.sample)} record(s) (--sample-records)"] if self.sample else []

    @classmethod
    def deploys(cls, handler: str) -> bool:
        return is_team_code(handler)

    @classmethod
    def drives(cls, recorded: RecordedStack, source_arn: str) -> bool:
        """Whether a mapping from `source_arn` is the lane this driver feeds."""
        raise NotImplementedError

    @classmethod
    def cannot_run(cls, recorded: RecordedStack) -> Optional[str]:
        """Why the sandbox cannot run the team's code of this instance (it runs Python handlers,
        each in a Python execution environment of its own), or None."""
        others = sorted({f"{r.name} ({r.inputs.get('runtime')})" for r in recorded.of_type(FUNCTION)
                         if is_team_code(str(r.inputs.get("handler", "")))
                         and not str(r.inputs.get("runtime") or "python").startswith("python")})
        if others:
            return (f"its function {', '.join(others)} runs code the sandbox cannot: it runs Python handlers "
                    "(a Node.js, Java or container handler needs a real account or LocalStack)")
        return None

    @classmethod
    def components(cls, recorded: RecordedStack) -> set[str]:
        """The components whose lane (the mapping this driver feeds) invokes the team's own code."""
        functions = {}
        for function in recorded.of_type(FUNCTION):
            functions[function.outputs.get("name")] = functions[function.outputs.get("arn")] = function
        found = set()
        for mapping in recorded.of_type(MAPPING):
            target = functions.get(mapping.inputs.get("functionName"))
            if target is not None and is_team_code(str(target.inputs.get("handler", ""))) \
                    and cls.drives(recorded, str(mapping.inputs.get("eventSourceArn", ""))):
                found.add(mapping.parent)
        return found

    def effect_log(self, find=None) -> EffectLog:
        """An effect log for this sandbox: its tables' keys, its component's queues as plumbing."""
        tables = {r.outputs["name"]: tuple(k for k in (r.inputs.get("hashKey"), r.inputs.get("rangeKey")) if k)
                  for r in self.sandbox.recorded.of_type("aws:dynamodb/table:Table")}
        return EffectLog(tables, plumbing=self.own_queue_urls(), find=find)

    def _identify(self, event: Any) -> dict[str, tuple[str, ...]]:
        """The drill's records an invocation's event delivered (record id -> its identifying values)."""
        raise NotImplementedError

    def check_deadline(self, doing: str) -> None:
        """The pattern's deadline, and the early stop of a drill whose every record fails the same
        way (drill/team_errors.py), both checked where the driver waits."""
        super().check_deadline(doing)
        if self.early_stop is None:
            self.early_stop = EarlyStop(self.name, self.functions(self.sandbox)[0].name, self._identify,
                                        sample_records="" if self.sample is not None else
                                        f"{self.instances(self.sandbox.recorded)[0].name}=FILE")
        self.early_stop.check(self.sandbox.journal)

    def error_notes(self, function: str, identify: Callable[[Any], dict[str, tuple[str, ...]]]) -> list[str]:
        """Each distinct error the team's code raised, once, and where a payload error suggests code
        written for other records, how to give the drill the team's own."""
        errors = distinct_errors(self.sandbox.journal, function, identify)
        notes = summary(errors)
        if self.sample is None and any(PAYLOAD_ERROR.search(f"{e.error.type}: {e.error.message}") for e in errors):
            notes.append(f"code written for your own records: give the drill some, --sample-records "
                         f"{self.instances(self.sandbox.recorded)[0].name}=FILE (docs/drill.md, `blueprint docs drill`, "
                         "has the payload the drill sends by default)")
        return notes

    def effects_report(self, log: EffectLog, function: str, identify: Callable[[Any], dict[str, tuple[str, ...]]],
                       records: set[str], parked: set[str], invocations: int, retries: int) -> PatternReport:
        """The report from the effects of every invocation of `function` (the sandbox's journal)."""
        log.read(self.sandbox.journal, function, identify)
        verdict = judge(log, records)
        report = PatternReport(
            sent=len(records), processed_once=len(verdict.once - parked), duplicate_effects=len(verdict.duplicated),
            unrecoverable=len(parked), expected_unrecoverable=0, lost=len(verdict.without_effect - parked),
            parked_before_redrive=self.parked_before, redriven=self.redriven, invocations=invocations,
            retries=retries)
        writes = sum(len(effects) for deliveries in log.by_record.values() for effects in deliveries.values())
        report.notes.append(f"judged by effects (the team's code): {writes} writes attributed to records, "
                            f"{len(log.unattributed)} not attributable"
                            + (f", idempotency records in {sorted(log.idempotency_tables)} not counted"
                               if log.idempotency_tables else ""))
        report.notes.extend(self.error_notes(function, identify))
        if verdict.duplicated:
            report.notes.append(f"{len(verdict.duplicated)} record(s) with a duplicate effect, e.g. "
                                + " | ".join(verdict.examples()))
        lost = sorted(verdict.without_effect - parked)
        self.without_effect = set(lost)  # lost unless the outcome matches the reference run's (outcomes.py)
        if lost:
            report.notes.append(f"{len(lost)} record(s) handled with no effect at all, e.g. {lost[:3]}")
        if parked:
            report.notes.append(f"{len(parked)} valid record(s) still parked after the redrive, e.g. {sorted(parked)[:3]}")
        report.notes.extend(self.sample_note() + self.fault_notes())
        return report


class TeamStreamDriver(TeamCodeDriver, StreamLedgerDriver):
    """A stream consumer running the team's handler: events into the stream, the stream lane and
    the Retry-DLQ lane drained with the drill's faults, the runbook's redrive, then the effects."""

    lane = "the stream's consumer function (handler/code)"
    EVENT_ID = re.compile(r"evt-\d{6}")
    ACCOUNTS = 50

    @classmethod
    def drives(cls, recorded: RecordedStack, source_arn: str) -> bool:
        return any(source_arn == r.outputs.get("arn") for token in (STREAM, STREAM_CONSUMER)
                   for r in recorded.of_type(token))

    @classmethod
    def functions(cls, sandbox) -> list[LocalFunction]:
        return [m.function for m in sandbox.kinesis_mappings
                if isinstance(m.function, LocalFunction) and is_team_code(m.function.handler)]

    def prepare(self) -> None:
        function = self.functions(self.sandbox)[0]
        self.stream_mapping = next(m for m in self.sandbox.kinesis_mappings if m.function is function)
        self.retry_mappings = [m for m in self.sandbox.sqs_mappings if m.function is function]
        self.parking_urls = [self.sandbox.dead_letter_queue(m.queue_arn).url for m in self.retry_mappings]
        self.kinesis = self.client("kinesis")
        self.poison_count = 0
        self.events: dict[str, dict] = {}  # record id -> the payload sent
        partition_keys: dict[str, str] = {}
        key_field = self.partition_key_field()
        for record_id, payload in zip(record_ids(self.sample or []), self.sample or []):
            self.events[record_id] = payload
            partition_keys[record_id] = _key_text(partition_key_of(payload, key_field)) if key_field \
                else SAMPLE_PARTITION_KEY
            self.index.add(record_id, payload, identifying_values(payload))
        for i in range(0 if self.sample else self.options.records):
            event_id = f"evt-{i:06d}"
            self.events[event_id] = {"eventId": event_id, "account": f"acct-{i % self.ACCOUNTS:04d}",
                                     "amount": 100 + self.rng.randrange(900)}
            partition_keys[event_id] = _key_text(partition_key_of(self.events[event_id], key_field or "account"))
            self.index.add(event_id, self.events[event_id], (event_id, self.events[event_id]["account"],
                                                             str(self.events[event_id]["amount"])))
        self.log = self.effect_log(find=self._named)
        self.invoker_ = self.invoker(function, self.stream_mapping.settings.batch_size)
        self.sandbox.interception.wrap(function.name, self.invoker_)
        self.refetched = 0
        ids = list(self.events)
        for start in range(0, len(ids), 500):
            self.kinesis.put_records(StreamName=self.stream_mapping.stream_name, Records=[
                {"Data": json.dumps(self.events[i]).encode(), "PartitionKey": partition_keys[i]}
                for i in ids[start:start + 500]])

    def partition_key_field(self) -> str:
        """The field this component's records are keyed by (--partition-key), "" for the default."""
        keys = self.options.partition_keys
        return keys.get(self.instances(self.sandbox.recorded)[0].name) or keys.get("", "")

    def partition_note(self) -> str:
        key_field = self.partition_key_field()
        if key_field:
            return f"partition key: each record's {key_field!r} (--partition-key): one key's records in order on one shard"
        if self.sample:
            return ("partition key: one for all your records, in the file's order (the order a producer keeps for one "
                    "key); --partition-key COMPONENT=FIELD keys them by your producer's field, spread over the shards")
        return "partition key: each record's account, as the blueprint's reference producer keys them"

    def _record_id(self, data: bytes) -> Optional[str]:
        try:
            return self.index.record_of(json.loads(data))
        except (TypeError, ValueError):
            return None

    def _parked_event_ids(self) -> tuple[set, int]:
        """Everything parked for a human, and the messages that held it. The drill sends the team's
        code no conflicting duplicate, so a record the runtime parked as one is a record it sent once
        whose idempotency key another record also had: counted among the records still parked, with
        the key named (never as a conflict the drill sent: conflicts_parked stays 0)."""
        ids, messages = set(), 0
        self.shared_keys: dict[str, set] = defaultdict(set)  # idempotency key -> the records parked under it
        for url in self.parking_urls:
            for message in self.drain_queue_messages(url):
                messages += 1
                body = json.loads(message["Body"])
                found = self._ids_of(body)
                ids |= found
                error = body.get("error") or {}
                if error.get("type") == CONFLICT_ERROR:
                    key = SHARED_KEY.search(str(error.get("message", "")))
                    self.shared_keys[key.group(1) if key else "(not named)"] |= found
        self.conflicts_parked = 0
        return ids, messages

    def shared_key_note(self) -> list[str]:
        """The records parked as conflicting duplicates of records the drill sent once each."""
        if not getattr(self, "shared_keys", None):
            return []
        parked = sorted(record for records in self.shared_keys.values() for record in records)
        keys = sorted(self.shared_keys)
        return [f"{len(parked)} record(s) parked as conflicting duplicates, but the drill sent each record once and "
                f"no conflict: your idempotency key is not unique per event; key(s) {', '.join(keys[:3])}"
                f"{' ...' if len(keys) > 3 else ''} shared by different events (e.g. records {', '.join(parked[:3])}). "
                "Key each event by what identifies it (its event id: idempotency_key_jmespath)"]

    def _identify(self, event: Any) -> dict[str, tuple[str, ...]]:
        ids: set[str] = set()
        for record in (event or {}).get("Records", []) if isinstance(event, dict) else []:
            try:
                if "kinesis" in record:
                    ids |= known_ids({self._record_id(base64.b64decode(record["kinesis"]["data"]))})
                elif "body" in record:
                    ids |= self._ids_of(json.loads(record["body"]))
            except (KeyError, TypeError, ValueError):
                continue  # not one of the drill's records: its writes are attributed by what they name
        return {event_id: self.index.values[event_id] for event_id in ids}

    def _named(self, text: str) -> Optional[str]:
        if self.sample:
            return self.index.named(text)
        named = set(self.EVENT_ID.findall(text)) & set(self.events)
        return named.pop() if len(named) == 1 else None

    def verify(self) -> PatternReport:
        self.replay(self._audit)
        parked, _ = self._parked_event_ids()
        report = self.effects_report(
            self.log, self.stream_mapping.function.name, self._identify, set(self.events), parked & set(self.events),
            self.invoker_.invocations,
            self.stream_mapping.stats.function_errors + sum(m.stats.messages_failed for m in self.retry_mappings))
        report.injected["records_reread"] = self.records_reread()
        report.notes[:0] = self.shared_key_note()
        report.notes.append(self.partition_note())
        return report


class TeamFifoBillingDriver(TeamCodeDriver):
    """A FIFO billing queue whose consumer is the team's code: the charges of N/2 employees for two
    months, enqueued as the blueprint's dispatcher enqueues them (group per tenant and month, dedup
    id per charge), drained with the drill's faults; the FIFO DLQ moved back (the runbook), drained
    again, then the effects. The accounts table holds the tenants and employees, as for the
    reference consumer, for code that checks them."""

    name = "fifo_billing"
    component = "FifoBillingQueue"
    lane = "the charges queue's consumer (consumer_handler/consumer_code)"
    MONTHS = ("2026-10", "2026-11")
    EMPLOYEES_PER_TENANT = 10
    SAMPLE_GROUPS = 10  # message groups the team's own records are spread over

    @classmethod
    def drives(cls, recorded: RecordedStack, source_arn: str) -> bool:
        return any(source_arn == r.outputs.get("arn") and r.inputs.get("fifoQueue")
                   for r in recorded.of_type(QUEUE))

    @classmethod
    def functions(cls, sandbox) -> list[LocalFunction]:
        fifo = {q.arn for q in sandbox.queues.values() if q.fifo}
        return [m.function for m in sandbox.sqs_mappings if m.queue_arn in fifo
                and isinstance(m.function, LocalFunction) and is_team_code(m.function.handler)]

    def prepare(self) -> None:
        function = self.functions(self.sandbox)[0]
        self.mapping = next(m for m in self.sandbox.sqs_mappings if m.function is function)
        self.dlq_url = self.sandbox.dead_letter_queue(self.mapping.queue_arn).url
        self.poison_count = 0
        self.log = self.effect_log()
        self.consumer = self.invoker(function, self.mapping.batch_size, "consumer")
        self.sandbox.interception.wrap(function.name, self.consumer)
        self.records: list[str] = []  # the drill's records by id, in the order sent
        if self.sample is not None:
            self._send_sample()
            return
        employees = max(1, math.ceil(self.options.records / len(self.MONTHS)))
        self.charges: dict[str, Charge] = {}
        accounts = function.environment.get(handler_config.ACCOUNTS_TABLE_NAME)
        items: list[dict] = []
        for i in range(employees):
            tenant = f"tenant-{i // self.EMPLOYEES_PER_TENANT:04d}"
            amount = 1000 + self.rng.randrange(9000)
            if i % self.EMPLOYEES_PER_TENANT == 0:
                items.append({"tenant": {"S": tenant}, "sk": {"S": "tenant"}, "status": {"S": "active"}})
            items.append(FifoBillingDriver._employee(tenant, f"e{i:05d}", amount))
            for month in self.MONTHS:
                charge = Charge(tenant=tenant, employee=f"e{i:05d}", month=month, amount=amount, currency="EUR")
                self.charges[charge.idempotency_key] = charge
        if accounts:
            ddb = self.client("dynamodb")
            for start in range(0, len(items), 25):
                ddb.batch_write_item(RequestItems={accounts: [{"PutRequest": {"Item": it}} for it in items[start:start + 25]]})
        charges = sorted(self.charges.values(), key=lambda c: (c.month, c.tenant, c.employee))
        for charge in charges:
            self.records.append(charge.idempotency_key)
            self.index.add(charge.idempotency_key, json.loads(charge.to_message()),
                           (charge.tenant, charge.employee, charge.month, str(charge.amount)))
        self._send([(c.to_message(), c.message_group_id, c.deduplication_id) for c in charges])

    def _send_sample(self) -> None:
        """The team's records as message bodies, in SAMPLE_GROUPS message groups (the drill cannot know
        the team's grouping), each deduplicated by its own content."""
        messages = []
        for i, (record_id, payload) in enumerate(zip(record_ids(self.sample or []), self.sample or [])):
            body = json.dumps(payload)
            self.records.append(record_id)
            self.index.add(record_id, payload, identifying_values(payload))
            messages.append((body, f"drill-{i % self.SAMPLE_GROUPS}", hashlib.sha256(body.encode()).hexdigest()))
        self._send(messages)

    def _send(self, messages: list[tuple[str, str, str]]) -> None:
        """(body, group id, deduplication id) of each message, into the charges queue in order."""
        for start in range(0, len(messages), 10):
            self.sandbox.sqs.send_message_batch(QueueUrl=self.mapping.queue_url, Entries=[
                {"Id": str(n), "MessageBody": body, "MessageGroupId": group, "MessageDeduplicationId": dedup}
                for n, (body, group, dedup) in enumerate(messages[start:start + 10])])

    def _record_of_body(self, body: Any) -> Optional[str]:
        try:
            return self.index.record_of(json.loads(body))
        except (TypeError, ValueError):
            return None

    def _identify(self, event: Any) -> dict[str, tuple[str, ...]]:
        found: dict[str, tuple[str, ...]] = {}
        for record in (event or {}).get("Records", []) if isinstance(event, dict) else []:
            record_id = self._record_of_body(record.get("body")) if isinstance(record, dict) else None
            if record_id is not None:
                found[record_id] = self.index.values[record_id]
        return found

    def drive(self, step: Step) -> None:
        self._drain(step, 0.0, 0.8)

    def _drain(self, step: Step, start: float, end: float) -> None:
        total = max(len(self.records), 1)
        while self.mapping.poll_once():
            self.check_deadline("draining the charges queue")
            step(start + (end - start) * min(self.mapping.stats.messages_deleted / total, 1.0))

    def recover(self, step: Step) -> None:
        """The runbook: the FIFO DLQ back into the charges queue, drained again."""
        moved = move_messages(self.sandbox.sqs, self.dlq_url, self.mapping.queue_url)
        self.parked_before = self.redriven = len(moved.moved)
        self._drain(step, 0.8, 0.99)

    def verify(self) -> PatternReport:
        parked = set()
        for message in self.drain_queue_messages(self.dlq_url):
            record_id = self._record_of_body(message["Body"])
            if record_id is None:
                raise SandboxError(f"{self.name}: a message the drill did not send is in the DLQ: "
                                   f"{message['Body'][:80]}")
            parked.add(record_id)
        return self.effects_report(self.log, self.mapping.function.name, self._identify, set(self.records), parked,
                                   self.consumer.invocations, self.mapping.stats.messages_failed)


class TeamIdempotentStreamDriver(TeamStreamDriver):
    name = "idempotent_stream"
    component = "IdempotentStreamConsumer"


class TeamNonIdempotentStreamDriver(RetryLaneOutage, TeamStreamDriver):
    """Also the pattern's own fault: while one stream batch is read, everything the team's code may
    write to is down but SQS (its Retry-DLQ), so that batch goes through the Retry-DLQ lane."""

    name = "non_idempotent_stream"
    component = "NonIdempotentStreamConsumer"
    outage_service = None
    outage_spared = frozenset({"sqs"})
    outage_described = "every service but SQS"
    # The pattern's contract: the stream lane never retries, so a redelivered stream record repeats
    # its effect by definition; duplicates and crashes meet the Retry-DLQ lane (as for the reference).
    faulted_lane = "aws:sqs"
    faulted_lane_reason = ("the stream lane has no idempotency by definition (the mapping never retries); the "
                           "Retry-DLQ lane is where the team's code must apply a record exactly once")


class TeamDistributedMapDriver(TeamCodeDriver, DistributedMapDriver):
    """A Distributed Map batch whose item handler is the team's code (item_handler/item_code): the
    CSV of invoices (some rows twice, as a re-sent file would have them), the execution with the
    drill's faults on every item delivery, the failed items re-run, then the effects."""

    lane = "the Map's item function (item_handler/item_code)"

    @classmethod
    def components(cls, recorded: RecordedStack) -> set[str]:
        definitions = " ".join(str(r.inputs.get("definition", "")) for r in recorded.of_type(STATE_MACHINE))
        return {r.parent for r in recorded.of_type(FUNCTION)
                if is_team_code(str(r.inputs.get("handler", ""))) and str(r.outputs.get("arn")) in definitions}

    @classmethod
    def functions(cls, sandbox) -> list[LocalFunction]:
        definitions = " ".join(str(r.inputs.get("definition", ""))
                               for r in sandbox.recorded.of_type(STATE_MACHINE))
        unique = {f.arn: f for f in sandbox.functions.values()}
        return [f for f in unique.values() if is_team_code(f.handler) and f.arn in definitions]

    def prepare(self) -> None:
        function = self.functions(self.sandbox)[0]
        self.poison_count = 0
        self.log = self.effect_log()
        self.drive_items(function)

    def row_ids(self) -> tuple[list[str], list[str]]:
        """The team's own rows (--sample-records: a column per key, in order of first appearance), or
        the reference invoices."""
        if self.sample is None:
            return super().row_ids()
        header = list(dict.fromkeys(column for record in self.sample for column in record))
        return header, record_ids(self.sample)

    def make_rows(self, ids: list[str]) -> dict[str, dict]:
        """Each row as the Map's ItemReader hands it over (every value CSV text), indexed by its text."""
        if self.sample is None:
            rows = super().make_rows(ids)
            for record_id, row in rows.items():
                self.index.add(record_id, row, (row["invoice_id"], row["customer_id"]))
            return rows
        rows = {}
        for record_id, record in zip(ids, self.sample):
            rows[record_id] = {column: _csv_text(record.get(column)) for column in self.header}
            self.index.add(record_id, rows[record_id], identifying_values(rows[record_id]))
        return rows

    def row_id(self, row: Any) -> Optional[str]:
        return self.index.record_of(row)

    def _identify(self, event: Any) -> dict[str, tuple[str, ...]]:
        rows = event["Items"] if isinstance(event, dict) and isinstance(event.get("Items"), list) else [event]
        return {record_id: self.index.values[record_id] for record_id in known_ids({self.index.record_of(row) for row in rows})}

    def verify(self) -> PatternReport:
        failed = self._failed_items()
        report = self.effects_report(self.log, self.function.name, self._identify, set(self.rows), failed,
                                     self.invoker_.invocations,
                                     max(0, self.invoker_.invocations - self.invoker_.duplicates_delivered - len(self.rows)))
        report.notes.append(f"execution {self.status}; re-run of the failed items: {self.rerun_status}")
        return report


def _key_text(value: Any) -> str:
    """A field's value as a partition key (Kinesis takes text)."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _csv_text(value: Any) -> str:
    """A value as the Map's ItemReader hands it over: CSV text (an object or list as its JSON)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


# By component: the driver for an instance whose consumer runs the team's own code.
TEAM_DRIVERS: dict[str, type[TeamCodeDriver]] = {
    d.component: d for d in (TeamIdempotentStreamDriver, TeamNonIdempotentStreamDriver, TeamFifoBillingDriver,
                             TeamDistributedMapDriver)}
