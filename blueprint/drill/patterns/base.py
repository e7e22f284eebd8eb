"""What every pattern driver shares: finding its functions in the sandbox by the reference handler
the stack deploys, its invokers (duplicates and crashes), and reading queues."""

from __future__ import annotations

import random
import re
import time
from typing import Any, Callable, Optional

from integration_blueprint.drill.invoker import Invoker, plan_crashes
from integration_blueprint.drill.report import DrillOptions, PatternReport
from integration_blueprint.preview.recording import RecordedResource, RecordedStack
from integration_blueprint.sandbox.execution_environment import guards
from integration_blueprint.sandbox.faults import FaultInjector
from integration_blueprint.sandbox.realization import LocalFunction, Sandbox

Step = Callable[[float], None]


ALL_FAULTS = ("duplicates", "poison", "transient", "crashes")

# How the report names what a team's function was refused or ended for (execution_environment.Incident).
INCIDENT_WORDS = {"timeout": "ended at its timeout", "out-of-memory": "ended out of memory (Runtime.OutOfMemory)",
                  "connection": "connection refused (only the emulator, through the SDK, is reachable)",
                  "write": "write outside /tmp refused", "read": "read of the user's home refused",
                  "exit": "exited mid-invocation", "protocol": "environment broke down",
                  "guard": "a guard not in force in its environment",
                  "tasks": "a process or thread refused at Lambda's limit"}


class DrillDeadline(RuntimeError):
    """A pattern did not finish within its deadline; the message names what it was waiting for."""


