"""How long `blueprint preview` takes to refuse the TypeScript example (examples/typescript, type-checked
as its tsconfig.json asks, as `pulumi preview` runs it) with one refused argument of its
FifoBillingQueue call, and with two in the same call: how many times the program ran and its wall
and CPU seconds (this process and its children: node, the plugin). A refusal is located from the
first run (no second run at Node's full depth), however many arguments the call refuses.

Each case runs once (a type-checked run is slow). Needs `make node-fixtures`. Last line:
`preview_refusals one_runs=R one_wall_s=W one_cpu_s=C two_runs=R two_wall_s=W two_cpu_s=C`.

Run: .venv/bin/python benchmarks/preview_refusals.py
"""

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from process_cpu import adopt_orphans, cpu_seconds, reap

from integration_blueprint.preview import node_host
from integration_blueprint.preview.recording import ProgramError, record_program

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "typescript"
NODE_MODULES = ROOT / "tests" / "node" / "node_modules"
WRITTEN = "    maxReceiveCount: 5,\n"
CASES = {"one": "    maxReceiveCount: 2,\n", "two": "    maxReceiveCount: 2,\n    batchSize: 11,\n"}


def install(program: Path, sdk: Path) -> None:
    """node_modules as npm lays it out: the pinned fixture packages linked, the SDK copied in."""
    modules = program / "node_modules"
    for entry in NODE_MODULES.iterdir():
        if entry.name.startswith("@"):
            for package in entry.iterdir():
                (modules / entry.name).mkdir(parents=True, exist_ok=True)
                (modules / entry.name / package.name).symlink_to(package)
        else:
            modules.mkdir(exist_ok=True)
            (modules / entry.name).symlink_to(entry)
    shutil.copytree(sdk, modules / "@pulumi" / "blueprint")


def main() -> None:
    adopt_orphans()  # the sandboxed program's CPU counts too (process_cpu.py)
    runs: list[bool] = []
    run_node_program = node_host.run_node_program
    node_host.run_node_program = lambda *a, **k: runs.append(k.get("full_stacks", False)) or run_node_program(*a, **k)
    figures = {}
    with tempfile.TemporaryDirectory() as folder:
        sdk = Path(folder) / "sdk"
        subprocess.run([str(Path(sys.executable).with_name("blueprint")), "sdk", "--language", "typescript",
                        "--out", str(sdk)], check=True, capture_output=True, timeout=300)
        for case, written in CASES.items():
            program = Path(folder) / case
            shutil.copytree(EXAMPLE, program, ignore=shutil.ignore_patterns("node_modules", "sdks"))
            (program / "index.ts").write_text((EXAMPLE / "index.ts").read_text().replace(WRITTEN, written))
            install(program, sdk)
            runs.clear()
            wall, cpu = time.perf_counter(), cpu_seconds()
            try:
                record_program(program, stack="dev")
                raise SystemExit(f"{case}: the program was not refused")
            except ProgramError as refused:
                lines = len(str(refused).splitlines())
            reap()
            figures[case] = (len(runs), time.perf_counter() - wall, cpu_seconds() - cpu)
            print(f"{case} refusal(s), {lines} line(s) reported: {len(runs)} run(s), {figures[case][1]:.1f} s wall, "
                  f"{figures[case][2]:.1f} s CPU")
    print("preview_refusals " + " ".join(f"{case}_runs={r} {case}_wall_s={w:.1f} {case}_cpu_s={c:.1f}"
                                         for case, (r, w, c) in figures.items()))


if __name__ == "__main__":
    main()
