"""A CrossGuard policy pack folder and the command that starts it, as the Pulumi CLI starts it.

The CLI reads the folder's `PulumiPolicy.yaml` (pkg/resource/plugin/analyzer_plugin.go,
NewPolicyAnalyzer) and hands the pack to its runtime's language host (RunPlugin, kind analyzer):

- python (sdk/python/cmd/pulumi-language-python/main.go RunPlugin): the interpreter the runtime
  options choose (`toolchain`, `virtualenv`: the same rules as a program's, interpreter.py) runs
  `python -u -m pulumi.policy <engine> <pack-dir>` in the pack's folder;
- nodejs (sdk/nodejs/cmd/pulumi-language-nodejs/main.go RunPlugin): `node` runs the policy SDK's
  own analyzer entry, `@pulumi/pulumi/cmd/run-policy-pack` resolved from the pack's folder (its
  node_modules), then `nodeargs`, the engine and the pack's folder; the entry registers ts-node
  (type-checked, the pack's tsconfig.json honoured) for a TypeScript pack, as for a program.

Both get the stack's identity as the host's policy proxy sets it (PULUMI_PROJECT, PULUMI_STACK,
PULUMI_DRY_RUN, PULUMI_CONFIG). What differs, on purpose: each starts through our host
(pack_host.py, node_pack_host.js), which puts the pack's Analyzer server on the run's private
channel; and the pack's dependencies are the team's, never installed here: a missing
node_modules or virtualenv stops the run (exit 2) with the command that installs them.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional

import yaml

from integration_blueprint.preview import interpreter
from integration_blueprint.preview.project import ProgramError

PACK_FILE = "PulumiPolicy.yaml"
RUNTIMES = ("python", "nodejs")
NODE_ENTRY = "@pulumi/pulumi/cmd/run-policy-pack"
PYTHON_HOST = Path(__file__).resolve().with_name("pack_host.py")
NODE_HOST = Path(__file__).resolve().with_name("node_pack_host.js")


class PackError(Exception):
    """A pack folder that cannot be started; the message names the pack and the fix."""


@dataclass(frozen=True)
class PackStart:
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    runtime: str  # "python" or "nodejs"
    started_by: str  # which interpreter or entry, and why (for a failure's message)


def read_manifest(pack_dir: Path) -> dict[str, Any]:
    path = pack_dir / PACK_FILE
    if not path.is_file():
        hint = " (it holds a Pulumi.yaml: that is a program, not a policy pack)" \
            if (pack_dir / "Pulumi.yaml").exists() else ""
        raise PackError(f"{pack_dir} is not a policy pack (no {PACK_FILE}){hint}; point --policy-pack at the "
                        f"folder that holds the pack's {PACK_FILE}")
    try:
        manifest = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise PackError(f"policy pack {pack_dir}: {PACK_FILE} is not valid YAML: {exc}") from None
    if not isinstance(manifest, dict):
        raise PackError(f"policy pack {pack_dir}: {PACK_FILE} must be a mapping with at least `runtime`")
    return manifest


def runtime_of(manifest: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    runtime = manifest.get("runtime")
    name = runtime.get("name") if isinstance(runtime, dict) else runtime
    options = runtime.get("options") if isinstance(runtime, dict) else None
    return str(name or ""), options if isinstance(options, dict) else {}


def require_startable(pack_dir: Path) -> None:
    """What can be known before starting the pack: its manifest, a runtime we start, and for
    Node.js its installed dependencies. Raises PackError naming the pack and the fix."""
    name, _ = runtime_of(read_manifest(pack_dir))
    if name not in RUNTIMES:
        raise PackError(_unknown_runtime(pack_dir, name))
    if name == "nodejs":
        shadows = shadowing_files(pack_dir)
        if shadows:
            raise PackError(_shadowed(pack_dir, shadows))
        locate_entry(pack_dir)


# What Node.js's `require(<folder>)` tries before the folder itself (LOAD_AS_FILE: the path, then
# with each extension it knows), which is how the policy SDK's run-policy-pack loads a pack: a
# config `policy/awsguard.json` beside the pack `policy/awsguard/` is loaded instead of the pack.
NODE_FILE_EXTENSIONS = (".js", ".json", ".node")


def shadowing_files(pack_dir: Path) -> list[Path]:
    """Files beside a Node.js pack's folder that Node loads instead of it."""
    return [path for path in (pack_dir.with_name(pack_dir.name + ext) for ext in NODE_FILE_EXTENSIONS)
            if path.is_file()]


