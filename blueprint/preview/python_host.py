"""Start a Pulumi Python program as the Python language host does: its own interpreter (the one
its Pulumi.yaml's runtime options name), python_exec.py with the language host's command line,
its config in PULUMI_CONFIG / PULUMI_CONFIG_SECRET_KEYS, the project folder as the working
directory. The program then talks to the engine over gRPC; what it printed and logged, and how
it ended, come back here and become a ProgramError that says where and what to do.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from integration_blueprint.preview import private_channel, process_tree
from integration_blueprint.preview.argument_lines import refusals_at_keys
from integration_blueprint.preview.engine import ROOT_STACK_TYPE, OfflineEngine

EXEC_SCRIPT = Path(__file__).resolve().with_name("python_exec.py")
PROGRAM_ERROR_TAG = "BLUEPRINT_PROGRAM_ERROR "
NO_SDK_TAG = "BLUEPRINT_NO_PULUMI_SDK:"
# A component's refusal of its arguments (integration_blueprint.components.validation), by the name
# the program's process reports it under.
REFUSAL = "ComponentArgumentError"
# Where python_exec.py writes the program interpreter's import path (for its own provider SDKs).
SEARCH_PATH_VARIABLE = "BLUEPRINT_SEARCH_PATH_FILE"
# What the program's exec script prints when it is stopped: the resources it declared (python_exec.py).
PENDING_TAG = "BLUEPRINT_PENDING "
# A preview that runs longer is stuck (an input() in the program, a deadlock, an output that never
# resolves): it is stopped (`blueprint preview --timeout`).
PROGRAM_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class ProgramFailure:
    """How a program run ended when it did not succeed: the message to show, and where."""
    message: str
    file: str = ""
    line: int = 0
    module: str = ""  # the module a ModuleNotFoundError names
    engine_fault: bool = False
    raised: bool = False  # an exception the program raised (not an exit, a timeout or a log line)
    # A Node.js run that recorded no stack frames (node_host.NO_STACK_FRAMES): run it again to see them.
    without_stacks: bool = False
    # Further errors of the same run, each with its own location (every TypeScript diagnostic, every
    # refused component), shown after the first.
    also: tuple[str, ...] = ()


def run_python_program(engine: OfflineEngine, *, interpreter: list[str], program_dir: Path, main: Path,
                       config: dict[str, str], secret_keys: list[str],
                       environ: Optional[dict[str, str]] = None, locate_raise: bool = False,
                       timeout: float = PROGRAM_TIMEOUT_SECONDS) -> Optional[ProgramFailure]:
    """Run the program to its end against `engine`; None when it succeeded. `locate_raise`: trace
    the program's own frames to find where an error whose traceback was lost was raised."""
    argv = [*interpreter, "-u", str(EXEC_SCRIPT),
            "--monitor", engine.address, "--engine", engine.address, "--project", engine.project,
            "--root_directory", str(program_dir), "--stack", engine.stack, "--pwd", str(program_dir),
            "--dry_run", "true", "--parallel", "16", "--organization", engine.organization, str(main)]
    # The caller's environment (PYTHONPATH included: a CI job's extra packages are the program's
    # too), plus what the language host adds (pulumi-language-python main.go, Run: PULUMI_CONFIG and
    # PULUMI_CONFIG_SECRET_KEYS on top of the toolchain's activated environment).
    env = dict(os.environ if environ is None else environ)
    env.update(PULUMI_CONFIG=json.dumps(config), PULUMI_CONFIG_SECRET_KEYS=json.dumps(secret_keys),
               PYTHONUNBUFFERED="1")
    if locate_raise:
        env["BLUEPRINT_LOCATE_RAISE"] = "1"
    # python_exec.py writes the interpreter's import path into the run's private folder before its
    # first engine call; the engine reads the program's own provider SDKs from there.
    search_path_file = Path(engine.folder) / "search-path.json"
    env[SEARCH_PATH_VARIABLE] = str(search_path_file)
    engine.sdk_search_path = _reader(search_path_file)
    try:
        done = run_program(engine, argv, cwd=program_dir, env=env, timeout=timeout)
    except FileNotFoundError:
        return ProgramFailure(f"the program's interpreter {interpreter[0]} does not exist")
    engine.program_stdout, engine.program_stderr = done.stdout, done.stderr
    if done.timed_out:
        return ProgramFailure(timeout_message(engine, timeout, done.pending))
    if done.returncode == 0 and not engine.failures:
        return None
    return _failure(engine, done)


