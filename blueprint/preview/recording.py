"""Run a Pulumi program without the Pulumi CLI and record what it would deploy.

The program meets the engine's real gRPC interfaces (integration_blueprint.preview.engine): a
project folder runs in its own interpreter, started as the Python language host starts it
(python_host.py); a callable (the tests' and benchmarks' programs) runs in this process against
the same engine. Every resource is kept with its type, name, inputs (as the engine sends them to
an analyzer), parent, dependencies and property dependencies, which is exactly what the CLI hands
to a policy pack. Outputs are known and typed from the provider SDK's declarations (an update
preview of a deployed stack) or, with `unknowns`, left to the provider (a first `pulumi preview`).

One engine, two uses: `blueprint preview` sends the recording to the policy pack, and the local
sandbox realizes it in an AWS emulator. Tests of the components use it too.
"""

from __future__ import annotations

import gc
import time
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from integration_blueprint.preview import python_host, wire
from integration_blueprint.preview.engine import (
    DEFAULT_REGION,
    NotExpanded,
    OfflineEngine,
    RecordedResource,
)
from integration_blueprint.preview.interpreter import Interpreter, missing_module_hint, resolve_interpreter
from integration_blueprint.preview.language_host import (
    PROGRAM_TIMEOUT_SECONDS,
    LanguageHost,
    ProgramFailure,
    locating_timeout,
)
from integration_blueprint.preview.program_view import ProgramView
from integration_blueprint.preview.program_walls import sandbox_blame
from integration_blueprint.preview.project import (
    ProgramConfig,
    ProgramError,
    load_config,
    load_project,
    missing_config_hint,
    project_name_notes,
    shown,
    stack_config_path,
    stack_names,
)
from integration_blueprint.preview.provider.sdk import provenance
from integration_blueprint.preview.python_refusals import other_refusals
from integration_blueprint.preview.stack_references import StackReferences

__all__ = ["DEFAULT_REGION", "UNKNOWN", "NotExpanded", "ProgramError", "RecordedResource", "RecordedStack",
           "load_project", "load_stack_config", "record_program", "stack_config_path", "stack_names"]

# The language runtimes (Pulumi.yaml `runtime:`) whose programs the offline preview starts.
RUNTIMES = ("python", "nodejs")
# The exception our components raise for an argument they refuse (components.validation).
COMPONENT_REFUSAL = "ComponentArgumentError"
# The wire value Pulumi uses for "not known until apply" (pulumi.runtime.rpc.UNKNOWN).
UNKNOWN = wire.UNKNOWN


@dataclass
class RecordedStack:
    project: str
    stack: str
    program_dir: Optional[Path]
    config: dict[str, str]
    unknowns: bool
    resources: list[RecordedResource]
    not_expanded: list[NotExpanded] = field(default_factory=list)
    stack_outputs: dict = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)  # config keys whose `secure:` value is a placeholder
    environments: list[str] = field(default_factory=list)  # ESC imports of the stack, not resolved offline
    interpreter: str = ""  # the program's interpreter, and why it was chosen
    # More of how the preview ran (where each referenced stack was read from, a project name that
    # was a template placeholder), one line each.
    notes: list[str] = field(default_factory=list)
    unread_stack_references: list[str] = field(default_factory=list)  # referenced stacks whose outputs were unknown
    language: str = "python"  # Pulumi.yaml's runtime: the language the report writes code in
    # Why the program ran outside the sandbox (program_walls.not_contained_note); "" when it was contained.
    not_contained: str = ""
    # Where the gate reads a file the program wrote inside its sandbox (program_view); None: the host's.
    view: Optional[ProgramView] = None
    invented: list[str] = field(default_factory=list)  # lookups answered by invention (engine.invented)
    stdout: str = ""  # what the program printed
    stderr: str = ""

    def of_type(self, type_token: str) -> list[RecordedResource]:
        return [r for r in self.resources if r.type == type_token]

    def by_urn(self) -> dict[str, RecordedResource]:
        return {r.urn: r for r in self.resources}

    def children_of(self, urn: str) -> list[RecordedResource]:
        return [r for r in self.resources if r.parent == urn]

    def within(self, component_urns: set[str]) -> "RecordedStack":
        """Only the given components and everything under them."""
        parents = {r.urn: r.parent for r in self.resources}

        def inside(urn: str) -> bool:
            while urn:
                if urn in component_urns:
                    return True
                urn = parents.get(urn, "")
            return False

        kept = [r for r in self.resources if inside(r.urn)]
        return RecordedStack(self.project, self.stack, self.program_dir, self.config, self.unknowns, kept)

    def named(self, name: str) -> RecordedResource:
        matches = [r for r in self.resources if r.name == name]
        if len(matches) != 1:
            raise KeyError(f"{len(matches)} resources named {name!r}")
        return matches[0]


