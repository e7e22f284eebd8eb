"""How long the main job's drill takes: the default fault mix on the dev stack, as `make local` runs it
(patterns in parallel processes, one per pattern).

Target: 1,500 records per pattern in <= 30 s on a quiet 2-core machine. Prints each pattern's
wall time, then `drill_speed records=N workers=W total_s=T cpu_s=C` where total_s (wall) covers
everything: recording the program, starting each sandbox's emulator, driving and checking every
pattern; cpu_s is the CPU time of this process and its worker processes (and their fork server). On a shared machine
only cpu_s means anything: the wall time measures the other processes too.

What a speed patch buys: `BLUEPRINT_PATCHES_WITHOUT=<name>[,<name>...] python benchmarks/drill_speed.py`
runs the drill without it (integration_blueprint.core.patches); compare cpu_s with interleaved runs with it.
"""

import resource
import sys
import time

from integration_blueprint.drill.report import DrillOptions  # noqa: E402
from integration_blueprint.drill.runner import run_drill  # noqa: E402

RECORDS = int(sys.argv[1]) if len(sys.argv) > 1 else 1500
WORKERS = int(sys.argv[2]) if len(sys.argv) > 2 else None  # the drill's default: one per pattern


def main():
    started = time.monotonic()
    report = run_drill(DrillOptions(records=RECORDS), workers=WORKERS)
    total = time.monotonic() - started
    # The pattern processes are the fork server's children: its CPU, theirs included, is counted
    # once it has ended (CPython's forkserver has no public stop).
    from multiprocessing import forkserver
    forkserver._forkserver._stop()
    for name, pattern in report.patterns.items():
        # reference_s: of wall_s, the reference run the outcome is judged against (drill/outcomes.py).
        print(f"{name:22} wall_s={pattern.wall_time_s:7.2f} reference_s={pattern.reference_time_s:7.2f} "
              f"invocations={pattern.invocations:5d} {'ok' if pattern.passed else 'FAIL'}")
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(u.ru_utime + u.ru_stime for u in usage)
    print(f"drill_speed records={RECORDS} workers={WORKERS or len(report.patterns)} total_s={total:.1f} cpu_s={cpu:.1f}")


if __name__ == "__main__":
    main()
