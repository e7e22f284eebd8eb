"""What a drill of code that fails every record costs: a team's FIFO consumer written for other
records (`KeyError: 'charge_id'`, tests/fixtures/first_week, stack `charges`) drilled with the
default 1,500 records, as a new team first meets it.

Prints `drill_early_stop records=N invocations=I retries=R wall_s=W cpu_s=C stopped_early=yes|no`
(cpu_s: this process and its children). Run it with another checkout's interpreter to compare, side
by side: `farm-bench -n 1 --timeout 1800 -- .venv/bin/python benchmarks/drill_early_stop.py --vs
'/work/main/.venv/bin/python benchmarks/drill_early_stop.py'`.
"""

import sys
import time
from pathlib import Path

from process_cpu import adopt_orphans, cpu_seconds, reap

from integration_blueprint.drill.report import DrillOptions
from integration_blueprint.drill.runner import run_drill

PROGRAM = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "first_week"
RECORDS = int(sys.argv[1]) if len(sys.argv) > 1 else 1500


def main() -> None:
    adopt_orphans()  # the team code's sandboxed processes count too (process_cpu.py)
    started = time.monotonic()
    report = run_drill(DrillOptions(stack="charges", program_dir=PROGRAM, records=RECORDS), workers=1)
    reap()
    wall = time.monotonic() - started
    pattern = report.patterns["fifo_billing"]
    cpu = cpu_seconds()
    print(f"drill_early_stop records={RECORDS} invocations={pattern.invocations} retries={pattern.retries} "
          f"wall_s={wall:.1f} cpu_s={cpu:.1f} stopped_early={'yes' if 'stopped early' in pattern.failure else 'no'}")


if __name__ == "__main__":
    main()