# ---- config ----------------------------------------------------------------------------------

def load_stack_config(program_dir: Path, stack: str) -> dict[str, str]:
    """The stack's config as the CLI passes it to a program (project.load_config's values)."""
    return load_config(program_dir, stack).values


# ---- running ---------------------------------------------------------------------------------

class _InlineExecutor(ThreadPoolExecutor):
    """The event loop's default executor while a program is recorded: a submitted call runs at
    once on the loop's thread.

    The SDK hands every monitor call (RegisterResource, Invoke, ...) to `run_in_executor` because a
    real engine answers over gRPC. The recording monitor answers in microseconds, so the hand-off
    to a worker thread cost more than the call (a third of the SDK's time per resource), and
    concurrent calls registered resources in whatever order the threads ran: resource order
    changed from run to run. Inline, registrations happen in the order the program's tasks reach
    them, the same every run. (A ThreadPoolExecutor subclass because set_default_executor accepts
    nothing else; it never starts a thread.)"""

    def submit(self, fn, /, *args, **kwargs):
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - the caller awaits the future and sees it
            future.set_exception(exc)
        return future


@contextmanager
def _collector_paused():
    """No garbage collection while a program is recorded; what it built goes to the oldest
    generation when the recording ends.

    The SDK allocates a few hundred container objects per resource (outputs, futures, closures)
    and keeps nearly all of them until the program ends (each registration's task holds its
    resource). Collecting them young found almost nothing to free: with the collector running
    every 50,000 objects, a 4,000-resource recording freed under 40,000 of 2 million and spent an
    eighth of its CPU scanning them, each twice (young, then middle-aged), more per object the
    larger the recording. Paused, nothing is scanned while recording; at the end gc.freeze() and
    gc.unfreeze() move every tracked object into the oldest generation without scanning it, where
    the next full collection looks at it once (garbage the recording made is freed then). When
    something else has frozen objects (a fork server keeping pages shared), unfreezing would
    release them too: then the young objects are collected as usual instead."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()


def _main_file(program_dir: Path, project: dict) -> Path:
    main = program_dir / (project.get("main") or ".")
    if main.is_dir():
        if not (main / "__main__.py").exists():
            raise ProgramError(f"{main} has no __main__.py; a Python Pulumi program needs one")
        return main
    if not main.exists():
        raise ProgramError(f"{main} (the project's `main`) does not exist")
    return main


def runtime_name(manifest: dict) -> str:
    """Pulumi.yaml's `runtime:`, written as a name or as `{name: ..., options: ...}`."""
    runtime = manifest.get("runtime")
    return str(runtime.get("name") if isinstance(runtime, dict) else runtime)


def _program_error(failure: ProgramFailure, interpreter: Optional[Interpreter],
                   config: ProgramConfig, engine: OfflineEngine,
                   references: Optional[StackReferences] = None) -> ProgramError:
    hint = None
    if references is not None and failure.message.startswith("KeyError: "):
        # require_output raises inside the SDK's apply, with no frame of the program's.
        hint = references.missing_output_hint(failure.message[len("KeyError: "):].strip("'\""))
    file, line = (failure.file, failure.line) if failure.file or hint is None else hint[1:]
    where = f" (at {file}:{line})" if file else ""
    message = (f"{failure.message}{where}" + "".join(f"\n{more}" for more in failure.also)
               + (f"\n{hint[0]}" if hint else ""))
    refused = bool(engine.refusals) or failure.message.startswith(f"{COMPONENT_REFUSAL}:")
    if refused and interpreter is not None and engine.program_dir is not None and file:
        # The program stopped at its first refusing call: its other calls, checked from their source.
        message += "".join(f"\n{text} (at {at}:{line_at})"
                           for text, at, line_at in other_refusals(engine.program_dir, (file, failure.line)))
    if failure.module and interpreter is not None:
        message += "\n" + missing_module_hint(failure.module, interpreter)
    config_hint = missing_config_hint(failure.message, config, engine.program_dir) if engine.program_dir else None
    if config_hint:
        message += "\n" + config_hint
    if config.environments and not failure.gate_part:
        message += (f"\nThe stack imports ESC environment {', '.join(config.environments)}, which an offline "
                    "preview cannot resolve: values it would set are unset (set them in the stack file to "
                    "preview offline)")
    error = ProgramError(message, file=file, line=line, refused=refused,
                         engine_fault=failure.engine_fault, tool_part=failure.gate_part,
                         secrets=tuple(engine.secret_values()),
                         stdout=engine.program_stdout, stderr=engine.program_stderr)
    error.not_contained = engine.not_contained  # the failed run's report says so too
    if not failure.gate_part:
        # A path the walls hid or kept read-only, that `pulumi preview` would have let through.
        blame = sandbox_blame(engine.seen, f"{failure.message}\n{engine.program_stderr}", engine.working_directory)
        if blame:
            error.sandbox = blame
            error.args = (f"{message}\n{blame}",)
    return error


