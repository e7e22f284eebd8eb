"""The reliability drill: N records through every pattern of a stack, in the local sandbox, with
duplicates, poison records, transient AWS faults and crashes, then a check of the final state.

Faults, all seeded:
- duplicates: each record handed to a function is, with probability P, delivered again in a later
  invocation (event source mappings are at-least-once);
- poison: a fraction P of the records are payloads the reference handlers reject;
- transient: a fraction P of the AWS calls the handlers make fail with throttling/5xx at the
  botocore layer (sandbox/faults.py, the request interceptor the drill gives the sandbox);
- crashes: K invocations per pattern die right after one of their AWS writes succeeded (after write
  1, 2, ... of an invocation in turn, with crashes added until each boundary was hit: invoker.py).

Then the judgement: the driver's own checks, and the outcome (drill/outcomes.py): what the run left
in every place a function wrote to, against a reference run of the same driver and seed in a fresh
sandbox (each record once, in the lane's order, no faults).

Each pattern's reference side effect would visibly double if done twice (an atomic ADD to a
balance, a ledger write audited at the botocore layer), so duplicates cannot hide.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import random
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

from integration_blueprint.containment import containment
from integration_blueprint.core import patches
from integration_blueprint.core.patches import PatchRefused
from integration_blueprint.drill import cost, log_folders, pattern_results
from integration_blueprint.drill.effects import WRITE_OPERATIONS
from integration_blueprint.drill.outcomes import Outcome, Snapshot, judge_outcome
from integration_blueprint.drill.patterns import DRIVERS
from integration_blueprint.drill.patterns.base import DrillDeadline
from integration_blueprint.drill.patterns.team_code import TEAM_DRIVERS
from integration_blueprint.drill.permissions import add_permissions
from integration_blueprint.drill.reference import ReferenceBeside, ReferenceUnfinished, fresh_reference
from integration_blueprint.drill.report import DrillOptions, DrillReport, PatternReport
from integration_blueprint.preview import lambda_archive
from integration_blueprint.preview.recording import ProgramError, record_program
from integration_blueprint.sandbox.authorization import ACCESS_TYPES
from integration_blueprint.sandbox.emulator import EMULATOR_PATCHES, running_emulator
from integration_blueprint.sandbox.errors import SandboxError
from integration_blueprint.sandbox.faults import FaultInjector
from integration_blueprint.sandbox.interception import Interception
from integration_blueprint.sandbox.realization import COMPRESSION, Sandbox, is_team_code


def run_drill(options: DrillOptions, progress: Optional[Callable[[str, float], None]] = None,
              drivers: Optional[dict] = None, log_dir: Optional[Path] = None,
              workers: Optional[int] = None) -> DrillReport:
    """Run the drill, each pattern in its own sandbox (its own emulator and fault injector, seeded
    from the seed and the pattern's name). With `workers` > 1 (the default: one per pattern) the
    patterns run in separate processes. Everything the handlers and the emulator print goes to
    `log_dir/<pattern>.log`, so stdout carries only the report; the report names the folder. Without
    `log_dir`, a new folder in the temporary directory (log_folders: the newest ten are kept)."""
    require_runnable()
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        return _run_drill_logging_to(options, progress, drivers, log_dir, workers)
    # A folder of its own (two drills with the same seed must not share their logs), held while it runs.
    with log_folders.new_log_folder(options.stack, options.seed) as made:
        try:
            return _run_drill_logging_to(options, progress, drivers, made, workers)
        except BaseException as exc:
            # Stopped (Ctrl-C, SIGTERM) or unable to run: no report will name the logs folder, so none is
            # left behind (a bug's traceback keeps it: its program.log may say more).
            if not isinstance(exc, Exception) or isinstance(exc, (NothingToDrill, SandboxError, PatchRefused, ProgramError)):
                shutil.rmtree(made, ignore_errors=True)
            raise


def _run_drill_logging_to(options: DrillOptions, progress: Optional[Callable[[str, float], None]],
                          drivers: Optional[dict], log_dir: Path, workers: Optional[int]) -> DrillReport:
    if workers is not None and workers <= 1:
        return _run_drill(options, progress, drivers, log_dir, workers)
    with _worker_processes_cleaned_up():
        _worker_context()  # its fork server imports the workers' modules while the program records
        return _run_drill(options, progress, drivers, log_dir, workers)


def require_runnable() -> None:
    """What would stop every pattern, checked once before any starts, so the user reads one line
    naming the fix (the CLI's exit 2) instead of a traceback from each pattern's process:
    - a correctness fix of the emulator outside its verified versions (patches.PatchRefused);
    - an unreadable AWS configuration: moto builds a boto3 Session when it is imported, which
      fails on an AWS_PROFILE naming a profile that does not exist, although the drill never uses
      an account."""
    import botocore.session
    from botocore.exceptions import BotoCoreError

    patches.check(EMULATOR_PATCHES)
    try:
        botocore.session.Session().get_scoped_config()
    except BotoCoreError as exc:  # ProfileNotFound, ConfigParseError: what a Session meets reading the config
        profile = os.environ.get("AWS_PROFILE") or os.environ.get("AWS_DEFAULT_PROFILE")
        named = f" (AWS_PROFILE={profile})" if profile else ""
        raise SandboxError(f"the AWS configuration cannot be read{named}: {exc}. The drill uses no AWS account; "
                           "unset AWS_PROFILE or fix the profile in ~/.aws/config") from None


def _run_drill(options: DrillOptions, progress: Optional[Callable[[str, float], None]], drivers: Optional[dict],
               log_dir: Path, workers: Optional[int]) -> DrillReport:
    with open(log_dir / "program.log", "w") as log, _output_to(log):
        recorded = record_program(options.program_dir, stack=options.stack, config=options.config)
    chosen, not_drilled = choose_instances(recorded, drivers or DRIVERS)
    if not chosen:
        raise NothingToDrill(_nothing_to_drill(options, drivers or DRIVERS, not_drilled))
    _check_samples(options, chosen)
    _check_archives(options, chosen)
    _require_containment(options, chosen)
    # By default every pattern gets its own process, even past the number of cores: a pattern's
    # process also waits (its start, polls, crash wait-outs) and the patterns differ in length, so
    # one per core left a core idle part of the time (1,500 records on 2 cores: 57.4 -> 53.7 s wall).
    workers = max(1, min(workers or len(chosen), len(chosen)))
    if workers == 1:
        results = {}
        for index, (name, (driver_class, scope)) in enumerate(chosen.items()):
            def step(fraction: float, _index=index):
                if progress:
                    progress(name, (_index + min(max(fraction, 0.0), 1.0)) / len(chosen))
            results[name] = _run_pattern(options, name, driver_class, scope, log_dir / f"{name}.log", step)
    else:
        results = _run_in_processes(options, chosen, log_dir, workers, progress)
    reports = {}
    for name, report in results.items():
        if report is not None:
            driver_class, scope = chosen[name]
            report.component = driver_class.instances(scope)[0].name
            reports[name] = report
    return DrillReport(stack=options.stack, seed=options.seed, compression=COMPRESSION, patterns=reports,
                       log_dir=str(log_dir), not_drilled=not_drilled, contained=options.isolation)


def _check_archives(options: DrillOptions, chosen: dict) -> None:
    """Every archive of a team's function can be laid out as Lambda would (no entry outside its
    folder, no link out of a FileArchive folder), checked before any pattern starts: bad input is
    one line and exit 2, not a failed pattern."""
    for _, scope in chosen.values():
        for function in scope.of_type(FUNCTION):
            code = function.inputs.get("code")
            if is_team_code(str(function.inputs.get("handler", ""))) and isinstance(code, dict):
                try:
                    lambda_archive.members(code, Path(scope.program_dir or options.program_dir))
                except lambda_archive.ArchiveError as exc:
                    raise SandboxError(f"function {function.name}: {exc}") from None


def _require_containment(options: DrillOptions, chosen: dict) -> None:
    """A team's code runs only inside its sandbox: where that cannot be made, the drill refuses
    (exit 2, the cause and the fix) unless --no-isolation. The blueprint's reference handlers are
    the package's own code and run in the pattern's process either way."""
    team_code = sorted(driver_class.instances(scope)[0].name for driver_class, scope in chosen.values()
                       if driver_class in TEAM_DRIVERS.values())
    walls = containment()
    if team_code and options.isolation and not walls.available:
        raise SandboxError(f"the drill runs the team's code ({', '.join(team_code)}) only inside a sandbox, which "
                           f"cannot be made here: {walls.reason}. Fix: {walls.fix}; or pass --no-isolation to run it "
                           "as your user, every verdict marked 'not contained'")


def _check_samples(options: DrillOptions, chosen: dict) -> None:
    """Every component given sample records (--sample-records) is drilled on the team's own code."""
    team_code = sorted(driver_class.instances(scope)[0].name for driver_class, scope in chosen.values()
                       if driver_class in TEAM_DRIVERS.values())
    unknown = sorted(set(options.samples) - set(team_code))
    if unknown:
        raise SandboxError(f"--sample-records names {', '.join(unknown)}: no component of that name runs the team's "
                           f"own code in {options.program_dir} (stack {options.stack}); those that do: "
                           f"{', '.join(team_code) or 'none'} (the blueprint's reference handlers take the drill's "
                           "own records)")


class NothingToDrill(Exception):
    """The program has no instance of a blueprint component the drill can drive."""


def choose_instances(recorded, drivers: dict, team_drivers: Optional[dict] = None) -> tuple[dict, dict]:
    """Every instance of each driver's component, each in a sandbox of its own (its part of the
    recording): {label: (driver class, scope)}, and {label: why} for the instances it cannot drill.
    An instance running the blueprint's reference handlers gets the pattern's driver; one whose
    consumer runs the team's own code gets the team-code driver, judged by effects, in a sandbox that
    also holds the program's resources outside every blueprint component (what that code may write).
    A label is the pattern's name, with the instance's name when the program has several."""
    team_drivers = TEAM_DRIVERS if team_drivers is None else team_drivers
    program_data = _program_data_resources(recorded)
    chosen: dict = {}
    not_drilled: dict = {}
    for name, driver_class in drivers.items():
        instances = driver_class.instances(recorded)
        team_class = team_drivers.get(driver_class.component)
        for instance in instances:
            label = name if len(instances) == 1 else f"{name}:{instance.name}"
            scope = recorded.within({instance.urn})
            if any(is_team_code(str(r.inputs.get("handler", ""))) for r in scope.of_type(FUNCTION)):
                scope = dataclasses.replace(scope, resources=[*scope.resources, *program_data])  # what it may write
            if team_class is not None and team_class.components(scope):  # whatever else it runs
                why_not = team_class.cannot_run(scope)
                if why_not:
                    not_drilled[label] = f"{driver_class.component} {instance.name}: {why_not}"
                else:
                    chosen[label] = (team_class, scope)
            elif driver_class.components(scope):
                chosen[label] = (driver_class, scope)
            else:
                handlers = sorted({str(r.inputs.get("handler", "")) for r in scope.of_type(FUNCTION)})
                not_drilled[label] = (
                    f"{driver_class.component} {instance.name} runs {', '.join(handlers) or 'no function'}: neither the "
                    f"blueprint's reference handlers ({driver_class.handler or driver_class.name}) nor team code "
                    f"behind the lane the drill feeds ({team_class.lane if team_class else 'none for this component'})")
    return chosen, not_drilled


# What a team's code may write to outside its component, realized beside it, and what decides
# whether it may (its roles' policies and the resources' own: sandbox/authorization.py).
PROGRAM_DATA_TYPES = ("aws:dynamodb/table:Table", "aws:sqs/queue:Queue", "aws:sns/topic:Topic",
                      "aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2", "aws:kinesis/stream:Stream", *ACCESS_TYPES)


def _program_data_resources(recorded) -> list:
    """The program's own data resources (tables, queues, topics, buckets, streams) that belong to no
    blueprint component: realized beside an instance that runs the team's code."""
    components = {r.urn for r in recorded.resources if r.type.startswith("blueprint:index:")}
    inside = {r.urn for r in recorded.within(components).resources}
    return [r for r in recorded.resources if r.type in PROGRAM_DATA_TYPES and r.urn not in inside]


FUNCTION = "aws:lambda/function:Function"


def _nothing_to_drill(options: DrillOptions, drivers: dict, not_drilled: dict) -> str:
    wanted = ", ".join(f"{d.component} (blueprint:index:{d.component})" for d in drivers.values())
    found = "; ".join(not_drilled.values()) or "it declares none"
    return (f"nothing to drill in {options.program_dir} (stack {options.stack}): the drill looks for instances of "
            f"the blueprint's components, {wanted}, from integration_blueprint.components; {found}")


def pattern_deadline_seconds(options: DrillOptions) -> float:
    """How long one pattern may take before the drill gives up on it: generous for the record
    count (a healthy run of 1,500 records takes about a minute alone on two cores, ten minutes under
    40% transient faults on a shared machine), so hitting it means a hang."""
    return options.deadline_seconds or DEADLINE_BASE_SECONDS + DEADLINE_PER_RECORD_SECONDS * options.records


DEADLINE_BASE_SECONDS = 300.0
DEADLINE_PER_RECORD_SECONDS = 0.6
# A worker that does not report by its deadline plus this is stuck where the driver cannot check
# (inside the emulator): it is killed and the pattern fails.
KILL_GRACE_SECONDS = 60.0


# What a pattern's process imports (moto's services and state machine interpreter, the sandbox,
# the handlers' runtime): about 3 s of CPU per process, paid once by the fork server instead.
WORKER_PRELOAD = (
    "integration_blueprint.drill.runner", "integration_blueprint.drill.patterns",
    "integration_blueprint.sandbox.realization", "integration_blueprint.handlers.runtime.idempotent_stream",
    "integration_blueprint.handlers.runtime.app_dlq_stream", "integration_blueprint.handlers.runtime.billing",
    "aws_lambda_powertools.utilities.idempotency", "aws_lambda_powertools.utilities.batch",
    "moto.core.responses", "moto.dynamodb.responses", "moto.sqs.responses", "moto.kinesis.responses",
    "moto.s3.responses", "moto.iam.responses", "moto.sts.models", "moto.awslambda.models",
    "moto.stepfunctions.responses", "moto.stepfunctions.parser.models", "moto.stepfunctions.parser.backend",
)


def _worker_context():
    """Where the pattern processes come from: a fork server (started once, fresh, single-threaded)
    that has imported WORKER_PRELOAD and forks a process per pattern, so each starts with no
    emulator state and no threads inherited, and without importing it all again. Spawned
    processes where there is no fork server (Windows)."""
    import multiprocessing
    from multiprocessing import forkserver

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["__main__", *WORKER_PRELOAD])
    # Started with Ctrl-C ignored, which it and the workers it forks inherit: Ctrl-C reaches every
    # process of the terminal's group, and the drill's own process is the one that stops them
    # (pool.terminate), instead of each printing a KeyboardInterrupt traceback from its imports.
    with _interrupts_ignored():
        forkserver.ensure_running()
    return context


