"""Run a Pulumi Python program against an engine: the offline preview's counterpart of the Python
language host's `pulumi-language-python-exec`, with the same command line and environment
(PULUMI_CONFIG, PULUMI_CONFIG_SECRET_KEYS), run by the program's own interpreter.

This file is executed as a script by that interpreter, which may be any virtualenv with the
Pulumi SDK: it imports nothing but the standard library, `pulumi` (and its grpc) and its sibling
private_channel.py, which gives it the engine's token: every call to the engine carries it (what it loads
beyond the SDK gives way to the program's own modules of the same name). On failure it logs the
error to the engine, as the language host does, and adds where in the program's own code it was
raised (the innermost frame in the program's folder, also inside an `apply` callback), so the
report points where the user can act.
"""

import argparse
import asyncio
import atexit
import concurrent.futures
import contextlib
import gc
import importlib.machinery
import inspect
import json
import logging
import os
import runpy
import signal
import sys
import traceback

# The exit code that tells the engine an error was already shown to the user.
SHOWN_TO_USER = 32
# This package's namespace, which a program's interpreter may have installed (DESIGN.md, Layout).
TOOL_NAMESPACE = "integration_blueprint"


_INSTALLED = (os.sep + "site-packages" + os.sep, os.sep + "venv" + os.sep, os.sep + ".venv" + os.sep)


def _is_program_file(path, program_dir):
    """A file of the program's own folder, not of a virtualenv kept inside it."""
    return path.startswith(program_dir + os.sep) and not any(part in path for part in _INSTALLED)


def _program_frame(exc, program_dir):
    """(file, line) of the innermost traceback frame in the program's own files, or None."""
    found = None
    for link in _chain(exc):
        for frame in traceback.extract_tb(link.__traceback__):
            path = os.path.abspath(frame.filename)
            if _is_program_file(path, program_dir):
                found = (path, frame.lineno)
        if found:
            return found
    return None


def _chain(exc):
    """An exception and the ones it was raised from or while handling, each once: a chain can loop
    (an SDK that re-raises a future's exception while handling that same exception)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


class InlineExecutor(concurrent.futures.ThreadPoolExecutor):
    """The event loop's default executor: a submitted call runs at once on the loop's thread, until
    the program serves callbacks.

    The SDK hands each engine call (RegisterResource, Invoke, ...) to `run_in_executor`; the
    language host gives it a pool of parallel*4 threads, so resources reach the engine in whatever
    order the threads run. The offline engine answers each call at once, so running them inline
    costs no concurrency, and resources register in the order the program's tasks reach them:
    the same on every run, so two previews of one program compare line by line.

    A program with transforms serves them on its own Callbacks service, on this event loop, and the
    engine calls it while it answers a RegisterResource: that call must not hold the loop, so from
    then on calls go to the pool's threads, as under the language host."""

    def __init__(self, parallel):
        super().__init__(max_workers=max(parallel, 1) * 4)  # threads start at the first pooled call

    def submit(self, fn, /, *args, **kwargs):
        if _serves_callbacks():
            return super().submit(fn, *args, **kwargs)
        future: concurrent.futures.Future = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - the caller awaits the future and sees it
            future.set_exception(exc)
        return future


def _serves_callbacks():
    """Whether the program started a Callbacks service: the SDK lists each it starts in the class
    attribute `pulumi.runtime._callbacks._CallbackServicer._servicers` (every SDK with transforms,
    since 3.110; a read, never a change). The runtime settings' `callbacks` is no signal: it is a
    context variable, set in the context of whichever task first needed the service."""
    module = sys.modules.get("pulumi.runtime._callbacks")
    servicer = getattr(module, "_CallbackServicer", None)
    return bool(getattr(servicer, "_servicers", None))


class RaiseLocator:
    """Where each exception was first raised in the program's own code, for a run whose error lost
    its traceback (the SDK re-raises an `apply` callback's error from a future that no longer holds
    the callback's frames). Only the program's frames are traced; the host runs a failed program
    again with this on, so a run that succeeds pays nothing for it."""

    def __init__(self, program_dir):
        self.program_dir = program_dir
        self.raised = {}

    def global_trace(self, frame, event, arg):
        if event == "call" and _is_program_file(os.path.abspath(frame.f_code.co_filename), self.program_dir):
            return self.local_trace
        return None

    def local_trace(self, frame, event, arg):
        if event == "exception":
            self.raised.setdefault(id(arg[1]), (os.path.abspath(frame.f_code.co_filename), frame.f_lineno))
        return self.local_trace

    def where(self, exc):
        for link in _chain(exc):
            if id(link) in self.raised:
                return self.raised[id(link)]
        return None


