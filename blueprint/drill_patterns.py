"""One drill driver per pattern: what records to send, how to drive them, and how to check the
final state against the expected state. Drivers find their resources in the sandbox by the
reference handlers the stack deploys, so a stack that disables a pattern simply skips it."""

from __future__ import annotations

import base64
import json
import random
import time
from collections import Counter
from typing import Callable

from blueprint.drill import DrillOptions, Invoker, PatternReport, plan_crashes
from blueprint.faults import FaultInjector
from blueprint.engine import RecordedStack
from blueprint.sandbox import LocalFunction, Sandbox, SandboxError

Step = Callable[[float], None]


ALL_FAULTS = ("duplicates", "poison", "transient", "crashes")


class PatternDriver:
    name = ""
    handler = ""  # the reference handler module this driver drives
    # Faults outside the pattern's contract, with the reason; everything else is injected.
    not_covered: dict[str, str] = {}

    def __init__(self, sandbox: Sandbox, options: DrillOptions, faults: FaultInjector, rng: random.Random):
        self.sandbox = sandbox
        self.options = options
        self.faults = faults
        self.rng = rng
        self.poison_count = round(options.records * options.poison)

    @classmethod
    def deploys(cls, handler: str) -> bool:
        """Whether a function with this handler is the pattern's reference handler."""
        return handler.startswith(cls.handler + ".")

    @classmethod
    def components(cls, recorded: RecordedStack) -> set[str]:
        """The components (URNs) whose functions run this pattern's handler."""
        return {r.parent for r in recorded.of_type("aws:lambda/function:Function")
                if cls.deploys(str(r.inputs.get("handler", "")))}

    @classmethod
    def functions(cls, sandbox: Sandbox) -> list[LocalFunction]:
        unique = {f.arn: f for f in sandbox.functions.values()}
        return [f for f in unique.values() if cls.deploys(f.handler)]

    @classmethod
    def applies(cls, sandbox: Sandbox) -> bool:
        return bool(cls.functions(sandbox))

    def invoker(self, function: Callable, batch_size: int) -> Invoker:
        expected = self.options.records // max(batch_size, 1)
        return Invoker(function=function, faults=self.faults, rng=self.rng,
                       duplicate_rate=0.0 if "duplicates" in self.not_covered else self.options.duplicates,
                       crash_plan=(set() if "crashes" in self.not_covered
                                   else plan_crashes(self.rng, self.options.crashes, expected)))

    def invokers(self) -> list[Invoker]:
        return [v for v in vars(self).values() if isinstance(v, Invoker)]

    def injected(self) -> dict:
        invokers = self.invokers()
        return {"duplicates": sum(i.duplicates_delivered for i in invokers),
                "crashes": sum(i.crashes for i in invokers), "poison": self.poison_count}

    def fault_notes(self) -> list[str]:
        return [f"{fault} not injected: {why}" for fault, why in self.not_covered.items()]

    def client(self, service: str):
        return self.sandbox.emulator.client(service, self.sandbox.session)

    def drain_queue_messages(self, queue_url: str) -> list[dict]:
        """Every message in a queue (read by the drill, not a consumer: deleted as it goes)."""
        sqs = self.sandbox.sqs
        messages = []
        while True:
            batch = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, VisibilityTimeout=60,
                                        MessageSystemAttributeNames=["All"]).get("Messages", [])
            if not batch:
                return messages
            messages.extend(batch)
            sqs.delete_message_batch(QueueUrl=queue_url, Entries=[
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(batch)])

    def prepare(self) -> None: ...
    def drive(self, step: Step) -> None: ...
    def verify(self) -> PatternReport: ...


