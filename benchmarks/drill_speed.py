"""How long the main job's drill takes: the default fault mix on the dev stack, per pattern.

Target (issue: local sandbox and drill): 1,500 records per pattern in under a minute on this
machine (2 cores). Prints each pattern's wall time and AWS calls, then
`drill_speed records=N total_s=T patterns_s=P calls=C ms_per_call=M`, where total_s includes
recording the program and starting the emulator.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from blueprint.drill import DrillOptions, run_drill  # noqa: E402
from blueprint.faults import FaultInjector  # noqa: E402

RECORDS = int(sys.argv[1]) if len(sys.argv) > 1 else 1500


def main():
    calls = {"n": 0}
    original = FaultInjector._before_send

    def counting(self, request, **kwargs):  # every HTTP request a handler sends to the emulator
        if getattr(self._local, "active", False):
            calls["n"] += 1
        return original(self, request, **kwargs)

    FaultInjector._before_send = counting
    started = time.monotonic()
    report = run_drill(DrillOptions(records=RECORDS))
    total = time.monotonic() - started
    patterns = sum(p.wall_time_s for p in report.patterns.values())
    for name, pattern in report.patterns.items():
        print(f"{name:22} wall_s={pattern.wall_time_s:7.2f} invocations={pattern.invocations:5d} "
              f"{'ok' if pattern.passed else 'FAIL'}")
    print(f"drill_speed records={RECORDS} total_s={total:.1f} patterns_s={patterns:.1f} calls={calls['n']} "
          f"ms_per_call={1000 * patterns / max(calls['n'], 1):.1f}")


if __name__ == "__main__":
    main()
