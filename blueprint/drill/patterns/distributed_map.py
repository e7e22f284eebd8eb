"""The Distributed Map batch's drill driver."""

from __future__ import annotations

import csv
import io
import json
import time
from collections import Counter
from typing import Optional

from integration_blueprint.drill.patterns.base import PatternDriver, Step
from integration_blueprint.drill.report import PatternReport
from integration_blueprint.handlers.runtime import config as handler_config
from integration_blueprint.redrive.map_items import rerun_items
from integration_blueprint.sandbox.realization import LocalFunction

# How often a running execution is looked at. Each look is a DescribeExecution the emulator answers
# on the same core as the execution's own work (at 0.02 s they were a quarter of the pattern's
# requests); an execution's end is noticed within this.
POLL_SECONDS = 0.25


class DistributedMapDriver(PatternDriver):
    """A CSV of N invoices, one customer each, so every customer's ledger must hold exactly one
    invoice, written exactly once (audited at the botocore layer). Duplicates: a fraction of the rows
    appear twice in the file, and item deliveries are
    repeated. Poison: rows with an amount that is not a number. Failed items are read from the
    Map's ResultWriter output; a run over the tolerated threshold reaches the ops queue.
    Recovery: the failed items are re-run as a new execution over just those rows, as
    `blueprint redrive map` does."""

    name = "distributed_map"
    component = "DistributedMapBatch"
    handler = "integration_blueprint.handlers.reference.invoice_enricher"

    def prepare(self) -> None:
        function = self.functions(self.sandbox)[0]
        self.ledger = function.environment[handler_config.INVOICE_LEDGER_TABLE_NAME]
        self.writes: Counter = Counter()
        self.drive_items(function)

    def drive_items(self, function: LocalFunction) -> None:
        """Find the state machine that runs `function` per item, wrap it in the drill's invoker,
        and put the CSV of invoices where the Map reads it."""
        self.function = function
        self.machine_arn, definition = next(
            (arn, json.loads(self._definition(arn))) for arn in self.sandbox.state_machines
            if function.arn in self._definition(arn))
        self.map_state = next(state for state in definition["States"].values()
                              if state.get("Type") == "Map")
        self.bucket = self.map_state["ItemReader"]["Parameters"]["Bucket"]
        self.ops_queue_url = self.sandbox.map_value(
            next(state["Parameters"]["QueueUrl"] for state in definition["States"].values()
                 if state.get("Resource") == "arn:aws:states:::sqs:sendMessage"))
        self.conflicts: dict[str, str] = {}  # a conflicting row's text -> its item id
        self.invoker_ = self.invoker(function, 1)
        self.invoker_.item_key = self.item_id
        # Children run in parallel threads: crashes are planned per item, not per invocation number.
        self.invoker_.crash_plan = set()
        self.sandbox.interception.wrap(self.function.name, self.invoker_)

        self.poison_ids: set = set()
        self.header, self.rows = self.make_rows()
        text = io.StringIO()
        csv_file = csv.writer(text, lineterminator="\n")
        csv_file.writerow(self.header)
        for row in self.rows.values():
            line = [row.get(column, "") for column in self.header]
            csv_file.writerow(line)
            if self.rng.random() < self.options.duplicates:
                csv_file.writerow(line)  # the same item twice in the file
        if "crashes" not in self.not_covered:
            valid = sorted(set(self.rows) - self.poison_ids)
            self.invoker_.crash_items = set(self.rng.sample(valid, min(self.options.crashes, len(valid))))
        self.key = "incoming/drill.csv"
        self.client("s3").put_object(Bucket=self.bucket, Key=self.key, Body=text.getvalue().rstrip("\n").encode())

    def make_rows(self) -> tuple[list[str], dict[str, dict]]:
        """The CSV's header and its rows by item id: N invoices, one customer each, the poison with
        an amount that is not a number."""
        poison = set(self.rng.sample(range(self.options.records), self.poison_count))
        self.expected: dict[str, int] = {}
        header = ["invoice_id", "customer_id", "region", "billing_date", "amount"]
        rows: dict[str, dict] = {}
        for i in range(self.options.records):
            invoice = f"INV-{i:06d}"
            if i in poison:
                amount = "not-a-number"
                self.poison_ids.add(invoice)
            else:
                cents = 100 + self.rng.randrange(100_000)
                amount = f"{cents // 100}.{cents % 100:02d}"
                self.expected[f"C-{i:06d}"] = cents
            rows[invoice] = dict(zip(header, (invoice, f"C-{i:06d}", "eu", "2026-11-01", amount)))
        return header, rows

    def item_id(self, event) -> Optional[str]:
        """Which row an item delivery is (its outcomes are kept per row), a conflicting copy apart."""
        if not isinstance(event, dict):
            return None
        return self.conflicts.get(json.dumps(event, sort_keys=True)) or event.get("invoice_id")

    def _audit(self, operation: str, params: dict, _response: dict) -> None:
        if operation == "PutItem" and params.get("TableName") == self.ledger:
            self.writes[params["Item"]["customer_id"]["S"]] += 1

    def _definition(self, arn: str) -> str:
        return self.client("stepfunctions").describe_state_machine(stateMachineArn=arn)["definition"]

    def drive(self, step: Step) -> None:
        sfn = self.client("stepfunctions")
        self.execution = sfn.start_execution(stateMachineArn=self.machine_arn, name="drill",
                                             input=json.dumps({"inputKey": self.key}))["executionArn"]
        self.status = self._wait(self.execution, step, 0.0, 0.85)
        self.conflicts_status = self.send_conflicts(step) if self.conflict_count() else ""

    def send_conflicts(self, step: Step) -> str:
        """Invoices already recorded, sent again in a file of their own with another amount (a
        corrected file re-sent under the same invoice ids): the item handler must refuse each (its
        item fails), neither recording nor skipping it. Returns the execution's status; what it sent
        to the ops queue is counted apart from the drill's own run."""
        recorded = sorted(key for key, outcome in self.invoker_.outcomes.items() if outcome == "ok" and key in self.rows)
        header = list(self.header)
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerow(header)
        for invoice in recorded[:self.conflict_count()]:
            row = {**self.rows[invoice], "amount": f"{float(self.rows[invoice]['amount']) + 0.01:.2f}"}
            self.conflicts[json.dumps(row, sort_keys=True)] = f"{invoice} (conflicting)"
            csv.writer(text, lineterminator="\n").writerow([row[column] for column in header])
        self.conflicts_sent = len(self.conflicts)
        if not self.conflicts:
            return "none sent"
        key = "incoming/drill-conflicts.csv"
        self.client("s3").put_object(Bucket=self.bucket, Key=key, Body=text.getvalue().encode())
        sfn = self.client("stepfunctions")
        execution = sfn.start_execution(stateMachineArn=self.machine_arn, name="drill-conflicts",
                                        input=json.dumps({"inputKey": key}))["executionArn"]
        status = self._wait(execution, step, 0.85, 0.9)
        self.conflict_ops_messages = len(self.drain_queue_messages(self.ops_queue_url))
        self.conflicts_parked = sum(1 for item in self.conflicts.values() if self.invoker_.outcomes.get(item) == "failed")
        return status

    def _wait(self, execution: str, step: Step, start: float, end: float) -> str:
        """Poll an execution until it ends (or the pattern's deadline passes: then stop it)."""
        sfn = self.client("stepfunctions")
        while True:
            description = sfn.describe_execution(executionArn=execution)
            if description["status"] != "RUNNING":
                return description["status"]
            try:
                self.check_deadline(f"waiting for execution {execution.rsplit(':', 1)[-1]} "
                                    f"({self.invoker_.invocations} item invocations so far)")
            except Exception:
                sfn.stop_execution(executionArn=execution, error="Drill.Deadline")
                raise
            step(start + (end - start) * min(self.invoker_.invocations / max(self.options.records, 1), 1.0))
            time.sleep(POLL_SECONDS)

    def recover(self, step: Step) -> None:
        failed = sorted(self._failed_items())
        self.parked_before = len(failed)
        self.ops_before = self.drain_queue_messages(self.ops_queue_url)
        rerun = rerun_items(self.client("s3"), self.client("stepfunctions"), state_machine_arn=self.machine_arn,
                            bucket=self.bucket, header=self.header, items=[self.rows[i] for i in failed],
                            name="drill-redrive")
        self.redriven = rerun.items
        self.rerun_status = self._wait(rerun.execution_arn, step, 0.9, 0.99) if rerun.execution_arn else "none needed"

    def _failed_items(self) -> set:
        """Invoice ids of the items that failed for good. On AWS these are the ResultWriter's
        FAILED_*.json files; moto's ResultWriter writes only the manifest, so they are the items
        whose last delivery to the function failed (Step Functions retried it until then)."""
        return {key for key, outcome in self.invoker_.outcomes.items() if outcome == "failed" and key in self.rows}

    def verify(self) -> PatternReport:
        self.replay(self._audit)
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
        ops_messages = self.ops_before + self.drain_queue_messages(self.ops_queue_url)
        processed_ids = {f"INV-{customer[2:]}" for customer in processed}
        unrecoverable = failed - processed_ids
        report = PatternReport(
            sent=self.options.records, processed_once=len(processed), duplicate_effects=duplicates,
            unrecoverable=len(unrecoverable), expected_unrecoverable=self.poison_count,
            parked_before_redrive=self.parked_before, redriven=self.redriven,
            invocations=self.invoker_.invocations,
            retries=max(0, self.invoker_.invocations - self.invoker_.duplicates_delivered - self.options.records))
        report.lost = report.sent - report.processed_once - report.unrecoverable
        if ops_messages:
            report.notes.append(f"the run exceeded its tolerated failures: {len(ops_messages)} ops message(s)")
        wrong = unrecoverable - self.poison_ids
        if wrong:
            report.notes.append(f"{len(wrong)} valid invoices failed, e.g. {sorted(wrong)[:3]}")
        report.notes.append(f"execution {self.status}; re-run of the failed items: {self.rerun_status}")
        report.notes.extend(self.conflict_notes())
        return report

    def conflict_notes(self) -> list[str]:
        if not self.conflicts_sent:
            return []
        return [f"{self.conflicts_sent} conflicting row(s) re-sent in a file of their own: execution "
                f"{self.conflicts_status}, {self.conflicts_parked} refused, {self.conflict_ops_messages} ops message(s)"]


# Longest-running first: with fewer worker processes than patterns, the short ones fill the gaps.
