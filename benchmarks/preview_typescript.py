"""How long `blueprint preview` takes on a TypeScript program of 100 resources (25 groups of queue +
DLQ + function + SQS mapping), Node.js start-up included, and where the time goes:

- `node`: Node.js starting and loading @pulumi/pulumi and @pulumi/aws, nothing else;
- `preview`: the whole `blueprint preview` (program, engine and policy pack), ts-node transpiling
  only (`noCheck` in tsconfig.json, or PULUMI_NODEJS_TRANSPILE_ONLY=true);
- the same with stack frames kept at Node's default depth (`nodeargs: --stack-trace-limit=10`),
  as every run took them before the host's first run went without (node_host: the SDK's stack
  trace per output, source-mapped frame by frame);
- the same with ts-node type-checking the program, as the SDK does unless told not to (what
  `pulumi preview` does for a TypeScript program by default; one run, it is slow);
- the Python twin of the program through the same `blueprint preview`: the calibration, since a
  busy machine inflates CPU seconds too.

Each is the best of 3 runs: wall seconds and CPU seconds (this process and every process it started:
node, the policy pack, the sandboxed program, adopted and reaped as process_cpu.py says).
Target: the TypeScript preview <= 5 s wall on a quiet machine. Needs
`make node-fixtures`. Last line:
`preview_typescript wall_s=W cpu_s=C full_stacks_cpu_s=F typecheck_cpu_s=T node_cpu_s=N
python_twin_cpu_s=P`.

Run: .venv/bin/python benchmarks/preview_typescript.py
"""

import subprocess
import tempfile
import time
from pathlib import Path

from process_cpu import adopt_orphans, cpu_seconds, reap

from integration_blueprint.preview.run import run_preview

ROOT = Path(__file__).resolve().parents[1]
NODE_MODULES = ROOT / "tests" / "node" / "node_modules"
GROUPS = 25
REPEATS = 3
INDEX_TS = """\
import * as pulumi from "@pulumi/pulumi";
import * as aws from "@pulumi/aws";

const role = "arn:aws:iam::123456789012:role/bench";
const code = new pulumi.asset.AssetArchive({});
for (let i = 0; i < %d; i++) {
    const dlq = new aws.sqs.Queue(`dlq-${i}`, { messageRetentionSeconds: 1209600 });
    const queue = new aws.sqs.Queue(`queue-${i}`, {
        visibilityTimeoutSeconds: 360,
        redrivePolicy: pulumi.jsonStringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 5 }),
    });
    const fn = new aws.lambda.Function(`fn-${i}`, { role, runtime: "python3.12", handler: "app.handler", code, timeout: 60 });
    new aws.lambda.EventSourceMapping(`mapping-${i}`, {
        eventSourceArn: queue.arn, functionName: fn.name, functionResponseTypes: ["ReportBatchItemFailures"],
    });
}
"""

PULUMI_YAML = "name: bench\nruntime: nodejs\n"
PULUMI_YAML_FULL_STACKS = ('name: bench\nruntime:\n  name: nodejs\n  options:\n'
                           '    nodeargs: "--stack-trace-limit=10"\n')

MAIN_PY = """\
import pulumi
import pulumi_aws as aws

role = "arn:aws:iam::123456789012:role/bench"
code = pulumi.AssetArchive({})
for i in range(%d):
    dlq = aws.sqs.Queue(f"dlq-{i}", message_retention_seconds=1209600)
    queue = aws.sqs.Queue(f"queue-{i}", visibility_timeout_seconds=360, redrive_policy=pulumi.Output.json_dumps(
        {"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 5}))
    fn = aws.lambda_.Function(f"fn-{i}", role=role, runtime="python3.12", handler="app.handler", code=code, timeout=60)
    aws.lambda_.EventSourceMapping(f"mapping-{i}", event_source_arn=queue.arn, function_name=fn.name,
                                   function_response_types=["ReportBatchItemFailures"])
"""


def tsconfig(check: bool) -> str:
    return ('{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs", '
            f'"moduleResolution": "node", "sourceMap": true, "noCheck": {str(not check).lower()}}}, '
            '"files": ["index.ts"]}\n')


def best(run, repeats: int = REPEATS) -> tuple[float, float]:
    """(wall s, CPU s) of the run with the least CPU."""
    measured = []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), cpu_seconds()
        run()
        reap()  # the sandboxed program's processes: their CPU counts once they are waited for
        measured.append((time.perf_counter() - wall, cpu_seconds() - cpu))
    return min(measured, key=lambda pair: pair[1])


def main() -> None:
    adopt_orphans()
    with tempfile.TemporaryDirectory() as folder:
        program = Path(folder)
        (program / "Pulumi.yaml").write_text(PULUMI_YAML)
        (program / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n")
        (program / "package.json").write_text('{"name": "bench", "main": "index.ts"}\n')
        (program / "index.ts").write_text(INDEX_TS % GROUPS)
        (program / "node_modules").symlink_to(NODE_MODULES)

        node = best(lambda: subprocess.run(["node", "-e", 'require("@pulumi/pulumi"); require("@pulumi/aws")'],
                                           cwd=program, check=True))
        print(f"node start-up, @pulumi/pulumi and @pulumi/aws loaded: {node[0]:.2f} s wall, {node[1]:.2f} s CPU")

        def preview() -> None:
            result = run_preview(program, stack="dev")
            assert len(result.recorded.resources) == 4 * GROUPS, len(result.recorded.resources)

        (program / "tsconfig.json").write_text(tsconfig(check=False))
        transpiled = best(preview)
        print(f"preview, {4 * GROUPS} resources, transpile only: {transpiled[0]:.2f} s wall, {transpiled[1]:.2f} s CPU")
        (program / "Pulumi.yaml").write_text(PULUMI_YAML_FULL_STACKS)
        full_stacks = best(preview)
        print(f"preview, {4 * GROUPS} resources, stack frames at Node's default depth: {full_stacks[0]:.2f} s wall, "
              f"{full_stacks[1]:.2f} s CPU")
        (program / "Pulumi.yaml").write_text(PULUMI_YAML)
        (program / "tsconfig.json").write_text(tsconfig(check=True))
        checked = best(preview, repeats=1)
        print(f"preview, {4 * GROUPS} resources, type-checked: {checked[0]:.2f} s wall, {checked[1]:.2f} s CPU")
    with tempfile.TemporaryDirectory() as folder:
        program = Path(folder)
        (program / "Pulumi.yaml").write_text("name: bench\nruntime: python\n")
        (program / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n")
        (program / "__main__.py").write_text(MAIN_PY % GROUPS)
        twin = best(preview)
        print(f"preview, {4 * GROUPS} resources, the Python twin: {twin[0]:.2f} s wall, {twin[1]:.2f} s CPU")
    print(f"preview_typescript wall_s={transpiled[0]:.2f} cpu_s={transpiled[1]:.2f} "
          f"full_stacks_cpu_s={full_stacks[1]:.2f} typecheck_cpu_s={checked[1]:.2f} node_cpu_s={node[1]:.2f} "
          f"python_twin_cpu_s={twin[1]:.2f}")


if __name__ == "__main__":
    main()
