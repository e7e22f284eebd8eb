"""The `blueprint` command. Each subcommand is one `add_<name>_command(subparsers)` function that
registers its arguments and the function that runs it; adding a subcommand is adding one such
function to COMMANDS.

Exit codes: 0 success, 1 the check failed (e.g. mandatory policy violations), 2 the command could
not run (bad program, config or policy pack, a missing optional extra, an unreadable AWS profile,
a patch refused outside its verified versions, nothing to drill); the error is printed, with the
fix, on one line without a traceback. Stopped by Ctrl-C: 130; by SIGTERM: 143 (128 + the signal),
one line, no traceback, after the command cleaned up what it started.
"""

from __future__ import annotations

# ruff: noqa: E402 - the collector is paused before the imports below and resumed after them
import gc

# What importing the commands' modules makes lives as long as the process (modules, classes,
# functions): the collector's passes while they load (about sixty for `blueprint preview`, 20 ms of
# its CPU) free nothing. Paused for them; once they are loaded (below) what they made is moved out
# of the collector's sight (gc.freeze: never scanned again) and the collector resumes.
_COLLECTING = gc.isenabled()
gc.disable()

import argparse
import json
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import Callable, Optional

from integration_blueprint import __version__, install_source
from integration_blueprint.core.patches import PatchRefused
from integration_blueprint.plugin import SchemaError
from integration_blueprint.preview.analyzer import DEFAULT_PACK_DIR, AnalyzerError
from integration_blueprint.preview.language_host import PROGRAM_MEMORY_MB, PROGRAM_TASKS, PROGRAM_TIMEOUT_SECONDS
from integration_blueprint.preview.policy_config import PolicyConfigError
from integration_blueprint.preview.recording import ProgramError
from integration_blueprint.preview.reports.formats import FORMATS
from integration_blueprint.preview.reports.text import printable, program_output_lines
from integration_blueprint.sandbox.errors import SandboxError

if _COLLECTING:
    gc.freeze()
    gc.enable()

# gRPC's own log lines (a GOAWAY when a channel closes under a call, about 1 run in 25) are no part
# of any report: every process the command starts (the program, the packs, the component plugin)
# inherits this, and the gRPC core of this one reads it when it first starts a channel or server.
# GRPC_VERBOSITY=DEBUG set by the user still applies (to debug the gate itself).
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

_PACKAGE_DIR = str(Path(__file__).resolve().parent)
DESCRIPTION = ("Offline policy preview, local sandbox drill and policy pack tools for the integration blueprint "
               "(no Pulumi CLI or AWS account needed).")


class MissingExtra(Exception):
    """An optional part of the package is not installed."""


# Failures the user can fix; anything else is a bug and keeps its traceback.
USER_ERRORS = (ProgramError, AnalyzerError, PolicyConfigError, SandboxError, MissingExtra, PatchRefused,
               SchemaError)


class Terminated(BaseException):
    """SIGTERM, raised where the command is, so its cleanup (finally blocks, context managers) runs
    as for Ctrl-C's KeyboardInterrupt. A BaseException: no `except Exception` may swallow it."""


def _command(subparsers, name: str, run: Callable[[argparse.Namespace], int], *, help: str,
             description: Optional[str] = None) -> argparse.ArgumentParser:
    """A subcommand (or a subcommand's action) whose arguments main() hands to `run`; its exit code
    is what `run` returns."""
    parser = subparsers.add_parser(name, help=help, description=description or help)
    parser.set_defaults(run=run)
    return parser


def _raise_terminated(signum: int, _frame) -> None:
    raise Terminated()


# A shell's exit status for a process ended by a signal: 128 + the signal's number.
EXIT_INTERRUPTED, EXIT_TERMINATED = 128 + signal.SIGINT, 128 + signal.SIGTERM


def _program_dir(args: argparse.Namespace, *, required: bool = True) -> Path:
    """--program, else the nearest project at or above the current directory, as `pulumi` finds it
    (with `required=False`, the current directory when there is none)."""
    from integration_blueprint.preview.project import find_project

    if args.program:
        return Path(args.program).resolve()
    try:
        return find_project(Path.cwd()).resolve()
    except ProgramError:
        if required:
            raise
        return Path.cwd().resolve()


