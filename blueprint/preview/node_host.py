"""Start a Pulumi Node.js program (TypeScript or JavaScript) as the Node.js language host does
(pulumi/pulumi: sdk/nodejs/cmd/pulumi-language-nodejs/main.go Run, execRuntime,
constructArguments, constructConfig; sdk/nodejs/cmd/run/{index,run}.ts):

- `node` from PATH runs the program's own `@pulumi/pulumi/cmd/run`, resolved from the program's
  folder as Node resolves it (node_modules there or in a folder above);
- its command line: --monitor, --engine, --organization, --project, --root-directory, --stack,
  --pwd, --dry-run, --parallel, then the entry point (`main:` of Pulumi.yaml, or `.`: the SDK then
  reads package.json's `exports`/`main`, else index.ts/index.js);
- its environment: PULUMI_CONFIG with keys in the `ns:config:name` form the host still passes,
  PULUMI_CONFIG_SECRET_KEYS, PULUMI_NODEJS_TYPESCRIPT (runtime.options.typescript, default true:
  the SDK registers ts-node, which maps stack traces to the .ts lines) and
  PULUMI_NODEJS_TSCONFIG_PATH (runtime.options.tsconfig); runtime.options.nodeargs go before the
  run entry.

Where we differ: the host also serves a monitor proxy and a `--sync` pipe folder for synchronous
invokes; the SDK talks to our engine directly, and SDKs of this generation no longer use the pipes.
And two things Node.js honours make a preview quicker without changing what it shows (docs/performance.md
has the figures):

- a first run records no stack frames in errors (`--stack-trace-limit=0`). The SDK keeps
  `new Error().stack` on the promise of every output of every resource (runtime/debuggable.js, read
  only by its promise-leak report) and ts-node's source-map support maps every frame of it: a third
  of the program's CPU for 100 resources. Resource source positions do not depend on it (the SDK
  lifts the limit itself, resource.ts Resource.callsites). A run that failed is run again at Node's
  own depth (`full_stacks`), so its error and stack are those `pulumi preview` shows (a run with
  frames inspects errors without colour, node_plain_errors.js says why). A limit the
  team set (nodeargs, NODE_OPTIONS) is left alone;
- NODE_COMPILE_CACHE, unless set: Node.js >= 22.1 keeps the V8 code it compiled for the SDK's
  modules in the user's cache folder and reuses it while a file's content (and Node's version and
  flags) are unchanged; older Node.js ignores the variable.

The SDK reports a failed program through the Engine's Log (`Running program ... failed with an
unhandled exception:` and the error's stack, or ts-node's `file.ts(line,col): error TSxxxx`, one
per diagnostic of the one file it stopped at), and a failed registration once per resource;
`program_failure` reads every one of them back to the program's own file and line: each TypeScript
diagnostic (every file's, checked again by ts_diagnostics.js as ts-node checks one), and each component the
plugin refused at the line the engine recorded for its registration (`(declared at ...)`), so a
refusal needs no second run to be located. Node's own rendering of an error object (`<ref *1>`,
its properties after the stack) is left out. An error thrown in the gate's own preload
(node_token.js: its innermost frame in our files) is the gate's failure, never the program's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

from integration_blueprint.preview import process_tree, program_walls
from integration_blueprint.preview.argument_lines import refusals_at_keys
from integration_blueprint.preview.engine import OfflineEngine
from integration_blueprint.preview.language_host import (
    PROGRAM_TIMEOUT_SECONDS,
    ProgramFailure,
    engine_failure,
    is_gate_file,
    run_program,
    stopped_run,
)
from integration_blueprint.preview.project import ProgramError, is_missing_config

RUN_ENTRY = "@pulumi/pulumi/cmd/run"
# Every file's type-check diagnostics, when a run stopped at the first file's (with_every_diagnostic).
TS_DIAGNOSTICS = Path(__file__).resolve().with_name("ts_diagnostics.js")
TYPE_CHECK_TIMEOUT_SECONDS = 300
TYPESCRIPT_PREFIX = "TypeScript "
# Preloaded into the program: its calls to the engine carry the run's token (private_channel.py).
TOKEN_PRELOAD = Path(__file__).resolve().with_name("node_token.js")
# Preloaded into every run whose errors carry frames: errors are inspected without colour, which on
# some Node.js releases never ends (the file says why).
PLAIN_ERRORS_PRELOAD = Path(__file__).resolve().with_name("node_plain_errors.js")
# What the preload prints when it fails (the tool's failure, not the program's), then a JSON string.
TOOL_FAILURE_TAG = "BLUEPRINT_TOOL_FAILURE "
# V8 records no frames in an Error's stack: a first run's, for speed (see above).
NO_STACK_FRAMES = "--stack-trace-limit=0"
# Where `pulumi package add` generates a package's local SDK, in the project folder.
LOCAL_SDKS = "sdks"
# `node -e require.resolve(...)` takes a Node start-up; a stuck one is not waited for.
RESOLVE_TIMEOUT_SECONDS = 60
INSTALL_HINT = "install the program's dependencies: run `npm ci` (or `npm install`, `yarn install`, " \
               "`pnpm install`) in {folder}"

# A package the program imports that Node did not find (not a relative path: that is the program's own).
_MISSING_PACKAGE = re.compile(r"Cannot find module '(?P<package>[^./'][^']*)'")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# ts-node lists every diagnostic: `file.ts(line,col): error TSnnnn: message`, a chained message's
# further lines indented under it.
_TS_ERROR = re.compile(r"^(?P<file>[^\s(][^(\n]*?)\((?P<line>\d+),(?P<column>\d+)\): "
                       r"(?P<message>error TS\d+: .*(?:\n {2,}(?!at ).+)*)$", re.MULTILINE)
# The SDK's words for a registration the engine refused, and where the engine saw it declared.
_REGISTRATION_REFUSED = re.compile(r"^Error: failed to register new resource \S+ \[[^\]]+\]: \d+ \w+: ")
_DECLARED = re.compile(r" \(declared at (?P<file>/[^\n]+?):(?P<line>\d+)\)")
# util.inspect of an Error: `<ref *1> Error: ...` (`[Error: ...]` when it has no stack) and, after
# its stack, its own properties in braces (`promise: Promise { <rejected> [Circular *1] }`).
_INSPECT_REF = re.compile(r"^<ref \*\d+> ", re.MULTILINE)
# A message of several lines (every refusal of a component call, a line each) is bracketed whole.
_INSPECT_BRACKETS = re.compile(r"^\[(?P<error>.*?)\](?= \{\n)", re.DOTALL)
_INSPECT_PROPERTIES = re.compile(r" \{\n(?: {2}\S.*\n)*\}$")
_FRAME = re.compile(r"^\s*at (?:.* \()?(?P<file>(?:file://)?/[^():]+):(?P<line>\d+):(?P<column>\d+)\)?$",
                    re.MULTILINE)
_STACK_LINE = re.compile(r"^\s{2,}at \S")  # a V8 stack frame: `    at fn (file:line:col)`, `    at node:internal/...`
_UNHANDLED = re.compile(r"^Running program '[^']*' failed with an unhandled exception:\n", re.MULTILINE)


@dataclass(frozen=True)
class NodeOptions:
    """Pulumi.yaml's `runtime.options` for nodejs, as the host parses them (parseOptions)."""
    typescript: bool = True
    tsconfig: str = ""
    nodeargs: str = ""