def _registered_patches(*names):
    """The registered patches named by (module of integration_blueprint.preview, its attribute that
    names the patch) applied, when the program's interpreter has integration_blueprint (each speed
    patch skipped outside the versions it was verified on); otherwise, or with a version of the
    package from before a patch, nothing: the program runs as it always does."""
    try:
        from integration_blueprint.core import patches

        found = [getattr(importlib.import_module(f"integration_blueprint.preview.{module}"), attribute)
                 for module, attribute in names]
    except (ImportError, AttributeError):
        return contextlib.nullcontext()
    return patches.applied(found)


def _engine_stubs(monitor, engine):
    """The monitor and engine stubs, each call carrying the run's token handed over by the preview
    (the addresses themselves when started without one: the SDK then dials them as given)."""
    import private_channel  # this script's folder is first on sys.path; it imports grpc, which the SDK brings

    run = private_channel.handed_over()
    if run is None:
        return monitor, engine
    import grpc
    from pulumi.runtime import settings
    from pulumi.runtime.proto import engine_pb2_grpc, resource_pb2_grpc

    options = getattr(settings, "_GRPC_CHANNEL_OPTIONS", None)

    def channel(address):
        return private_channel.with_token(grpc.insecure_channel(address, options=options), run["engine_token"])
    return resource_pb2_grpc.ResourceMonitorStub(channel(monitor)), engine_pb2_grpc.EngineStub(channel(engine))


def _report_pending_on_sigterm():
    """When the preview stops the program (its --timeout), print every resource the program
    declared, so the preview can name those that never registered (an input that never resolved)."""
    import gc

    import pulumi

    def report(signum, frame):
        declared = [[getattr(r, "_type", ""), getattr(r, "_name", "")] for r in gc.get_objects()
                    if isinstance(r, pulumi.Resource)]
        sys.stderr.write("BLUEPRINT_PENDING " + json.dumps(declared) + "\n")
        sys.stderr.flush()
        os._exit(SHOWN_TO_USER)
    signal.signal(signal.SIGTERM, report)


def _program_names_first(loaded_with_sdk, program):
    """Every module this script loaded beyond what the SDK loads (private_channel.py and the
    `secrets` it imports, the speed patches' `importlib.metadata` and its `csv` and `zipfile`, ...) is
    forgotten where the program's own import path finds another module of its name: a program that
    ships `secrets.py` imports its own, as under `pulumi-language-python-exec`, which loads nothing
    but the SDK first. The tool's code keeps the modules it bound. A package the SDK loaded stays,
    whatever submodules of it the script loaded besides (grpc's interceptors): under the language
    host too, a program's `import grpc` is the SDK's grpc, whatever grpc.py the program ships. This
    script's own folder leaves the import path, so none of the preview's modules is importable by a
    bare name."""
    script_dir = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != script_dir]
    search = [program if os.path.isdir(program) else os.path.dirname(program), *sys.path]
    for name in sorted({module.partition(".")[0] for module in set(sys.modules) - loaded_with_sdk} - loaded_with_sdk):
        ours = getattr(sys.modules.get(name), "__spec__", None)
        theirs = importlib.machinery.PathFinder.find_spec(name, search)
        if theirs is not None and (ours is None or theirs.origin != ours.origin):
            for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
                del sys.modules[module]


def _tell_search_path():
    """Tell the engine where this interpreter finds its packages (the program's own provider SDKs,
    which declare what the engine answers), before the first engine call: a file the host named."""
    target = os.environ.pop("BLUEPRINT_SEARCH_PATH_FILE", "")
    if not target:
        return
    script_dir = os.path.dirname(os.path.abspath(__file__))
    with open(target, "w", encoding="utf-8") as out:
        json.dump([entry for entry in sys.path if entry and os.path.abspath(entry) != script_dir], out)


def _settings(pulumi, args, monitor, engine):
    """The SDK's runtime Settings from the command line, as pulumi-language-python-exec makes them
    (pulumi/pulumi sdk/python/cmd/pulumi-language-python-exec, `__main__`): an older SDK in the
    program's virtualenv does not know the newer parameters (pulumi 3.80 has no `root_directory`),
    which are then left out."""
    wanted = {"monitor": monitor, "engine": engine, "project": args.project, "stack": args.stack,
              "parallel": int(args.parallel or 16), "dry_run": args.dry_run == "true",
              "organization": args.organization, "root_directory": args.root_directory}
    try:
        return pulumi.runtime.Settings(**wanted)
    except TypeError:
        accepted = inspect.signature(pulumi.runtime.Settings.__init__).parameters
        return pulumi.runtime.Settings(**{key: value for key, value in wanted.items() if key in accepted})


