"""The FIFO billing pattern's drill driver."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter, defaultdict

from integration_blueprint.drill import hot_key
from integration_blueprint.drill.patterns.base import PatternDriver, Step
from integration_blueprint.drill.report import PatternReport
from integration_blueprint.handlers.runtime import config as handler_config
from integration_blueprint.handlers.runtime.billing import Charge
from integration_blueprint.redrive.dispatch import rerun_async_failures
from integration_blueprint.redrive.move import move_messages
from integration_blueprint.redrive.parked import list_parked
from integration_blueprint.sandbox.errors import SandboxError
from integration_blueprint.sandbox.realization import is_team_code

# Two monthly runs: the schedule's run on these dates bills the month before.
CRASH_RUN = ("2026-11-01T03:00:00Z", "2026-10")  # transient faults, a crash mid-month, fired twice
OUTAGE_RUN = ("2026-12-01T03:00:00Z", "2026-11")  # the accounts store down: every attempt fails
# The tenant that employs hot_key.HOT_KEY_SHARE of the employees (the others have EMPLOYEES_PER_TENANT each).
HOT_TENANT = "tenant-hot"


def _billed_month(payload: dict) -> str:
    """The month a parked dispatcher event bills (as the dispatcher decides it)."""
    if payload.get("month"):
        return payload["month"]
    for scheduled, month in (CRASH_RUN, OUTAGE_RUN):
        if payload.get("scheduled_time") == scheduled:
            return month
    return "?"


class FifoBillingDriver(PatternDriver):
    """Charges for N/2 employees over two months, a hot tenant employing HOT_KEY_SHARE of them (one
    message group per month carries that share; its ledger rows must stay within their bound,
    drill/hot_key.py). The schedule fires each month's dispatcher
    asynchronously (sandbox/async_invoke.py): the first month's run meets transient faults and a
    crash after half its charges were enqueued, and is fired twice (Scheduler is at least once); the
    second month's run meets an outage of the accounts store, fails every retry and is parked in the
    dispatcher's on-failure queue. The consumer charges what was enqueued. Poison: employees of
    suspended tenants, one per tenant, which the consumer refuses (unknown tenant) until the redrive
    parks them in the FIFO DLQ.
    Recovery: the parked run is re-run from its on-failure record, the FIFO DLQ is moved back to the
    charges queue, and the consumer drains again.
    Effect audit: every ledger write that succeeded, counted per charge key at the botocore layer,
    and every charge message the consumer received, per key (enqueued twice = a dispatcher effect
    done twice)."""

    name = "fifo_billing"
    component = "FifoBillingQueue"
    # The reference consumer, whose ledger the drill reads; the dispatcher is whatever the component's
    # schedule starts: the blueprint's, or the team's own (dispatcher_code), then judged by what the
    # reference consumer charged from what it enqueued.
    handler = "integration_blueprint.handlers.reference.billing_consumer"
    EMPLOYEES_PER_TENANT = 10
    record_ids = re.compile(r"\btenant-\d{4}:e\d{5}:\d{4}-\d{2}\b")

    def prepare(self) -> None:
        consumer_function = self.functions(self.sandbox)[0]
        accounts = consumer_function.environment[handler_config.ACCOUNTS_TABLE_NAME]
        self.mapping = next(m for m in self.sandbox.sqs_mappings if m.function is consumer_function)
        scheduled = {s.target_arn for s in self.sandbox.schedules.values()}
        dispatchers = [f for f in {f.arn: f for f in self.sandbox.functions.values()}.values() if f.arn in scheduled]
        if len(dispatchers) != 1:
            raise SandboxError(f"fifo_billing: expected one function the component's schedule starts (its dispatcher), "
                               f"found {len(dispatchers)}")
        dispatcher = dispatchers[0]
        self.team_dispatcher = dispatcher.handler if is_team_code(dispatcher.handler) else ""
        if self.team_dispatcher:  # it decides what it enqueues: suspended tenants' employees may never reach the queue
            self.poison_count = 0
            self.not_covered = {**self.not_covered, "poison": "the dispatcher is the team's code, which decides "
                                                              "what it enqueues"}
        self.consumer = self.invoker(consumer_function, self.mapping.batch_size, "consumer")
        self.sandbox.interception.wrap(consumer_function.name, self._received)
        self.dispatcher = self.invoker(dispatcher, self.options.records, "dispatcher")
        self.dispatcher.crash_plan = set()  # the dispatcher's crash is aimed mid-month (see drive)
        self.dispatcher.duplicate_rate = 0.0  # a second whole run is fired instead (see drive)
        self.sandbox.interception.wrap(dispatcher.name, self.dispatcher)
        self.dispatcher_name = dispatcher.name
        self.schedule = next(name for name, s in self.sandbox.schedules.items() if s.target_arn == dispatcher.arn)
        settings = self.sandbox.async_settings.get(dispatcher.arn)
        if settings is None or not settings.on_failure_queue_url:
            raise SandboxError("fifo_billing: the dispatcher has no on-failure destination "
                               "(FunctionEventInvokeConfig); a run that fails every retry would be dropped")
        self.failed_runs_url = settings.on_failure_queue_url
        self.accounts = accounts
        self.ledger = consumer_function.environment[handler_config.LEDGER_TABLE_NAME]
        self.dlq_url = self.sandbox.dead_letter_queue(self.mapping.queue_arn).url
        self.charges_url = self.mapping.queue_url

        ddb = self.client("dynamodb")
        months = (CRASH_RUN[1], OUTAGE_RUN[1])
        employees = max(1, self.options.records // len(months))
        poison_employees = min(employees, math.ceil(self.poison_count / len(months)))
        self.poison_count = poison_employees * len(months)
        self.sent = employees * len(months)
        self.expected: dict[str, int] = {}
        self.month_of: dict[str, str] = {}
        hot = hot_key.pick_hot(self.rng, range(employees - poison_employees), employees)
        self.hot_charges = len(hot) * len(months)
        items = [{"tenant": {"S": HOT_TENANT}, "sk": {"S": "tenant"}, "status": {"S": "active"}}] if hot else []
        spread = 0  # employees of the other tenants so far
        for i in range(employees - poison_employees):
            if i in hot:
                tenant = HOT_TENANT
            else:
                tenant = f"tenant-{spread // self.EMPLOYEES_PER_TENANT:04d}"
                if spread % self.EMPLOYEES_PER_TENANT == 0:
                    items.append({"tenant": {"S": tenant}, "sk": {"S": "tenant"}, "status": {"S": "active"}})
                spread += 1
            amount = 1000 + self.rng.randrange(9000)
            items.append(self._employee(tenant, f"e{i:05d}", amount))
            for month in months:
                self.expected[f"charge#{tenant}:e{i:05d}:{month}"] = amount
                self.month_of[f"charge#{tenant}:e{i:05d}:{month}"] = month
        self.poison_keys = set()
        for p in range(poison_employees):
            tenant = f"suspended-{p:04d}"
            items.append({"tenant": {"S": tenant}, "sk": {"S": "tenant"}, "status": {"S": "suspended"}})
            items.append(self._employee(tenant, f"p{p:05d}", 500))
            for month in months:
                self.poison_keys.add(f"charge#{tenant}:p{p:05d}:{month}")
                self.month_of[f"charge#{tenant}:p{p:05d}:{month}"] = month
        for start in range(0, len(items), 25):
            ddb.batch_write_item(RequestItems={self.accounts: [{"PutRequest": {"Item": it}} for it in items[start:start + 25]]})
        self.writes: Counter = Counter()
        self.received: defaultdict = defaultdict(set)  # charge key -> message ids the consumer got
        self.redriven_messages: Counter = Counter()  # charge key -> times moved back from the DLQ
        self.runs: dict[str, list] = {}
        self.parked_runs: list = []
        self.conflict_bodies: set[str] = set()  # the conflicting duplicates the drill sent

    def _received(self, event: dict, context=None):
        for record in event.get("Records", []):
            if record["body"] in self.conflict_bodies:
                continue  # the drill's own second message for that key, not the dispatcher's
            key = json.loads(record["body"]).get("idempotency_key")
            self.received[f"charge#{key}"].add(record["messageId"])
        return self.consumer(event, context)

    def send_conflicts(self) -> None:
        """Charges already in the ledger, enqueued again with their key and another amount (a
        producer that recomputed a charge and re-sent it, under a deduplication id of its own): the
        consumer must park each, neither charging nor skipping it."""
        ddb = self.client("dynamodb")
        entries: list[dict] = []
        for key, amount in sorted(self.expected.items()):
            if len(entries) == self.conflict_count():
                break
            tenant, employee, month = key.removeprefix("charge#").split(":")
            row = ddb.get_item(TableName=self.ledger, Key={"pk": {"S": tenant}, "sk": {"S": key}}).get("Item")
            if row is None:
                continue
            charge = Charge(tenant=tenant, employee=employee, month=month, amount=amount + 1, currency="EUR")
            body = charge.to_message()
            self.conflict_bodies.add(body)
            entries.append({"Id": str(len(entries) % 10), "MessageBody": body, "MessageGroupId": charge.message_group_id,
                            "MessageDeduplicationId": hashlib.sha256(body.encode()).hexdigest()})
        for start in range(0, len(entries), 10):
            self.sandbox.sqs.send_message_batch(QueueUrl=self.charges_url, Entries=entries[start:start + 10])
        self.conflicts_sent = len(entries)

    @staticmethod
    def _employee(tenant: str, employee: str, amount: int) -> dict:
        return {"tenant": {"S": tenant}, "sk": {"S": f"employee#{employee}"}, "employee": {"S": employee},
                "monthly_amount": {"N": str(amount)}, "currency": {"S": "EUR"}, "billable": {"BOOL": True}}

    def _audit(self, operation: str, params: dict, _response: dict) -> None:
        if operation == "PutItem" and params.get("TableName") == self.ledger:
            self.writes[params["Item"]["sk"]["S"]] += 1

    def drive(self, step: Step) -> None:
        if self.reference:  # each month's run once, neither crashed nor down
            for scheduled, month in (CRASH_RUN, OUTAGE_RUN):
                self.runs[month] = [self.sandbox.fire_schedule(self.schedule, scheduled)]
            self._drain(step, 0.0, 0.6)
            if self.conflict_count():
                self.send_conflicts()
                self._drain(step, 0.6, 0.7)
            return
        scheduled, month = CRASH_RUN
        batches = math.ceil(len([k for k in self.month_of if self.month_of[k] == month]) / 10)
        # Die after half the SendMessageBatch calls (a crash counts writes): half the month is enqueued.
        self.dispatcher.crash_next_after = max(1, batches // 2)
        self.runs[month] = [self.sandbox.fire_schedule(self.schedule, scheduled)]
        self.runs[month].append(self.sandbox.fire_schedule(self.schedule, scheduled))  # at least once
        scheduled, month = OUTAGE_RUN
        self.faults.outage = True
        try:
            self.runs[month] = [self.sandbox.fire_schedule(self.schedule, scheduled)]
        finally:
            self.faults.outage = False
        self._drain(step, 0.0, 0.6)
        if self.conflict_count():
            self.send_conflicts()  # once the first month is charged: the first amount is the one applied
            self._drain(step, 0.6, 0.7)

    def _drain(self, step: Step, start: float, end: float) -> None:
        total = max(self.sent, 1)
        while self.mapping.poll_once():
            self.check_deadline("draining the charges queue")
            step(start + (end - start) * min(self.mapping.stats.messages_deleted / total, 1.0))

    def recover(self, step: Step) -> None:
        parked_charges = list_parked(self.sandbox.sqs, self.dlq_url)
        self.parked_runs = list_parked(self.sandbox.sqs, self.failed_runs_url)
        parked_months = {_billed_month((m.json or {}).get("requestPayload") or {}) for m in self.parked_runs}
        self.parked_run_months = sorted(parked_months)
        self.parked_before = len(parked_charges) + sum(1 for month in self.month_of.values() if month in parked_months)
        # Re-run each parked run from its record, as `blueprint redrive dispatch` does (synchronously).
        rerun = rerun_async_failures(self.sandbox.sqs, self.failed_runs_url,
                                     invoke=lambda payload: self.sandbox.invoke(self.dispatcher_name, payload))
        self.rerun_failures = [why for _, why in rerun.failed]
        rerun_months = {_billed_month((m.json or {}).get("requestPayload") or {}) for m in rerun.rerun}
        self._drain(step, 0.7, 0.8)
        moved = move_messages(self.sandbox.sqs, self.dlq_url, self.charges_url)
        for message in moved.moved:
            if message.body not in self.conflict_bodies:
                self.redriven_messages["charge#" + str((message.json or {}).get("idempotency_key"))] += 1
        self.redriven = len(set(self.redriven_messages)
                            | {key for key, month in self.month_of.items() if month in rerun_months})
        self._drain(step, 0.8, 0.99)

    def verify(self) -> PatternReport:
        self.replay(self._audit)
        ledger_rows = {}
        hot_items = []
        ddb = self.client("dynamodb")
        for page in ddb.get_paginator("scan").paginate(TableName=self.ledger):
            for item in page["Items"]:
                ledger_rows[item["sk"]["S"]] = int(item["amount"]["N"])
                if item["pk"]["S"] == HOT_TENANT:
                    hot_items.append(item)
        parked = self.drain_queue_messages(self.dlq_url)
        self.conflicts_parked = len({m["Body"] for m in parked} & self.conflict_bodies)
        parked_keys = {"charge#" + json.loads(m["Body"])["idempotency_key"] for m in parked
                       if m["Body"] not in self.conflict_bodies}
        still_parked_runs = self.drain_queue_messages(self.failed_runs_url)
        parked_months = {_billed_month(json.loads(m["Body"]).get("requestPayload") or {}) for m in still_parked_runs}
        parked_keys |= {key for key, month in self.month_of.items() if month in parked_months}
        processed = sum(1 for key, amount in self.expected.items()
                        if ledger_rows.get(key) == amount and self.writes[key] == 1)
        charged_twice = sum(count - 1 for count in self.writes.values() if count > 1)
        enqueued_twice = sum(max(0, len(ids) - 1 - self.redriven_messages[key]) for key, ids in self.received.items())
        report = PatternReport(
            sent=self.sent, processed_once=processed, duplicate_effects=charged_twice + enqueued_twice,
            unrecoverable=len(parked_keys), expected_unrecoverable=self.poison_count,
            parked_before_redrive=self.parked_before, redriven=self.redriven,
            invocations=self.consumer.invocations + self.dispatcher.invocations,
            retries=self.mapping.stats.messages_failed)
        report.lost = report.sent - report.processed_once - report.unrecoverable
        if self.hot_charges:  # the hot tenant's ledger rows: one per charge, each expiring
            report.hot_key = hot_key.measure(HOT_TENANT, hot_items, table=self.ledger,
                                             ttl_attribute=hot_key.ttl_attribute(ddb, self.ledger),
                                             records=self.hot_charges, sent=self.sent, lasting_items_bound=0)
        wrong = parked_keys - self.poison_keys
        if wrong:
            report.notes.append(f"{len(wrong)} valid charges are still parked, e.g. {sorted(wrong)[:3]}")
        for month, results in self.runs.items():
            outcome = ", ".join(f"{'ok' if r.succeeded else r.condition} after {r.attempts} attempt(s)" for r in results)
            report.notes.append(f"dispatch {month}: {outcome}")
        report.notes.append(f"parked in the dispatcher's on-failure queue before the redrive: "
                            f"{len(self.parked_runs)} run(s), months {self.parked_run_months}; re-run failures: "
                            f"{self.rerun_failures or 'none'}")
        report.notes.append(f"charges enqueued twice: {enqueued_twice}; charged twice: {charged_twice}")
        report.injected["outage_calls"] = self.faults.outage_injected
        if self.team_dispatcher:
            report.notes.append(f"the dispatcher runs the team's code ({self.team_dispatcher}): judged by what the "
                                "reference consumer charged from what it enqueued")
        report.notes.extend(self.fault_notes())
        return report