def node_options(project: dict) -> NodeOptions:
    runtime = project.get("runtime")
    options = runtime.get("options") if isinstance(runtime, dict) else None
    options = options if isinstance(options, dict) else {}
    typescript, tsconfig, nodeargs = options.get("typescript", True), options.get("tsconfig", ""), \
        options.get("nodeargs", "")
    # The host's own messages for a mistyped option.
    if not isinstance(typescript, bool):
        raise ProgramError("Pulumi.yaml: typescript option must be a boolean")
    if not isinstance(tsconfig, str):
        raise ProgramError("Pulumi.yaml: tsconfigpath option must be a string")
    if not isinstance(nodeargs, str):
        raise ProgramError("Pulumi.yaml: nodeargs option must be a string")
    return NodeOptions(typescript=typescript, tsconfig=tsconfig, nodeargs=nodeargs)


def pwd_and_entry_point(project_dir: Path, project: dict) -> tuple[Path, str]:
    """The program's working directory and entry point, as the engine derives them from `main:`
    (pkg/engine/project.go getPwdMain): a folder is the working directory with entry `.`, a file
    is its folder and its name."""
    main = project.get("main")
    if not main:
        return project_dir, "."
    path = project_dir / str(main)
    if not path.exists():
        raise ProgramError(f"project 'main' could not be read: {path} does not exist")
    return (path, ".") if path.is_dir() else (path.parent, path.name)