def main():
    # No garbage collection in this process, as in the in-process recording (recording.py
    # _collector_paused): the SDK's import (its modules, grpc's, protobuf's: about eighty passes,
    # 15-20 ms of CPU) and the program's run keep nearly everything they allocate until the process
    # ends, so collecting finds almost nothing, at a cost that grows with the program.
    gc.disable()
    parser = argparse.ArgumentParser(description="Execute a Pulumi Python program")
    for option in ("project", "root_directory", "stack", "parallel", "dry_run", "pwd", "monitor", "engine",
                   "tracing", "organization"):
        parser.add_argument(f"--{option}")
    parser.add_argument("PROGRAM")
    parser.add_argument("ARGS", nargs="*")
    args = parser.parse_args()

    # The SDK's parts a program's run need not execute (the Automation API, dynamic providers), loaded
    # when first read: applied before the SDK's import, which is then 0.1 s of CPU less. What those
    # parts import stays the SDK's: a program's module of the same name does not replace it, as under
    # pulumi-language-python-exec, which imports the whole SDK first.
    sdk_parts = _registered_patches(("program_speed", "SDK_PARTS_PATCH"))
    sdk_parts.__enter__()
    try:
        import pulumi
        import pulumi.runtime
    except ImportError as exc:
        print(f"BLUEPRINT_NO_PULUMI_SDK: {exc}", file=sys.stderr)
        sys.exit(SHOWN_TO_USER)
    # The tool's own namespace, loaded for the patch above, is not the SDK's (what it loaded besides,
    # the SDK imports itself: tests/test_program_modules.py).
    loaded_with_sdk = {name for name in sys.modules if name.partition(".")[0] != TOOL_NAMESPACE}

    _tell_search_path()
    if hasattr(pulumi.runtime, "get_config_secret_keys_env"):
        pulumi.runtime.set_all_config(pulumi.runtime.get_config_env(), pulumi.runtime.get_config_secret_keys_env())
    else:  # an older SDK in the program's virtualenv
        for key, value in pulumi.runtime.get_config_env().items():
            pulumi.runtime.set_config(key, value)
    monitor, engine = _engine_stubs(args.monitor, args.engine)
    _report_pending_on_sigterm()
    pulumi.runtime.configure(_settings(pulumi, args, monitor, engine))
    sys.argv = [args.PROGRAM] + args.ARGS
    if args.pwd:
        os.chdir(args.pwd)
    program_dir = os.path.abspath(args.root_directory or os.getcwd())
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.set_default_executor(InlineExecutor(int(args.parallel or 16)))
    locator = None
    if os.environ.get("BLUEPRINT_LOCATE_RAISE") == "1":
        locator = RaiseLocator(program_dir)
        sys.settrace(locator.global_trace)
    # asyncio complains about futures a failed program leaves unobserved; the language host
    # silences it the same way.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    exit_code = 1
    # The program's process pays only for what the offline engine reads: pulumi_aws's service packages
    # load only the modules the program uses, and the SDK's DEBUG messages, which the engine never
    # shows, are not sent.
    speed_patches = _registered_patches(("aws_imports", "PATCH_NAME"), ("program_speed", "DEBUG_LOGS_PATCH"))
    speed_patches.__enter__()
    _program_names_first(loaded_with_sdk, args.PROGRAM)
    try:
        def run_program() -> None:
            runpy.run_path(args.PROGRAM, run_name="__main__")

        loop.run_until_complete(pulumi.runtime.run_in_stack(run_program))
        exit_code = 0
    except pulumi.RunError as exc:
        pulumi.log.error(str(exc))
    except BaseException as exc:  # noqa: BLE001 - whatever the program raised is reported
        sys.settrace(None)
        where = _program_frame(exc, program_dir) or (locator.where(exc) if locator else None)
        if isinstance(exc, SyntaxError) and exc.filename:
            where = (os.path.abspath(exc.filename), exc.lineno or 0)
        detail = {"type": type(exc).__name__, "message": str(exc),
                  "file": where[0] if where else "", "line": where[1] if where else 0,
                  "traceback": "".join(traceback.format_exception(exc))}
        if isinstance(exc, ModuleNotFoundError):
            detail["module"] = exc.name or ""
        pulumi.log.error("BLUEPRINT_PROGRAM_ERROR " + json.dumps(detail))
        exit_code = SHOWN_TO_USER
    finally:
        speed_patches.__exit__(None, None, None)
        sdk_parts.__exit__(None, None, None)
        loop.close()
        sys.stdout.flush()
        sys.stderr.flush()
    # Every engine call has been answered and every message flushed: the interpreter's teardown
    # (freeing each module and object one by one, 0.35-0.4 s after the blueprint's prod program)
    # would change nothing the engine sees. Exit handlers the program registered still run.
    atexit._run_exitfuncs()
    os._exit(exit_code)


if __name__ == "__main__":
    main()
