"""What each policy pack beyond the first costs a preview: `blueprint preview` of one program with the
blueprint's pack alone, side by side with the same preview judged by three packs (an organisation's
AWSGuard from npm, a team's Python pack, the blueprint's), interleaved so the machine's load falls on
both alike; and each pack's own start (spawned until it answers GetAnalyzerInfo), since the packs
start in parallel with the program and with each other.

Target (issue 41): three packs cost at most the slowest pack's start more than one:
`extra_s <= slowest_start_s`. Figures are wall seconds, the median of the runs, and the CPU seconds
of the processes each started (on 2 cores the packs' CPU competes with the program's, so a loaded
machine shows it in the wall time). Needs `make node-fixtures awsguard-pack`. Last line:
`preview_packs one_pack_s=A three_packs_s=B extra_s=B-A slowest_start_s=S (<pack>) within_target=yes|no
one_pack_cpu_s=.. three_packs_cpu_s=.. <pack>_start_cpu_s=..`.

Run: .venv/bin/python benchmarks/preview_packs.py [--runs 5]
"""

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from integration_blueprint.preview.analyzer import DEFAULT_PACK_DIR, PolicyAnalyzer

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "fixtures" / "multi_pack_program"
PACKS = {"pulumi-awsguard": ROOT / "tests" / "node" / "packs" / "awsguard",
         "team-data-rules": ROOT / "tests" / "fixtures" / "packs" / "team_python",
         "integration-blueprint": DEFAULT_PACK_DIR}
BLUEPRINT = str(Path(sys.executable).with_name("blueprint"))


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def preview_seconds(packs: list[Path]) -> tuple[float, float]:
    """Wall and CPU seconds (the preview, its program and its packs)."""
    argv = [BLUEPRINT, "preview", "--program", str(PROGRAM), "--stack", "test", "--json"]
    for pack in packs:
        argv += ["--policy-pack", str(pack)]
    started, cpu = time.perf_counter(), children_cpu()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"the preview could not judge the program (exit {done.returncode}):\n{done.stderr}")
    return seconds, children_cpu() - cpu


def start_seconds(pack: Path) -> tuple[float, float]:
    """Wall seconds until the pack answers, and the CPU seconds of its whole process."""
    started, cpu = time.perf_counter(), children_cpu()
    with PolicyAnalyzer(pack):
        seconds = time.perf_counter() - started
    return seconds, children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    one, three = [], []
    starts: dict[str, list[tuple[float, float]]] = {name: [] for name in PACKS}
    for run in range(runs):  # interleaved: the load of the moment falls on every figure alike
        one.append(preview_seconds([DEFAULT_PACK_DIR]))
        three.append(preview_seconds(list(PACKS.values())))
        for name, pack in PACKS.items():
            starts[name].append(start_seconds(pack))
        print(f"run {run + 1}: one pack {one[-1][0]:.2f} s ({one[-1][1]:.2f} s CPU), three packs {three[-1][0]:.2f} s "
              f"({three[-1][1]:.2f} s CPU); starts " + ", ".join(
                  f"{name} {times[-1][0]:.2f} s ({times[-1][1]:.2f} s CPU)" for name, times in starts.items()), flush=True)
    one_s, three_s = (statistics.median(w for w, _ in one), statistics.median(w for w, _ in three))
    one_cpu, three_cpu = (statistics.median(c for _, c in one), statistics.median(c for _, c in three))
    start = {name: statistics.median(w for w, _ in times) for name, times in starts.items()}
    start_cpu = {name: statistics.median(c for _, c in times) for name, times in starts.items()}
    slowest = max(start, key=start.__getitem__)
    extra = three_s - one_s
    print(f"preview_packs one_pack_s={one_s:.2f} three_packs_s={three_s:.2f} extra_s={extra:.2f} "
          f"slowest_start_s={start[slowest]:.2f} ({slowest}) within_target={'yes' if extra <= start[slowest] else 'no'} "
          f"one_pack_cpu_s={one_cpu:.2f} three_packs_cpu_s={three_cpu:.2f} "
          + " ".join(f"{name}_start_cpu_s={cpu:.2f}" for name, cpu in start_cpu.items()))

if __name__ == "__main__":
    main()