def _reader(path: Path) -> Callable[[], Optional[tuple[str, ...]]]:
    """The program's import path, read once from the file python_exec.py writes before the program
    makes its first engine call (None while there is none: a program that failed before)."""
    read: list[tuple[str, ...]] = []

    def search_path() -> Optional[tuple[str, ...]]:
        if not read:
            try:
                read.append(tuple(json.loads(path.read_text(encoding="utf-8"))))
            except (OSError, ValueError):
                return None
        return read[0]
    return search_path


@dataclass(frozen=True)
class ProgramRun:
    """How a program's process ended, and what it printed."""
    returncode: int
    stdout: str
    stderr: str  # without the lines the exec script tags for the preview
    timed_out: bool = False
    pending: tuple = ()  # (type, name) of each resource a stopped program had declared


def _pending(stderr: str) -> tuple:
    for line in stderr.splitlines():
        if line.startswith(PENDING_TAG):
            return tuple(tuple(entry) for entry in json.loads(line[len(PENDING_TAG):]))
    return ()


def run_program(engine: OfflineEngine, argv: list[str], *, cwd: Path, env: dict[str, str],
                timeout: float) -> ProgramRun:
    """Run a program's process against `engine` until it exits (or `timeout`), then end its process
    group (anything it left running). The engine's token is handed over on a pipe
    (private_channel); its output goes to files in the run's private folder, so a daemon that
    keeps them open does not hold the preview."""
    handed = private_channel.hand_over({"engine_token": engine.token})
    env = {**env, private_channel.FD_VARIABLE: str(handed)}
    folder = Path(engine.folder)
    with open(folder / "program.out", "w+b") as out, open(folder / "program.err", "w+b") as err:
        try:
            process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                       pass_fds=[handed], start_new_session=True)
        finally:
            os.close(handed)
        try:
            exited = process_tree.wait(process, timeout)
        finally:
            process_tree.end(process)  # SIGTERM first: a stopped Python program reports what it awaited
        out.seek(0)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
        return ProgramRun(process.returncode if exited else -1, out.read().decode(errors="replace"),
                          "".join(line for line in stderr.splitlines(keepends=True) if not line.startswith(PENDING_TAG)),
                          timed_out=not exited, pending=_pending(stderr))


def timeout_message(engine: OfflineEngine, timeout: float, pending: tuple) -> str:
    """What a stopped program was waiting for: the resources it declared but never registered (an
    input that never resolved), as the program reported them when it was stopped."""
    registered = {(r.type, r.name) for r in engine.resources} | {(ROOT_STACK_TYPE, f"{engine.project}-{engine.stack}")}
    waiting = [f"{name} ({type_})" for type_, name in pending if (type_, name) not in registered]
    what = (f"; still waiting to register {', '.join(waiting[:10])}{' and more' if len(waiting) > 10 else ''}: "
            "an input of theirs never resolved (an Output or a promise that nothing completes?)") if waiting else \
        " (does it wait for input, on a lock, or on an output that never resolves?)"
    return (f"the program did not finish within {timeout:g} s (blueprint preview --timeout) and was stopped, with "
            f"{len(engine.resources)} resources registered{what}")


def _failure(engine: OfflineEngine, done: ProgramRun) -> ProgramFailure:
    if engine.failures:
        return ProgramFailure("the offline engine itself failed (this is a bug in blueprint, not in your "
                              "program; please report it with this message):\n" + engine.failures[0],
                              engine_fault=True)
    for message in engine.errors():
        if message.startswith(PROGRAM_ERROR_TAG):
            detail = json.loads(message[len(PROGRAM_ERROR_TAG):])
            if detail["type"] == REFUSAL and detail["file"]:
                # Every refusal of the call, each at the line of the key it names.
                (first, line), *others = refusals_at_keys(detail["message"], detail["file"], detail["line"])
                return ProgramFailure(f"{REFUSAL}: {first}", file=detail["file"], line=line, raised=True,
                                      also=tuple(f"{REFUSAL}: {text} (at {detail['file']}:{at})" for text, at in others))
            return ProgramFailure(f"{detail['type']}: {detail['message']}", file=detail["file"],
                                  line=detail["line"], module=detail.get("module", ""), raised=True)
    if NO_SDK_TAG in done.stderr:
        return ProgramFailure("the Pulumi SDK is not installed in the program's interpreter", module="pulumi")
    errors = engine.errors()
    if errors:
        return ProgramFailure("\n".join(errors))
    tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-20:])
    return ProgramFailure(f"the program exited with code {done.returncode}:\n{tail}")
