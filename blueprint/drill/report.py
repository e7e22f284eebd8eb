"""What a drill is asked to do (DrillOptions) and what it found (PatternReport per pattern, DrillReport),
with the text table and JSON the CLI prints."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from integration_blueprint.drill.hot_key import HotKeyState

# The blueprint program the drill runs by default: the repository checkout this package lives in.
REPO = Path(__file__).resolve().parents[2]


@dataclass
class DrillOptions:
    stack: str = "dev"
    records: int = 1500
    seed: int = 7
    duplicates: float = 0.05
    poison: float = 0.01
    transient: float = 0.02
    crashes: int = 3
    conflicts: float = 0.01  # fraction of records sent again later with the same id and another payload
    program_dir: Path = REPO
    deadline_seconds: float = 0.0  # per pattern; 0: from the record count (runner.pattern_deadline_seconds)
    # The stack's config values, replacing its stack file's (as `record_program(config=...)`); None: the file's.
    config: Optional[dict] = None
    # A team's own records by component instance name (--sample-records, drill/samples.py).
    samples: dict = field(default_factory=dict)
    # Stream records' partition key field by component ("" for every one): --partition-key, drill/samples.py.
    partition_keys: dict = field(default_factory=dict)
    # The team's code runs inside the sandbox (integration_blueprint.containment); False: --no-isolation.
    isolation: bool = True


@dataclass
class PatternReport:
    sent: int = 0
    processed_once: int = 0
    duplicate_effects: int = 0
    # Places (items, objects, queues, topics) whose final state differs from the reference run's
    # (drill/outcomes.py), and how many of those hold an earlier record's value (delivery order).
    outcome_differences: int = 0
    order_dependent: int = 0
    reference_time_s: float = 0.0  # of wall_time_s, the reference run's
    unrecoverable: int = 0  # still parked at the end, after the recovery phase redrove everything
    expected_unrecoverable: int = 0  # the poison
    lost: int = 0
    # Conflicting duplicates (the same id, another payload) the drill sent, and how many the handler
    # parked (neither applied nor skipped); handlers/runtime/conflicts.py.
    conflicts_sent: int = 0
    conflicts_parked: int = 0
    parked_before_redrive: int = 0  # parked when the fault window closed (poison and healthy)
    redriven: int = 0  # parked records the recovery phase sent back for processing
    invocations: int = 0
    retries: int = 0
    wall_time_s: float = 0.0
    injected: dict = field(default_factory=dict)  # faults actually injected: duplicates, crashes, transient
    # AWS usage and cost scaled to 1,000,000 records (drill/cost.py): requests, units, cost_usd by service
    usage_per_million: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    failure: str = ""  # why the pattern could not finish (its deadline, a crashed driver), if it did not
    component: str = ""  # the component instance drilled (its name in the program)
    # The hot key's state in the pattern's table (drill/hot_key.py), for a pattern that keeps state per key.
    hot_key: Optional[HotKeyState] = None
    # Calls the functions' roles did not allow (AccessDenied, as AWS refuses them), and per function
    # its role, the actions its code used, each refusal with the statement to add, and the grants it
    # never used (drill/permissions.py).
    access_denied: int = 0
    permissions: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.problems()

    def problems(self) -> list[str]:
        """What went wrong in this pattern, in the words of the report's result line (none: it passed)."""
        found = []
        if self.failure:
            found.append("did not finish")
        if self.lost:
            found.append(f"{self.lost} records lost")
        if self.duplicate_effects:
            found.append(f"{self.duplicate_effects} duplicate effects")
        if self.outcome_differences:
            found.append(f"{self.outcome_differences} places whose final state differs from the reference run "
                         "(each record once, no faults)")
        if self.unrecoverable != self.expected_unrecoverable:
            expected = (f"expected {self.expected_unrecoverable}: the poison" if self.expected_unrecoverable
                        else "expected none: no poison record was sent")
            found.append(f"{self.unrecoverable} records still parked after the redrive ({expected})")
        if self.conflicts_parked != self.conflicts_sent:
            found.append(f"{self.conflicts_sent - self.conflicts_parked} of {self.conflicts_sent} conflicting "
                         "duplicates applied or skipped instead of parked")
        if self.access_denied:
            refused = sorted({f"{d['action']}" for entry in self.permissions.values() for d in entry.get("denied", [])})
            found.append(f"{self.access_denied} call(s) refused by IAM (AccessDenied: {', '.join(refused)}): "
                         "the role lacks what the code uses")
        if self.hot_key is not None and not self.hot_key.within_bound:
            found.append("a hot key's state over its bound")
        return found


