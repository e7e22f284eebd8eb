"""The FIFO billing pattern's drill driver."""

from __future__ import annotations

import json
from collections import Counter

from integration_blueprint.drill.patterns.base import PatternDriver, Step
from integration_blueprint.drill.report import PatternReport
from integration_blueprint.handlers.runtime import config as handler_config
from integration_blueprint.sandbox.errors import SandboxError


class FifoBillingDriver(PatternDriver):
    """Charges for N employees: the dispatcher (fired twice, as Scheduler may) enqueues them, the
    consumer charges them. Poison: employees of suspended tenants, one per tenant, which the
    consumer refuses (unknown tenant) until the redrive parks them in the FIFO DLQ.
    Effect audit: every ledger write that succeeded, counted per charge key at the botocore layer."""

    name = "fifo_billing"
    handler = "integration_blueprint.handlers.reference.billing_dispatcher"
    consumer_handler = "integration_blueprint.handlers.reference.billing_consumer.lambda_handler"
    EMPLOYEES_PER_TENANT = 10

    def prepare(self) -> None:
        dispatcher = self.functions(self.sandbox)[0]
        accounts = dispatcher.environment[handler_config.ACCOUNTS_TABLE_NAME]
        consumers = [m for m in self.sandbox.sqs_mappings if m.handler.handler == self.consumer_handler
                     and m.handler.environment.get(handler_config.ACCOUNTS_TABLE_NAME) == accounts]
        if len(consumers) != 1:
            raise SandboxError("fifo_billing: expected one consumer mapping for the dispatcher's accounts table")
        self.mapping = consumers[0]
        self.consumer = self.invoker(self.mapping.handler, self.mapping.batch_size)
        self.mapping.handler = self.consumer
        self.dispatcher = self.invoker(dispatcher, self.options.records)
        self.dispatcher.crash_plan = set()  # crashes are aimed at the consumer, where charges happen
        self.dispatcher.duplicate_rate = 0.0  # a second whole run is fired instead (see drive)
        self.schedule = next(name for name, s in self.sandbox.schedules.items() if s.target_arn == dispatcher.arn)
        self.accounts = dispatcher.environment[handler_config.ACCOUNTS_TABLE_NAME]
        self.ledger = self.mapping.handler.function.environment[handler_config.LEDGER_TABLE_NAME]
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
