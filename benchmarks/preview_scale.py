"""How `blueprint preview` scales: synthetic programs of N groups of queue + DLQ + function + SQS
mapping (4 resources each), N = 250, 500, 1000, i.e. 1,000, 2,000 and 4,000 resources. For each
size it prints the CPU time to record the program against the offline engine (the program a
callable in this process, calling the engine's services directly) and the CPU time the policy
pack takes to analyse it (Analyze per resource + AnalyzeStack: this process's CPU plus the pack
process's, best of 3 runs). Last, the 4,000-resource program as a project folder, the way
`blueprint preview` runs a team's program: its own interpreter, the engine over gRPC (the CPU of
both processes).

CPU time, not wall time: on a shared machine the wall clock measures the other processes too
(the ratios swung 1.81-2.68 across runs timed by the wall clock).

Targets: 4,000 resources recorded in <= 10 s of CPU; recording and analysis grow linearly,
t(4k) / t(2k) <= 2.3. Last line:
`preview_scale record_ratio_2x=R analysis_ratio_2x=A record_4k_cpu_s=S record_4k_program_cpu_s=P`.

Run: .venv/bin/python benchmarks/preview_scale.py
"""

import gc
import os
import resource
import tempfile
import time
from pathlib import Path

from process_cpu import adopt_orphans, reap

from integration_blueprint.preview.analyzer import PolicyAnalyzer
from integration_blueprint.preview.recording import record_program

SIZES = (250, 500, 1000)
REPEATS = 3  # analysis runs per size; the least CPU is kept
ROLE = "arn:aws:iam::123456789012:role/bench"


def synthetic_program(groups: int):
    """The benchmark's program as a callable: the same source as the project folder's __main__.py."""
    code = compile(PROGRAM.format(groups=groups, role=ROLE), f"<preview_scale {groups} groups>", "exec")

    def program():
        exec(code, {"__name__": "__main__"})
    return program


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU of another process (the policy pack), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    adopt_orphans()
    recording, analysis = {}, {}
    with PolicyAnalyzer(reconfigurable=True) as analyzer:  # one pack for every size
        analyzer.configure({})
        pack = analyzer._process.process.pid
        for groups in SIZES:
            gc.collect()
            started = time.process_time()
            recorded = record_program(synthetic_program(groups), stack="bench")
            recording[groups] = time.process_time() - started
            runs = []
            for _ in range(REPEATS):
                gc.collect()
                started, pack_started = time.process_time(), process_cpu_seconds(pack)
                violations = analyzer.analyze(recorded)
                runs.append(time.process_time() - started + process_cpu_seconds(pack) - pack_started)
            analysis[groups] = min(runs)
            print(f"preview_scale n={groups} resources={len(recorded.resources)} "
                  f"record_cpu_s={recording[groups]:.2f} analysis_cpu_s={analysis[groups]:.2f} "
                  f"violations={len(violations)}", flush=True)
            del recorded
    program_cpu = record_as_program_folder(SIZES[-1])
    print(f"preview_scale record_ratio_2x={recording[1000] / recording[500]:.2f} "
          f"analysis_ratio_2x={analysis[1000] / analysis[500]:.2f} record_4k_cpu_s={recording[1000]:.2f} "
          f"record_4k_program_cpu_s={program_cpu:.2f}")


PROGRAM = """import json
import pulumi
import pulumi_aws as aws

code = pulumi.AssetArchive({{}})
for i in range({groups}):
    dlq = aws.sqs.Queue(f"dlq-{{i}}", message_retention_seconds=1_209_600)
    queue = aws.sqs.Queue(f"queue-{{i}}", visibility_timeout_seconds=360, redrive_policy=dlq.arn.apply(
        lambda arn: json.dumps({{"deadLetterTargetArn": arn, "maxReceiveCount": 5}})))
    function = aws.lambda_.Function(f"fn-{{i}}", role="{role}", runtime="python3.12", handler="app.handler",
                                    code=code, timeout=60)
    aws.lambda_.EventSourceMapping(f"mapping-{{i}}", event_source_arn=queue.arn, function_name=function.name,
                                   function_response_types=["ReportBatchItemFailures"])
"""


def record_as_program_folder(groups: int) -> float:
    """CPU seconds (this process and the program's) to record the same program from a folder."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "Pulumi.yaml").write_text("name: bench\nruntime: python\n")
        (Path(folder) / "Pulumi.bench.yaml").write_text("config:\n  aws:region: us-east-1\n")
        (Path(folder) / "__main__.py").write_text(PROGRAM.format(groups=groups, role=ROLE))
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.process_time()
        recorded = record_program(Path(folder), stack="bench")
        reap()  # the sandboxed program, which bwrap leaves to this process (adopt_orphans)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = time.process_time() - started + (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
        print(f"preview_scale program_folder resources={len(recorded.resources)} cpu_s={cpu:.2f}", flush=True)
        return cpu


if __name__ == "__main__":
    main()