class PatternDriver:
    name = ""
    component = ""  # the blueprint component whose instances it drills (type blueprint:index:<component>)
    handler = ""  # the reference handler module this driver drives
    # Faults outside the pattern's contract, with the reason; everything else is injected.
    not_covered: dict[str, str] = {}
    # Duplicates and crashes only hit deliveries from this event source (None: all), and why.
    faulted_lane: Optional[str] = None
    faulted_lane_reason = ""

    def __init__(self, sandbox: Sandbox, options: DrillOptions, faults: FaultInjector, rng: random.Random):
        self.sandbox = sandbox
        self.options = options
        self.faults = faults
        self.rng = rng
        self.poison_count = round(options.records * options.poison)
        self.conflicts_sent = 0  # records sent again with the same id and another payload
        self.conflicts_parked = 0  # of those, how many the handler parked (neither applied nor skipped)
        self.deadline: Optional[float] = None  # time.monotonic() by which the pattern must be done
        self.deadline_seconds = 0.0
        self.parked_before = 0  # what the recovery phase found parked, and sent back
        self.redriven = 0
        # The reference run (drill/outcomes.py): the same records, each delivered once in the lane's
        # order, with no duplicates, crashes or outages (conflicting duplicates are records: sent
        # too). Every random draw is still made, so the records are the same as the faulted run's.
        self.reference = False

    def check_deadline(self, doing: str) -> None:
        """Raise DrillDeadline, naming `doing`, once the pattern's deadline has passed."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise DrillDeadline(f"{self.name}: still {doing} when its deadline of {self.deadline_seconds:.0f} s "
                                "passed; see its handler log for what it was waiting on")

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
    def instances(cls, recorded: RecordedStack) -> list[RecordedResource]:
        """Every instance of the driver's component in the program, by name."""
        return sorted(recorded.of_type(f"blueprint:index:{cls.component}"), key=lambda r: r.name)

    @classmethod
    def functions(cls, sandbox: Sandbox) -> list[LocalFunction]:
        unique = {f.arn: f for f in sandbox.functions.values()}
        return [f for f in unique.values() if cls.deploys(f.handler)]

    @classmethod
    def applies(cls, sandbox: Sandbox) -> bool:
        return bool(cls.functions(sandbox))

    def invoker(self, function: Callable, batch_size: int, label: str = "") -> Invoker:
        expected = self.options.records // max(batch_size, 1)
        crash_plan = set() if "crashes" in self.not_covered else plan_crashes(self.rng, self.options.crashes, expected)
        faulted = not self.reference
        return Invoker(function=function, faults=self.faults, rng=self.rng,
                       seed=f"{self.options.seed}:{self.name}:{label or getattr(function, 'name', '')}",
                       duplicate_rate=0.0 if "duplicates" in self.not_covered or not faulted else self.options.duplicates,
                       crash_plan=crash_plan if faulted else set(), lane=self.faulted_lane,
                       crash_boundaries=faulted and "crashes" not in self.not_covered and self.options.crashes > 0)

    def invokers(self) -> list[Invoker]:
        return [v for v in vars(self).values() if isinstance(v, Invoker)]

    def crash_notes(self) -> list[str]:
        """Which write boundaries the drill's crashes fell on, per function."""
        return [note for invoker in self.invokers() for note in [invoker.boundary_note()] if note]

    def conflict_count(self) -> int:
        """How many conflicting duplicates to send (none when outside the pattern's contract)."""
        if "conflicts" in self.not_covered:  # the reference run sends them too: they are records
            return 0
        return round(self.options.records * self.options.conflicts)

    def injected(self) -> dict:
        invokers = self.invokers()
        return {"duplicates": sum(i.duplicates_delivered for i in invokers),
                "crashes": sum(i.crashes for i in invokers), "poison": self.poison_count}

    def fault_notes(self) -> list[str]:
        notes = [f"{fault} not injected: {why}" for fault, why in self.not_covered.items()]
        if self.faulted_lane:
            notes.append(f"duplicates and crashes injected into {self.faulted_lane} deliveries only: "
                         f"{self.faulted_lane_reason}")
        return notes

    def isolation_notes(self) -> list[str]:
        """How the team's code ran: its execution environments, what it was refused or ended for (by
        function, with the records of those invocations), the guards this machine could not enforce,
        the layers the sandbox could not provide."""
        environments = {f.name: f.environments for f in self.sandbox.functions.values() if f.environments is not None}
        if not environments:
            return []
        notes = [f"the team's code ran as Lambda runs it: {sum(e.started for e in environments.values())} execution "
                 f"environment(s) of its own (one process each; {', '.join(sorted(environments))})"]
        identify = getattr(self, "_identify", None)
        grouped: dict = {}
        for incident in self.sandbox.incidents:
            grouped.setdefault((incident.function, incident.kind), []).append(incident)
        for (function, kind), incidents in sorted(grouped.items()):
            records: set = set()
            for incident in incidents:
                try:
                    records |= set(identify(incident.event)) if identify else set()
                except Exception:  # noqa: BLE001 - naming the records is a courtesy
                    pass
            named = f"; records {sorted(records)[:3]}" if records else ""
            notes.append(f"{function}: {INCIDENT_WORDS.get(kind, kind)} {len(incidents)}x, e.g. {incidents[0].detail}"
                         f"{named}")
        missing = {name: how for name, how in guards(self.sandbox.contained).items() if how.startswith("NOT ")}
        if missing:
            notes.append("guards not in force: " + "; ".join(f"{name}: {how}" for name, how in missing.items()))
        notes.extend(self.sandbox.layer_notes)
        return notes

    def replay(self, auditor: Callable[[str, dict, Any], None], since: int = 0) -> None:
        """Hand every successful AWS call the functions made (the sandbox's journal, from the
        `since`-th invocation on) to `auditor(operation, params, response)`."""
        for _, call in self.sandbox.journal.calls(since):
            auditor(call.operation, call.params, call.response)

    # The drill's own record ids, for naming the records a differing outcome holds (drill/outcomes.py).
    record_ids: Optional[re.Pattern] = None

    def records_in(self, text: str) -> list[str]:
        """The drill's records whose ids `text` holds."""
        index = getattr(self, "index", None)
        if index is not None:
            return index.records_in(text)
        return sorted(set(self.record_ids.findall(text))) if self.record_ids is not None else []

    def own_queue_urls(self) -> set[str]:
        """The component's own queues (its lanes and DLQs): sends there are how it retries, not outcomes."""
        component = {r.urn for r in self.sandbox.recorded.of_type(f"blueprint:index:{self.component}")}
        arns = {r.outputs["arn"] for r in self.sandbox.recorded.of_type("aws:sqs/queue:Queue") if r.parent in component}
        return {queue.url for queue in self.sandbox.queues.values() if queue.arn in arns}

    def effect_log_of_run(self):
        """The team's code's effect log after verify (drill/effects.py), to explain a difference; None."""
        return getattr(self, "log", None)

    def client(self, service: str):
        return self.sandbox.emulator.client(service, self.sandbox.session)

    def drain_queue_messages(self, queue_url: str) -> list[dict]:
        """Every message in a queue (read by the drill, not a consumer: deleted as it goes)."""
        sqs = self.sandbox.sqs
        messages: list[dict] = []
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

    def recover(self, step: Step) -> None:
        """After the fault window: redrive what is parked, as the runbook says, and let it run."""

    def verify(self) -> PatternReport:
        raise NotImplementedError(f"{type(self).__name__} checks nothing")
