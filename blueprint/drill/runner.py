"""The reliability drill: N records through every pattern of a stack, in the local sandbox, with
duplicates, poison records, transient AWS faults and crashes, then a check of the final state.

Faults, all seeded:
- duplicates: each record handed to a function is, with probability P, delivered again in a later
  invocation (event source mappings are at-least-once);
- poison: a fraction P of the records are payloads the reference handlers reject;
- transient: a fraction P of the AWS calls the handlers make fail with throttling/5xx at the
  botocore layer (drill/faults.py);
- crashes: K invocations per pattern die right after one of their AWS calls succeeded.

Each pattern's reference side effect would visibly double if done twice (an atomic ADD to a
balance, a ledger write audited at the botocore layer), so duplicates cannot hide.
"""

from __future__ import annotations

import contextlib
import os
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from integration_blueprint.drill import cost
from integration_blueprint.drill.faults import FaultInjector
from integration_blueprint.drill.patterns import DRIVERS
from integration_blueprint.drill.report import DrillOptions, DrillReport, PatternReport
from integration_blueprint.preview.recording import record_program
from integration_blueprint.sandbox.emulator import running_emulator
from integration_blueprint.sandbox.realization import COMPRESSION, Sandbox


def run_drill(options: DrillOptions, progress: Optional[Callable[[str, float], None]] = None,
              drivers: Optional[dict] = None, log_dir: Optional[Path] = None,
              workers: Optional[int] = None) -> DrillReport:
    """Run the drill, each pattern in its own sandbox (its own emulator and fault injector, seeded
    from the seed and the pattern's name). With `workers` > 1 the patterns run in separate
    processes, one core each. Everything the handlers and the emulator print goes to
    `log_dir/<pattern>.log`, so stdout carries only the report; the report names the folder."""
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
        faults = FaultInjector(transient_rate=options.transient, seed=f"{options.seed}:{name}")
        faults.install()
        with running_emulator(recorded.config.get("aws:region", "us-east-1")) as emulator:
            sandbox = Sandbox(recorded, emulator).realize()
            if not driver_class.applies(sandbox):
                return None
            driver = driver_class(sandbox, options, faults, random.Random(f"{options.seed}:{name}"))
            meter = cost.UsageMeter()  # what the handlers' AWS calls would bill
            faults.auditors.append(meter)
            started = time.monotonic()
            driver.prepare()
            faults.enabled = True
            try:
                driver.drive(step)
            finally:
                faults.enabled = False
            report = driver.verify()
            report.injected = {**driver.injected(), "transient": faults.transient_injected, **report.injected}
            report.usage_per_million = cost.usage_per_million(meter, recorded, report)
            report.notes.append(cost.summary(report.usage_per_million))
            report.wall_time_s = round(time.monotonic() - started, 2)
            step(1.0)
            return report
