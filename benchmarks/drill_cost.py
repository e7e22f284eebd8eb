"""What isolating a poison record costs each Kinesis pattern, measured by the drill.

For poison rates 0.1%, 1% and 5% at batch size 100 (the dev stack's), the drill drives the same
records through both stream patterns with no other fault, and counts Lambda invocations and records
re-read (re-delivered by bisect/retries, or read back from the stream by the Retry-DLQ consumer)
beyond a poison-free run of the same records, per poison record.

Last line: `drill_cost bisect_invocations_per_poison=X app_dlq_invocations_per_poison=Y` (the mean over
the three rates).
"""

import os

os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")

from integration_blueprint.drill.patterns import IdempotentStreamDriver, NonIdempotentStreamDriver  # noqa: E402
from integration_blueprint.drill.report import DrillOptions
from integration_blueprint.drill.runner import run_drill  # noqa: E402

RECORDS = 2000
RATES = (0.001, 0.01, 0.05)
PATTERNS = {"bisect": IdempotentStreamDriver, "app_dlq": NonIdempotentStreamDriver}


def measure(poison: float) -> dict:
    options = DrillOptions(records=RECORDS, seed=5, duplicates=0.0, poison=poison, transient=0.0, crashes=0)
    report = run_drill(options, drivers={d.name: d for d in PATTERNS.values()})
    results = {}
    for label, driver in PATTERNS.items():
        pattern = report.patterns[driver.name]
        assert pattern.passed, (label, poison, pattern)
        results[label] = (pattern.invocations, pattern.injected["records_reread"], pattern.expected_unrecoverable)
    return results


def main():
    baseline = measure(0.0)
    print(f"{RECORDS} records per run, batch size 100 (dev stack), no fault but poison")
    print(f"{'poison':>7} {'pattern':>8} {'poison n':>8} {'invocations':>11} {'extra inv/poison':>16} "
          f"{'re-read/poison':>14}")
    per_poison = {label: [] for label in PATTERNS}
    for rate in RATES:
        for label, (invocations, reread, poison_count) in measure(rate).items():
            base_invocations, base_reread, _ = baseline[label]
            extra = (invocations - base_invocations) / poison_count
            reread_per = (reread - base_reread) / poison_count
            per_poison[label].append(extra)
            print(f"{rate:7.1%} {label:>8} {poison_count:8d} {invocations:11d} {extra:16.2f} {reread_per:14.1f}")
    mean = {label: sum(values) / len(values) for label, values in per_poison.items()}
    print(f"drill_cost bisect_invocations_per_poison={mean['bisect']:.2f} "
          f"app_dlq_invocations_per_poison={mean['app_dlq']:.2f}")


if __name__ == "__main__":
    main()