def _run_preview(args: argparse.Namespace) -> int:
    """Every run leaves a report in the format asked for: one that could not judge the program (a
    refused component argument, a program error, a bad policy config, a failure of the tool
    itself) tells what failed, where and how to fix it, and exits 2. The error also goes to stderr
    (the job log)."""
    from integration_blueprint.preview.run import failed_preview, run_preview

    policy_config_path = Path(args.policy_config) if args.policy_config else None
    if args.policy_pack_config and not args.policy_config and len(args.policy_pack_config) == 1 \
            and len(args.policy_pack or []) <= 1:
        policy_config_path = Path(args.policy_pack_config[0])  # the one pack's config, for the reports
    output = "json" if args.json else args.format
    # SIGTERM unwinds like Ctrl-C: the program's, the pack's and the plugin's process groups are
    # ended on the way out (main turns it into exit 143).
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    said_on_stderr = False  # a failed run's text report is its error, already printed
    try:
        result = run_preview(_program_dir(args), stack=args.stack, unknowns=args.unknowns, strict=args.strict,
                             timeout=args.timeout, stack_references=dict(args.stack_reference or []),
                             packs=_pack_requests(args), program_memory_mb=args.program_memory,
                             allow_read=args.allow_read)
    except Exception as exc:  # noqa: BLE001 - a bug of the tool is reported too, as a tool error
        result = failed_preview(_program_dir(args, required=False), exc, stack=args.stack, unknowns=args.unknowns,
                                policy_config_path=policy_config_path, strict=args.strict)
        failure = result.failure
        assert failure is not None
        said = f"error: {result.masked(failure.message)}{_where(exc)}\n{failure.fix}".split("\n")
        if output == "text":  # the text report is the error, with what the program printed before it
            said += program_output_lines(result)
        print("\n".join(printable(line) for line in said), file=sys.stderr)
        said_on_stderr = output == "text"
    finally:
        signal.signal(signal.SIGTERM, previous)
    if not said_on_stderr:
        print(FORMATS[output](result))
    for format_name, path in args.report:  # this run's report in more formats (a failed run's too)
        Path(path).write_text(FORMATS[format_name](result) + "\n")
    return result.exit_code


def _pack_requests(args: argparse.Namespace) -> list:
    """Every --policy-pack with its --policy-pack-config, paired in order as the Pulumi CLI pairs them
    (pkg/cmd/pulumi/operations/up.go validatePolicyPackConfig): none, or one for every pack. No
    --policy-pack: the blueprint's own pack. --policy-config is the config of every pack without
    its own (default: the stack's <stackConfigDir>/policy.<stack>.json)."""
    from integration_blueprint.preview.run import PackRequest

    packs, configs = args.policy_pack or [], args.policy_pack_config or []
    if configs and not packs:
        raise PolicyConfigError('"--policy-pack-config" must be specified with "--policy-pack": give the pack '
                                f'it configures, e.g. --policy-pack "{DEFAULT_PACK_DIR}" --policy-pack-config '
                                f'{configs[0]}')
    if configs and len(configs) != len(packs):
        raise PolicyConfigError(f'the number of "--policy-pack-config" flags ({len(configs)}) must match the number '
                                f'of "--policy-pack" flags ({len(packs)}): the first config goes with the first '
                                'pack, the second with the second, and so on')
    if configs and args.policy_config:
        raise PolicyConfigError('--policy-config and --policy-pack-config both given: with --policy-pack-config '
                                'every pack has its own config; leave --policy-config out')
    shared = Path(args.policy_config) if args.policy_config else None
    return [PackRequest(Path(pack).resolve(), Path(config) if config else shared)
            for pack, config in zip(packs or [str(DEFAULT_PACK_DIR)], configs or [None] * max(len(packs), 1))]


def _report(text: str) -> tuple[str, str]:
    """--report FORMAT=FILE."""
    format_name, _, path = text.partition("=")
    if format_name not in FORMATS or not path:
        raise argparse.ArgumentTypeError(f"{text!r} is not FORMAT=FILE with FORMAT one of {', '.join(FORMATS)}")
    return format_name, path


