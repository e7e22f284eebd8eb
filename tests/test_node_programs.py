"""TypeScript programs in the offline gate (integration_blueprint.preview.node_host): a `runtime:
nodejs` project runs as the Node.js language host runs it, its own @pulumi/pulumi against the
offline engine, and gets the verdicts its Python twin gets; our components, used through their
package SDK, record what they record in Python.

The programs resolve the packages `make node-fixtures` installs from tests/node/package-lock.json
into tests/node/node_modules (the programs under tests/node/programs find them as Node does, in a
folder above; a program written to a temporary folder links them), and our components through the
SDK `blueprint sdk --language typescript` writes, installed as npm installs it (node_packages.py)."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from node_packages import NODE_MODULES, install_node_modules

from integration_blueprint import __version__
from integration_blueprint.cli import main
from integration_blueprint.drill.report import DrillOptions
from integration_blueprint.drill.runner import run_drill
from integration_blueprint.preview import node_host
from integration_blueprint.preview.recording import ProgramError, RecordedStack, record_program
from integration_blueprint.preview.run import run_preview

# The end-to-end tier: `make test-slow` and `make test-all` run it, `make test` leaves it out.
pytestmark = pytest.mark.slow

NODE_DIR = Path(__file__).resolve().parent / "node"
PROGRAMS = NODE_DIR / "programs"
TSCONFIG = PROGRAMS / "handwritten-ts" / "tsconfig.json"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "typescript"


@pytest.fixture(scope="module", autouse=True)
def node_packages():
    if not (NODE_MODULES / "@pulumi" / "pulumi").is_dir():
        pytest.fail("the TypeScript test programs' packages are not installed: run `make node-fixtures`")


def ts_project(folder: Path, index_ts: str, *, files: dict = None, pulumi_yaml: str = "name: app\nruntime: nodejs\n",
               link_packages: bool = True, sdk: Path = None) -> Path:
    folder.mkdir(parents=True)
    (folder / "Pulumi.yaml").write_text(pulumi_yaml)
    (folder / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (folder / "package.json").write_text('{"name": "app", "main": "index.ts"}\n')
    (folder / "tsconfig.json").write_text(TSCONFIG.read_text())
    (folder / "index.ts").write_text(index_ts)
    for name, text in (files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    if sdk is not None:
        install_node_modules(folder, sdk)
    elif link_packages:
        (folder / "node_modules").symlink_to(NODE_MODULES)
    return folder


@pytest.fixture(scope="module")
def components_ts(tmp_path_factory, typescript_sdk) -> Path:
    """tests/node/programs/components-ts with its node_modules, our SDK installed in it."""
    program = tmp_path_factory.mktemp("components") / "components-ts"
    shutil.copytree(PROGRAMS / "components-ts", program)
    install_node_modules(program, typescript_sdk)
    return program


def verdicts(result) -> set[tuple[str, str, str]]:
    return {(v.policy, v.level, v.urn) for v in result.violations}


def registrations(recorded: RecordedStack) -> dict[str, dict]:
    """What the engine recorded per URN, as a policy pack sees it (dependency order aside: the two
    SDKs resolve a resource's inputs in different orders)."""
    return {r.urn: {"type": r.type, "parent": r.parent, "custom": r.custom, "inputs": r.inputs,
                    "dependencies": sorted(r.dependencies),
                    "property_dependencies": {key: sorted(urns) for key, urns in r.property_dependencies.items()}}
            for r in recorded.resources}


@pytest.mark.parametrize("unknowns", [False, True], ids=["known", "first-preview"])
def test_a_typescript_program_gets_the_verdicts_of_its_python_twin(unknowns):
    typescript = run_preview(PROGRAMS / "handwritten-ts", stack="dev", unknowns=unknowns)
    python = run_preview(PROGRAMS / "handwritten-py", stack="dev", unknowns=unknowns)

    assert verdicts(typescript) == verdicts(python)
    assert {(r.urn, r.type) for r in typescript.recorded.resources} == \
        {(r.urn, r.type) for r in python.recorded.resources}
    found = {(policy, urn.rsplit("::", 1)[-1]) for policy, level, urn in verdicts(typescript) if level == "mandatory"}
    # Each deliberate mistake, and nothing the tool made up. In a first preview the role policy's
    # document holds the queue's unknown ARN, so the provider's Check makes the whole JSON string
    # unknown and the IAM rules cannot run (a note, not a verdict), in both languages.
    iam = {("iam-no-wildcard-actions", "consumer-access"), ("iam-no-write-actions-on-all-resources", "consumer-access")}
    assert found == {("dlq-has-depth-alarm", "orders-dlq"), ("kinesis-stream-encrypted-at-rest", "clicks"),
                     ("lambda-log-group-has-retention", "auditor")} | (set() if unknowns else iam)
    assert typescript.exit_code == python.exit_code == 1
    # Each resource is located at the line of index.ts that declared it (source maps through ts-node).
    auditor = typescript.recorded.named("auditor")
    source = (PROGRAMS / "handwritten-ts" / "index.ts").read_text().splitlines()
    assert auditor.source_file == str(PROGRAMS / "handwritten-ts" / "index.ts")
    assert 'new aws.lambda.Function("auditor"' in source[auditor.source_line - 1]


def test_the_four_components_in_typescript_record_the_resources_inputs_and_verdicts_they_record_in_python(
        components_ts):
    typescript = run_preview(components_ts, stack="dev")
    python = run_preview(PROGRAMS / "components-py", stack="dev")

    assert not typescript.recorded.not_expanded
    assert registrations(typescript.recorded) == registrations(python.recorded)
    assert verdicts(typescript) == verdicts(python)
    components = {r.type for r in typescript.recorded.resources if r.type.startswith("blueprint:index:")}
    assert len(components) == 4 and len(typescript.recorded.resources) > 4 * 10
    # The non-default settings reached the children, camelCase inputs and all.
    payroll_queue = next(r for r in typescript.recorded.resources
                         if r.type == "aws:sqs/queue:Queue" and r.name == "payroll-charges")
    assert '"maxReceiveCount":6' in payroll_queue.inputs["redrivePolicy"].replace(" ", "")
    # The component's outputs come back to the program, as from a deployed stack.
    assert typescript.recorded.stack_outputs["payrollQueueUrl"].endswith(".fifo")


def test_a_refused_setting_reaches_the_typescript_program_as_the_components_message(tmp_path, capsys, typescript_sdk):
    index_ts = ('import * as blueprint from "@pulumi/blueprint";\n\n'
                'new blueprint.FifoBillingQueue("payroll", {\n    maxReceiveCount: 2,\n});\n')
    program = ts_project(tmp_path / "app", index_ts, sdk=typescript_sdk)

    with pytest.raises(ProgramError) as raised:
        record_program(program, stack="dev")

    message = str(raised.value)
    # Construct answers with the component's input-property error, named as the calling language
    # names the input (the schema's camelCase).
    assert "FifoBillingQueue: maxReceiveCount=2 is not allowed: a whole number from 4 to 1000" in message
    assert message.endswith(f"(at {program}/index.ts:4)")  # the line of the key refused
    assert main(["preview", "--program", str(program)]) == 2
    assert "is not allowed" in capsys.readouterr().err


def test_every_refused_component_is_reported_once_at_its_line_from_the_first_run(tmp_path, typescript_sdk,
                                                                                monkeypatch):
    """The engine saw where each component was declared: no second run (at Node's full depth) is
    needed to locate a refusal, and a wrong type names the type the program gave."""
    index_ts = ('import * as blueprint from "@pulumi/blueprint";\n\n'
                'new blueprint.FifoBillingQueue("payroll", {\n    maxReceiveCount: 2,\n});\n'
                'new blueprint.IdempotentStreamConsumer("clicks", {\n    retentionHours: "48" as any,\n});\n')
    program = ts_project(tmp_path / "app", index_ts, sdk=typescript_sdk)
    runs = []
    run_node_program = node_host.run_node_program
    monkeypatch.setattr(node_host, "run_node_program", lambda *a, **k: runs.append(k) or run_node_program(*a, **k))

    with pytest.raises(ProgramError) as raised:
        record_program(program, stack="dev")

    assert len(runs) == 1
    first, second = str(raised.value).splitlines()
    assert first.startswith("blueprint:index:FifoBillingQueue 'payroll' could not be constructed: FifoBillingQueue: "
                            "maxReceiveCount=2 is not allowed: a whole number from 4 to 1000")
    # each at the line of the key at fault, not of the `new`
    assert first.endswith(f"(at {program}/index.ts:4)") and first.count("index.ts") == 1
    assert "retentionHours='48' is not allowed: '48' is a string; a whole number from 24 to 8760" in second
    assert second.endswith(f"(at {program}/index.ts:7)") and second.count("index.ts") == 1


@pytest.mark.parametrize("logged", [
    "<ref *1> [Error: failed to register] {\n  promise: Promise { <rejected> [Circular *1] }\n}",
    "Running program 'app' failed with an unhandled exception:\n<ref *1> Error: failed to register\n"
    "    at f (/app/index.ts:4:9)\n    at node:internal/main/eval_string:51:3 {\n"
    "  promise: Promise { <rejected> [Circular *1] }\n}",
], ids=["without-stack", "with-stack"])
def test_an_error_is_shown_without_nodes_rendering_of_the_error_object(logged):
    [failure] = node_host._located(logged, Path("/app"), Path("/app"))
    assert failure.message == "Error: failed to register"


def test_an_error_in_the_programs_own_typescript_is_located_at_its_ts_file_and_line(tmp_path):
    naming = 'export function label(arn: string): string {\n    return arn.split(":")[99].toUpperCase();\n}\n'
    index_ts = ('import * as aws from "@pulumi/aws";\nimport { label } from "./naming";\n\n'
                'const queue = new aws.sqs.Queue("jobs");\n'
                'new aws.sqs.Queue("audit", { tags: queue.arn.apply(arn => ({ source: label(arn) })) });\n')
    program = ts_project(tmp_path / "app", index_ts, files={"naming.ts": naming})

    with pytest.raises(ProgramError, match=re.escape(f"(at {program}/naming.ts:2)")) as raised:
        record_program(program, stack="dev")
    assert "Cannot read properties of undefined (reading 'toUpperCase')" in str(raised.value)
    assert "node:internal" not in str(raised.value)
    # In a first preview the ARN is unknown and the SDK skips the callback, as `pulumi preview` does.
    assert len(record_program(program, stack="dev", unknowns=True).resources) == 2


def test_a_run_keeps_no_stack_frames_and_a_failed_one_is_reported_from_a_run_at_nodes_own_depth(
        tmp_path, monkeypatch):
    """The SDK takes a stack trace for every output (node_host: a third of a preview's CPU); the
    program runs without frames, its resources still located, and a failure is the one a run at
    Node's default depth (10 frames) reports. A depth the team sets is the one its program gets."""
    index_ts = ('import * as aws from "@pulumi/aws";\n\n'
                'new aws.sqs.Queue("jobs");\n'
                'export const frames = new Error().stack!.split("\\n").length - 1;\n'
                'if (process.env.BLUEPRINT_TEST_FAIL) { throw new Error(`failed with ${frames} frames`); }\n')
    program = ts_project(tmp_path / "app", index_ts)

    recorded = record_program(program, stack="dev")
    assert recorded.stack_outputs["frames"] == 0
    assert (recorded.named("jobs").source_file, recorded.named("jobs").source_line) == (str(program / "index.ts"), 3)

    monkeypatch.setenv("BLUEPRINT_TEST_FAIL", "1")
    with pytest.raises(ProgramError, match=re.escape(f"Error: failed with 10 frames (at {program}/index.ts:5)")):
        record_program(program, stack="dev")

    monkeypatch.delenv("BLUEPRINT_TEST_FAIL")
    (program / "Pulumi.yaml").write_text('name: app\nruntime:\n  name: nodejs\n  options:\n'
                                         '    nodeargs: "--stack-trace-limit=4"\n')
    assert record_program(program, stack="dev").stack_outputs["frames"] == 4


def test_an_error_is_located_even_where_nodes_colouring_of_its_stack_would_never_end(tmp_path):
    """A missing config value (a RunError, which every SDK logs without its stack) is reported from the
    first run: a second run with frames could not locate it. An uncaught error thrown in a package under
    node_modules/@scope/ is located by a second run with frames at the program's own line: the SDK colours
    the error's stack, and Node.js releases without the fix of nodejs/node#64011 loop on such a frame
    without bound on memory, so a run with frames inspects errors without colour (node_plain_errors.js),
    the first run too where the team set its own depth. Never the memory cap in the error's place."""
    yaml = "name: app\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: index.js\n"
    missing = ts_project(tmp_path / "missing", "", pulumi_yaml=yaml, files={
        "index.js": 'const pulumi = require("@pulumi/pulumi");\nnew pulumi.Config().require("queueName");\n'})
    with pytest.raises(ProgramError, match=r"Missing required configuration variable 'app:queueName'") as raised:
        record_program(missing, stack="dev", program_memory_mb=300)
    assert "memory cap" not in str(raised.value)

    scoped = ts_project(tmp_path / "scoped", "", pulumi_yaml=yaml, link_packages=False, files={
        "index.js": 'require("@pulumi/pulumi");\nrequire("@acme/boom.js").explode();\n',
        "node_modules/@acme/boom.js": 'exports.explode = () => { throw new Error("boom from a scoped package"); };\n'})
    (scoped / "node_modules" / "@pulumi").symlink_to(NODE_MODULES / "@pulumi")
    with pytest.raises(ProgramError, match=re.escape(f"Error: boom from a scoped package (at {scoped}/index.js:2)")) as raised:
        record_program(scoped, stack="dev", program_memory_mb=300)
    assert "memory cap" not in str(raised.value)

    (scoped / "Pulumi.yaml").write_text(yaml.replace("    typescript: false\n", '    typescript: false\n'
                                                     '    nodeargs: "--stack-trace-limit=12"\n'))
    with pytest.raises(ProgramError, match=re.escape(f"Error: boom from a scoped package (at {scoped}/index.js:2)")) as raised:
        record_program(scoped, stack="dev", program_memory_mb=300)
    assert "memory cap" not in str(raised.value)


def test_node_keeps_the_code_it_compiled_in_the_users_cache_folder(tmp_path, monkeypatch):
    """NODE_COMPILE_CACHE, which Node.js >= 22.1 honours (older ones ignore it), unless the team set it."""
    program = ts_project(tmp_path / "app", 'export const compileCache = process.env.NODE_COMPILE_CACHE;\n')
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("NODE_COMPILE_CACHE", raising=False)

    recorded = record_program(program, stack="dev")

    assert recorded.stack_outputs["compileCache"] == str(tmp_path / "cache" / "integration-blueprint" /
                                                         "node-compile-cache")


def test_a_type_error_is_reported_at_its_ts_line_as_pulumi_preview_reports_it(tmp_path):
    """ts-node type-checks unless tsconfig says `noCheck` (or PULUMI_NODEJS_TRANSPILE_ONLY=true)."""
    index_ts = ('import * as pulumi from "@pulumi/pulumi";\n\n'
                'const retention: number = new pulumi.Config().get("retention");\nexport const days = retention;\n')
    program = ts_project(tmp_path / "app", index_ts)
    (program / "tsconfig.json").write_text(TSCONFIG.read_text().replace('"noCheck": true', '"noCheck": false'))

    with pytest.raises(ProgramError, match=r"TypeScript error TS2322: Type 'string \| undefined' is not assignable "
                                           rf"to type 'number'.* \(at {program}/index.ts:3\)"):
        record_program(program, stack="dev")


def test_a_javascript_program_runs_from_the_main_its_pulumi_yaml_names(tmp_path):
    app_js = ('const pulumi = require("@pulumi/pulumi");\nconst aws = require("@pulumi/aws");\n'
              'const config = new pulumi.Config();\n'
              'new aws.sqs.Queue("jobs", { messageRetentionSeconds: config.requireNumber("retention") });\n')
    yaml = "name: app\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: src/app.js\n"
    program = ts_project(tmp_path / "app", "throw new Error('not the entry point');\n", pulumi_yaml=yaml,
                         files={"src/app.js": app_js})
    (program / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n  app:retention: 3600\n")

    recorded = record_program(program, stack="dev")

    assert recorded.named("jobs").inputs["messageRetentionSeconds"] == 3600
    assert recorded.named("jobs").source_file == str(program / "src" / "app.js")


def test_uninstalled_dependencies_and_a_missing_node_name_the_fix_and_exit_2(tmp_path, capsys, monkeypatch):
    program = ts_project(tmp_path / "app", 'import * as aws from "@pulumi/aws";\n', link_packages=False)

    assert main(["preview", "--program", str(program)]) == 2
    error = capsys.readouterr().err
    assert "@pulumi/pulumi) is not installed" in error and "run `npm ci`" in error and str(program) in error

    imports_more = ts_project(tmp_path / "more", 'import * as pulumi from "@pulumi/pulumi";\nimport "@acme/tags";\n')
    with pytest.raises(ProgramError, match=r"Cannot find module '@acme/tags'(.|\n)*@acme/tags is not installed: "
                                           r"install the program's dependencies: run `npm ci`"):
        record_program(imports_more, stack="dev")

    monkeypatch.setenv("PATH", str(tmp_path / "no-node-here"))
    with pytest.raises(ProgramError, match=r"could not find node on the \$PATH.*then `npm ci`"):
        record_program(program, stack="dev")


def test_a_runtime_the_offline_preview_does_not_run_is_named_with_exit_2(tmp_path, capsys):
    program = tmp_path / "app"
    program.mkdir()
    (program / "Pulumi.yaml").write_text("name: app\nruntime: go\n")

    assert main(["preview", "--program", str(program)]) == 2
    assert "runtime 'go' is not one the offline preview runs (it runs python and nodejs programs)" in \
        capsys.readouterr().err


def test_the_typescript_example_a_team_copies_passes_the_gate(tmp_path, capsys, monkeypatch, typescript_sdk):
    program = tmp_path / "payments"
    shutil.copytree(EXAMPLE, program, ignore=shutil.ignore_patterns("node_modules", "sdks"))
    install_node_modules(program, typescript_sdk)
    # The example type-checks, as `pulumi preview` would; the SDK's own switch skips that here
    # (about 15 s of CPU against @pulumi/aws's declarations) where only the verdicts are tested.
    monkeypatch.setenv("PULUMI_NODEJS_TRANSPILE_ONLY", "true")

    assert main(["preview", "--program", str(program), "--stack", "dev", "--format", "json"]) == 0

    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["mandatory"] == 0 and report["summary"]["resources"] > 20


def test_the_sdk_is_an_npm_package_that_packs_with_its_declarations(typescript_sdk, tmp_path):
    package = json.loads((typescript_sdk / "package.json").read_text())
    assert (package["name"], package["main"], package["types"]) == ("@pulumi/blueprint", "index.js", "index.d.ts")
    assert package["version"] == __version__ and "@pulumi/pulumi" in package["peerDependencies"]

    packed = subprocess.run(["npm", "pack", "--json", "--pack-destination", str(tmp_path), str(typescript_sdk)],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)

    assert packed.returncode == 0, packed.stderr
    [tarball] = json.loads(packed.stdout)
    assert {entry["path"] for entry in tarball["files"]} == {"package.json", "index.js", "index.d.ts", "README.md"}
    assert (tmp_path / tarball["filename"]).is_file()


def test_the_sdks_declarations_catch_a_wrong_type_and_a_missing_required_input(tmp_path, typescript_sdk):
    """The program type-checks against index.d.ts as `pulumi preview` type-checks it (ts-node)."""
    index_ts = ('import * as blueprint from "@pulumi/blueprint";\n\n'
                'new blueprint.DistributedMapBatch("invoices", { maxConcurrency: "20" });\n'
                'new blueprint.DistributedMapBatch("orders");\n')
    program = ts_project(tmp_path / "app", index_ts, sdk=typescript_sdk)
    (program / "tsconfig.json").write_text(TSCONFIG.read_text().replace('"noCheck": true', '"noCheck": false'))

    with pytest.raises(ProgramError) as raised:
        record_program(program, stack="dev")

    message = str(raised.value)
    assert "TS2322: Type 'string' is not assignable to type 'Input<number>'" in message
    assert f"{program}/index.ts:3" in message
    assert "TS2554: Expected 2-3 arguments, but got 1" in message and f"{program}/index.ts:4" in message


def test_the_drill_runs_the_components_of_a_typescript_program_as_the_plugin_built_them(components_ts):
    """The drill records a TypeScript program like the preview does: its components, built by the
    plugin, are drilled with the reference handlers they deploy (its Map's ItemBatcher included, run
    by the sandbox's Distributed Map executor)."""
    options = DrillOptions(stack="dev", program_dir=components_ts, records=8, seed=3)

    report = run_drill(options, workers=1)

    assert {name: p.component for name, p in report.patterns.items()} == {
        "distributed_map": "invoices", "idempotent_stream": "clicks", "fifo_billing": "payroll",
        "non_idempotent_stream": "payments"}
    for name, pattern in report.patterns.items():
        assert pattern.passed, (name, pattern.notes, pattern.failure)


def test_a_typescript_comment_suppresses_the_violation_of_the_resource_it_declares(tmp_path, policy_analyzer):
    program = ts_project(tmp_path / "app", '''import * as aws from "@pulumi/aws";

// blueprint: ignore[dlq-has-depth-alarm] the team's pager watches this DLQ (OPS-12)
const dlq = new aws.sqs.Queue("dlq", {messageRetentionSeconds: 1209600});
new aws.sqs.Queue("orders", {redrivePolicy: dlq.arn.apply(arn => JSON.stringify(
    {deadLetterTargetArn: arn, maxReceiveCount: 1}))});  // blueprint: ignore[sqs-dlq-max-receive-count] never here
''')
    result = run_preview(program, analyzer=policy_analyzer)
    assert [(f.policy, f.name, f.suppression.line) for f in result.suppressed_findings()] == [
        ("dlq-has-depth-alarm", "dlq", 3)]
    # The comment on a continuation line is not on the declaring line: the violation counts.
    assert ("sqs-dlq-max-receive-count", "orders") in {(f.policy, f.name) for f in result.violation_findings()}


def test_a_typescript_program_waiting_on_a_promise_that_never_settles_is_stopped_naming_the_resource(tmp_path):
    # A timer keeps Node's event loop alive (without one, Node exits and the SDK reports the leak).
    program = ts_project(tmp_path / "app", '''import * as aws from "@pulumi/aws";

setInterval(() => {}, 1000);
new aws.sqs.Queue("first");
console.log("waiting for the orders queue's name");
new aws.sqs.Queue("orders", {name: new Promise<string>(() => {})});
''')
    with pytest.raises(ProgramError) as stopped:
        record_program(program, timeout=20)
    message = str(stopped.value)
    assert "did not finish within 20 s" in message
    assert "orders (aws:sqs/queue:Queue)" in message and "first" not in message
    assert "waiting for the orders queue's name" in stopped.value.stdout  # what it printed before the stop


def test_a_typescript_programs_stack_transform_is_called_back_before_its_resources_are_recorded(tmp_path):
    index_ts = ('import * as pulumi from "@pulumi/pulumi";\nimport * as aws from "@pulumi/aws";\n\n'
                'pulumi.runtime.registerResourceTransform(args => args.type === "aws:sqs/queue:Queue"\n'
                '    ? { props: { ...args.props, tags: { team: "orders" } }, opts: args.opts } : undefined);\n'
                'export const tags = new aws.sqs.Queue("jobs").tags;\n')

    recorded = record_program(ts_project(tmp_path / "app", index_ts), stack="dev")

    assert recorded.named("jobs").inputs["tags"] == {"team": "orders"}
    assert recorded.stack_outputs["tags"] == {"team": "orders"}


def test_a_build_folder_not_built_stops_the_preview_at_the_functions_line_naming_the_path(tmp_path, capsys):
    """`pulumi preview` hashes every archive as the program registers it: a FileArchive of a dist/
    that `npm run build` did not make fails there, the program's own error (exit 2)."""
    program = tmp_path / "thumbnails"
    shutil.copytree(PROGRAMS / "build-folder-missing-ts", program)
    (program / "node_modules").symlink_to(NODE_MODULES)

    assert main(["preview", "--program", str(program), "--stack", "dev", "--format", "json"]) == 2

    error = json.loads(capsys.readouterr().out)["error"]
    assert error["kind"] == "program" and (error["file"], error["line"]) == (str(program / "index.ts"), 13)
    assert (f"failed to compute archive hash for \".\": couldn't read archive path '{program}/dist': "
            f"stat {program}/dist: no such file or directory") in error["message"]

    (program / "dist").mkdir()
    (program / "dist" / "index.js").write_text("exports.handler = async () => [];\n")
    assert main(["preview", "--program", str(program), "--stack", "dev", "--format", "json"]) == 1  # judged: no log group
    assert json.loads(capsys.readouterr().out)["error"] is None


def test_every_files_type_errors_are_reported_each_at_its_file_and_line(tmp_path):
    """ts-node stops at the first file with a type error (the entry's own here); `tsc` reports every
    file's, and so does the preview, each at its file and line."""
    index_ts = ('import { makeQueues } from "./queues";\nimport { topicName } from "./topics";\n\n'
                'const retentionDays: number = "14";\nmakeQueues(retentionDays, topicName());\n')
    queues_ts = ('import * as aws from "@pulumi/aws";\n\nexport function makeQueues(days: number, topic: string) {\n'
                 '    new aws.sqs.Queue("jobs", { messageRetentionSeconds: `${days * 86400}` });\n'
                 '    new aws.sns.Topic(topic, { fifoTopic: "yes" });\n}\n')
    topics_ts = 'export function topicName(): string {\n    return 42;\n}\n'
    program = ts_project(tmp_path / "app", index_ts, files={"queues.ts": queues_ts, "topics.ts": topics_ts})
    (program / "tsconfig.json").write_text(TSCONFIG.read_text().replace('"noCheck": true', '"noCheck": false'))

    with pytest.raises(ProgramError) as failed:
        record_program(program, stack="dev")

    message = str(failed.value)
    located = re.findall(r"error (TS\d+): .*? \(at (\S+):(\d+)\)", message)
    assert sorted(located) == sorted([("TS2322", str(program / "index.ts"), "4"),
                                      ("TS2322", str(program / "queues.ts"), "4"),
                                      ("TS2322", str(program / "queues.ts"), "5"),
                                      ("TS2322", str(program / "topics.ts"), "2")]), message
    assert (failed.value.file, failed.value.line) == (str(program / "index.ts"), 4)