def record_program(program: Union[Path, str, Callable[[], Any]], *, stack: str = "dev",
                   config: Optional[dict[str, str]] = None, project: Optional[str] = None,
                   unknowns: bool = False,
                   on_resource: Optional[Callable[[RecordedResource], None]] = None,
                   timeout: float = PROGRAM_TIMEOUT_SECONDS,
                   stack_references: Optional[Mapping[str, Path]] = None,
                   program_memory_mb: Optional[int] = None,
                   allow_read: Sequence[Path] = ()) -> RecordedStack:
    """Run `program` (a Pulumi project directory, or a callable that declares resources) and
    return every resource it registered (each also handed to `on_resource` as it registers). A
    program's process that has not ended after `timeout` seconds is stopped (a ProgramError).

    For a directory, the project name and stack config come from its Pulumi.yaml and stack file
    unless `config` is given; `stack_references` names the file of a referenced stack's outputs
    (stack_references.py says where else they are looked for); `allow_read`: paths the program's
    sandbox shows beyond its walls (blueprint preview --allow-read)."""
    if callable(program):
        return _record_callable(program, stack=stack, config=dict(config or {}), project=project or "blueprint",
                                unknowns=unknowns, on_resource=on_resource)
    program_dir = Path(program).resolve()
    manifest = load_project(program_dir)
    runtime = runtime_name(manifest)
    if runtime not in RUNTIMES:
        raise ProgramError(f"Pulumi.yaml: runtime {runtime!r} is not one the offline preview runs "
                           f"(it runs {' and '.join(RUNTIMES)} programs)")
    project = project or manifest["name"]
    program_config = load_config(program_dir, stack)
    if config is not None:
        program_config.values = dict(config)
    interpreter = resolve_interpreter(program_dir) if runtime == "python" else None
    main = _main_file(program_dir, manifest) if interpreter is not None else None
    region = program_config.values.get("aws:region") or program_config.region
    stack_file = (program_config.stack_file or stack_config_path(program_dir, stack))
    region_fix = (f"run `pulumi config set aws:region <region>` (it writes {shown(stack_file, program_dir)}) or set "
                  "AWS_REGION (or AWS_DEFAULT_REGION), as the AWS provider reads them")

    backend = manifest.get("backend")
    references = StackReferences(project=project, program_dir=program_dir, given=dict(stack_references or {}),
                                 backend_url=str(backend.get("url") or "") if isinstance(backend, dict) else "")

    host: LanguageHost
    if interpreter is not None and main is not None:
        host = python_host.PythonHost(interpreter.argv, program_dir, main, program_config.values,
                                      program_config.secret_keys, interpreter.environ())
    else:
        from integration_blueprint.preview import node_host  # a Node.js program's host: a Python preview never loads it

        host = node_host.NodeHost(program_dir, manifest, program_config.values, program_config.secret_keys)

    def run(locate: bool = False, timeout: float = timeout) -> tuple[OfflineEngine, Optional[ProgramFailure]]:
        engine = OfflineEngine(project=project, stack=stack, config=program_config.values,
                               secret_keys=program_config.secret_keys, region=region, region_fix=region_fix,
                               unknowns=unknowns, program_dir=program_dir,
                               on_resource=None if locate else on_resource, stack_references=references)
        engine.program_memory_mb = program_memory_mb
        engine.allow_read = tuple(Path(path) for path in allow_read)
        try:
            return engine, host.run(engine, locate=locate, timeout=timeout)
        except BaseException:  # an interrupted run (Ctrl-C, SIGTERM) ends the plugin and the engine too
            engine.close()
            raise

    started = time.monotonic()
    engine, failure = run()
    with engine:
        if failure is not None and host.worth_locating(failure):
            again, located = run(locate=True, timeout=locating_timeout(time.monotonic() - started, timeout))
            again.close()
            failure = host.located(failure, located)
        if failure is not None:
            raise _program_error(failure, interpreter, program_config, engine, references)
        return RecordedStack(project=project, stack=stack, program_dir=program_dir, config=program_config.values,
                             unknowns=unknowns, resources=list(engine.resources),
                             not_expanded=list(engine.not_expanded), stack_outputs=engine.stack_outputs,
                             secrets=list(program_config.secure_placeholders),
                             environments=list(program_config.environments),
                             interpreter=f"{interpreter.argv[0]} ({interpreter.chosen_by})" if interpreter else "",
                             language=runtime, invented=list(engine.invented), stdout=engine.program_stdout,
                             stderr=engine.program_stderr,
                             notes=[*engine.limit_notes, *project_name_notes(manifest), *_provider_notes(engine, interpreter),
                                    *references.notes(),
                                    *(f"resource hook {hook} asks to run on previews; the offline preview runs no "
                                      "hooks, so what it does was not checked"
                                      for hook in engine.callbacks.not_run_hooks())],
                             unread_stack_references=[entry.name for entry in references.unread()],
                             not_contained=engine.not_contained, view=engine.view)