def add_preview_command(subparsers) -> None:
    parser = _command(
        subparsers, "preview", _run_preview, help="run a Pulumi program offline and check it against the policy pack",
        description="Run a Pulumi program (Python, or TypeScript/JavaScript with node) against the offline engine "
                    "(the engine's gRPC interfaces, the program as its language host starts it; no Pulumi CLI, "
                    "no AWS account) and put every "
                    "resource through the CrossGuard policy pack, as "
                    "`pulumi preview --policy-pack policies` does. Exit 1 on a mandatory violation.")
    parser.add_argument("--stack", default="dev", help="stack name; its config is Pulumi.<stack>.yaml "
                        "in the project's stackConfigDir (default: dev)")
    parser.add_argument("--program", help="the Pulumi project directory (default: the current directory)")
    parser.add_argument("--policy-config", help="policy pack config JSON for every pack without a "
                        "--policy-pack-config of its own (default: <stackConfigDir>/policy.<stack>.json if present)")
    parser.add_argument("--policy-pack", action="append", metavar="DIR",
                        help="a policy pack directory (PulumiPolicy.yaml; Python or Node.js/TypeScript), as for "
                             "`pulumi preview --policy-pack`: repeatable, every pack given runs (default: the "
                             "pack installed with this package; once one is given, only those given run, so add "
                             '--policy-pack "$(blueprint policy path)" to keep it)')
    parser.add_argument("--policy-pack-config", action="append", metavar="FILE",
                        help="the policy config JSON of the --policy-pack in the same position (repeatable, as "
                             "for `pulumi preview`: none, or one for every --policy-pack)")
    parser.add_argument("--unknowns", action="store_true",
                        help="leave outputs unknown, as in a first `pulumi preview`")
    parser.add_argument("--strict", action="store_true",
                        help="exit 2 when anything went unchecked, listing each: a check a rule could not run "
                             "(a value unknown during preview), a remote (multi-language) component not expanded, a "
                             "lookup answered by invention, a referenced stack's outputs not read (default: reported, "
                             "not a failure)")
    parser.add_argument("--stack-reference", action="append", type=_stack_reference, metavar="NAME=FILE",
                        help="read the outputs of the stack a StackReference names NAME (as the program writes it, "
                             "e.g. acme/network/prod) from FILE: `pulumi stack output --json`, `pulumi stack "
                             "export` or a state file (repeatable; default: stack-references/NAME.json in the "
                             "project, else a file:// backend's state); --strict fails on a reference not read")
    parser.add_argument("--format", choices=list(FORMATS), default="text",
                        help="text (default); json: one object, violations with stable fields (docs/gate.md, "
                             "`blueprint docs gate`); sarif: SARIF 2.1.0 for GitHub code scanning; "
                             "markdown: a pull-request comment")
    parser.add_argument("--json", action="store_true", help="the same as --format json")
    parser.add_argument("--timeout", type=_seconds, default=PROGRAM_TIMEOUT_SECONDS,
                        help="stop the program (and everything it started) after this many seconds and exit 2 "
                             f"(default: {PROGRAM_TIMEOUT_SECONDS})")
    parser.add_argument("--program-memory", type=int, default=PROGRAM_MEMORY_MB, metavar="MB",
                        help="the memory the program's processes may hold together, its language host included; past "
                             f"it they are ended and the preview exits 2 (default: {PROGRAM_MEMORY_MB}; processes and "
                             f"threads are capped at {PROGRAM_TASKS}, its output at a bounded head and tail)")
    parser.add_argument("--allow-read", action="append", type=_allowed_path, default=[], metavar="PATH",
                        help="let the program read PATH (a file or folder, read-only) beyond what its sandbox shows "
                             "(its repository, its interpreter and packages); repeatable. Never `/`, the home "
                             "or a folder above it (`blueprint docs architecture` lists what a program sees and why)")
    parser.add_argument("--report", type=_report, action="append", default=[], metavar="FORMAT=FILE",
                        help="also write this run's report in FORMAT to FILE (repeatable), e.g. "
                             "--report sarif=prod.sarif --report markdown=prod.md: one preview, every report")


def _allowed_path(text: str) -> Path:
    from integration_blueprint.preview.program_walls import bounded

    path = Path(text).expanduser().absolute()
    if not path.exists():
        raise argparse.ArgumentTypeError(f"{text!r} does not exist")
    if not bounded(path, os.environ, top_level=True):
        raise argparse.ArgumentTypeError(f"{text!r} is `/`, a folder above the home or the temporary folder, or of "
                                         "/proc, /sys, /dev or /run: name the folder or file the program needs")
    return path


def _stack_reference(text: str) -> tuple[str, Path]:
    name, sep, file = text.partition("=")
    if not sep or not name or not file:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=FILE (e.g. acme/network/prod=network-outputs.json)")
    return name, Path(file).resolve()


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value


