"""What the offline preview costs beyond the Pulumi SDK itself: `blueprint preview --stack prod` of
the repository's program (its own interpreter against the offline engine over gRPC, the policy pack
in a third process) side by side with the same program run under the SDK's own `set_mocks` (one
interpreter, no engine, no pack: the least any run of the program can cost), each as a whole
process, REPEATS pairs interleaved (each pair's order alternates), and a 4,000-resource project
folder recorded by the engine. A figure of its own is the best of its runs; a ratio is the median of
the pairs' ratios: this machine's speed drifts by a third within minutes, and two blocks of runs
one after the other measured that drift as much as the preview (ratio_cpu 1.21, 1.46 and 1.57 in
three consecutive runs of the same commit), where a pair's two runs see the same machine.

CPU is the sum over every process of the run, the sandboxed program's too (process_cpu.py: this
script adopts and reaps what bwrap leaves). Wall is the clock, which on a shared machine also measures the other
processes; each figure is also printed in speed units (the machine's unit, measured before and after
by /work/shared/tools/speed-unit, or SPEED_UNIT_TOOL), which compare across machines and loads.

Targets (issue 29): the preview <= 1.3x the set_mocks run's wall time and <= 2 s wall on a quiet
machine; 4,000 resources from a project folder <= 20 s CPU. Last line:
`preview_overhead preview_wall_s=W preview_cpu_s=C mocks_wall_s=M mocks_cpu_s=K ratio_wall=R ratio_cpu=Q
program_4k_cpu_s=P unit_s=U preview_wall_units=.. preview_cpu_units=.. mocks_wall_units=.. mocks_cpu_units=..`.

Run: .venv/bin/python benchmarks/preview_overhead.py (BENCH_REPEATS=N for fewer runs on a loaded machine)
Side by side with another checkout (its own virtualenv's python runs this script, so it previews with
that checkout's code): /work/wt/before/.venv/bin/python benchmarks/preview_overhead.py
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from process_cpu import adopt_orphans, reap

REPO = Path(__file__).resolve().parents[1]
REPEATS = 5
PYTHON = sys.executable
BLUEPRINT = str(Path(PYTHON).with_name("blueprint"))
SPEED_UNIT_TOOL = os.environ.get("SPEED_UNIT_TOOL", "/work/shared/tools/speed-unit")

# The same program under the SDK's mocks (tools/compile_bytecode.py's MOCKS_RUN): every resource
# answered with its inputs, the run waited for until every registration is answered, the stack's
# config as the CLI would pass it.
sys.path.insert(0, str(REPO / "tools"))
from compile_bytecode import MOCKS_RUN  # noqa: E402


def timed(argv: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    """(wall s, CPU s of the process and of every process it started, adopted ones included) of one
    run, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    reap()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def interleaved(first: list[str], second: list[str], env: dict, cwd: Path) -> list[tuple[tuple, tuple]]:
    """((wall, cpu) of `first`, (wall, cpu) of `second`) for each of REPEATS pairs, run one after the
    other, the pair's order alternating (neither always runs on the machine the other left)."""
    pairs = []
    for index in range(int(os.environ.get("BENCH_REPEATS", REPEATS))):
        if index % 2:
            after, before = timed(second, env, cwd), timed(first, env, cwd)
            pairs.append((before, after))
        else:
            pairs.append((timed(first, env, cwd), timed(second, env, cwd)))
    return pairs


def speed_unit() -> float:
    """The machine's speed unit now, in seconds (speed-unit's fixed single-threaded workload)."""
    done = subprocess.run([SPEED_UNIT_TOOL], capture_output=True, text=True, check=True)
    return float(done.stdout.strip().split("unit_s=")[1].split()[0])


def main() -> None:
    from integration_blueprint.preview.project import load_config

    adopt_orphans()
    env = {**os.environ, "BENCH_CONFIG": json.dumps({"prod": load_config(REPO, "prod").values})}
    unit_before = speed_unit()
    pairs = interleaved([BLUEPRINT, "preview", "--stack", "prod", "--format", "json"], [PYTHON, "-c", MOCKS_RUN], env, REPO)
    preview_wall, preview_cpu = (min(preview[i] for preview, _ in pairs) for i in (0, 1))
    mocks_wall, mocks_cpu = (min(mocks[i] for _, mocks in pairs) for i in (0, 1))
    ratio_wall, ratio_cpu = (statistics.median(preview[i] / mocks[i] for preview, mocks in pairs) for i in (0, 1))
    unit = statistics.mean([unit_before, speed_unit()])
    print(f"speed unit {unit:.2f} s (before {unit_before:.2f} s)")
    print(f"blueprint preview --stack prod  wall {preview_wall:.2f} s = {preview_wall / unit:.2f} units  "
          f"cpu {preview_cpu:.2f} s = {preview_cpu / unit:.2f} units")
    print(f"set_mocks run of the same program  wall {mocks_wall:.2f} s = {mocks_wall / unit:.2f} units  "
          f"cpu {mocks_cpu:.2f} s = {mocks_cpu / unit:.2f} units")
    print(f"preview / set_mocks, median of {len(pairs)} pairs  wall {ratio_wall:.2f}x  cpu {ratio_cpu:.2f}x")

    sys.path.insert(0, str(Path(__file__).parent))
    from preview_scale import record_as_program_folder  # the same 4,000-resource folder preview_scale.py times

    program_4k = record_as_program_folder(1000)
    print(f"4,000 resources from a project folder  cpu {program_4k:.2f} s")
    print(f"preview_overhead preview_wall_s={preview_wall:.2f} preview_cpu_s={preview_cpu:.2f} "
          f"mocks_wall_s={mocks_wall:.2f} mocks_cpu_s={mocks_cpu:.2f} ratio_wall={ratio_wall:.2f} "
          f"ratio_cpu={ratio_cpu:.2f} program_4k_cpu_s={program_4k:.2f} unit_s={unit:.2f} "
          f"preview_wall_units={preview_wall / unit:.2f} preview_cpu_units={preview_cpu / unit:.2f} "
          f"mocks_wall_units={mocks_wall / unit:.2f} mocks_cpu_units={mocks_cpu / unit:.2f}")


if __name__ == "__main__":
    main()
