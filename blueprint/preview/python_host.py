"""Start a Pulumi Python program as the Python language host does: its own interpreter (the one
its Pulumi.yaml's runtime options name), python_exec.py with the language host's command line,
its config in PULUMI_CONFIG / PULUMI_CONFIG_SECRET_KEYS, the project folder as the working
directory. The program then talks to the engine over gRPC; what it printed and logged, and how
it ended, come back here and become a ProgramError that says where and what to do.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from integration_blueprint.preview import program_walls
from integration_blueprint.preview.argument_lines import refusals_at_keys
from integration_blueprint.preview.engine import OfflineEngine
from integration_blueprint.preview.language_host import (
    DECLARED_AT,
    PROGRAM_TIMEOUT_SECONDS,
    ProgramFailure,
    ProgramRun,
    engine_failure,
    raised_in_gate,
    run_program,
    stopped_run,
)

EXEC_SCRIPT = Path(__file__).resolve().with_name("python_exec.py")
PROGRAM_ERROR_TAG = "BLUEPRINT_PROGRAM_ERROR "
NO_SDK_TAG = "BLUEPRINT_NO_PULUMI_SDK:"
# A component's refusal of its arguments (integration_blueprint.components.validation), by the name
# the program's process reports it under.
REFUSAL = "ComponentArgumentError"
# Where python_exec.py writes the program interpreter's import path (for its own provider SDKs).
SEARCH_PATH_VARIABLE = "BLUEPRINT_SEARCH_PATH_FILE"


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
    search_path_file.touch()  # the one file of the run's folder the program's sandbox may write
    env[SEARCH_PATH_VARIABLE] = str(search_path_file)
    engine.sdk_search_path = _reader(search_path_file)
    reads = [*program_walls.python_paths(interpreter[0], env), EXEC_SCRIPT, EXEC_SCRIPT.with_name("private_channel.py"),
             *program_walls.tool_folders()]
    try:
        done = run_program(engine, argv, cwd=program_dir, env=env, timeout=timeout, project_dir=program_dir,
                           read_only=reads, writable_files=[search_path_file])
    except FileNotFoundError:
        return ProgramFailure(f"the program's interpreter {interpreter[0]} does not exist")
    stopped = stopped_run(engine, done, timeout)
    if stopped is not None:
        return stopped
    engine.program_stdout, engine.program_stderr = done.stdout, done.stderr
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


def _failure(engine: OfflineEngine, done: ProgramRun) -> ProgramFailure:
    ours = engine_failure(engine)
    if ours is not None:
        return ours
    for message in engine.errors():
        if message.startswith(PROGRAM_ERROR_TAG):
            detail = json.loads(message[len(PROGRAM_ERROR_TAG):])
            shim = raised_in_gate(detail.get("traceback", ""))
            if shim:
                return _shim_failure(f"{detail['type']}: {detail['message']}", shim, detail["traceback"])
            if detail["type"] == REFUSAL and detail["file"]:
                # Every refusal of the call, each at the line of the key it names.
                (first, line), *others = refusals_at_keys(detail["message"], detail["file"], detail["line"])
                return ProgramFailure(f"{REFUSAL}: {first}", file=detail["file"], line=line, raised=True,
                                      also=tuple(f"{REFUSAL}: {text} (at {detail['file']}:{at})" for text, at in others))
            message, file, line = f"{detail['type']}: {detail['message']}", detail["file"], detail["line"]
            declared = DECLARED_AT.search(message)
            if declared and not file:
                # The engine refused a registration (an archive it could not read, a transform that failed):
                # the SDK raises it with no frame of the program's; the engine saw where it was declared.
                message, file, line = DECLARED_AT.sub("", message, count=1), declared["file"], int(declared["line"])
            return ProgramFailure(message, file=file, line=line, module=detail.get("module", ""), raised=True)
    if NO_SDK_TAG in done.stderr:
        return ProgramFailure("the Pulumi SDK is not installed in the program's interpreter", module="pulumi")
    errors = engine.errors()
    if errors:
        return ProgramFailure("\n".join(errors))
    tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-20:])
    shim = raised_in_gate(done.stderr)
    if shim:  # the shim failed before the program could report anything (an import of its own)
        return _shim_failure(f"the program's process exited with code {done.returncode}", shim, tail)
    return ProgramFailure(f"the program exited with code {done.returncode}:\n{tail}")


def _shim_failure(message: str, file: str, traceback_text: str) -> ProgramFailure:
    """A failure raised in the gate's own code inside the program's process (python_exec.py or a
    module it imports): the gate's, named, with its traceback; `pulumi preview` would not fail so."""
    return ProgramFailure(f"{message}\n{traceback_text.strip()}",
                          tool_part=f"the Python language host's shim ({Path(file).name})")


@dataclass(frozen=True)
class PythonHost:
    """pulumi-language-python for one program (language_host.LanguageHost)."""
    interpreter: list[str]
    program_dir: Path
    main: Path
    config: dict[str, str]
    secret_keys: list[str]
    environ: dict[str, str]

    def run(self, engine: OfflineEngine, *, locate: bool, timeout: float) -> Optional[ProgramFailure]:
        return run_python_program(engine, interpreter=self.interpreter, program_dir=self.program_dir, main=self.main,
                                  config=self.config, secret_keys=self.secret_keys, environ=self.environ,
                                  locate_raise=locate, timeout=timeout)

    def worth_locating(self, failure: ProgramFailure) -> bool:
        # The program's error lost its traceback (an `apply` callback's, re-raised by the SDK): a run
        # with its own frames traced finds the line.
        return not failure.file and failure.raised and not failure.gate_part

    def located(self, failure: ProgramFailure, again: Optional[ProgramFailure]) -> ProgramFailure:
        return again if again is not None and again.file and again.message == failure.message else failure