class FifoBillingDriver(PatternDriver):
    """Charges for N employees: the dispatcher (fired twice, as Scheduler may) enqueues them, the
    consumer charges them. Poison: employees of suspended tenants, one per tenant, which the
    consumer refuses (unknown tenant) until the redrive parks them in the FIFO DLQ.
    Effect audit: every ledger write that succeeded, counted per charge key at the botocore layer."""

    name = "fifo_billing"
    handler = "handlers.billing_dispatcher"
    EMPLOYEES_PER_TENANT = 10

    def prepare(self) -> None:
        dispatcher = self.functions(self.sandbox)[0]
        consumers = [m for m in self.sandbox.sqs_mappings if m.handler.handler == "handlers.billing_consumer.lambda_handler"
                     and m.handler.environment.get("ACCOUNTS_TABLE") == dispatcher.environment["ACCOUNTS_TABLE"]]
        if len(consumers) != 1:
            raise SandboxError("fifo_billing: expected one consumer mapping for the dispatcher's accounts table")
        self.mapping = consumers[0]
        self.consumer = self.invoker(self.mapping.handler, self.mapping.batch_size)
        self.mapping.handler = self.consumer
        self.dispatcher = self.invoker(dispatcher, self.options.records)
        self.dispatcher.crash_plan = set()  # crashes are aimed at the consumer, where charges happen
        self.dispatcher.duplicate_rate = 0.0  # a second whole run is fired instead (see drive)
        self.schedule = next(name for name, s in self.sandbox.schedules.items() if s.target_arn == dispatcher.arn)
        self.accounts = dispatcher.environment["ACCOUNTS_TABLE"]
        self.ledger = self.mapping.handler.function.environment["LEDGER_TABLE"]
        self.dlq_url = self.sandbox.dead_letter_queue(self.mapping.queue_arn).url

        ddb = self.client("dynamodb")
        valid = self.options.records - self.poison_count
        self.expected: dict[str, int] = {}
        items = []
        for i in range(valid):
            tenant = f"tenant-{i // self.EMPLOYEES_PER_TENANT:04d}"
            if i % self.EMPLOYEES_PER_TENANT == 0:
                items.append({"tenant": {"S": tenant}, "sk": {"S": "tenant"}, "status": {"S": "active"}})
            amount = 1000 + self.rng.randrange(9000)
            items.append(self._employee(tenant, f"e{i:05d}", amount))
            self.expected[f"charge#{tenant}:e{i:05d}:2026-10"] = amount
        self.poison_keys = set()
        for p in range(self.poison_count):
            tenant = f"suspended-{p:04d}"
            items.append({"tenant": {"S": tenant}, "sk": {"S": "tenant"}, "status": {"S": "suspended"}})
            items.append(self._employee(tenant, f"p{p:05d}", 500))
            self.poison_keys.add(f"charge#{tenant}:p{p:05d}:2026-10")
        for start in range(0, len(items), 25):
            ddb.batch_write_item(RequestItems={self.accounts: [{"PutRequest": {"Item": it}} for it in items[start:start + 25]]})
        self.writes: Counter = Counter()
        self.faults.auditors.append(self._audit)

    @staticmethod
    def _employee(tenant: str, employee: str, amount: int) -> dict:
        return {"tenant": {"S": tenant}, "sk": {"S": f"employee#{employee}"}, "employee": {"S": employee},
                "monthly_amount": {"N": str(amount)}, "currency": {"S": "EUR"}, "billable": {"BOOL": True}}

    def _audit(self, operation: str, params: dict, _response: dict) -> None:
        if operation == "PutItem" and params.get("TableName") == self.ledger:
            self.writes[params["Item"]["sk"]["S"]] += 1

    def drive(self, step: Step) -> None:
        for _ in range(2):  # Scheduler delivers at least once: the same run, twice
            self._fire_with_scheduler_retries()
        total = self.options.records
        while self.mapping.poll_once():
            step(self.mapping.stats.messages_deleted / max(total, 1))

    def _fire_with_scheduler_retries(self, attempts: int = 4) -> None:
        payload = json.loads(self.sandbox.scheduled_input(self.schedule))
        for _ in range(attempts):
            try:
                self.dispatcher(payload)
                return
            except Exception:  # noqa: BLE001 - Scheduler retries any failure, crashes (FunctionCrashed) included
                continue
        raise RuntimeError("the billing dispatcher failed every Scheduler attempt")

    def verify(self) -> PatternReport:
        self.faults.auditors.remove(self._audit)
        ledger_rows = {}
        ddb = self.client("dynamodb")
        for page in ddb.get_paginator("scan").paginate(TableName=self.ledger):
            for item in page["Items"]:
                ledger_rows[item["sk"]["S"]] = int(item["amount"]["N"])
        parked = self.drain_queue_messages(self.dlq_url)
        parked_keys = {"charge#" + json.loads(m["Body"])["idempotency_key"] for m in parked}
        processed = sum(1 for key, amount in self.expected.items()
                        if ledger_rows.get(key) == amount and self.writes[key] == 1)
        duplicates = sum(count - 1 for count in self.writes.values() if count > 1)
        report = PatternReport(
            sent=self.options.records, processed_once=processed, duplicate_effects=duplicates,
            unrecoverable=len(parked), expected_unrecoverable=self.poison_count,
            invocations=self.consumer.invocations + self.dispatcher.invocations,
            retries=self.mapping.stats.messages_failed)
        report.lost = report.sent - report.processed_once - report.unrecoverable
        wrong = parked_keys - self.poison_keys
        if wrong:
            report.notes.append(f"{len(wrong)} valid charges reached the DLQ, e.g. {sorted(wrong)[:3]}")
        return report


