"""What the sandbox costs a preview: `blueprint preview --stack prod` of the repository's program with
the program contained (bwrap, integration_blueprint.containment) side by side with the same run where
the machine allows no user namespaces, so the program runs uncontained (today's path). Both run under
`unshare -Ur` (the second with user.max_user_namespaces set to 0 inside it), so the only difference is
the sandbox; the runs alternate A B A B so a machine whose speed drifts moves both.

Wall time only: a sandboxed program's CPU is not all accounted to the preview (bwrap's init in the
program's PID namespace reaps it), so a CPU comparison would flatter the sandbox.

Target (issue 37): the contained preview within 10% of the uncontained one's wall time. Last line:
`preview_containment contained_wall_s=A uncontained_wall_s=B ratio=R` (medians of REPEATS pairs).

Run: .venv/bin/python benchmarks/preview_containment.py [program folder] [stack]
"""

import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REPEATS = 7
BLUEPRINT = str(Path(sys.executable).with_name("blueprint"))


def timed(program: Path, stack: str, *, contained: bool) -> float:
    limit = "" if contained else "echo 0 > /proc/sys/user/max_user_namespaces && "
    argv = ["unshare", "-Ur", "sh", "-c", f'{limit}exec "$@"', "sh", BLUEPRINT, "preview", "--program", str(program),
            "--stack", stack, "--format", "json"]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1) or ('"contained": true' in done.stdout) != contained:
        sys.exit(f"the {'contained' if contained else 'uncontained'} run did not run as asked "
                 f"(exit {done.returncode}):\n{done.stderr[-2000:]}")
    return wall


def main() -> None:
    program = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else REPO
    stack = sys.argv[2] if len(sys.argv) > 2 else "prod"
    timed(program, stack, contained=True)  # warm-up: caches, bytecode
    timed(program, stack, contained=False)
    pairs = [(timed(program, stack, contained=True), timed(program, stack, contained=False)) for _ in range(REPEATS)]
    contained = statistics.median(a for a, _ in pairs)
    uncontained = statistics.median(b for _, b in pairs)
    ratio = statistics.median(a / b for a, b in pairs)
    for a, b in pairs:
        print(f"contained {a:.2f} s  uncontained {b:.2f} s  ratio {a / b:.3f}")
    print(f"preview_containment contained_wall_s={contained:.2f} uncontained_wall_s={uncontained:.2f} ratio={ratio:.3f}")


if __name__ == "__main__":
    main()