@contextlib.contextmanager
def _interrupts_ignored():
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread, where Ctrl-C is not delivered anyway
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def _worker_processes_cleaned_up():
    """multiprocessing keeps its fork server's socket in a pymp-* folder of the temp dir, made on
    first use and removed by an interpreter exit handler, which the `blueprint` command skips (it
    ends with os._exit): every drill left one. Unless this process already has that folder, the
    drill makes it (the same kind of folder) and, after its pattern processes, stops the fork
    server and removes it (a later drill in this process starts both again)."""
    from multiprocessing import forkserver, process

    # Where multiprocessing.util.get_temp_dir keeps its folder (private: typeshed does not declare it).
    config = process.current_process()._config  # type: ignore[attr-defined]
    folder = None
    if config.get("tempdir") is None:
        folder = config["tempdir"] = tempfile.mkdtemp(prefix="pymp-")
    try:
        yield
    finally:
        if folder is not None and config.get("tempdir") == folder:
            # CPython has no public stop (typeshed does not declare this one); it unlinks the socket.
            forkserver._forkserver._stop()  # type: ignore[attr-defined]
            shutil.rmtree(folder, ignore_errors=True)
            config["tempdir"] = None


def _run_in_processes(options: DrillOptions, chosen: dict, log_dir: Path, workers: int,
                      progress: Optional[Callable[[str, float], None]]) -> dict:
    """Each pattern in a fresh process (at most `workers` at once). What comes back is data
    (drill/pattern_results.py: JSON, validated here), never a pickle: the worker is where the team's
    code is answered. The processes end with the drill whatever happens: a pattern past its
    deadline is killed, an interrupted drill kills them all, and a worker whose parent died (a
    killed drill) exits by itself."""
    from multiprocessing.connection import wait

    context = _worker_context()
    # The workers' temp folder (the sandbox unpacks archives there), removed here whatever ends them:
    # a killed worker has no chance to clean up after itself.
    scratch = tempfile.mkdtemp(prefix=log_folders.SCRATCH_PREFIX)
    waiting = list(chosen.items())
    running: dict[str, tuple[Any, Any]] = {}  # name -> (process, the reading end of its pipe)
    results: dict = {}
    fractions = dict.fromkeys(chosen, 0.0)
    kill_at = time.monotonic() + pattern_deadline_seconds(options) * -(-len(chosen) // workers) + KILL_GRACE_SECONDS
    try:
        while waiting or running:
            while waiting and len(running) < workers:
                name, (driver_class, scope) = waiting.pop(0)
                reader, writer = context.Pipe(duplex=False)
                process = context.Process(target=_pattern_worker, name=f"drill-{name}", daemon=True, args=(
                    writer, scratch, options, name, driver_class, scope, log_dir / f"{name}.log"))
                process.start()
                writer.close()
                running[name] = (process, reader)
            if time.monotonic() > kill_at:
                for name in [*running, *(name for name, _ in waiting)]:
                    results[name] = _killed(options, name)
                break
            for ready in wait([reader for _, reader in running.values()], timeout=0.2):
                name = next(n for n, (_, r) in running.items() if r is ready)
                process, reader = running[name]
                kind, value = _receive(name, reader)
                if kind == "ended":
                    value = PatternReport(sent=options.records, failure=f"{name}: {value}")
                if kind == "progress":
                    fractions[name] = min(max(value, 0.0), 1.0)
                    continue
                del running[name]
                reader.close()
                process.join(timeout=KILL_GRACE_SECONDS)
                if kind == "error":
                    raise WorkerFailed(f"pattern {name}: its process failed:\n{value}")
                results[name] = value
            if progress:
                progress(", ".join(running), sum(fractions.values()) / len(fractions))
        return {name: results.get(name) for name in chosen}
    finally:
        for process, reader in running.values():
            process.kill()
            process.join(timeout=5)
            reader.close()
        shutil.rmtree(scratch, ignore_errors=True)


class WorkerFailed(RuntimeError):
    """A pattern's process raised (a bug in the drill), or went away without a report."""


def _receive(name: str, reader: Any) -> tuple[str, Any]:
    """The next message of a pattern's worker, validated (pattern_results.parse)."""
    try:
        data = reader.recv_bytes(pattern_results.MAX_MESSAGE_BYTES)
    except (EOFError, OSError):
        return "ended", "its process ended without a report (killed from outside?); see its handler log"
    try:
        return pattern_results.parse(data)
    except pattern_results.MalformedResult as exc:
        raise WorkerFailed(f"pattern {name}: its process sent what the drill does not accept: {exc}") from None


def _pattern_worker(writer: Any, scratch: str, options: DrillOptions, name: str, driver_class, scope,
                    log_file: Path) -> None:
    """A pattern's process: its report (or its failure) back to the drill as data."""
    _worker_started(scratch)
    try:
        report = _run_pattern(options, name, driver_class, scope, log_file,
                              lambda fraction: writer.send_bytes(pattern_results.progress_message(fraction)))
        writer.send_bytes(pattern_results.report_message(report))
    except BaseException:  # noqa: BLE001 - whatever stopped it, the drill reads why
        import traceback

        writer.send_bytes(pattern_results.error_message(traceback.format_exc()))
    finally:
        writer.close()


def _state_at_deadline(driver, options: DrillOptions, failure: str) -> PatternReport:
    """What the pattern had done when its deadline passed (its check of the state so far), failed."""
    driver.deadline = None
    try:
        report = driver.verify()
    except Exception as exc:  # noqa: BLE001 - the deadline is the failure to report; the check is a bonus
        report = PatternReport(sent=options.records, notes=[f"the state could not be checked: {exc}"])
    report.failure = failure
    return report


def _killed(options: DrillOptions, name: str) -> PatternReport:
    return PatternReport(sent=options.records, failure=(
        f"{name}: its process did not report within its deadline of {pattern_deadline_seconds(options):.0f} s "
        f"plus {KILL_GRACE_SECONDS:.0f} s and was killed (stuck inside the emulator); see its handler log"))


class _PatternOutput(io.TextIOBase):
    """sys.stdout and sys.stderr while the drill records the program or runs a pattern in this
    process. A logging handler keeps the stream it was made with (Powertools makes one when a
    service's logger is first made, once per process), so a handler made in one pattern, writing
    straight to that pattern's log file, would write to a closed file in the next pattern of the
    same process (the suite's drills, a one-worker drill) and lose its records. Through this, it
    writes to the log of what runs now (program.log while recording); between them, to nowhere."""

    def __init__(self) -> None:
        super().__init__()
        self.log: Optional[io.TextIOBase] = None

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        log = self.log
        return log.write(text) if log is not None and not log.closed else len(text)

    def flush(self) -> None:
        log = self.log
        if log is not None and not log.closed:
            log.flush()


_PATTERN_OUTPUT = _PatternOutput()


@contextlib.contextmanager
def _output_to(log):
    """Everything printed or logged in this process goes to `log` for the block."""
    _PATTERN_OUTPUT.log = log
    try:
        with contextlib.redirect_stdout(_PATTERN_OUTPUT), contextlib.redirect_stderr(_PATTERN_OUTPUT):
            yield
    finally:
        _PATTERN_OUTPUT.log = None


def _worker_started(scratch: str) -> None:
    """In each worker process: where temp files go, and exit when the drill that started it is gone."""
    import multiprocessing
    import threading

    os.environ["TMPDIR"] = tempfile.tempdir = scratch  # and the processes it starts

    drill = multiprocessing.parent_process()  # the drill's process (not the fork server)

    def watch_parent() -> None:
        while drill is None or drill.is_alive():
            time.sleep(1.0)
        os._exit(1)  # the drill was killed: nobody will read this pattern's report

    threading.Thread(target=watch_parent, daemon=True, name="drill-parent-watch").start()


def _run_pattern(options: DrillOptions, name: str, driver_class, recorded, log_file: Path,
                 step: Callable[[float], None]) -> Optional[PatternReport]:
    """One pattern in its own sandbox, realized from its component's part of the recording: the
    fault window (drive), then the recovery phase (recover: the runbook's redrive), then the check;
    the reference run the outcome is judged against runs beside it from the same realized sandbox
    (drill/reference.py)."""
    deadline_seconds = pattern_deadline_seconds(options)
    with open(log_file, "w") as log, _output_to(log):
        faults = FaultInjector(transient_rate=options.transient, seed=f"{options.seed}:{name}",
                               write_operations=WRITE_OPERATIONS)
        beside: Optional[ReferenceBeside] = None
        try:
            with running_emulator(recorded.config.get("aws:region", "us-east-1")) as emulator:
                # The faults reach the handlers' AWS calls through the sandbox's one seam; the driver
                # wraps its functions through the same interception (sandbox.interception.wrap).
                try:
                    sandbox = Sandbox(recorded, emulator, Interception(requests=faults),
                                      contained=options.isolation).realize()
                except SandboxError as exc:  # a resource the emulator cannot stand up: this pattern fails
                    return PatternReport(sent=options.records,
                                         failure=f"{name}: its sandbox could not be realized: {exc}")
                if not driver_class.applies(sandbox):
                    return None
                # Forked now, before anything is sent: the reference starts from this realized state.
                beside = ReferenceBeside.start(options, name, driver_class, sandbox, deadline_seconds, _PATTERN_OUTPUT,
                                               log_file.with_name(f"{log_file.stem}.reference.log"))
                driver = driver_class(sandbox, options, faults, random.Random(f"{options.seed}:{name}"))
                started = time.monotonic()
                driver.deadline_seconds = deadline_seconds
                driver.deadline = started + driver.deadline_seconds
                try:
                    driver.prepare()
                    faults.enabled = True
                    try:
                        driver.drive(step)
                    finally:
                        faults.enabled = faults.outage = False
                    for invoker in driver.invokers():
                        invoker.calm()  # the fault window is closed
                    driver.recover(step)
                    report = driver.verify()
                except DrillDeadline as exc:
                    faults.enabled = faults.outage = False
                    report = _state_at_deadline(driver, options, str(exc))
                report.notes.extend(driver.isolation_notes() + driver.crash_notes())
                add_permissions(report, sandbox.authorizer)
                report.injected = {**driver.injected(), "transient": faults.transient_injected, **report.injected}
                report.conflicts_sent, report.conflicts_parked = driver.conflicts_sent, driver.conflicts_parked
                meter = cost.UsageMeter()  # what the handlers' AWS calls would bill
                driver.replay(meter)
                report.usage_per_million = cost.usage_per_million(meter, recorded, report, emulator.state_machine_usage)
                report.notes.append(cost.summary(report.usage_per_million))
                # What the run left, read before its emulator goes (a pattern that did not finish has no outcome).
                outcome = None if report.failure else Snapshot(sandbox, driver.own_queue_urls()).take(sandbox.journal)
            if outcome is not None:
                reference_started = time.monotonic()
                try:
                    reference = _reference(beside, options, name, driver_class, recorded, deadline_seconds)
                    judge_outcome(report, driver, outcome, reference, reference_again=lambda: fresh_reference(
                        options, name, driver_class, recorded, deadline_seconds))
                except (DrillDeadline, SandboxError, ReferenceUnfinished) as exc:  # without a reference, no judgement
                    report.failure = f"{name}: the reference run (each record once, no faults) did not finish: {exc}"
                # The reference run's own time (beside the faulted run), else the time waited for it here.
                report.reference_time_s = round((beside.seconds if beside is not None else 0.0)
                                                or time.monotonic() - reference_started, 2)
        finally:
            if beside is not None:
                beside.stop()
                reference_log = beside.log_text()
                if reference_log:  # after the faulted run's, as when it ran after it
                    log.write(f"--- the reference run (each record once, no faults), run beside the faulted run ---\n"
                              f"{reference_log}")
        report.wall_time_s = round(time.monotonic() - started, 2)
        step(1.0)
        return report


def _reference(beside: Optional[ReferenceBeside], options: DrillOptions, name: str, driver_class, recorded,
               deadline_seconds: float) -> Outcome:
    """The reference run's outcome: from the child forked beside the faulted run (waited for up to
    its own deadline and the grace a stuck worker gets), or, where none could be forked, run now in
    a fresh sandbox."""
    if beside is None:
        return fresh_reference(options, name, driver_class, recorded, deadline_seconds)
    return beside.outcome(timeout=deadline_seconds + KILL_GRACE_SECONDS)
