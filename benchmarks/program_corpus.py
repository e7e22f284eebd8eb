"""The program corpus (tests/programs/) previewed as a team's CI previews it, both modes, with what
each run came to: whether the verdict is the one the program's expected.json gives, and for every
failed preview whose failure it was (the tool's, or the program's own, located at its line).

    .venv/bin/python benchmarks/program_corpus.py [program ...]

Pinned programs need `make corpus-venvs` first (else they are listed as not run). Prints one line
per preview and a summary; never part of the test run.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import test_program_corpus as corpus  # noqa: E402 - the harness the corpus tests run each preview with

# A failure the tool owns: the engine's own fault, or a crash of the CLI itself.
TOOL_FAILURE = re.compile(r"offline engine itself failed|Traceback \(most recent call last\)")
PROGRAM_LINE = re.compile(r"\(at (\S+):(\d+)\)|declared at (\S+):(\d+)")


def classify(done) -> str:
    if done.returncode != 2:
        return "verdict"
    if TOOL_FAILURE.search(done.stderr):
        return "tool failure"
    return "program's own, at its line" if PROGRAM_LINE.search(done.stderr) else "program's own (config/setup)"


def main(names: list[str]) -> int:
    rows, tool_failures, mismatches = [], 0, 0
    for name in names or corpus.PROGRAMS:
        for mode in corpus.MODES:
            want = corpus.expected_of(name)["modes"][mode]
            started = time.perf_counter()
            with tempfile.TemporaryDirectory() as tmp:
                try:
                    done = corpus.run_preview(name, mode, Path(tmp))
                except pytest.skip.Exception as skipped:
                    rows.append((name, mode, "-", "-", 0.0, f"not run: {skipped}"))
                    continue
            seconds = time.perf_counter() - started
            kind = classify(done)
            matched = done.returncode == want["exit"]
            if matched and want["exit"] != 2:
                report = json.loads(done.stdout)
                got = {(v["policy"], v["name"], v["level"]) for v in report["violations"]}
                matched = got == {(v["policy"], v["resource"], v["level"]) for v in want["violations"]}
            tool_failures += kind == "tool failure"
            mismatches += not matched
            rows.append((name, mode, want["exit"], done.returncode, seconds, kind if matched else f"MISMATCH ({kind})"))
    width = max(len(row[0]) for row in rows)
    print(f"{'program':<{width}}  mode      want  got  seconds  outcome")
    for name, mode, want_exit, got_exit, seconds, outcome in rows:
        print(f"{name:<{width}}  {mode:<8}  {want_exit!s:>4}  {got_exit!s:>3}  {seconds:7.1f}  {outcome}")
    run = [row for row in rows if row[3] != "-"]
    located = sum(1 for row in run if row[5] == "program's own, at its line")
    print(f"\n{len(run)} previews of {len(rows) // 2} programs ({len(rows) - len(run)} not run); "
          f"{len(run) - mismatches} gave the expected verdict, {mismatches} did not; "
          f"{tool_failures} failed because of the tool; {located} failed on the program's own error at its line; "
          f"{sum(row[4] for row in run):.0f} s in all")
    return 1 if tool_failures or mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
