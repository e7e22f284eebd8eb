"""What a drill is asked to do (DrillOptions) and what it found (PatternReport per pattern, DrillReport),
with the text table and JSON the CLI prints."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

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
    program_dir: Path = REPO


@dataclass
class PatternReport:
    sent: int = 0
    processed_once: int = 0
    duplicate_effects: int = 0
    unrecoverable: int = 0
    expected_unrecoverable: int = 0
    lost: int = 0
    invocations: int = 0
    retries: int = 0
    wall_time_s: float = 0.0
    injected: dict = field(default_factory=dict)  # faults actually injected: duplicates, crashes, transient
    # AWS usage and cost scaled to 1,000,000 records (drill/cost.py): requests, units, cost_usd by service
    usage_per_million: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.lost == 0 and self.duplicate_effects == 0 and self.unrecoverable == self.expected_unrecoverable


@dataclass
class DrillReport:
    stack: str
    seed: int
    compression: dict
    patterns: dict
    log_dir: str = ""

    def to_json(self) -> dict:
        return {"stack": self.stack, "seed": self.seed, "compression": self.compression,
                "patterns": {name: {k: v for k, v in asdict(r).items()} for name, r in self.patterns.items()},
                "log_dir": self.log_dir}

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.patterns.values())


COLUMNS = ("sent", "processed_once", "duplicate_effects", "unrecoverable", "expected_unrecoverable", "lost",
           "invocations", "retries", "wall_time_s")


def format_table(report: DrillReport) -> str:
    headers = ("pattern",) + COLUMNS + ("result",)
    rows = [headers]
    for name, r in report.patterns.items():
        rows.append((name,) + tuple(str(getattr(r, c)) for c in COLUMNS) + ("ok" if r.passed else "FAIL",))
    widths = [max(len(row[i]) for row in rows) for i in range(len(headers))]
    lines = ["  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    out = [f"drill: stack {report.stack}, seed {report.seed}", *lines, ""]
    for name, r in report.patterns.items():
        injected = ", ".join(f"{v} {k}" for k, v in r.injected.items())
        out.append(f"  {name}: injected {injected}")
        for note in r.notes:
            out.append(f"  {name}: {note}")
    out.append("time compressed: " + "; ".join(f"{k}: {v}" for k, v in report.compression.items()))
    if report.log_dir:
        out.append(f"handler logs: {report.log_dir}/<pattern>.log")
    out.append("result: " + ("every record processed exactly once or parked as expected" if report.passed
                             else "FAILED: lost records, duplicate effects or unexpected unrecoverable records"))
    return "\n".join(out)


def dumps(report: DrillReport) -> str:
    return json.dumps(report.to_json(), indent=2)