class StreamLedgerDriver(PatternDriver):
    """N events into the stream, one account each, so every account's final `applied` count must be
    exactly 1 (0 = lost, 2 = done twice). Poison: events the reference ledger rejects."""

    consumer_handler = ""

    @classmethod
    def deploys(cls, handler: str) -> bool:
        return handler == cls.consumer_handler

    def prepare(self) -> None:
        function = self.functions(self.sandbox)[0]
        self.stream_mapping = next(m for m in self.sandbox.kinesis_mappings if m.handler is function)
        self.retry_mappings = [m for m in self.sandbox.sqs_mappings if m.handler is function]
        self.invoker_ = self.invoker(function, self.stream_mapping.settings.batch_size)
        self.stream_mapping.handler = self.invoker_
        for mapping in self.retry_mappings:
            mapping.handler = self.invoker_
        self.ledger = function.environment["LEDGER_TABLE_NAME"]
        self.parking_urls = [self.sandbox.dead_letter_queue(m.queue_arn).url for m in self.retry_mappings]
        self.kinesis = self.client("kinesis")
        poison = set(self.rng.sample(range(self.options.records), self.poison_count))
        self.expected: dict[str, int] = {}
        self.poison_ids = set()
        events = []
        for i in range(self.options.records):
            event_id = f"{self.name}-{i:06d}"
            if i in poison:
                events.append({"eventId": event_id, "account": f"acct-{i:06d}", "poison": True})
                self.poison_ids.add(event_id)
            else:
                amount = 1 + self.rng.randrange(100)
                events.append({"eventId": event_id, "account": f"acct-{i:06d}", "amount": amount})
                self.expected[f"acct-{i:06d}"] = amount
        self.event_of_account = {e["account"]: e["eventId"] for e in events}
        self.refetched = 0
        self.faults.auditors.append(self._audit)
        stream = self.stream_mapping.stream_name
        for start in range(0, len(events), 500):
            chunk = events[start:start + 500]
            self.kinesis.put_records(StreamName=stream, Records=[
                {"Data": json.dumps(e).encode(), "PartitionKey": e["account"]} for e in chunk])

    def _audit(self, operation: str, _params: dict, response: dict) -> None:
        if operation == "GetRecords":  # the handler reading an on-failure range back
            self.refetched += len(response.get("Records", []))

    def records_reread(self) -> int:
        """Records delivered or read more than once: re-invocations (bisect, retries, duplicate
        deliveries) and ranges the handler read back from the stream."""
        delivered = sum(self.stream_mapping.stats.batch_sizes)
        return delivered - self.options.records + self.refetched

    def drive(self, step: Step) -> None:
        total = max(self.options.records, 1)
        read = 0
        while True:
            moved = self.stream_mapping.poll()
            read += moved
            for mapping in self.retry_mappings:
                moved += mapping.poll_once()
            step(min(read / total, 0.99))
            if not moved:
                return

    def _parked_event_ids(self) -> tuple[set, int]:
        """Event ids of everything parked for a human, and the messages that held them."""
        ids, messages = set(), 0
        for url in self.parking_urls:
            for message in self.drain_queue_messages(url):
                messages += 1
                body = json.loads(message["Body"])
                if "data" in body:
                    ids.add(json.loads(base64.b64decode(body["data"]))["eventId"])
                elif "KinesisBatchInfo" in body:
                    ids.update(self._read_range(body["KinesisBatchInfo"]))
        return ids, messages

    def _read_range(self, info: dict) -> set:
        iterator = self.kinesis.get_shard_iterator(
            StreamName=self.stream_mapping.stream_name, ShardId=info["shardId"],
            ShardIteratorType="AT_SEQUENCE_NUMBER", StartingSequenceNumber=info["startSequenceNumber"])["ShardIterator"]
        end = int(info["endSequenceNumber"])
        ids = set()
        while iterator:
            page = self.kinesis.get_records(ShardIterator=iterator, Limit=1000)
            for record in page["Records"]:
                if int(record["SequenceNumber"]) > end:
                    return ids
                ids.add(json.loads(record["Data"])["eventId"])
            if not page["Records"]:
                return ids
            iterator = page.get("NextShardIterator")
        return ids

    def verify(self) -> PatternReport:
        self.faults.auditors.remove(self._audit)
        ddb = self.client("dynamodb")
        applied = {}
        for page in ddb.get_paginator("scan").paginate(TableName=self.ledger):
            for item in page["Items"]:
                applied[item["account"]["S"]] = (int(item.get("applied", {}).get("N", "0")),
                                                 float(item.get("balance", {}).get("N", "0")))
        processed_ids = {self.event_of_account[account] for account, amount in self.expected.items()
                         if applied.get(account) == (1, float(amount))}
        duplicates = sum(count - 1 for count, _ in applied.values() if count > 1)
        parked, messages = self._parked_event_ids()
        unrecoverable = parked - processed_ids
        report = PatternReport(
            sent=self.options.records, processed_once=len(processed_ids), duplicate_effects=duplicates,
            unrecoverable=len(unrecoverable), expected_unrecoverable=self.poison_count,
            invocations=self.invoker_.invocations,
            retries=self.stream_mapping.stats.function_errors + sum(m.stats.messages_failed for m in self.retry_mappings))
        report.lost = report.sent - report.processed_once - report.unrecoverable
        wrong = unrecoverable - self.poison_ids
        if wrong:
            report.notes.append(f"{len(wrong)} valid events were parked, e.g. {sorted(wrong)[:3]}")
        report.notes.append(f"{messages} messages parked in the Unrecoverable-DLQ; "
                            f"{self.records_reread()} records re-delivered or re-read")
        report.injected["records_reread"] = self.records_reread()
        report.notes.extend(self.fault_notes())
        return report


