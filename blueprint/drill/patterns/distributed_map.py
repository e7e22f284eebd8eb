"""The Distributed Map batch's drill driver: two nights, one under the run's tolerated failures and one
over them, each followed by the runbook's redrive."""

from __future__ import annotations

import csv
import io
import json
import re
import time
from collections import Counter
from typing import Any, Optional

from integration_blueprint.drill.patterns.base import PatternDriver, Step
from integration_blueprint.drill.report import PatternReport
from integration_blueprint.handlers.runtime import config as handler_config
from integration_blueprint.redrive.map_items import failed_items_from_manifest, rerun_items
from integration_blueprint.sandbox.distributed_map import allowed_failures
from integration_blueprint.sandbox.realization import LocalFunction

# How often a running execution is looked at: first after POLL_SECONDS, then each wait longer by
# POLL_GROWTH up to POLL_MOST_SECONDS. Each look is a DescribeExecution the emulator answers on the
# same cores as the execution's own work (at a fixed 0.05 s, a 1,500-invoice night's looks were 1% of
# the drill's CPU); a short redrive's end is still noticed within a tenth of a second, a long night's
# within POLL_MOST_SECONDS.
POLL_SECONDS = 0.05
POLL_GROWTH = 1.25
POLL_MOST_SECONDS = 0.25
# The share of the invoices in the first night (under the threshold); the rest are the second's.
UNDER_SHARE = 0.9
# The runbook's redrive is repeated while it still gets items done (a redrive that itself crosses
# the threshold leaves the children it never started pending), at most this many times.
MAX_REDRIVES = 6


