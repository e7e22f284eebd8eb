"""What each pattern would cost on AWS per 1,000,000 records, from the drill's own counts
(integration_blueprint.drill.cost: what is measured, what is modelled, the prices and their
sources, us-east-1 on-demand, free tiers not deducted).

1. The default fault mix on the dev stack (as `make local`, fewer records): each pattern's cost
   by service.
2. Bisect (idempotent stream) against the application's DLQ (non-idempotent stream) at 0.1%, 1%
   and 5% poison and no other fault, beside the whitepaper's claim
   (kinesis-lambda-dlq-whitepaper: bisect costs about round(log2(batch size)) extra invocations
   per poison record, 7 for a batch of 100; the application's DLQ one invocation per batch).

Last line: `cost_per_million fifo_billing=$X idempotent_stream=$Y non_idempotent_stream=$Z distributed_map=$W`

Run: .venv/bin/python benchmarks/cost_per_million.py [records]
"""

import math
import os
import sys

os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")

from integration_blueprint.drill.patterns import IdempotentStreamDriver, NonIdempotentStreamDriver  # noqa: E402
from integration_blueprint.drill.report import DrillOptions  # noqa: E402
from integration_blueprint.drill.runner import run_drill  # noqa: E402

RECORDS = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
POISON_RATES = (0.001, 0.01, 0.05)
BATCH_SIZE = 100  # the dev stack's stream batch size
SERVICES = ("lambda", "sqs", "dynamodb", "kinesis", "step_functions")


def main() -> None:
    report = run_drill(DrillOptions(records=RECORDS))
    print(f"AWS cost per 1,000,000 records, us-east-1 on-demand, from a {RECORDS}-record drill (default faults)")
    print(f"{'pattern':22} {'lambda req':>10} {'GB-s':>8} {'sqs req':>9} {'ddb WCU':>9} {'ddb RCU':>9} "
          f"{'kds PUT':>9} {'transitions':>11} " + " ".join(f"{s:>8}" for s in SERVICES) + f" {'total':>8}")
    totals = {}
    for name, pattern in sorted(report.patterns.items()):
        u = pattern.usage_per_million
        cost = u["cost_usd"]
        totals[name] = cost["total"]
        print(f"{name:22} {u['lambda_requests']:10.0f} {u['lambda_gb_seconds']:8.0f} "
              f"{u['sqs_fifo_requests'] + u['sqs_standard_requests']:9.0f} {u['dynamodb_write_units']:9.0f} "
              f"{u['dynamodb_read_units']:9.0f} {u['kinesis_put_payload_units']:9.0f} {u['state_transitions']:11.0f} "
              + " ".join(f"{cost[s]:8.2f}" for s in SERVICES) + f" {cost['total']:8.2f}")

    print(f"\nbisect vs application DLQ, {RECORDS} records, batch size {BATCH_SIZE}, poison only; whitepaper: "
          f"bisect ~{round(math.log2(BATCH_SIZE))} invocations per poison record, app DLQ 1 per batch")
    print(f"{'poison':>7} {'pattern':>8} {'invocations/1M':>14} {'lambda $':>9} {'total $/1M':>10}")
    drivers = {"bisect": IdempotentStreamDriver, "app_dlq": NonIdempotentStreamDriver}
    for rate in POISON_RATES:
        options = DrillOptions(records=RECORDS, seed=5, duplicates=0.0, poison=rate, transient=0.0, crashes=0)
        poisoned = run_drill(options, drivers={d.name: d for d in drivers.values()})
        for label, driver in drivers.items():
            u = poisoned.patterns[driver.name].usage_per_million
            print(f"{rate:7.1%} {label:>8} {u['lambda_requests']:14.0f} {u['cost_usd']['lambda']:9.2f} "
                  f"{u['cost_usd']['total']:10.2f}")
    print("cost_per_million " + " ".join(f"{name}=${totals[name]:.2f}" for name in
                                         ("fifo_billing", "idempotent_stream", "non_idempotent_stream", "distributed_map")))


if __name__ == "__main__":
    main()
