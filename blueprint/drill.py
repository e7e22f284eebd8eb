"""The reliability drill: N records through every pattern of a stack, in the local sandbox, with
duplicates, poison records, transient AWS faults and crashes, then a check of the final state.

Faults, all seeded:
- duplicates: each record handed to a function is, with probability P, delivered again in a later
  invocation (event source mappings are at-least-once);
- poison: a fraction P of the records are payloads the reference handlers reject;
- transient: a fraction P of the AWS calls the handlers make fail with throttling/5xx at the
  botocore layer (blueprint/faults.py);
- crashes: K invocations per pattern die right after one of their AWS calls succeeded.

Each pattern's reference side effect would visibly double if done twice (an atomic ADD to a
balance, a ledger write audited at the botocore layer), so duplicates cannot hide.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from blueprint.faults import FaultInjector, SimulatedCrash

REPO = Path(__file__).resolve().parents[1]


class FunctionCrashed(Exception):
    """What an event source mapping sees when the function instance died mid-invocation."""


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
    notes: list = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.lost == 0 and self.duplicate_effects == 0 and self.unrecoverable == self.expected_unrecoverable


@dataclass
class Invoker:
    """Wraps a sandbox function for one pattern: counts invocations, crashes the planned ones and
    re-delivers a fraction of records as duplicates."""

    function: Callable
    faults: FaultInjector
    rng: random.Random
    duplicate_rate: float
    crash_plan: set = field(default_factory=set)  # invocation numbers to crash
    # For single-item events: which item an event is, so the final outcome per item is known.
    item_key: Optional[Callable[[Any], Optional[str]]] = None
    outcomes: dict = field(default_factory=dict)  # item -> "ok" | "failed" (last delivery)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    invocations: int = 0
    duplicates_delivered: int = 0
    crashes: int = 0

    def __call__(self, event: Any, context: Any = None) -> Any:
        key = self.item_key(event) if self.item_key else None
        try:
            response = self._invoke(event, context)
        except BaseException:
            if key is not None:
                self.outcomes[key] = "failed"
            raise
        if key is not None:
            self.outcomes[key] = "ok"
        if isinstance(event, dict) and "Records" in event:
            again = [r for r in event["Records"] if self.rng.random() < self.duplicate_rate]
            duplicate = {**event, "Records": again} if again else None
            count = len(again)
        else:  # a single item (Step Functions): the whole event is one delivery
            duplicate = event if self.rng.random() < self.duplicate_rate else None
            count = 1
        if duplicate is not None:
            self.duplicates_delivered += count
            try:
                self._invoke(duplicate, context)
            except Exception:  # noqa: BLE001 - the original delivery's outcome stands
                pass
        return response

    def _invoke(self, event: dict, context: Any) -> Any:
        with self._lock:
            self.invocations += 1
            # A planned crash waits for an invocation that makes enough AWS calls to die after
            # one; it is claimed by one invocation at a time (Map children run in parallel).
            due = min((n for n in self.crash_plan if n <= self.invocations), default=None)
            if due is not None:
                self.crash_plan.discard(due)
        if due is not None:
            self.faults.crash_after(self.rng.randint(1, 3))
        try:
            with self.faults.invocation():
                result = self.function(event, context)
        except SimulatedCrash as crash:
            self.crashes += 1
            due = None
            reset = getattr(self.function, "reset", None)
            if reset is not None:
                reset()  # the instance died: the next invocation is a cold start with empty caches
            raise FunctionCrashed(str(crash)) from None
        finally:
            if due is not None:
                with self._lock:
                    self.crash_plan.add(due)  # it made too few calls to crash: the next one will
        return result


def plan_crashes(rng: random.Random, count: int, expected_invocations: int) -> set:
    """Which invocations crash: spread over the invocations the run is expected to make (never the
    very first, so some work is always in flight before a crash)."""
    if count <= 0:
        return set()
    last = max(expected_invocations, 2 * count + 2)
    return set(rng.sample(range(2, last), count))


# ---- running --------------------------------------------------------------------------------------

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


def run_drill(options: DrillOptions, progress: Optional[Callable[[str, float], None]] = None,
              drivers: Optional[dict] = None, log_dir: Optional[Path] = None,
              workers: Optional[int] = None) -> DrillReport:
    """Run the drill, each pattern in its own sandbox (its own emulator and fault injector, seeded
    from the seed and the pattern's name). With `workers` > 1 the patterns run in separate
    processes, one core each. Everything the handlers and the emulator print goes to
    `log_dir/<pattern>.log`, so stdout carries only the report; the report names the folder."""
    import tempfile

    from blueprint.drill_patterns import DRIVERS
    from blueprint.sandbox import COMPRESSION

    from blueprint.engine import record_program

    log_dir = Path(log_dir or Path(tempfile.gettempdir()) / f"blueprint-drill-{options.stack}-{options.seed}")
    log_dir.mkdir(parents=True, exist_ok=True)
    with open(log_dir / "program.log", "w") as log, contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        recorded = record_program(options.program_dir, stack=options.stack)
    # Each pattern's sandbox holds only its own component; a stack without it skips the pattern.
    chosen = {}
    for name, driver_class in (drivers or DRIVERS).items():
        scope = recorded.within(driver_class.components(recorded))
        if scope.resources:
            chosen[name] = (driver_class, scope)
    workers = max(1, min(workers or os.cpu_count() or 1, len(chosen)))
    if workers == 1:
        results = {}
        for index, (name, (driver_class, scope)) in enumerate(chosen.items()):
            def step(fraction: float, _index=index):
                if progress:
                    progress(name, (_index + min(max(fraction, 0.0), 1.0)) / len(chosen))
            results[name] = _run_pattern(options, name, driver_class, scope, log_dir / f"{name}.log", step)
    else:
        results = _run_in_processes(options, chosen, log_dir, workers, progress)
    reports = {name: report for name, report in results.items() if report is not None}
    return DrillReport(stack=options.stack, seed=options.seed, compression=COMPRESSION, patterns=reports,
                       log_dir=str(log_dir))


def _run_in_processes(options: DrillOptions, chosen: dict, log_dir: Path, workers: int,
                      progress: Optional[Callable[[str, float], None]]) -> dict:
    import multiprocessing
    import queue as queue_module
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no emulator state inherited
    with context.Manager() as manager, ProcessPoolExecutor(workers, mp_context=context) as pool:
        updates = manager.Queue()
        futures = {name: pool.submit(_run_pattern, options, name, driver_class, scope, log_dir / f"{name}.log",
                                     _QueueStep(updates, name))
                   for name, (driver_class, scope) in chosen.items()}
        fractions = dict.fromkeys(chosen, 0.0)
        while not all(f.done() for f in futures.values()):
            try:
                name, fraction = updates.get(timeout=0.2)
                fractions[name] = min(max(fraction, 0.0), 1.0)
            except queue_module.Empty:
                pass
            if progress:
                running = [n for n, f in futures.items() if not f.done()]
                progress(", ".join(running), sum(fractions.values()) / len(fractions))
        return {name: future.result() for name, future in futures.items()}


@dataclass
class _QueueStep:
    """A pattern's progress callback that works across processes."""

    updates: Any
    name: str

    def __call__(self, fraction: float) -> None:
        self.updates.put((self.name, fraction))


def _run_pattern(options: DrillOptions, name: str, driver_class, recorded, log_file: Path,
                 step: Callable[[float], None]) -> Optional[PatternReport]:
    """One pattern in its own sandbox, realized from its component's part of the recording."""
    with open(log_file, "w") as log, contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        from blueprint.emulator import running_emulator
        from blueprint.sandbox import Sandbox

        faults = FaultInjector(transient_rate=options.transient, seed=f"{options.seed}:{name}")
        faults.install()
        with running_emulator(recorded.config.get("aws:region", "us-east-1")) as emulator:
            sandbox = Sandbox(recorded, emulator).realize()
            if not driver_class.applies(sandbox):
                return None
            driver = driver_class(sandbox, options, faults, random.Random(f"{options.seed}:{name}"))
            started = time.monotonic()
            driver.prepare()
            faults.enabled = True
            try:
                driver.drive(step)
            finally:
                faults.enabled = False
            report = driver.verify()
            report.injected = {**driver.injected(), "transient": faults.transient_injected, **report.injected}
            report.wall_time_s = round(time.monotonic() - started, 2)
            step(1.0)
            return report


# ---- output ---------------------------------------------------------------------------------------

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


class ProgressBar:
    """A one-line progress bar on stderr (only when stderr is a terminal or forced)."""

    def __init__(self, stream=sys.stderr, width: int = 30):
        self.stream = stream
        self.width = width

    def __call__(self, pattern: str, fraction: float) -> None:
        filled = int(self.width * fraction)
        label = f"running: {pattern}" if fraction < 1 else "done"
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {fraction:4.0%} {label:<70.70}")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


def dumps(report: DrillReport) -> str:
    return json.dumps(report.to_json(), indent=2)