class DistributedMapDriver(PatternDriver):
    """N invoices, one customer each, so every customer's ledger must hold exactly one invoice,
    written exactly once (audited at the botocore layer), over two nights:

    - under the threshold: the first file, with the fault mix (rows twice in the file, repeated
      deliveries, transient faults, crashes) and as many poison rows as the run tolerates (each in a
      batch of its own: a failed child counts every item of its batch). The run must succeed; its
      failed items (the ResultWriter's FAILED results) are redriven once.
    - over the threshold: the second file, with the rest of the poison, run while the invoice tables
      are down (an outage: every DynamoDB call throttled). The run must fail with
      States.ExceedToleratedFailureThreshold and send the ops queue its alert; after the outage, the
      runbook's redrive (`blueprint redrive map`: failed and never-started items, from the manifest)
      completes it.

    Poison (an amount that is not a number) is all that may stay failed."""

    name = "distributed_map"
    component = "DistributedMapBatch"
    handler = "integration_blueprint.handlers.reference.invoice_enricher"
    record_ids = re.compile(r"\bINV-\d{6}\b")

    def prepare(self) -> None:
        function = self.functions(self.sandbox)[0]
        self.ledger = function.environment[handler_config.INVOICE_LEDGER_TABLE_NAME]
        self.writes: Counter = Counter()
        self.drive_items(function)

    def drive_items(self, function: LocalFunction) -> None:
        """Find the state machine that runs `function` per item (or batch), wrap it in the drill's
        invoker, and put the two nights' CSVs where the Map reads them."""
        self.function = function
        self.machine_arn, definition = next(
            (arn, json.loads(self._definition(arn))) for arn in self.sandbox.state_machines
            if function.arn in self._definition(arn))
        self.map_state = next(state for state in definition["States"].values() if state.get("Type") == "Map")
        self.bucket = self.map_state["ItemReader"]["Parameters"]["Bucket"]
        writer = self.map_state.get("ResultWriter")
        self.result_bucket = writer["Parameters"]["Bucket"] if writer else None
        self.result_prefix = writer["Parameters"].get("Prefix", "") if writer else None
        self.ops_queue_url = self.sandbox.map_value(
            next(state["Parameters"]["QueueUrl"] for state in definition["States"].values()
                 if state.get("Resource") == "arn:aws:states:::sqs:sendMessage"))
        self.batch = int((self.map_state.get("ItemBatcher") or {}).get("MaxItemsPerBatch") or 1)
        self.conflicts: dict[str, str] = {}  # a conflicting row's text -> the id of the row it conflicts with
        self.invoker_ = self.invoker(function, 1)
        # Children run in parallel threads: crashes are planned per delivery of an item (or batch).
        self.invoker_.item_key = self.delivery_key
        self.invoker_.crash_plan = set()
        self.sandbox.interception.wrap(self.function.name, self.invoker_)

        self.expected: dict[str, int] = {}
        self.header, ids = self.row_ids()
        split = max(1, round(len(ids) * UNDER_SHARE)) if len(ids) > 1 else len(ids)
        under, over = ids[:split], ids[split:]
        under_lines = self._lines(under)  # row per line, some twice (a re-sent file)
        over_lines = self._lines(over)
        self.poison_ids, self.poison_under = self._place_poison(under_lines, over_lines)
        self.rows = self.make_rows(ids)
        if "crashes" not in self.not_covered:
            keys = sorted({_batch_key(under_lines[i:i + self.batch]) for i in range(0, len(under_lines), self.batch)}
                          - {_batch_key([p]) for p in self.poison_ids})
            self.invoker_.crash_items = set(self.rng.sample(keys, min(self.options.crashes, len(keys))))
        if self.reference:  # each row once in the file (every draw above made, so the rows are the same)
            under_lines, over_lines = list(dict.fromkeys(under_lines)), list(dict.fromkeys(over_lines))
            self.invoker_.crash_items = set()
        self.nights = [("under", "incoming/drill-under.csv", under_lines), ("over", "incoming/drill-over.csv", over_lines)]
        s3 = self.client("s3")
        for _, key, lines in self.nights:
            if lines:
                s3.put_object(Bucket=self.bucket, Key=key, Body=self._csv([self.rows[i] for i in lines]).encode())
        self.runs: dict[str, dict] = {}
        self.status = self.rerun_status = "not run"

    def row_ids(self) -> tuple[list[str], list[str]]:
        """The CSV's header and its rows' ids, in file order: N invoices, one customer each."""
        return ["invoice_id", "customer_id", "region", "billing_date", "amount"], \
            [f"INV-{i:06d}" for i in range(self.options.records)]

    def make_rows(self, ids: list[str]) -> dict[str, dict]:
        """The rows by id (every value CSV text): the poison with an amount that is not a number."""
        rows = {}
        for i, invoice in enumerate(ids):
            customer = f"C-{i:06d}"
            if invoice in self.poison_ids:
                amount = "not-a-number"
            else:
                cents = 100 + self.rng.randrange(100_000)
                amount = f"{cents // 100}.{cents % 100:02d}"
                self.expected[customer] = cents
            rows[invoice] = dict(zip(self.header, [invoice, customer, "eu", "2026-11-01", amount]))
        return rows

    def row_id(self, row: Any) -> Optional[str]:
        """Which of the drill's rows an item is."""
        return row.get("invoice_id") if isinstance(row, dict) else None

    def delivery_key(self, event: Any) -> Optional[str]:
        """Which item (or batch: its first item) a delivery carries, for per-delivery faults; a
        conflicting copy of a row is a delivery of its own."""
        rows = event["Items"] if isinstance(event, dict) and isinstance(event.get("Items"), list) else [event]
        first = next(iter(rows), None)
        conflict = self.conflicts.get(json.dumps(first, sort_keys=True)) if isinstance(first, dict) else None
        if conflict is not None:
            return f"conflict:{conflict}"
        if not isinstance(event, dict):
            return None
        return _batch_key([self.row_id(row) for row in rows if isinstance(row, dict)])

    def _csv(self, rows: list[dict]) -> str:
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(self.header)
        writer.writerows([row.get(column, "") for column in self.header] for row in rows)
        return text.getvalue().rstrip("\n")

    def _lines(self, invoices: list[str]) -> list[str]:
        """The ids of a night's file, line by line."""
        lines = []
        for invoice in invoices:
            lines.append(invoice)
            if self.rng.random() < self.options.duplicates:
                lines.append(invoice)  # the same invoice twice in the file
        return lines

    def _place_poison(self, under_lines: list[str], over_lines: list[str]) -> tuple[set, int]:
        """The poison invoices: in the first night as many as its threshold tolerates, each alone in
        its batch and in the file once; the rest in the second night."""
        once = [i for i, count in Counter(under_lines).items() if count == 1]
        by_batch: dict[int, list[str]] = {}
        for position, invoice in enumerate(under_lines):
            if invoice in once:
                by_batch.setdefault(position // self.batch, []).append(invoice)
        fits = min(allowed_failures(self.map_state, len(under_lines)) // self.batch, self.poison_count, len(by_batch))
        chosen = {self.rng.choice(by_batch[b]) for b in sorted(self.rng.sample(sorted(by_batch), fits))}
        rest = sorted(set(over_lines))
        chosen |= set(self.rng.sample(rest, min(self.poison_count - len(chosen), len(rest))))
        return chosen, fits

    def _audit(self, operation: str, params: dict, _response: dict) -> None:
        if operation == "PutItem" and params.get("TableName") == self.ledger:
            self.writes[params["Item"]["customer_id"]["S"]] += 1

    def _definition(self, arn: str) -> str:
        return self.client("stepfunctions").describe_state_machine(stateMachineArn=arn)["definition"]

    # ---- the nights ----------------------------------------------------------------------------

    def drive(self, step: Step) -> None:
        for index, (night, key, lines) in enumerate(self.nights):
            if not lines:
                continue
            outage = night == "over"
            self.faults.outage, self.faults.outage_service = outage, "dynamodb" if outage else None
            try:
                self.runs[night] = self._run(f"drill-{night}", key, step, index / 2 * 0.9, (index + 1) / 2 * 0.9)
            finally:
                self.faults.outage = False
            alerts = [json.loads(m["Body"]) for m in self.drain_queue_messages(self.ops_queue_url)]
            self.runs[night]["ops_alerts"] = len(alerts)
            self.runs[night]["alerted_errors"] = sorted({str(a.get("error")) for a in alerts if isinstance(a, dict)})
            if night == "under" and self.conflict_count():
                self.conflicts_status = self.send_conflicts(step)
        self.status = ", ".join(f"{night} {run['status']}" for night, run in self.runs.items())

    def send_conflicts(self, step: Step) -> str:
        """Invoices the first night recorded, sent again with another amount in a file of their own
        (a corrected file re-sent under the same invoice ids), run as an execution of its own: the
        item handler must refuse each (the item fails), neither recording nor skipping it. Returns
        what the run did; its ops alerts are its own, not the nights'."""
        ddb = self.client("dynamodb")
        recorded = sorted(f"INV-{item['customer_id']['S'][2:]}" for page in ddb.get_paginator("scan").paginate(
            TableName=self.ledger) for item in page["Items"] if item["customer_id"]["S"] in self.expected)
        rows = []
        for invoice in recorded[:self.conflict_count()]:
            row = {**self.rows[invoice], "amount": f"{float(self.rows[invoice]['amount']) + 0.01:.2f}"}
            self.conflicts[json.dumps(row, sort_keys=True)] = invoice
            rows.append(row)
        self.conflicts_sent = len(rows)
        if not rows:
            return "none sent"
        key = "incoming/drill-conflicts.csv"
        self.client("s3").put_object(Bucket=self.bucket, Key=key, Body=self._csv(rows).encode())
        run = self._run("drill-conflicts", key, step, 0.45, 0.5)
        alerts = len(self.drain_queue_messages(self.ops_queue_url))
        if self.result_prefix is not None:  # the run's failed items, from its ResultWriter manifest
            refused = {json.dumps(item, sort_keys=True) for item in run["undone"]} & set(self.conflicts)
        else:
            refused = {text for text, invoice in self.conflicts.items()
                       if self.invoker_.outcomes.get(f"conflict:{invoice}") == "failed"}
        self.conflicts_parked = len(refused)
        return f"execution {run['status']}, {len(refused)} refused, {alerts} ops alert(s)"

    def _run(self, name: str, key: str, step: Step, start: float, end: float) -> dict:
        """Start an execution over `key`, wait for it, and read what it left undone from its manifest."""
        before = self._manifests()
        execution = self.client("stepfunctions").start_execution(
            stateMachineArn=self.machine_arn, name=name, input=json.dumps({"inputKey": key}))["executionArn"]
        description = self._wait(execution, step, start, end)
        manifests = sorted(self._manifests() - before)
        return {"execution": execution, "status": description["status"], "error": description.get("error"),
                "undone": self._undone(manifests, key), "manifests": manifests}

    def _file_invoices(self, key: str) -> list[str]:
        body = self.client("s3").get_object(Bucket=self.bucket, Key=key)["Body"].read().decode()
        return [row_id for row in csv.DictReader(io.StringIO(body)) if (row_id := self.row_id(row)) is not None]

    def _manifests(self) -> set:
        if self.result_prefix is None:
            return set()
        pages = self.client("s3").get_paginator("list_objects_v2").paginate(Bucket=self.result_bucket,
                                                                          Prefix=self.result_prefix)
        return {o["Key"] for page in pages for o in page.get("Contents", []) if o["Key"].endswith("/manifest.json")}

    def _wait(self, execution: str, step: Step, start: float, end: float) -> dict:
        """Poll an execution until it ends (or the pattern's deadline passes: then stop it)."""
        sfn = self.client("stepfunctions")
        pause = POLL_SECONDS
        while True:
            description = sfn.describe_execution(executionArn=execution)
            if description["status"] != "RUNNING":
                return description
            try:
                self.check_deadline(f"waiting for execution {execution.rsplit(':', 1)[-1]} "
                                    f"({self.invoker_.invocations} item invocations so far)")
            except Exception:
                sfn.stop_execution(executionArn=execution, error="Drill.Deadline")
                raise
            step(start + (end - start) * min(self.invoker_.invocations * self.batch / max(self.options.records, 1), 1.0))
            time.sleep(pause)
            pause = min(pause * POLL_GROWTH, POLL_MOST_SECONDS)

    # ---- the runbook ---------------------------------------------------------------------------

    def recover(self, step: Step) -> None:
        """`blueprint redrive map` for each night: its failed and never-started items as a new
        execution, repeated while a redrive still gets items done."""
        self.parked_before = sum(len(run["undone"]) for run in self.runs.values())
        self.redriven = 0
        statuses = []
        for night, run in self.runs.items():
            undone, rounds = run["undone"], 0
            while undone and rounds < MAX_REDRIVES:
                rounds += 1
                if rounds == 1:
                    self.redriven += len(undone)
                before = self._manifests()
                rerun = rerun_items(self.client("s3"), self.client("stepfunctions"), state_machine_arn=self.machine_arn,
                                    bucket=self.bucket, header=self.header, items=undone,
                                    name=f"drill-{night}-redrive-{rounds}")
                assert rerun.execution_arn is not None and rerun.input_key is not None  # started, not a dry run
                status = self._wait(rerun.execution_arn, step, 0.9, 0.99)["status"]
                self.drain_queue_messages(self.ops_queue_url)  # a redrive over the threshold alerts again
                left = self._undone(sorted(self._manifests() - before), rerun.input_key)
                statuses.append(f"{night} redrive {rounds}: {len(undone)} items, {status}")
                progress, undone = len(left) < len(undone), left
                if not progress:
                    break
            run["still_undone"], run["redrives"] = undone, rounds
        self.rerun_status = "; ".join(statuses) or "none needed"

    def _undone(self, manifests: list[str], key: str) -> list[dict]:
        """The items a run left undone: from its ResultWriter manifest, or (without one) its whole file."""
        if self.result_prefix is None or self.result_bucket is None:
            return [self.rows[i] for i in dict.fromkeys(self._file_invoices(key))]
        return [item for manifest in manifests
                for item in failed_items_from_manifest(self.client("s3"), self.result_bucket, manifest)]

    def _failed_items(self) -> set:
        """Invoice ids still not done after the runbook's redrives."""
        return {str(self.row_id(item)) for run in self.runs.values() for item in run.get("still_undone", [])
                if isinstance(item, dict)}

    # ---- the check -----------------------------------------------------------------------------

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
        processed_ids = {f"INV-{customer[2:]}" for customer in processed}
        unrecoverable = failed - processed_ids
        children = self.sandbox.emulator.state_machine_usage.children_started
        report = PatternReport(
            sent=self.options.records, processed_once=len(processed), duplicate_effects=duplicates,
            unrecoverable=len(unrecoverable), expected_unrecoverable=len(self.poison_ids),
            parked_before_redrive=self.parked_before, redriven=self.redriven,
            invocations=self.invoker_.invocations,
            retries=max(0, self.invoker_.invocations - self.invoker_.duplicate_invocations - children))
        report.lost = report.sent - report.processed_once - report.unrecoverable
        report.injected = {"poison_under_threshold": self.poison_under, "dynamodb_outage_runs": int("over" in self.runs)}
        report.notes.extend(self._night_notes() + self.conflict_notes())
        wrong = unrecoverable - self.poison_ids
        if wrong:
            report.notes.append(f"{len(wrong)} valid invoices failed, e.g. {sorted(wrong)[:3]}")
        report.notes.append(f"re-run of the failed items: {self.rerun_status}")
        report.failure = report.failure or self._scenario_failure()
        return report

    def _night_notes(self) -> list[str]:
        batch = f"{self.batch} per child" if self.batch > 1 else "one per child"
        notes = []
        for night, run in self.runs.items():
            what = (f"{self.poison_under} poison rows, each alone in its batch" if night == "under"
                    else "every DynamoDB call throttled (an outage) during the run, and the rest of the poison")
            notes.append(f"night {night} the threshold ({_threshold(self.map_state)}, items {batch}): injected {what}; "
                         f"execution {run['status']}{' with ' + run['error'] if run.get('error') else ''}, "
                         f"{run['ops_alerts']} ops alert(s){_errors(run['alerted_errors'])}, "
                         f"{len(run['undone'])} items parked, "
                         f"{run.get('redrives', 0)} redrive(s), {len(run.get('still_undone', []))} still failed")
        return notes

    def conflict_notes(self) -> list[str]:
        if not self.conflicts_sent:
            return []
        return [f"{self.conflicts_sent} conflicting row(s) (an invoice id already recorded, another amount) re-sent "
                f"in a file of their own: {self.conflicts_status}"]

    def _scenario_failure(self) -> str:
        """The failure path's own contract: under the threshold the run succeeds quietly, over it the
        run fails and alerts (unless the Map tolerates every failure)."""
        under, over = self.runs.get("under"), self.runs.get("over")
        if under and (under["status"] != "SUCCEEDED" or under["ops_alerts"]):
            return f"the run under its tolerated failures ended {under['status']} with {under['ops_alerts']} ops alert(s)"
        if over and allowed_failures(self.map_state, 1_000_000) < 1_000_000 and (
                over["status"] != "FAILED" or over["ops_alerts"] != 1):
            return (f"the run over its tolerated failures ended {over['status']} with {over['ops_alerts']} ops alert(s); "
                    "it must fail with States.ExceedToleratedFailureThreshold and alert the ops queue once")
        return ""


def _errors(names: list[str]) -> str:
    return f" ({', '.join(names)})" if names else ""


def _batch_key(invoices: list) -> str:
    return f"batch:{invoices[0]}" if invoices else "batch:"


def _threshold(map_state: dict) -> str:
    parts = []
    if map_state.get("ToleratedFailurePercentage") is not None:
        parts.append(f"{map_state['ToleratedFailurePercentage']:g}%")
    if map_state.get("ToleratedFailureCount") is not None:
        parts.append(f"{map_state['ToleratedFailureCount']} items")
    return " or ".join(parts) or "no failure tolerated"
