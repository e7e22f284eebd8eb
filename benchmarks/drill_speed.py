"""How long the main job's drill takes: the default fault mix on the dev stack, as `make local` runs it
(patterns in parallel processes, one per pattern).

Target: 1,500 records per pattern in <= 30 s on a quiet 2-core machine, and <= 0.5x the project's
first-week drill (FIRST_WEEK) run side by side.

    python benchmarks/drill_speed.py [RECORDS] [WORKERS]

runs this checkout's drill in this process. Prints each pattern's wall time and its reference run's
(`reference_s`: since the reference runs beside the faulted run, its own length, not a part of
wall_s), then `drill_speed records=N workers=W total_s=T cpu_s=C` where total_s (wall) covers
everything: recording the program, starting each sandbox's emulator, driving and checking every
pattern; cpu_s is the CPU time of this process and every process it started (the pattern processes,
their fork server, the reference runs forked from them).

    python benchmarks/drill_speed.py [RECORDS] --against REV [--against REV ...] [--rounds N]

runs the main job's drill command (`blueprint drill --stack dev --seed 7 --records N`) of this
checkout and of each REV (a commit: `first-week` names FIRST_WEEK) side by side: all at once, so a
shared machine's load weighs on each alike, N rounds. Each REV is checked out in a temporary git
worktree with a virtualenv of its own (its uv.lock; a commit from before the lock gets its
pyproject's ranges with this checkout's locked versions as constraints), kept in
~/.cache/blueprint/drill-speed/ for the next run. Each side prints `drill_side rev=R wall_s= cpu_s=
passed=` as it ends; then the machine's speed unit (/work/shared/tools/speed-unit, or
BLUEPRINT_SPEED_UNIT) before and after, each wall time in units (divided by their mean), and
`drill_speed_against rev=R cpu_ratio= wall_ratio=` (this checkout / REV, the medians over the
rounds). cpu_s counts every process the command started, reaped or orphaned (the measuring process
is their subreaper).

On a shared machine only cpu_s means much: the wall time measures the other processes too.

What a speed patch buys: `BLUEPRINT_PATCHES_WITHOUT=<name>[,<name>...] python benchmarks/drill_speed.py`
runs the drill without it (integration_blueprint.core.patches); compare cpu_s with interleaved runs with it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The project's first-week drill: the commit whose benchmark first measured the main job's drill with
# a process per pattern and whose README published it (54.7-61.8 s then; moto's server on loopback,
# the patterns in two processes, no reference run).
FIRST_WEEK = "8f633cc672f8972a5accc5daa3b8bf960ec966b2"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "blueprint" / "drill-speed"
SPEED_UNIT = os.environ.get("BLUEPRINT_SPEED_UNIT", "/work/shared/tools/speed-unit")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", nargs="?", type=int, default=1500)
    parser.add_argument("workers", nargs="?", type=int, default=None)
    parser.add_argument("--against", action="append", default=[], metavar="REV",
                        help="a commit to run side by side with this checkout (first-week: FIRST_WEEK)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--measure", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure)
    elif args.against:
        side_by_side(args.records, [FIRST_WEEK if rev == "first-week" else rev for rev in args.against], args.rounds)
    else:
        in_process(args.records, args.workers)


def in_process(records: int, workers: int | None) -> None:
    from integration_blueprint.drill.report import DrillOptions
    from integration_blueprint.drill.runner import run_drill

    started = time.monotonic()
    report = run_drill(DrillOptions(records=records), workers=workers)
    total = time.monotonic() - started
    # The pattern processes are the fork server's children: its CPU, theirs included, is counted
    # once it has ended (CPython's forkserver has no public stop).
    from multiprocessing import forkserver
    forkserver._forkserver._stop()  # type: ignore[attr-defined]
    for name, pattern in report.patterns.items():
        print(f"{name:22} wall_s={pattern.wall_time_s:7.2f} reference_s={pattern.reference_time_s:7.2f} "
              f"invocations={pattern.invocations:5d} {'ok' if pattern.passed else 'FAIL'}")
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(u.ru_utime + u.ru_stime for u in usage)
    print(f"drill_speed records={records} workers={workers or len(report.patterns)} total_s={total:.1f} cpu_s={cpu:.1f}")


# ---- side by side ---------------------------------------------------------------------------------

def side_by_side(records: int, revs: list[str], rounds: int) -> None:
    sides = {"this": REPO, **{rev: checkout(rev) for rev in revs}}
    unit_before = speed_unit()
    results: dict[str, list[dict]] = {label: [] for label in sides}
    for _ in range(rounds):
        running = {label: start(folder, records) for label, folder in sides.items()}
        while running:  # each side's figures as it ends (in units once the machine's unit is measured after)
            ended = [label for label, process in running.items() if process.poll() is not None]
            if not ended:
                time.sleep(1.0)
            for label in ended:
                out, err = running.pop(label).communicate()
                result = json.loads(out.strip().splitlines()[-1])
                results[label].append(result)
                print(f"drill_side rev={_short(label)} records={records} wall_s={result['wall_s']:.1f} "
                      f"cpu_s={result['cpu_s']:.1f} passed={result['exit'] == 0}", flush=True)
                if result["exit"] != 0:
                    print(f"drill_side rev={_short(label)}: exit {result['exit']}: " + " | ".join(result["said"])
                          + (f"\n{err[-2000:]}" if result["exit"] != 1 else ""), flush=True)
    unit_after = speed_unit()
    unit = (unit_before + unit_after) / 2 if unit_before and unit_after else None
    print(f"speed_unit before_s={unit_before} after_s={unit_after}")
    if unit:
        for label, runs in results.items():
            for run in runs:
                print(f"drill_side rev={_short(label)} wall_units={run['wall_s'] / unit:.1f}")
    mine = results["this"]
    for rev in revs:
        theirs = results[rev]
        cpu = statistics.median(m["cpu_s"] for m in mine) / statistics.median(t["cpu_s"] for t in theirs)
        wall = statistics.median(m["wall_s"] for m in mine) / statistics.median(t["wall_s"] for t in theirs)
        print(f"drill_speed_against rev={_short(rev)} rounds={rounds} cpu_ratio={cpu:.2f} wall_ratio={wall:.2f}")


def start(folder: Path, records: int) -> subprocess.Popen:
    """The main job's drill command of the checkout in `folder`, measured (--measure) by this script."""
    command = [str(folder / ".venv" / "bin" / "blueprint"), "drill", "--stack", "dev", "--seed", "7",
               "--records", str(records), "--no-progress"]
    return subprocess.Popen([sys.executable, __file__, "--measure", *command], cwd=folder, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"})


def measure(command: list[str]) -> None:
    """Run `command`; print {"wall_s", "cpu_s", "exit"} as JSON, cpu_s that of every process it
    started: this process is their subreaper, so orphans are reaped (and counted) here too."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1)
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = process.communicate()
    wall = time.monotonic() - started
    while True:  # what the command left running (a fork server, a pool) ends and is reaped
        try:
            os.wait()
        except ChildProcessError:
            break
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    sys.stderr.write(err[-4000:])
    # The report's failing patterns and its result line: why a side did not pass (a deadline on a loaded machine).
    said = [line for line in out.splitlines() if line.startswith("result") or "FAIL" in line]
    print(json.dumps({"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "exit": process.returncode,
                      "said": said[-6:]}))


def checkout(rev: str) -> Path:
    """A worktree of `rev` with a virtualenv of its own (made once, kept in CACHE)."""
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", f"{rev}^{{commit}}"], check=True,
                            capture_output=True, text=True).stdout.strip()
    folder = CACHE / commit[:12]
    if (folder / ".venv" / "bin" / "blueprint").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run(["git", "-C", str(REPO), "worktree", "prune"], check=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(folder), commit], check=True,
                   capture_output=True)
    uv = str(REPO / ".venv" / "bin" / "uv")
    environment = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    if (folder / "uv.lock").exists():
        subprocess.run([uv, "sync", "--locked", "--quiet", "--extra", "local"], cwd=folder, check=True, env=environment)
    else:  # before the lock: its ranges, at this checkout's locked versions where they allow
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as constraints:
            exported = subprocess.run([uv, "export", "--frozen", "--no-hashes", "--extra", "local", "--extra", "dev",
                                       "--no-emit-project"], cwd=REPO, check=True, capture_output=True, text=True).stdout
            constraints.write(exported)
            constraints.flush()
            subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(folder / ".venv")], check=True,
                           env=environment)
            subprocess.run([uv, "pip", "install", "--quiet", "--python", str(folder / ".venv" / "bin" / "python"),
                            "-c", constraints.name, "-e", f"{folder}[local]"], check=True, env=environment)
    return folder


def speed_unit() -> float | None:
    """The machine's speed unit now (seconds), if the tool is here."""
    if not Path(SPEED_UNIT).exists():
        return None
    out = subprocess.run([SPEED_UNIT], capture_output=True, text=True).stdout
    return float(out.strip().rsplit("=", 1)[-1]) if "unit_s=" in out else None


def _short(rev: str) -> str:
    return "this" if rev == "this" else ("first-week " if rev == FIRST_WEEK else "") + rev[:12]


if __name__ == "__main__":
    main()