def _shadowed(pack_dir: Path, shadows: list[Path]) -> str:
    first = shadows[0]
    return (f"policy pack {pack_dir}: {first} beside it is what Node.js loads for the pack's folder (require "
            f"tries {pack_dir.name}{', '.join(NODE_FILE_EXTENSIONS)} before the folder), so the pack would register no "
            f"policy and exit, under `pulumi preview --policy-pack` as here; move {first.name} out of "
            f"{first.parent} (e.g. policy configs in a folder of their own: policy/config/{first.name})")


def why_no_pack_served(pack_dir: Path) -> str:
    """The likely cause, in words, of a pack whose program ended without starting its server."""
    shadows = shadowing_files(pack_dir)
    if shadows:
        return _shadowed(pack_dir, shadows)
    return ("its program ended without creating a PolicyPack (a Node.js pack's entry file is `main` of its "
            "package.json, else index.js/index.ts; a Python pack's is __main__.py, which must call PolicyPack(...))")


def _unknown_runtime(pack_dir: Path, name: str) -> str:
    return (f"policy pack {pack_dir}: runtime {name or '(none)'!r} in {PACK_FILE} is not one blueprint preview "
            f"can start; packs in {' or '.join(RUNTIMES)} run (as the Pulumi CLI runs them)")


def start_command(pack_dir: Path, *, engine: str, project: str, stack: str, config: Mapping[str, str],
                  own_pack: bool = False, environ: Optional[Mapping[str, str]] = None) -> PackStart:
    """How to start the pack in `pack_dir`. `own_pack`: the pack this package ships, which runs in
    this interpreter (its PulumiPolicy.yaml names no virtualenv, and it imports this package)."""
    environ = dict(os.environ if environ is None else environ)
    manifest = read_manifest(pack_dir)
    name, options = runtime_of(manifest)
    stack_env = {"PULUMI_PROJECT": project, "PULUMI_STACK": stack, "PULUMI_DRY_RUN": "true",
                 "PULUMI_CONFIG": json.dumps(dict(config))}
    if name == "python":
        if own_pack:
            return PackStart([sys.executable, "-u", "-m", "integration_blueprint.preview.pack_host", engine,
                              str(pack_dir)], {**environ, **stack_env}, pack_dir, name, "blueprint's own interpreter")
        chosen = _python(pack_dir, manifest, environ)
        argv = [*chosen.argv, "-u", str(PYTHON_HOST), engine, str(pack_dir)]
        return PackStart(argv, {**chosen.environ(environ), **stack_env}, pack_dir, name, chosen.chosen_by)
    if name == "nodejs":
        return _node(pack_dir, options, engine, {**environ, **stack_env})
    raise PackError(_unknown_runtime(pack_dir, name))


def _python(pack_dir: Path, manifest: dict[str, Any], environ: Mapping[str, str]) -> interpreter.Interpreter:
    try:
        return interpreter.resolve_interpreter(pack_dir, environ, project=manifest)
    except ProgramError as exc:
        raise PackError(f"policy pack {pack_dir}: {str(exc).replace('Pulumi.yaml', PACK_FILE)}") from None


def _node(pack_dir: Path, options: dict[str, Any], engine: str, env: dict[str, str]) -> PackStart:
    node = shutil.which("node", path=env.get("PATH"))
    if node is None:
        raise PackError(f"policy pack {pack_dir} runs on Node.js, but `node` is not on PATH: install Node.js "
                        "(https://nodejs.org), then `npm install` in the pack's folder")
    entry = locate_entry(pack_dir)
    typescript, nodeargs = options.get("typescript", True), options.get("nodeargs", "")
    if not isinstance(nodeargs, str):
        raise PackError(f"policy pack {pack_dir}: {PACK_FILE} runtime.options.nodeargs must be a string")
    if typescript is not False:
        env["PULUMI_NODEJS_TYPESCRIPT"] = "true"
    if isinstance(options.get("tsconfig"), str) and options["tsconfig"]:
        env["PULUMI_NODEJS_TSCONFIG_PATH"] = options["tsconfig"]
    argv = [node, "--require", str(NODE_HOST), str(entry), *shlex.split(nodeargs), engine, str(pack_dir)]
    return PackStart(argv, env, pack_dir, "nodejs", f"{node} with {entry}")


def locate_entry(pack_dir: Path) -> Path:
    """`@pulumi/pulumi/cmd/run-policy-pack` as Node.js resolves it from the pack's folder (its
    node_modules, or one above it); the CLI's message when it is not installed, with the fix."""
    for folder in (pack_dir, *pack_dir.parents):
        entry = folder / "node_modules" / NODE_ENTRY / "index.js"
        if entry.is_file():
            return entry
    raise PackError(f"policy pack {pack_dir}: its dependencies are not installed (no {NODE_ENTRY} in its "
                    f"node_modules); run `npm install` (or `npm ci`, `yarn install`) in {pack_dir}")