class IdempotentStreamDriver(StreamLedgerDriver):
    name = "idempotent_stream"
    consumer_handler = "handlers.ledger_idempotent_consumer.lambda_handler"


class NonIdempotentStreamDriver(StreamLedgerDriver):
    name = "non_idempotent_stream"
    consumer_handler = "handlers.ledger_app_dlq_consumer.lambda_handler"
    not_covered = {
        "duplicates": "this pattern has no idempotency store by definition; it is exactly-once because the "
                      "mapping never retries, and a redelivered record would repeat its effect",
        "crashes": "a crashed batch goes, as Lambda's metadata-only on-failure record, straight to the "
                   "Unrecoverable-DLQ: it may be partly applied, so a person replays what was not "
                   "(components/non_idempotent_stream_consumer.py)",
    }


class DistributedMapDriver(PatternDriver):
    """A CSV of N invoices, one customer each, so every customer's ledger must hold exactly one
    invoice, written exactly once (audited at the botocore layer). Duplicates: a fraction of the rows appear twice in the file, and item deliveries are
    repeated. Poison: rows with an amount that is not a number. Failed items are read from the
    Map's ResultWriter output; a run over the tolerated threshold reaches the ops queue."""

    name = "distributed_map"
    handler = "handlers.invoice_enricher"

    def prepare(self) -> None:
        function = self.functions(self.sandbox)[0]
        self.function = function
        self.machine_arn, definition = next(
            (arn, json.loads(self._definition(arn))) for arn in self.sandbox.state_machines
            if function.arn in self._definition(arn))
        self.map_state = next(state for state in definition["States"].values()
                              if state.get("Type") == "Map")
        self.bucket = self.map_state["ItemReader"]["Parameters"]["Bucket"]
        self.ledger = function.environment["INVOICE_LEDGER_TABLE"]
        self.ops_queue_url = self.sandbox.map_value(
            next(state["Parameters"]["QueueUrl"] for state in definition["States"].values()
                 if state.get("Resource") == "arn:aws:states:::sqs:sendMessage"))
        self.invoker_ = self.invoker(function, 1)
        self.invoker_.item_key = lambda event: event.get("invoice_id") if isinstance(event, dict) else None
        self.sandbox.invocation_wrappers[function.name] = self.invoker_
        self.writes: Counter = Counter()
        self.faults.auditors.append(self._audit)

        poison = set(self.rng.sample(range(self.options.records), self.poison_count))
        self.expected: dict[str, int] = {}
        self.poison_ids = set()
        rows = ["invoice_id,customer_id,region,billing_date,amount"]
        for i in range(self.options.records):
            invoice = f"INV-{i:06d}"
            if i in poison:
                line = f"{invoice},C-{i:06d},eu,2026-11-01,not-a-number"
                self.poison_ids.add(invoice)
            else:
                cents = 100 + self.rng.randrange(100_000)
                line = f"{invoice},C-{i:06d},eu,2026-11-01,{cents // 100}.{cents % 100:02d}"
                self.expected[f"C-{i:06d}"] = cents
            rows.append(line)
            if self.rng.random() < self.options.duplicates:
                rows.append(line)  # the same invoice twice in the file
        self.key = "incoming/drill.csv"
        self.client("s3").put_object(Bucket=self.bucket, Key=self.key, Body="\n".join(rows).encode())

    def _audit(self, operation: str, params: dict, _response: dict) -> None:
        if operation == "PutItem" and params.get("TableName") == self.ledger:
            self.writes[params["Item"]["customer_id"]["S"]] += 1

    def _definition(self, arn: str) -> str:
        return self.client("stepfunctions").describe_state_machine(stateMachineArn=arn)["definition"]

    def drive(self, step: Step) -> None:
        sfn = self.client("stepfunctions")
        self.execution = sfn.start_execution(stateMachineArn=self.machine_arn, name="drill",
                                             input=json.dumps({"inputKey": self.key}))["executionArn"]
        while True:
            description = sfn.describe_execution(executionArn=self.execution)
            if description["status"] != "RUNNING":
                self.status = description["status"]
                return
            step(min(self.invoker_.invocations / max(self.options.records, 1), 0.99))
            time.sleep(0.2)

    def _failed_items(self) -> set:
        """Invoice ids of the items that failed for good. On AWS these are the ResultWriter's
        FAILED_*.json files; moto's ResultWriter writes only the manifest, so they are the items
        whose last delivery to the function failed (Step Functions retried it until then)."""
        return {key for key, outcome in self.invoker_.outcomes.items() if outcome == "failed"}

    def verify(self) -> PatternReport:
        self.faults.auditors.remove(self._audit)
        ddb = self.client("dynamodb")
        totals: dict[str, tuple[int, int]] = {}
        for page in ddb.get_paginator("scan").paginate(TableName=self.ledger):
            for item in page["Items"]:
                count, cents = totals.get(item["customer_id"]["S"], (0, 0))
                totals[item["customer_id"]["S"]] = (count + 1, cents + int(item["amount_cents"]["N"]))
        processed = {customer for customer, cents in self.expected.items()
                     if totals.get(customer) == (1, cents) and self.writes[customer] == 1}
        # Ledger rows cannot double (one key per invoice), so doubling shows in the write audit:
        # every ledger write that went through, per customer (one invoice per customer here).
        duplicates = sum(count - 1 for count in self.writes.values() if count > 1)
        failed = self._failed_items()
        ops_messages = self.drain_queue_messages(self.ops_queue_url)
        processed_ids = {f"INV-{customer[2:]}" for customer in processed}
        unrecoverable = failed - processed_ids
        report = PatternReport(
            sent=self.options.records, processed_once=len(processed), duplicate_effects=duplicates,
            unrecoverable=len(unrecoverable), expected_unrecoverable=self.poison_count,
            invocations=self.invoker_.invocations,
            retries=max(0, self.invoker_.invocations - self.invoker_.duplicates_delivered - self.options.records))
        report.lost = report.sent - report.processed_once - report.unrecoverable
        if ops_messages:
            report.notes.append(f"the run exceeded its tolerated failures: {len(ops_messages)} ops message(s)")
        wrong = unrecoverable - self.poison_ids
        if wrong:
            report.notes.append(f"{len(wrong)} valid invoices failed, e.g. {sorted(wrong)[:3]}")
        report.notes.append(f"execution {self.status}")
        return report


# Longest-running first: with fewer worker processes than patterns, the short ones fill the gaps.
DRIVERS: dict[str, type[PatternDriver]] = {
    DistributedMapDriver.name: DistributedMapDriver,
    IdempotentStreamDriver.name: IdempotentStreamDriver,
    FifoBillingDriver.name: FifoBillingDriver,
    NonIdempotentStreamDriver.name: NonIdempotentStreamDriver,
}
