"""One drill driver per pattern: what records to send, how to drive them, and how to check the
final state against the expected state. Drivers find their resources in the sandbox by the
reference handlers the stack deploys, so a stack that disables a pattern simply skips it."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Callable, Optional

from blueprint.drill import DrillOptions, FunctionCrashed, Invoker, PatternReport, plan_crashes
from blueprint.faults import FaultInjector
from blueprint.sandbox import LocalFunction, Sandbox, SandboxError

Step = Callable[[float], None]


class PatternDriver:
    name = ""
    handler = ""  # the reference handler module this driver drives

    def __init__(self, sandbox: Sandbox, options: DrillOptions, faults: FaultInjector, rng: random.Random):
        self.sandbox = sandbox
        self.options = options
        self.faults = faults
        self.rng = rng
        self.poison_count = round(options.records * options.poison)

    @classmethod
    def functions(cls, sandbox: Sandbox) -> list[LocalFunction]:
        unique = {f.arn: f for f in sandbox.functions.values()}
        return [f for f in unique.values() if f.handler.startswith(cls.handler + ".")]

    @classmethod
    def applies(cls, sandbox: Sandbox) -> bool:
        return bool(cls.functions(sandbox))

    def invoker(self, function: Callable) -> Invoker:
        return Invoker(function=function, faults=self.faults, rng=self.rng,
                       duplicate_rate=self.options.duplicates,
                       crash_plan=plan_crashes(self.rng, self.options.crashes))

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
        self.consumer = self.invoker(self.mapping.handler)
        self.mapping.handler = self.consumer
        self.dispatcher = self.invoker(dispatcher)
        self.dispatcher.crash_plan = set()  # crashes are aimed at the consumer, where charges happen
        self.dispatcher.duplicate_rate = 0.0  # a second whole run is fired instead (see drive)
        self.schedule = next(name for name, s in self.sandbox.schedules.items() if s.target_arn == dispatcher.arn)
        self.accounts = dispatcher.environment["ACCOUNTS_TABLE"]
        self.ledger = self.mapping.handler.function.environment["LEDGER_TABLE"]
        queue = self.sandbox.queues[self.mapping.queue_arn]
        redrive = self.sandbox.sqs.get_queue_attributes(QueueUrl=queue.url, AttributeNames=["RedrivePolicy"])
        self.dlq_url = self.sandbox.queues[json.loads(redrive["Attributes"]["RedrivePolicy"])["deadLetterTargetArn"]].url

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

    def _audit(self, operation: str, params: dict) -> None:
        if operation == "PutItem" and params.get("TableName") == self.ledger:
            self.writes[params["Item"]["sk"]["S"]] += 1

    def drive(self, step: Step) -> None:
        for _ in range(2):  # Scheduler delivers at least once: the same run, twice
            self._fire_with_scheduler_retries()
        total = self.options.records
        while self.mapping.poll_once():
            step(self.mapping.stats.messages_deleted / max(total, 1))

    def _fire_with_scheduler_retries(self, attempts: int = 4) -> None:
        schedule = self.sandbox.schedules[self.schedule]
        payload = json.loads(schedule.input.replace("<aws.scheduler.scheduled-time>", "2026-11-01T03:00:00Z"))
        for _ in range(attempts):
            try:
                self.dispatcher(payload)
                return
            except (Exception, FunctionCrashed):  # noqa: BLE001 - Scheduler retries any failure
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
        report.notes.append(f"{self.consumer.duplicates_delivered} duplicate deliveries, {self.consumer.crashes} "
                            f"crashed invocations, {self.faults.transient_injected} transient faults injected so far")
        return report


DRIVERS: dict[str, type[PatternDriver]] = {
    FifoBillingDriver.name: FifoBillingDriver,
}