def _provider_notes(engine: OfflineEngine, interpreter: Optional[Interpreter]) -> list[str]:
    """Which provider SDK (package and version) declared what a Python program's resources and data
    sources were answered with: the program's own, or blueprint's when it has none."""
    if interpreter is None or engine.sdk_search_path is None:
        return []
    packages = sorted({r.type.split(":")[0] for r in engine.resources if r.custom} - {"pulumi", "blueprint"})
    return [provenance(package, engine.sdk_search_path()) for package in packages]


def _record_callable(body: Callable[[], Any], *, stack: str, config: dict[str, str], project: str,
                     unknowns: bool, on_resource) -> RecordedStack:
    """A callable runs in this process, its SDK configured against the same engine services
    (called in-process: OfflineEngine.in_process_stubs); monitor calls run inline on the event
    loop (each waits for its answer anyway), so resources register in the program's order, the
    same every run."""
    # The SDK itself only here: a project folder's program imports it in its own process, and the
    # gate, which never does, is spared importing it (pulumi_protos.py).
    import pulumi
    from pulumi.runtime import settings as pulumi_settings
    from pulumi.runtime.config import set_all_config
    from pulumi.runtime.stack import run_in_stack
    from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

    with OfflineEngine(project=project, stack=stack, config=config, region=config.get("aws:region") or DEFAULT_REGION,
                       unknowns=unknowns, on_resource=on_resource) as engine:
        monitor, engine_stub = engine.in_process_stubs()
        pulumi_settings.ROOT.set(None)
        pulumi_settings.configure(pulumi_settings.Settings(
            project=project, stack=stack, parallel=16, engine=engine_stub, monitor=monitor, dry_run=True,
            organization="organization"))
        set_all_config(config)
        loop = _ensure_event_loop()
        previous_executor = getattr(loop, "_default_executor", None)
        loop.set_default_executor(_InlineExecutor())
        try:
            with _collector_paused():
                _sync_await(run_in_stack(body))
        except SyntaxError as exc:
            where = f" (at {exc.filename}:{exc.lineno})" if exc.filename else ""
            raise ProgramError(f"SyntaxError: {exc.msg}{where}") from None
        except pulumi.RunError as exc:
            raise ProgramError(str(exc)) from exc
        except ProgramError:
            raise
        except Exception as exc:
            raise ProgramError(f"{type(exc).__name__}: {exc}") from exc
        finally:
            loop._default_executor = previous_executor  # set_default_executor refuses None
            set_all_config({})
            pulumi_settings.reset_options()
        if engine.failures:
            raise ProgramError("the offline engine itself failed (a bug in blueprint):\n" + engine.failures[0])
        return RecordedStack(project=project, stack=stack, program_dir=None, config=config, unknowns=unknowns,
                             resources=list(engine.resources), not_expanded=list(engine.not_expanded),
                             stack_outputs=engine.stack_outputs, invented=list(engine.invented))