def _fraction(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a fraction from 0 to 1")
    return value


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def _run_drill(args: argparse.Namespace) -> int:
    _require_local_extra()
    from integration_blueprint.drill import samples
    from integration_blueprint.drill.progress import ProgressBar
    from integration_blueprint.drill.report import DrillOptions, dumps, format_table
    from integration_blueprint.drill.runner import NothingToDrill, run_drill

    if args.records < 1:
        print("error: --records must be at least 1", file=sys.stderr)
        return 2
    logs = Path(args.logs) if args.logs else None
    if logs is not None:
        try:
            logs.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            print(f"error: --logs {args.logs}: the folder cannot be made ({exc.strerror}); name a folder the drill "
                  "can write to (made if missing)", file=sys.stderr)
            return 2
    sample_files = dict(samples.parse_option(text) for text in args.sample_records or [])
    loaded = {name: samples.load(path) for name, path in sample_files.items()}
    partition_keys = dict(samples.parse_partition_key(text) for text in args.partition_key or [])
    samples.check_partition_keys(partition_keys, loaded)
    options = DrillOptions(stack=args.stack, records=args.records, seed=args.seed, duplicates=args.duplicates,
                           poison=args.poison, transient=args.transient, crashes=args.crashes,
                           conflicts=args.conflicts, program_dir=_program_dir(args),
                           samples=loaded, partition_keys=partition_keys,
                           isolation=not args.no_isolation)
    bar = None if args.no_progress else ProgressBar()
    # SIGTERM (a CI job cancelled, `kill`) unwinds like Ctrl-C: the pattern processes are stopped
    # and the temp folders removed (main turns it into exit 143).
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        report = run_drill(options, progress=bar, workers=args.workers, log_dir=logs)
    except NothingToDrill as exc:  # not "the drill found data loss" (exit 1)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        signal.signal(signal.SIGTERM, previous)
        if bar is not None:
            bar.close()
    print(dumps(report) if args.json else format_table(report))
    return 0 if report.passed else 1


def _require_local_extra() -> None:
    """The sandbox runs AWS in moto, an optional extra: without it the drill cannot run (exit 2),
    which must not read as "the drill found data loss" (exit 1)."""
    try:
        import moto.stepfunctions.parser  # noqa: F401 - the interpreter needs the extra's own dependencies
    except ImportError as exc:
        raise MissingExtra(f"the drill needs the local sandbox's AWS emulator (moto), which is not "
                           f"installed ({exc}); install the extra: {install_source.install_command('local')}") from None



def add_drill_command(subparsers) -> None:
    parser = _command(
        subparsers, "drill", _run_drill, help="run every pattern end to end in the local sandbox under injected faults",
        description="Realize the stack in an embedded AWS emulator (moto, in-process), run the real "
                    "handlers behind local event source mappings, drive N records through each pattern "
                    "with duplicates, poison records, transient faults, crashes, conflicting duplicates and a hot "
                    "key (30% of a pattern's records on one account or tenant), and check the final state. Exit 0 "
                    "only if nothing was lost, nothing was done twice, exactly the poison records and the "
                    "conflicting duplicates were parked "
                    "and the hot key's state stayed within its per-key bound. Every instance of the "
                    "blueprint's components in the program is drilled; one running the team's own code "
                    "(consumer_code, code, item_code) runs that code and is judged by its effects: the "
                    "writes it makes per record across redeliveries and crashes.")
    parser.add_argument("--stack", default="dev", help="stack whose config to realize (default: dev)")
    parser.add_argument("--program", help="the Pulumi project directory, Python or TypeScript (default: the "
                                          "current directory)")
    parser.add_argument("--records", type=int, default=1500, help="records per pattern (default: 1500)")
    parser.add_argument("--seed", type=int, default=7, help="seed for every random choice (default: 7)")
    parser.add_argument("--duplicates", type=_fraction, default=0.05,
                        help="fraction of deliveries repeated (default: 0.05)")
    parser.add_argument("--poison", type=_fraction, default=0.01,
                        help="fraction of records the handlers reject (default: 0.01)")
    parser.add_argument("--transient", type=_fraction, default=0.02,
                        help="fraction of handler AWS calls that fail with throttling/5xx (default: 0.02)")
    parser.add_argument("--conflicts", type=_fraction, default=0.01,
                        help="fraction of records sent again later with the same id and another payload, which the "
                             "handler must park, neither applied nor skipped (default: 0.01)")
    parser.add_argument("--crashes", type=_count, default=3,
                        help="invocations per pattern that crash after a side effect (default: 3)")
    parser.add_argument("--sample-records", action="append", metavar="COMPONENT=FILE",
                        help="the team's own records for a component running its code (its name in the program): "
                             "a JSON Lines file, one payload per line as the lane hands it to the code (a stream "
                             "record's data, a FIFO message body, a Map item's row); each sent once, with the "
                             "faults; repeat per component. Shapes and attribution: docs/drill.md "
                             "(`blueprint docs drill`)")
    parser.add_argument("--partition-key", action="append", metavar="[COMPONENT=]FIELD",
                        help="the field of a stream component's records its producer keys them by (Kinesis keeps one "
                             "key's records in order on one shard); a dotted path reaches into objects; without "
                             "COMPONENT, every stream component running your code. Default: your own records "
                             "(--sample-records) under one key, in the file's order; the drill's own by account")
    parser.add_argument("--workers", type=int, default=None,
                        help="patterns run in parallel processes (default: one per pattern; 1 runs them in this process)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.add_argument("--logs", metavar="DIR",
                        help="the folder the handlers' and the emulator's output is written to, a file per pattern and "
                             "program.log, made if missing (default: a new folder in the temporary directory); the "
                             "report names it. A CI job keeps it as an artifact")
    parser.add_argument("--no-isolation", action="store_true",
                        help="run the team's code even where its sandbox (bubblewrap, user namespaces) cannot be made: "
                             "as the drill's user, every verdict marked 'not contained' (`blueprint docs drill`, Containment)")


def _print_pack_path(args: argparse.Namespace) -> int:
    print(DEFAULT_PACK_DIR)
    return 0


def _print_policy_config(args: argparse.Namespace) -> int:
    from contextlib import ExitStack

    from integration_blueprint.preview.analyzer import PolicyAnalyzer
    from integration_blueprint.preview.run import cli_policy_config

    with ExitStack() as packs:
        others = [packs.enter_context(PolicyAnalyzer(Path(pack))) for pack in args.policy_pack or ()]
        found = cli_policy_config(_program_dir(args), args.stack, output=args.output, other_packs=others)
    for line in found.gate_only:
        print(f"note: suppression of {line} is applied by `blueprint preview` only: under `pulumi preview "
              "--policy-pack` that pack still reports it (only the blueprint's pack reads suppressions from its "
              "policy config)", file=sys.stderr)
    if found.path is not None:  # none: nothing printed, the pack's own levels apply
        print(found.path)
    return 0


def _list_policies(args: argparse.Namespace) -> int:
    from integration_blueprint.preview.analyzer import PolicyAnalyzer
    from integration_blueprint.preview.policy_list import list_rules, render_json, render_text

    listings = []
    packs = args.policy_pack or [str(DEFAULT_PACK_DIR)]
    for pack in packs:
        # The stacks' policy.<stack>.json may configure other packs too (the blueprint's, mostly):
        # a pack listed with others, or not the blueprint's, takes only its own entries.
        shared = len(packs) > 1 or Path(pack).resolve() != DEFAULT_PACK_DIR.resolve()
        with PolicyAnalyzer(Path(pack)) as analyzer:
            listings.append(list_rules(analyzer, _program_dir(args, required=False), shared=shared))
    if args.json:  # one pack: its object, as before; several: a list of them
        print(render_json(listings[0]) if len(listings) == 1 else render_json(listings))
    else:
        print("\n\n".join(render_text(listing) for listing in listings))
    return 0


def add_policy_command(subparsers) -> None:
    """`blueprint policy <action>`: the policy pack itself, like `pulumi policy`."""
    parser = subparsers.add_parser("policy", help="the policy pack installed with this package",
                                   description="The CrossGuard policy pack installed with this package.")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    _command(actions, "path", _print_pack_path, help="print the policy pack's folder",
             description="Print the folder of the installed policy pack, for "
                         '`pulumi preview --policy-pack "$(blueprint policy path)"`.')
    config = _command(
        actions, "config", _print_policy_config, help="print the stack's policy config file (if it has one)",
        description="Print the policy config file `blueprint preview --stack S` reads by default, "
                    "<stackConfigDir>/policy.<stack>.json, or nothing when the stack has none, for "
                    '`pulumi preview --policy-pack-config "$(blueprint policy config --stack S)"`: both '
                    "previews then judge with the same config. When the program or the stack file accepts "
                    "findings (`# blueprint: ignore[rule] reason`, `blueprint:suppressions`), the program is run "
                    "offline to find the resource of each comment, and a copy of the config that carries them with "
                    "their reasons is written and printed instead: the pack then suppresses the same findings "
                    "under the Pulumi CLI as the gate does.")
    config.add_argument("--stack", required=True, help="the stack")
    config.add_argument("--program", help="the Pulumi project directory (default: the current directory)")
    config.add_argument("--output", type=Path, metavar="FILE",
                        help="where to write the config when it carries suppressions (default: "
                             "<program>/.blueprint/policy.<stack>.json)")
    config.add_argument("--policy-pack", action="append", metavar="DIR",
                        help="another pack the program is judged with (repeatable): its policies may be named by "
                             "suppressions, which only `blueprint preview` applies to it")
    ls = _command(
        actions, "ls", _list_policies, help="list the pack's policies with their level per stack",
        description="List every policy of the pack, as `pulumi policy ls` does: its enforcement level "
                    "(the pack's own and each stack's, from <stackConfigDir>/policy.<stack>.json of the "
                    "project), what it checks and its config settings. The pack is asked over its "
                    "Analyzer interface, as the Pulumi CLI asks it.")
    ls.add_argument("--program", help="the Pulumi project whose stacks to show (default: the current directory)")
    ls.add_argument("--policy-pack", action="append", metavar="DIR",
                    help="a policy pack directory, Python or Node.js/TypeScript (repeatable: each pack is listed; "
                         "default: the pack installed with this package)")
    ls.add_argument("--json", action="store_true", help="print one JSON object")


def _run_redrive(args: argparse.Namespace) -> int:
    from integration_blueprint.redrive.command import run

    return run(args)


def add_redrive_command(subparsers) -> None:
    """`blueprint redrive <pattern>`: the runbook's "fix the cause, then redrive", per pattern."""
    parser = subparsers.add_parser(
        "redrive", help="list parked messages and redrive them (after fixing the cause)",
        description="List what each pattern parked and why, and send it back for processing in "
                    "rate-limited batches, against the account boto3 finds (credentials, region, "
                    "AWS_ENDPOINT_URL). Every redrive is safe to repeat: the consumers are idempotent. "
                    "Use --dry-run first.")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(name: str, help_text: str, *, batches: bool = True) -> argparse.ArgumentParser:
        sub = _command(actions, name, _run_redrive, help=help_text, description=help_text)
        sub.add_argument("--json", action="store_true", help="print one JSON object")
        if batches:
            sub.add_argument("--rate", type=float, default=10.0,
                             help="messages per second at most (default: 10)")
            sub.add_argument("--limit", type=int, help="redrive at most this many now (a controlled batch)")
            sub.add_argument("--dry-run", action="store_true", help="show what would be redriven; change nothing")
        return sub

    listing = action("list", "list the messages parked in a queue, each with its reason", batches=False)
    listing.add_argument("queue", help="the queue URL (a DLQ, an Unrecoverable-DLQ, an on-failure queue)")
    listing.add_argument("--limit", type=int, help="list at most this many")
    status = action("status", "show a DLQ's SQS move tasks (ListMessageMoveTasks)", batches=False)
    status.add_argument("--dlq", required=True, help="the dead-letter queue URL")
    queue = action("queue", "FIFO billing (and any SQS DLQ): move the DLQ's messages back to the source "
                            "queue; without --to/--limit/--dry-run SQS's StartMessageMoveTask does it")
    queue.add_argument("--dlq", required=True, help="the dead-letter queue URL")
    queue.add_argument("--to", help="the source queue URL (batch move keeping FIFO group order)")
    stream = action("stream", "Kinesis patterns: the Unrecoverable-DLQ back into the Retry-DLQ (expired "
                              "metadata-only ranges stay parked and are reported)")
    stream.add_argument("--unrecoverable-dlq", required=True, help="the Unrecoverable-DLQ URL")
    stream.add_argument("--retry-dlq", required=True, help="the Retry-DLQ URL")
    dispatch = action("dispatch", "a scheduled function's parked asynchronous invocations (its on-failure "
                                  "queue), re-run with their original event")
    dispatch.add_argument("--queue", required=True, help="the function's on-failure queue URL")
    dispatch.add_argument("--function", required=True, help="the function name or ARN")
    batch_map = action("map", "Distributed Map: re-run a run's failed items as a new execution")
    batch_map.add_argument("--execution", required=True, help="the failed (or partly failed) execution ARN")
    batch_map.add_argument("--manifest", help="s3://bucket/key of the run's ResultWriter manifest.json; "
                                              "without it the execution's whole input file is re-run")
    batch_map.add_argument("--bucket", help="the input bucket (default: read from the state machine)")
    batch_map.add_argument("--input-field", default="inputKey", help="execution input field naming the CSV")


def _print_schema(args: argparse.Namespace) -> int:

    from integration_blueprint.plugin import package_schema

    print(json.dumps(package_schema(), indent=2))
    return 0


def add_schema_command(subparsers) -> None:
    _command(
        subparsers, "schema", _print_schema, help="print the component package's Pulumi schema (JSON)",
        description="Print the Pulumi package schema the component plugin serves (what `pulumi package "
                    "get-schema` prints for it): the four components, every input typed and described in the "
                    "names other languages use (camelCase), every output. Any language's SDK can be generated "
                    "from it, e.g. `pulumi package gen-sdk schema.json --language go`.")


def _list_stacks(args: argparse.Namespace) -> int:

    from integration_blueprint.preview.project import stack_names

    stacks = stack_names(_program_dir(args))
    print(json.dumps(stacks) if args.json else "\n".join(stacks))
    return 0


def add_stack_command(subparsers) -> None:
    """`blueprint stack ls`: the project's stacks, for a CI job that previews each one."""
    parser = subparsers.add_parser("stack", help="the project's stacks", description="The Pulumi project's stacks.")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    ls = _command(actions, "ls", _list_stacks, help="list the stacks (one Pulumi.<stack>.yaml each in the stackConfigDir)",
                  description="List the project's stacks: one per Pulumi.<stack>.yaml in the folder its "
                              "Pulumi.yaml names as stackConfigDir (default: beside it), as a CI job "
                              "discovers what to preview.")
    ls.add_argument("--program", help="the Pulumi project directory (default: the current directory)")
    ls.add_argument("--json", action="store_true", help="a JSON array (for a GitHub Actions matrix)")


SDK_LANGUAGES = ("typescript",)


def _write_sdk(args: argparse.Namespace) -> int:
    from integration_blueprint.plugin import package_schema
    from integration_blueprint.plugin.typescript_sdk import NPM_NAME, write_package

    out = Path(args.out).resolve()
    written = write_package(package_schema(), out)
    print(f"wrote {NPM_NAME} to {out} ({', '.join(written)}); install it with: npm install {out}")
    return 0


def add_sdk_command(subparsers) -> None:
    parser = _command(
        subparsers, "sdk", _write_sdk, help="write the components' SDK for another language (no Pulumi CLI needed)",
        description="Write the component package's SDK for a language from its schema, without the Pulumi CLI. "
                    "typescript: an npm package named @pulumi/blueprint (package.json, index.js, index.d.ts) to "
                    "`npm install <folder>` or `npm pack`. For other languages, feed `blueprint schema` to "
                    "`pulumi package gen-sdk`.")
    parser.add_argument("--language", choices=SDK_LANGUAGES, required=True, help="the SDK's language")
    parser.add_argument("--out", required=True, help="the folder to write the package into (created if missing)")


def _print_docs(args: argparse.Namespace) -> int:
    from integration_blueprint import documentation
    from integration_blueprint.components.reference import COMPONENTS

    by_name = {component.__name__.lower(): component for component in COMPONENTS}
    component_names = ", ".join(c.__name__ for c in COMPONENTS)
    if args.topic is None:
        print("blueprint docs <topic>: print a page of the manual (Markdown; `make docs` builds the same pages "
              "as a site)\n")
        for topic, about in documentation.topics().items():
            print(f"  {topic:<16} {about}")
        print(f"  {'components':<16} the component reference pages' index")
        print(f"  {'<Component>':<16} a component's reference page: {component_names}")
        return 0
    if args.topic.lower() in by_name or args.topic.lower() == "components":
        from integration_blueprint.reference_pages import render_index, render_page

        component = by_name.get(args.topic.lower())
        print(render_page(component) if component is not None else render_index())
        return 0
    try:
        print(documentation.guide_text(args.topic))
    except documentation.UnknownTopic:
        near = documentation.nearest(args.topic, [*documentation.topics(), "components",
                                                  *(c.__name__ for c in COMPONENTS)])
        print(f"error: no topic or component {args.topic!r}" + (f" (did you mean {near!r}?)" if near else "")
              + f"; the topics are {', '.join(documentation.topics())} and components; the components are "
              f"{component_names} (`blueprint docs` lists them)", file=sys.stderr)
        return 2
    return 0


def add_docs_command(subparsers) -> None:
    parser = _command(
        subparsers, "docs", _print_docs,
        help="print a page of the manual: a guide (getting-started, gate, drill, deploying, rules, runbook, "
             "architecture, readme, ...) or a component's reference page",
        description="Print a page of the manual (Markdown), shipped in the package so it reads the same "
                    "without the repository: the pages the CLI's messages point to (`blueprint docs drill`, "
                    "gate, deploying, architecture, readme, ...; without a topic, the list), the rule reference "
                    "generated from the rules, or a component's reference page, generated from the same "
                    "settings rows that check its arguments: every argument in Python and camelCase with its type, "
                    "default, what is allowed and why, every output, the resources it creates and a Python and a "
                    "TypeScript example. Without a topic: the list of topics.")
    parser.add_argument("topic", nargs="?", metavar="topic",
                        help="a guide (`blueprint docs` lists them: drill, gate, deploying, rules, readme, ...), "
                             "components, or a component: FifoBillingQueue, "
                             "IdempotentStreamConsumer, NonIdempotentStreamConsumer or DistributedMapBatch")


def _write_starter(args: argparse.Namespace) -> int:
    from integration_blueprint import starter

    folder = Path(args.folder)
    try:
        written = starter.write(folder, project=args.project or "", region=args.region)
    except starter.StarterExists as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(path.relative_to(folder))
    print(f"\nnext: python -m venv {folder}/.venv && {folder}/.venv/bin/pip install -r {folder}/requirements.txt, "
          f"then `blueprint preview --stack dev --program {folder}` (`blueprint docs deploying`)", file=sys.stderr)
    return 0


def add_init_command(subparsers) -> None:
    """`blueprint init [FOLDER]`: a team's starting point."""
    parser = _command(
        subparsers, "init", _write_starter,
        help="write a team's starting point: program, stacks, policy configs, an organisation pack, CI",
        description="Write a team's starting point into FOLDER: a Python program with one component, stacks "
                    "dev/staging/prod (stacks/) with their policy configs, an organisation's policy pack "
                    "(policy/org/) with its config in policy/config/, and the CI workflow "
                    "(.github/workflows/policy-preview.yml) with every pack listed once in POLICY_PACKS. "
                    "Refuses (exit 2) if any of those files exists.")
    parser.add_argument("folder", nargs="?", default=".", help="where to write (default: the current directory)")
    parser.add_argument("--project", help="the Pulumi project's name (default: the folder's name)")
    parser.add_argument("--region", default="eu-west-1", help="the stacks' aws:region (default: eu-west-1)")


COMMANDS: list[Callable] = [add_preview_command, add_drill_command, add_policy_command, add_redrive_command,
                             add_stack_command, add_schema_command, add_sdk_command, add_docs_command,
                             add_init_command]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="blueprint", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_command in COMMANDS:
        add_command(subparsers)
    return parser


def main(argv: Optional[list[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except USER_ERRORS as exc:
        print(f"error: {exc}{_where(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"blueprint {args.command}: interrupted (Ctrl-C); nothing was judged", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print(f"blueprint {args.command}: terminated (SIGTERM); nothing was judged", file=sys.stderr)
        return EXIT_TERMINATED


def entry() -> None:
    """The `blueprint` command: main(), then the process ends at once. The interpreter's own
    teardown (pulumi_aws's thousands of classes, grpc's threads) took 0.4 s, a sixth of a preview,
    and has nothing left to do: the pack is stopped, files are closed, the drill's workers joined.
    An error main() did not handle (and --help, which exits) ends the process the usual way."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:  # a closed pipe (`blueprint ... | head`): nothing more can reach it
            pass
    os._exit(code)


def _where(exc: BaseException) -> str:
    """' (at <file>:<line>)' for the innermost frame of the user's program that raised, if any:
    enough to find the bug without a traceback wall."""
    cause, frame = exc.__cause__, None
    tb = cause.__traceback__ if cause is not None else None
    for entry in traceback.extract_tb(tb) if tb is not None else []:
        library = ("site-packages" in entry.filename or entry.filename.startswith("<")
                   or entry.filename.startswith(_PACKAGE_DIR))
        if not library:
            frame = entry
    return f" (at {frame.filename}:{frame.lineno})" if frame else ""
