"""A TypeScript program previews on the @pulumi/pulumi it pins, from 3.0 on: the run's token reaches
the engine through what every SDK version shares (node_token.js), and the verdict is the one the
same program gets on today's SDK. A failure of that preload is the tool's, never the program's.

The pinned SDKs are the folders under tests/node-sdks, installed by `make node-sdks` from their lock
files (each with the @pulumi/aws of its time); today's is tests/node (`make node-fixtures`)."""

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from node_packages import NODE_MODULES

from integration_blueprint.cli import main
from integration_blueprint.preview import node_host

PINNED = Path(__file__).resolve().parent / "node-sdks"
VERSIONS = sorted(folder.name.removeprefix("pulumi-") for folder in PINNED.glob("pulumi-*"))
# A public program's shape, in TypeScript every pinned compiler reads (3.33.1 brings TypeScript 3.7):
# config with a default, a queue and its DLQ linked through an output, an export.
PROGRAM = """
import * as pulumi from "@pulumi/pulumi";
import * as aws from "@pulumi/aws";

const config = new pulumi.Config();
const retentionDays = config.getNumber("retentionDays") || 4;

const deadLetters = new aws.sqs.Queue("orders-dlq", { messageRetentionSeconds: 1209600 });
const orders = new aws.sqs.Queue("orders", {
    visibilityTimeoutSeconds: 30,
    messageRetentionSeconds: retentionDays * 86400,
    redrivePolicy: deadLetters.arn.apply(arn => JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: 1 })),
});

export const queueUrl = orders.url;
"""


def write_program(folder: Path, node_modules: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "Pulumi.yaml").write_text("name: orders\nruntime: nodejs\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n  orders:retentionDays: 7\n")
    (folder / "package.json").write_text(json.dumps({"name": "orders", "main": "index.ts"}))
    (folder / "index.ts").write_text(textwrap.dedent(PROGRAM))
    (folder / "node_modules").symlink_to(node_modules)
    return folder


def verdict(program: Path, capsys) -> tuple[int, list, list]:
    exit_code = main(["preview", "--program", str(program), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert report["error"] is None, report["error"]
    return (exit_code, sorted((r["type"], r["name"]) for r in report["resources"]),
            sorted((v["policy"], v["level"], v["name"]) for v in report["violations"]))


@pytest.mark.slow
@pytest.mark.parametrize("version", VERSIONS)
def test_a_program_pinned_to_an_older_sdk_previews_with_today_s_verdict(version, tmp_path, capsys):
    node_modules = PINNED / f"pulumi-{version}" / "node_modules"
    if not (node_modules / "@pulumi" / "pulumi").is_dir():
        pytest.fail(f"@pulumi/pulumi {version} is not installed: run `make node-sdks`")
    installed = json.loads((node_modules / "@pulumi" / "pulumi" / "package.json").read_text())["version"]
    assert installed == version

    pinned = verdict(write_program(tmp_path / "pinned", node_modules), capsys)
    today = verdict(write_program(tmp_path / "today", NODE_MODULES), capsys)
    assert pinned == today
    exit_code, resources, violations = pinned
    assert exit_code == 1 and ("aws:sqs/queue:Queue", "orders") in resources
    assert ("sqs-dlq-max-receive-count", "mandatory", "orders") in violations


def test_a_failure_of_the_token_preload_is_reported_as_the_tool_s_not_the_program_s(tmp_path, capsys):
    # An SDK whose generated clients are not where every 3.x keeps them: the preload cannot give it
    # the token, and says so before the program's first line.
    sdk = tmp_path / "program" / "node_modules" / "@pulumi" / "pulumi"
    (sdk / "cmd" / "run").mkdir(parents=True)
    (sdk / "proto").mkdir()
    (sdk / "cmd" / "run" / "index.js").write_text("require('fs').writeFileSync(process.argv.at(-1) + '.ran', '')\n")
    (sdk / "proto" / "resource_grpc_pb.js").write_text("exports.SomethingElse = 1;\n")
    (sdk / "proto" / "engine_grpc_pb.js").write_text("exports.EngineClient = function () {};\n")
    (sdk / "package.json").write_text(json.dumps({"name": "@pulumi/pulumi", "version": "3.0.0"}))
    program = sdk.parents[2]
    (program / "Pulumi.yaml").write_text("name: orders\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n")
    (program / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (program / "index.js").write_text("throw new Error('the program ran');\n")

    assert main(["preview", "--program", str(program), "--format", "json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["kind"] == "tool"
    assert node_host.TOKEN_PRELOAD.name in error["message"] and "exports no ResourceMonitorClient" in error["message"]
    assert "fails the same way" not in json.dumps(error)  # the program's fault never
    assert "the program ran" not in error["message"]
    assert not list(program.glob("*.ran"))  # the SDK's run entry never started


def test_every_pinned_folder_pins_the_sdk_it_is_named_for():
    assert len(VERSIONS) >= 4
    for version in VERSIONS:
        manifest = json.loads((PINNED / f"pulumi-{version}" / "package.json").read_text())
        lock = json.loads((PINNED / f"pulumi-{version}" / "package-lock.json").read_text())
        assert manifest["dependencies"]["@pulumi/pulumi"] == version
        assert lock["packages"]["node_modules/@pulumi/pulumi"]["version"] == version
        # one SDK per program: no @pulumi/aws with a copy of its own (it would register nothing)
        assert not any(path.endswith("/node_modules/@pulumi/pulumi") and path != "node_modules/@pulumi/pulumi"
                       for path in lock["packages"])
    assert shutil.which("node")
