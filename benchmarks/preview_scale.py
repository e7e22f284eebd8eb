"""How `blueprint preview` scales: synthetic programs with N groups of queue + DLQ + function +
SQS mapping, N = 250, 500, 1000. Prints, for each N, the time to record the program under the
mock engine and the time the policy pack takes to analyse it (Analyze per resource +
AnalyzeStack, best of 3 runs).

Analysis must grow linearly (every cross-resource rule indexes the stack once): the last line is
`preview_scale analysis_ratio_2x=R` with R = t(1000) / t(500); the target is R <= 2.3.

Run: .venv/bin/python benchmarks/preview_scale.py
"""

import gc
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pulumi  # noqa: E402
import pulumi_aws as aws  # noqa: E402

from integration_blueprint.preview.analyzer import PolicyAnalyzer  # noqa: E402
from integration_blueprint.preview.recording import record_program  # noqa: E402

SIZES = (250, 500, 1000)
# Analysis is timed REPEATS times and the fastest run kept: the other runs measure whatever else
# the machine was doing.
REPEATS = 3
ROLE = "arn:aws:iam::123456789012:role/bench"


def synthetic_program(groups: int):
    def program():
        code = pulumi.AssetArchive({})
        for i in range(groups):
            dlq = aws.sqs.Queue(f"dlq-{i}", message_retention_seconds=1_209_600)
            queue = aws.sqs.Queue(f"queue-{i}", visibility_timeout_seconds=360, redrive_policy=dlq.arn.apply(
                lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 5})))
            function = aws.lambda_.Function(f"fn-{i}", role=ROLE, runtime="python3.12", handler="app.handler",
                                            code=code, timeout=60)
            aws.lambda_.EventSourceMapping(f"mapping-{i}", event_source_arn=queue.arn, function_name=function.name,
                                           function_response_types=["ReportBatchItemFailures"])
    return program


def main() -> None:
    analysis = {}
    with PolicyAnalyzer() as analyzer:
        analyzer.configure({})
        for groups in SIZES:
            started = time.perf_counter()
            recorded = record_program(synthetic_program(groups), stack="bench")
            recorded_s = time.perf_counter() - started
            # The recording's objects stay alive while it is analysed; freezing them keeps the
            # benchmark's own garbage collector from rescanning them on the analysis clock.
            gc.collect()
            gc.freeze()
            runs = []
            for _ in range(REPEATS):
                started = time.perf_counter()
                violations = analyzer.analyze(recorded)
                runs.append(time.perf_counter() - started)
            analysis[groups] = min(runs)
            gc.unfreeze()
            print(f"preview_scale n={groups} resources={len(recorded.resources)} record_s={recorded_s:.2f} "
                  f"analysis_s={analysis[groups]:.2f} violations={len(violations)}", flush=True)
    print(f"preview_scale analysis_ratio_2x={analysis[1000] / analysis[500]:.2f}")


if __name__ == "__main__":
    main()