@dataclass
class DrillReport:
    stack: str
    seed: int
    compression: dict
    patterns: dict
    log_dir: str = ""
    # Component instances found but not drilled, with why (a drill that skips one has not passed).
    not_drilled: dict = field(default_factory=dict)
    # False: run with --no-isolation, the team's code outside the sandbox; every verdict says so.
    contained: bool = True

    def to_json(self) -> dict:
        return {"stack": self.stack, "seed": self.seed, "compression": self.compression,
                "patterns": {name: {k: v for k, v in asdict(r).items()} for name, r in self.patterns.items()},
                "log_dir": self.log_dir, "not_drilled": self.not_drilled, "contained": self.contained}

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.patterns.values()) and not self.not_drilled


COLUMNS = ("sent", "processed_once", "duplicate_effects", "outcome_differences", "parked_before_redrive", "redriven",
           "unrecoverable",
           "expected_unrecoverable", "conflicts_sent", "conflicts_parked", "lost", "invocations", "retries",
           "wall_time_s")


NOT_CONTAINED = ("not contained: --no-isolation ran the team's code outside the sandbox, as the drill's user "
                 "(integration_blueprint.containment); its verdicts do not hold against code that breaks out")


def format_table(report: DrillReport) -> str:
    headers = ("pattern",) + COLUMNS + ("result",)
    rows = [headers]
    for name, r in report.patterns.items():
        verdict = "ok" if r.passed else "FAIL"
        rows.append((name,) + tuple(str(getattr(r, c)) for c in COLUMNS)
                    + (verdict if report.contained else f"{verdict} (not contained)",))
    widths = [max(len(row[i]) for row in rows) for i in range(len(headers))]
    lines = ["  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    out = [f"drill: stack {report.stack}, seed {report.seed}", *lines, ""]
    for name, r in report.patterns.items():
        injected = ", ".join(f"{v} {k}" for k, v in r.injected.items())
        if r.component:
            out.append(f"  {name}: component {r.component}")
        if injected:
            out.append(f"  {name}: injected {injected}")
        if r.hot_key:
            out.append(f"  {name}: {r.hot_key.summary()}")
        for note in r.notes:
            out.append(f"  {name}: {note}")
        if r.failure:
            out.append(f"  {name}: FAILED: {r.failure}")
    for name, why in report.not_drilled.items():
        out.append(f"  {name}: NOT DRILLED: {why}")
    out.append("time compressed: " + "; ".join(f"{k}: {v}" for k, v in report.compression.items()))
    if report.log_dir:
        logs = [str(Path(report.log_dir) / f"{name}.log") for name in report.patterns]
        out.append(f"handler logs: {', '.join(logs)}" if logs else f"handler logs: {report.log_dir}")
    if not report.contained:
        out.append(NOT_CONTAINED)
    marked = "" if report.contained else "(not contained) "
    out.append(f"result: {marked}" + (passed_because(report) if report.passed
                                      else "FAILED: " + "; ".join(failed_because(report))))
    return "\n".join(out)


def passed_because(report: DrillReport) -> str:
    """What a drill that passed held to: the poison and the conflicting duplicates named only where
    the drill sent some."""
    poison = sum(r.expected_unrecoverable for r in report.patterns.values())
    conflicts = sum(r.conflicts_sent for r in report.patterns.values())
    parked = [f"only the poison ({poison}) is still parked" if poison else "none is still parked"]
    if conflicts:
        parked.append(f"with every conflicting duplicate ({conflicts})")
    return "after the redrive every record was processed exactly once and " + ", ".join(parked)


def failed_because(report: DrillReport) -> list[str]:
    """What happened, pattern by pattern: only the categories that did (the result line names them)."""
    found = [f"{name}: {', '.join(r.problems())}" for name, r in report.patterns.items() if r.problems()]
    return found + [f"{name}: not drilled" for name in report.not_drilled]


def dumps(report: DrillReport) -> str:
    return json.dumps(report.to_json(), indent=2)