def node_executable(environ: Mapping[str, str]) -> str:
    found = shutil.which("node", path=environ.get("PATH"))
    if found is None:
        raise ProgramError("could not find node on the $PATH: a Node.js program needs Node.js "
                           "(https://nodejs.org; the Pulumi SDK's package.json names the versions it supports), "
                           "then `npm ci` in the program's folder")
    return found


def locate_run_entry(node: str, pwd: Path, environ: Mapping[str, str]) -> str:
    """The program's own `@pulumi/pulumi/cmd/run`, resolved from its folder as the host's
    locateModule resolves it with `node -e require.resolve(...)`. The usual places (node_modules
    in the folder or one above it) are looked at first: a Node start-up less, half a second of a
    busy machine's wall clock; anything else (NODE_PATH, global folders) is left to Node."""
    for folder in (pwd, *pwd.parents):
        entry = folder / "node_modules" / RUN_ENTRY / "index.js"
        if entry.is_file():
            return str(entry.resolve())
    script = f"console.log(require.resolve({json.dumps(RUN_ENTRY)}))"
    try:
        done = process_tree.run([node, "-e", script], cwd=pwd, env=dict(environ), text=True,
                                timeout=RESOLVE_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ProgramError(f"`node` did not start within {RESOLVE_TIMEOUT_SECONDS} s") from None
    if done.returncode != 0:
        if "MODULE_NOT_FOUND" in done.stderr or "Cannot find module" in done.stderr:
            raise ProgramError(f"the Pulumi SDK (@pulumi/pulumi) is not installed for the program in {pwd}: "
                               + INSTALL_HINT.format(folder=_package_folder(pwd)))
        raise ProgramError(f"`node` could not resolve {RUN_ENTRY} from {pwd}: {done.stderr.strip()[-2000:]}")
    return done.stdout.strip()


def _package_folder(pwd: Path) -> Path:
    """The folder of the program's package.json (where `npm ci` runs), else its own folder."""
    for folder in (pwd, *pwd.parents):
        if (folder / "package.json").is_file():
            return folder
    return pwd


def host_config(config: Mapping[str, str]) -> dict[str, str]:
    """PULUMI_CONFIG as the Node.js host passes it: `ns:key` becomes `ns:config:key` (the SDK
    reads both forms)."""
    transformed = {}
    for key, value in config.items():
        namespace, _, name = key.partition(":")
        transformed[f"{namespace}:config:{name}" if name else key] = value
    return transformed


def compile_cache_folder(environ: Mapping[str, str]) -> Optional[Path]:
    """Where Node.js >= 22.1 keeps its compile cache for our runs: the user's own cache folder
    (XDG's), not a shared temporary one whose code another user could have put there; None
    without a home folder."""
    home = environ.get("HOME")
    cache = environ.get("XDG_CACHE_HOME") or (str(Path(home) / ".cache") if home else "")
    return Path(cache) / "integration-blueprint" / "node-compile-cache" if cache else None


def run_node_program(engine: OfflineEngine, *, project_dir: Path, project: dict, config: dict[str, str],
                     secret_keys: list[str], environ: Optional[Mapping[str, str]] = None,
                     full_stacks: bool = False, timeout: float = PROGRAM_TIMEOUT_SECONDS) -> Optional[ProgramFailure]:
    """Run the program to its end against `engine`; None when it succeeded. A ProgramError when
    it cannot start (no node, dependencies not installed). Errors carry no stack frames unless
    `full_stacks` (see the module's docstring)."""
    env = dict(os.environ if environ is None else environ)
    options = node_options(project)
    pwd, entry_point = pwd_and_entry_point(project_dir, project)
    node = node_executable(env)
    run_entry = locate_run_entry(node, pwd, env)
    own_limit = "--stack-trace-limit" in f"{options.nodeargs} {env.get('NODE_OPTIONS', '')}"
    quick = [] if full_stacks or own_limit else [NO_STACK_FRAMES]
    preloads = [TOKEN_PRELOAD, *([] if quick else [PLAIN_ERRORS_PRELOAD])]
    argv = [node, *(part for preload in preloads for part in ("--require", str(preload))), *quick,
            *shlex.split(options.nodeargs), run_entry,
            "--monitor", engine.address, "--engine", engine.address, "--organization", engine.organization,
            "--project", engine.project, "--root-directory", str(project_dir), "--stack", engine.stack,
            "--pwd", str(pwd), "--dry-run", "--parallel", "16", entry_point]
    env.update(PULUMI_CONFIG=json.dumps(host_config(config)), PULUMI_CONFIG_SECRET_KEYS=json.dumps(secret_keys),
               BLUEPRINT_PULUMI_SDK=str(Path(run_entry).parents[2]))
    compile_cache = compile_cache_folder(env)
    if compile_cache is not None:
        env.setdefault("NODE_COMPILE_CACHE", str(compile_cache))
    if options.typescript:
        env["PULUMI_NODEJS_TYPESCRIPT"] = "true"
    if options.tsconfig:
        env["PULUMI_NODEJS_TSCONFIG_PATH"] = options.tsconfig
    # Inside the sandbox the compile cache is read-only (code one run left there must not run in the
    # next): Node.js reads it and writes nothing.
    reads = [*program_walls.node_paths(node, run_entry, pwd, env), *preloads,
             *([Path(env["NODE_COMPILE_CACHE"])] if env.get("NODE_COMPILE_CACHE") else [])]
    done = run_program(engine, argv, cwd=pwd, env=env, timeout=timeout, project_dir=project_dir, read_only=reads)
    stopped = stopped_run(engine, done, timeout)
    if stopped is not None:
        return stopped
    preload_failure = _tagged_preload_failure(done.stderr)
    if preload_failure is not None:
        return preload_failure
    engine.program_stdout, engine.program_stderr = done.stdout, done.stderr
    if done.returncode == 0 and not engine.failures:
        return None
    failure = program_failure(engine, done.returncode, done.stderr or done.stdout, program_dir=project_dir, cwd=pwd)
    if failure.file and failure.message.startswith(TYPESCRIPT_PREFIX):
        failure = with_every_diagnostic(failure, node=node, pwd=pwd, entry_point=entry_point,
                                        tsconfig=options.tsconfig, env=env)
    # Without frames only a TypeScript compile error, which names its line itself, has a file.
    if quick and not failure.file and not failure.gate_part and _frames_would_show(engine):
        return dataclasses.replace(failure, without_stacks=True)
    return failure


def _frames_would_show(engine: OfflineEngine) -> bool:
    """Whether a run with stack frames could show where the program failed: not when every error it
    logged is a missing config value (a RunError, which every SDK version logs as its message alone)."""
    errors = engine.errors()
    return not errors or not all(is_missing_config(message) for message in errors)


def _tagged_preload_failure(stderr: str) -> Optional[ProgramFailure]:
    """The token preload's own failure (node_token.js says so on stderr), before the program's first
    line: the gate's, never the program's."""
    for line in stderr.splitlines():
        if line.startswith(TOOL_FAILURE_TAG):
            return ProgramFailure(json.loads(line[len(TOOL_FAILURE_TAG):]) + "\n(this is a bug in blueprint, not in "
                                  "your program; please report it with this message)",
                                  tool_part="the Node.js language host's preload (node_token.js)")
    return None


def program_failure(engine: OfflineEngine, returncode: int, output: str, *, program_dir: Path,
                    cwd: Path) -> ProgramFailure:
    ours = engine_failure(engine)
    if ours is not None:
        return ours
    errors = [_ANSI.sub("", message) for message in engine.errors()]
    if not errors:  # what the SDK printed instead (an entry point it could not find, a crash)
        tagged = _tagged_preload_failure(output)
        if tagged is not None:  # the preload said it failed, before the program's first line
            return tagged
        tail = "\n".join(_ANSI.sub("", output).strip().splitlines()[-20:])
        preload = _raised_in_gate(_ANSI.sub("", output))
        if preload:  # the gate's preload failed before the SDK could report anything
            return _preload_failure(f"the program's process exited with code {returncode}:\n{tail}", preload)
        return ProgramFailure(f"the program exited with code {returncode}:\n{tail}")
    found: list[ProgramFailure] = []
    for message in errors:
        found += [failure for failure in _located(message, program_dir, cwd) if failure not in found]
    # Registrations fail in whatever order the SDK sent them: shown in the program's order.
    located = sorted((f for f in found if f.file), key=lambda f: (f.file, f.line))
    failure, others = (located + [f for f in found if not f.file])[0], located[1:]
    missing = _MISSING_PACKAGE.search(failure.message)
    if missing:
        hint = INSTALL_HINT.format(folder=_package_folder(cwd))
        failure = dataclasses.replace(failure, message=f"{failure.message}\n{missing['package']} is not installed: {hint}")
    if failure.file:
        return dataclasses.replace(failure, also=tuple(f"{f.message} (at {f.file}:{f.line})" for f in others
                                                        if f != failure))
    return failure


def _located(message: str, program_dir: Path, cwd: Path) -> list[ProgramFailure]:
    """The SDK's logged error as messages, each at the program's own file and line: every
    TypeScript diagnostic (ts-node names a file relative to the working directory), a refused
    registration where the engine saw it declared, else the program's innermost frame."""
    diagnostics = _diagnostics(message, cwd)
    if diagnostics:
        return diagnostics
    body = _without_inspection(_UNHANDLED.sub("", message, count=1))
    preload = _raised_in_gate(body)
    if preload:
        return [_preload_failure(body, preload)]
    declared = _DECLARED.search(body)
    if declared and _REGISTRATION_REFUSED.match(body) and _is_program_file(declared["file"], program_dir):
        refusal = _without_stack(_DECLARED.sub("", _REGISTRATION_REFUSED.sub("", body, count=1), count=1))
        # `<type> '<name>' could not be constructed: ` and every refusal of the call, a line each
        head, _, refusals = refusal.partition(": ")
        return [ProgramFailure(f"{head}: {text}", file=declared["file"], line=at)
                for text, at in refusals_at_keys(refusals, declared["file"], int(declared["line"]))]
    return [_at_innermost_frame(body, program_dir)]


def _raised_in_gate(text: str) -> str:
    """The gate's own file (node_token.js) an error was thrown in, its innermost V8 frame, else ""."""
    innermost = _FRAME.search(text)
    file = innermost["file"].removeprefix("file://") if innermost else ""
    return file if is_gate_file(file) else ""


def _preload_failure(text: str, file: str) -> ProgramFailure:
    """An error thrown by the gate's own code preloaded into the program (node_token.js): the gate's,
    named, with its stack; `pulumi preview` runs no such code."""
    return ProgramFailure(text.strip(), tool_part=f"the Node.js language host's preload ({Path(file).name})")


def _diagnostics(output: str, cwd: Path) -> list[ProgramFailure]:
    """Each TypeScript diagnostic in ts-node's (or tsc's) words, at its file (relative to `cwd`) and line."""
    diagnostics = []
    for compile_error in _TS_ERROR.finditer(output):
        path = Path(compile_error["file"].strip())
        path = path if path.is_absolute() else cwd / path
        text = " ".join(line.strip() for line in compile_error["message"].splitlines())
        diagnostics.append(ProgramFailure(f"{TYPESCRIPT_PREFIX}{text}", file=str(path.resolve()),
                                          line=int(compile_error["line"])))
    return diagnostics


def _entry_file(pwd: Path, entry_point: str) -> Optional[Path]:
    """The program's entry file as the SDK's run finds it: `main:` of Pulumi.yaml, else package.json's
    `main`, else index.ts (what the type check starts from)."""
    if entry_point == ".":
        try:
            main = json.loads((pwd / "package.json").read_text()).get("main")
        except (OSError, ValueError, AttributeError):
            main = None
        entry_point = main if isinstance(main, str) else "index.ts"
    path = pwd / entry_point
    path = path / "index.ts" if path.is_dir() else path
    return path if path.is_file() and path.suffix in (".ts", ".tsx") else None


def with_every_diagnostic(failure: ProgramFailure, *, node: str, pwd: Path, entry_point: str, tsconfig: str,
                          env: Mapping[str, str]) -> ProgramFailure:
    """A type-check failure with every file's diagnostics: ts-node stops at the first file with an
    error, so the files its entry reaches are checked again at once (ts_diagnostics.js), as `tsc` does."""
    config = pwd / (tsconfig or "tsconfig.json")
    entry = _entry_file(pwd, entry_point)
    if not config.is_file():
        return failure
    roots = sorted({failure.file} | ({str(entry)} if entry else set()))
    try:
        done = process_tree.run([node, str(TS_DIAGNOSTICS), str(config), *roots], cwd=pwd, env=dict(env),
                                text=True, timeout=TYPE_CHECK_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return failure
    if done.returncode != 0:  # no compiler to be found: the run's own diagnostics stand
        return failure
    found = [failure, *_diagnostics(done.stdout, pwd)]
    first, *others = sorted({(f.file, f.line, f.message): f for f in found}.values(), key=lambda f: (f.file, f.line))
    return dataclasses.replace(first, also=tuple(f"{f.message} (at {f.file}:{f.line})" for f in others))


def _without_inspection(message: str) -> str:
    """An error as its message and stack, without what util.inspect adds around them."""
    unwrapped = _INSPECT_BRACKETS.sub(lambda found: found["error"], _INSPECT_REF.sub("", message.rstrip()), count=1)
    return _INSPECT_PROPERTIES.sub("", unwrapped)


def _at_innermost_frame(body: str, program_dir: Path) -> ProgramFailure:
    for frame in _FRAME.finditer(body):
        file = frame["file"].removeprefix("file://")
        if _is_program_file(file, program_dir):
            return ProgramFailure(_without_stack(body), file=file, line=int(frame["line"]))
    return ProgramFailure(_without_stack(body))


def _is_program_file(path: str, program_dir: Path) -> bool:
    """The program's own code: in its folder, not an installed package (node_modules) nor a
    package SDK that `pulumi package add` generated (sdks/<package>), whose constructor is where a
    component's refusal surfaces but not where the user can act."""
    if not path.startswith(str(program_dir) + os.sep):
        return False
    relative = Path(path).relative_to(program_dir).parts
    return "node_modules" not in relative and relative[0] != LOCAL_SDKS


def _without_stack(message: str) -> str:
    """The error's own lines, without the `at ...` frames under them (the location is given apart)."""
    kept = [line for line in message.splitlines() if not _STACK_LINE.match(line)]
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept).strip()


@dataclass(frozen=True)
class NodeHost:
    """pulumi-language-nodejs for one program (language_host.LanguageHost)."""
    project_dir: Path
    project: dict
    config: dict[str, str]
    secret_keys: list[str]

    def run(self, engine: OfflineEngine, *, locate: bool, timeout: float) -> Optional[ProgramFailure]:
        return run_node_program(engine, project_dir=self.project_dir, project=self.project, config=self.config,
                                secret_keys=self.secret_keys, full_stacks=locate, timeout=timeout)

    def worth_locating(self, failure: ProgramFailure) -> bool:
        # A run without stack frames (quicker, see the module's docstring): a run at Node's own depth
        # shows the failure with the program's file and line.
        return failure.without_stacks

    def located(self, failure: ProgramFailure, again: Optional[ProgramFailure]) -> ProgramFailure:
        # A locating run the gate's walls stopped says nothing of the program's error: the first run's
        # stands (language_host.LOCATE_EXTRA_SECONDS says which runs never end).
        return failure if again is None or again.stopped else again
