"""What the Distributed Map batch costs per 1,000,000 invoices, by shape, from the drill's own meter
(integration_blueprint.drill.cost: Step Functions as the sandbox's Map executor counted it, Lambda,
DynamoDB; us-east-1 on-demand prices, free tiers not deducted).

Each row is one drill of the Map pattern on the dev stack with the shape set in its config
(max_items_per_batch, child_execution_type): both nights (one under the tolerated failures, one over
them during a DynamoDB outage) and the runbook's redrives are in the figure. Shapes: STANDARD x1 (one
invoice per child: the cost before batching), STANDARD and EXPRESS (item timeout 20 s, so a child's
attempts fit EXPRESS's 5 minutes) at several batch sizes; then the
default shape under a mix that crosses the threshold in both nights' files (5% poison, 10% transient).

Target: the default shape at <= $3.00 per million with 0 lost and 0 invoiced twice under the default
fault mix and under the crossing mix (before batching: $29.82).

Last line: `map_cost default_shape=<type>x<N> default_mix=$X crossing_mix=$Y lost=L invoiced_twice=D`

Run: .venv/bin/python benchmarks/map_cost.py [records]
"""

import json
import os
import sys

os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")

from integration_blueprint.core import conventions  # noqa: E402
from integration_blueprint.drill.patterns import DistributedMapDriver  # noqa: E402
from integration_blueprint.drill.report import REPO, DrillOptions  # noqa: E402
from integration_blueprint.drill.runner import run_drill  # noqa: E402
from integration_blueprint.preview.project import load_config  # noqa: E402

RECORDS = int(sys.argv[1]) if len(sys.argv) > 1 else 1500
DEFAULT = ("STANDARD", conventions.MAP_ITEMS_PER_BATCH_DEFAULT)
SIZES = sorted({1, 10, 50, 100, 200, DEFAULT[1]})
SHAPES = [*(("STANDARD", n) for n in SIZES), ("EXPRESS", 10), ("EXPRESS", DEFAULT[1])]
CROSSING_MIX = {"poison": 0.05, "transient": 0.10}
SECTION = "blueprint:distributedMap"
EXPRESS_ITEM_TIMEOUT_SECONDS = 20


def drill(shape: tuple, **mix):
    config = dict(load_config(REPO, "dev").values)
    section = json.loads(config[SECTION]) if isinstance(config[SECTION], str) else dict(config[SECTION])
    section.update(childExecutionType=shape[0], maxItemsPerBatch=shape[1])
    if shape[0] == "EXPRESS":  # the dev stack's 30 s item timeout x 7 attempts does not fit 5 minutes
        section["itemTimeoutSeconds"] = EXPRESS_ITEM_TIMEOUT_SECONDS
    config[SECTION] = json.dumps(section)
    report = run_drill(DrillOptions(records=RECORDS, config=config, **mix),
                       drivers={DistributedMapDriver.name: DistributedMapDriver}, workers=1)
    return report.patterns[DistributedMapDriver.name]


def row(label: str, pattern) -> str:
    u = pattern.usage_per_million
    cost = u["cost_usd"]
    return (f"{label:22} {u['state_transitions']:11.0f} {u['express_requests']:9.0f} {u['lambda_requests']:9.0f} "
            f"{cost['step_functions']:7.2f} {cost['lambda']:7.2f} {cost['dynamodb']:7.2f} {cost['total']:7.2f} "
            f"{pattern.lost:5d} {pattern.duplicate_effects:6d} {'ok' if pattern.passed else 'FAIL':>5}")


def main() -> None:
    print(f"Distributed Map, {RECORDS} invoices per drill, USD per 1,000,000 invoices (us-east-1 on-demand)")
    print(f"{'shape / mix':22} {'transitions':>11} {'express':>9} {'lambda':>9} {'sfn $':>7} {'lambda $':>7} "
          f"{'ddb $':>7} {'total $':>7} {'lost':>5} {'twice':>6} {'drill':>5}")
    results = {}
    for shape in SHAPES:
        results[shape] = drill(shape)
        print(row(f"{shape[0]} x{shape[1]}, default mix", results[shape]), flush=True)
    crossing = drill(DEFAULT, **CROSSING_MIX)
    print(row(f"{DEFAULT[0]} x{DEFAULT[1]}, crossing mix", crossing))
    default = results.get(DEFAULT) or drill(DEFAULT)
    print(f"map_cost default_shape={DEFAULT[0]}x{DEFAULT[1]} "
          f"default_mix=${default.usage_per_million['cost_usd']['total']:.2f} "
          f"crossing_mix=${crossing.usage_per_million['cost_usd']['total']:.2f} "
          f"lost={default.lost + crossing.lost} invoiced_twice={default.duplicate_effects + crossing.duplicate_effects}")


if __name__ == "__main__":
    main()
