"""The registry of third-party patches (integration_blueprint.core.patches): every entry says what it
replaces, where it was verified and what it buys; a speed patch outside its versions is skipped with
one line, a fix refuses to run, each naming itself, the installed version and the verified releases
(exact ones, never a range); what a block applied is undone when it ends."""

import json
import os
import subprocess
import sys
import time
import types
from importlib import metadata
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from packaging.version import Version

from integration_blueprint.core import patches
from integration_blueprint.core.patches import FIX, SPEED, PatchRefused
from integration_blueprint.policies import sdk_patches
from integration_blueprint.preview import aws_imports, pack_host, program_speed, pulumi_protos
from integration_blueprint.sandbox import emulator, shortcuts

REPO = Path(__file__).resolve().parents[1]


PLUGIN_PATCHES = ("plugin_integer_inputs_stay_whole", "plugin_engine_calls_carry_run_token")


def plugin_patch_entries() -> dict:
    """The plugin's registered patches, as the plugin's own process sees them (its program registers
    them when imported; a separate interpreter, since it loads the Pulumi provider SDK's protos)."""
    program = f"""
import importlib.util, json
spec = importlib.util.spec_from_file_location("blueprint_plugin_main", {str(REPO / "plugin" / "__main__.py")!r})
spec.loader.exec_module(importlib.util.module_from_spec(spec))
from integration_blueprint.core.patches import REGISTRY
print(json.dumps({{name: {{"target": entry.target, "package": entry.package, "buys": entry.buys, "kind": entry.kind,
                          "verified_here": entry.verified_here()}} for name, entry in REGISTRY.items()}}))
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return {name: entry for name, entry in json.loads(done.stdout).items() if name in PLUGIN_PATCHES}


# Where each correctness fix is shown to fix what it says (a speed patch's equivalence test is
# tests/test_emulator_shortcuts.py and, for the pack's, test_pack_verdicts_are_the_same_without_its_speed_patches).
FIX_TESTS = {
    "answered_requests_are_not_dispatched": "test_patches.py::test_a_request_a_fault_answered_is_not_carried_out",
    "request_hooks_on_every_session": "test_team_drill.py::"
        "test_calls_through_a_session_of_the_functions_own_are_journaled_and_faulted",
    "nothing_leaves_the_process": "test_sandbox_drill.py::test_a_stack_is_realized_in_the_emulator_as_recorded",
    "compress_sdk_retry_waits": "test_patches.py::test_sdk_and_state_machine_retry_waits_are_compressed",
    "compress_state_machine_retry_waits": "test_patches.py::test_sdk_and_state_machine_retry_waits_are_compressed",
    "state_machine_lambda_tasks_run_in_process":
        "test_sandbox_drill.py::test_every_pattern_loses_nothing_and_does_nothing_twice_under_the_default_fault_mix",
    # A Map worker recursed once per item: the main job's 1,500-item Map (benchmarks/drill_speed.py)
    # needs it; a test's Map would take a minute of moto's interpreter to meet the limit.
    "iterate_map_workers":
        "test_sandbox_drill.py::test_every_pattern_loses_nothing_and_does_nothing_twice_under_the_default_fault_mix",
    # A TLS-only bucket's policy refused the sandbox's own PutObject (moto's partial check).
    "bucket_policies_judged_by_the_authorizer": "test_drill_iam.py::"
        "test_a_functions_calls_are_refused_as_aws_refuses_them_and_the_emulator_never_sees_them",
    "fifo_deduplication_lasts_five_minutes": "test_patches.py::"
        "test_a_fifo_queue_drops_a_deduplication_id_it_accepted_in_the_last_five_minutes_even_once_consumed",
    "parse_state_machine_paths_once": "test_sandbox_drill.py::"
        "test_a_seed_reproduces_a_drill_exactly_and_recovery_completes_under_40_percent_transient_faults",
    "distributed_maps_run_by_the_sandbox": "test_map_executor.py::"
        "test_past_its_tolerated_failures_the_map_stops_fails_alerts_and_leaves_the_rest_pending",
    "pack_names_its_version": "test_wheel.py::test_the_running_pack_reports_the_package_version",
    "plugin_integer_inputs_stay_whole": "test_plugin.py::test_whole_numbers_stay_whole_through_the_wire",
    "plugin_engine_calls_carry_run_token":
        "test_plugin.py::test_each_stack_constructs_through_the_plugin_exactly_as_in_python",
    "policy_pack_private_channel": "test_preview_channels.py::"
        "test_a_process_beside_a_running_preview_can_neither_disable_a_policy_nor_register_a_resource",
}


def test_every_patch_names_its_target_versions_kind_and_what_it_buys():
    plugin = plugin_patch_entries()
    assert set(plugin) == set(PLUGIN_PATCHES)
    for name, entry in plugin.items():
        assert entry["target"] and entry["package"] == "pulumi" and entry["buys"] and entry["verified_here"]
        assert entry["kind"] == FIX and name in FIX_TESTS

    assert set(patches.REGISTRY) - set(PLUGIN_PATCHES) == {*emulator.EMULATOR_PATCHES, *sdk_patches.NAMES,
                                                           *PROGRAM_PATCHES, *GATE_PATCHES, *PACK_HOST_PATCHES}
    for name, entry in patches.REGISTRY.items():
        assert entry.target and entry.package and entry.buys, name
        assert entry.verified_here(), f"{name}: verified on {entry.versions()}, not what is installed"
        assert all(str(Version(version)) == version for version in entry.verified), f"{name}: {entry.verified}"
        assert entry.kind in (FIX, SPEED)
        if entry.kind == FIX:
            assert name in FIX_TESTS, f"{name}: a fix with no test that shows it"
            test_file, test_name = FIX_TESTS[name].split("::")
            assert f"def {test_name}(" in (REPO / "tests" / test_file).read_text(), FIX_TESTS[name]
        else:
            speed_patches = (*shortcuts.NAMES, *sdk_patches.NAMES, *PROGRAM_PATCHES, *GATE_PATCHES, pack_host.SDK_PARTS_PATCH)
            assert name in speed_patches, name


# The pack host's patches: the private channel (a fix) and, for blueprint's own pack, the SDK's parts no
# pack uses loaded on first use (a speed patch: test_pack_verdicts_are_the_same_without_its_speed_patches).
PACK_HOST_PATCHES = (pack_host.PATCH_NAME, pack_host.SDK_PARTS_PATCH)


def test_an_installed_version_is_the_one_importlib_metadata_finds(tmp_path, monkeypatch):
    """The registry reads versions as importlib.metadata finds them (without its imports): every
    registered package's; a folder earlier on the path decides, a dist-info's METADATA by its Version
    line; an egg-info, a name found nowhere, are importlib.metadata's own answer."""
    for package in {entry.package for entry in patches.REGISTRY.values()} | {"integration-blueprint", "PyYAML"}:
        assert patches.installed_version(package) == metadata.version(package)
    earlier, eggs = tmp_path / "earlier", tmp_path / "eggs"
    (earlier / "Pulumi-9.9.9.dist-info").mkdir(parents=True)
    (earlier / "Pulumi-9.9.9.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: pulumi\nversion: 9.9.9\n\n"
                                                               "Version: not a header, the description\n")
    (eggs / "moto-0.1.egg-info").mkdir(parents=True)
    (eggs / "moto-0.1.egg-info" / "PKG-INFO").write_text("Metadata-Version: 1.0\nName: moto\nVersion: 0.1\n")
    monkeypatch.syspath_prepend(str(eggs))
    monkeypatch.syspath_prepend(str(earlier))
    assert patches.installed_version("pulumi") == metadata.version("pulumi") == "9.9.9"
    assert patches.installed_version("moto") == metadata.version("moto") == "0.1"
    with pytest.raises(metadata.PackageNotFoundError):
        patches.installed_version("no-such-distribution")


# The speed patches python_exec.py applies in a program's own process (preview/aws_imports.py,
# preview/program_speed.py); their equivalence test is the one below.
PROGRAM_PATCHES = (aws_imports.PATCH_NAME, program_speed.DEBUG_LOGS_PATCH, program_speed.SDK_PARTS_PATCH)


@pytest.mark.slow
def test_a_program_records_the_same_without_the_speed_patches_of_its_process(monkeypatch, recordings):
    from integration_blueprint.preview.recording import record_program

    monkeypatch.setenv(patches.WITHOUT_VARIABLE, ",".join(PROGRAM_PATCHES))
    without = record_program(REPO, stack="prod")

    def fingerprint(recorded):  # the SDK sends dependencies in its sets' order, which differs per process
        return [(r.urn, r.id, r.parent, sorted(r.dependencies), {k: sorted(v) for k, v in r.property_dependencies.items()},
                 r.inputs, r.outputs, r.source_line) for r in recorded.resources]
    assert fingerprint(without) == fingerprint(recordings(REPO, "prod"))


# The speed patch of the gate's own process (preview/pulumi_protos.py); its equivalence tests are the two below.
GATE_PATCHES = (pulumi_protos.PATCH_NAME,)

# In a process of its own: the gate's modules loaded first (as `blueprint preview` loads them), then
# the SDK's own modules imported as any program imports them, and each compared with the gate's.
GATE_PROTOS = """
import json, sys
from integration_blueprint.preview import pulumi_protos
sdk_before = sorted(name for name in sys.modules if name.split(".")[0] == "pulumi")
import importlib
differ = []
for name in pulumi_protos.NAMES:
    ours, sdk = getattr(pulumi_protos, name), importlib.import_module("pulumi.runtime.proto." + name)
    public = sorted(attribute for attribute in vars(sdk) if not attribute.startswith("_"))
    if public != sorted(attribute for attribute in vars(ours) if not attribute.startswith("_")):
        differ.append(name + ": names")
    if name.endswith("_pb2"):
        if ours.DESCRIPTOR.serialized_pb != sdk.DESCRIPTOR.serialized_pb:
            differ.append(name + ": descriptor")
        differ += [name + "." + message for message in sdk.DESCRIPTOR.message_types_by_name
                   if getattr(ours, message) is not getattr(sdk, message)]
    else:
        differ += [name + "." + service for service in public if isinstance(getattr(sdk, service), type)
                   and sorted(vars(getattr(sdk, service))) != sorted(vars(getattr(ours, service)))]
print(json.dumps({"sdk_before": sdk_before, "differ": differ}))
"""


@pytest.mark.parametrize("left_out", ["", pulumi_protos.PATCH_NAME])
def test_the_gate_loads_the_sdks_own_protocol_modules_without_importing_the_sdk(left_out):
    """With the patch, the gate's process imports nothing of the SDK's (its figure: the SDK's own
    imports, a third of the gate's); its messages are the SDK's own classes and its services the
    same, so a later `import pulumi` in the process (a drill, an in-process program) shares them."""
    done = subprocess.run([sys.executable, "-c", GATE_PROTOS], capture_output=True, text=True, timeout=120,
                          env={**os.environ, patches.WITHOUT_VARIABLE: left_out})
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["differ"] == []
    if left_out:
        assert "pulumi" in found["sdk_before"] and "pulumi.automation" in found["sdk_before"]
    else:
        assert found["sdk_before"] == []


# The gate's modules first, then a program in the same process (as a drill records one): the SDK is
# imported after the gate loaded its protocol modules.
IN_PROCESS_AFTER_THE_GATE = """
import json, sys
from integration_blueprint.preview.recording import record_program
from integration_blueprint.components import FifoBillingQueue
recorded = record_program(lambda: FifoBillingQueue("payroll", {}), config={"aws:region": "eu-west-1"})
print(json.dumps([[r.urn, r.inputs, r.outputs] for r in recorded.resources], sort_keys=True, default=str))
"""


@pytest.mark.slow
def test_a_preview_reports_the_same_without_the_speed_patch_of_the_gate():
    def run(argv: list[str], left_out: str):
        done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=300,
                              env={**os.environ, patches.WITHOUT_VARIABLE: left_out})
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    preview = [str(Path(sys.executable).with_name("blueprint")), "preview", "--stack", "prod", "--format", "json"]
    with_patch, without = run(preview, ""), run(preview, ",".join(GATE_PATCHES))
    assert with_patch["summary"]["resources"] > 50
    assert with_patch == without

    in_process = [sys.executable, "-c", IN_PROCESS_AFTER_THE_GATE]
    recorded = run(in_process, "")
    assert len(recorded) > 20 and recorded == run(in_process, ",".join(GATE_PATCHES))


@pytest.fixture
def marker_owner():
    """A stand-in for a library's class, and a patch of each kind that changes it."""
    owner = types.SimpleNamespace(answer="library's own")

    def install(patcher):
        patcher.replace(owner, "answer", "patched")

    yield owner, install
    for name in [name for name in patches.REGISTRY if name.startswith("test-")]:
        patches.REGISTRY.pop(name)


def register(name, kind, verified, install):
    patches.patch(name, target="owner.answer", package="moto", verified=verified, kind=kind,
                  buys="nothing: a test")(install)


def neighbours(version: str) -> tuple[str, str]:
    """The releases just before and just after `version` (a patch release each way)."""
    major, minor, micro = Version(version).release[:3]
    return f"{major}.{minor}.{max(micro - 1, 0)}" if micro else f"{major}.{minor - 1}.99", f"{major}.{minor}.{micro + 1}"


INSTALLED_MOTO = metadata.version("moto")


@pytest.mark.parametrize("other", neighbours(INSTALLED_MOTO))
def test_a_speed_patch_on_any_release_but_its_own_is_skipped_with_one_line_naming_both(marker_owner, capsys, other):
    """A neighbouring release (the next patch release, the one before) is not verified either."""
    owner, install = marker_owner
    name = f"test-speed-{other}"  # one line per patch and process: each case a patch of its own
    register(name, SPEED, (other,), install)

    for _ in range(2):
        with patches.applied([name]):
            assert owner.answer == "library's own"

    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert f"{name} skipped: verified on moto {other}, moto {INSTALLED_MOTO} is installed" in lines[0]


@pytest.mark.parametrize("other", neighbours(INSTALLED_MOTO))
def test_a_fix_on_any_release_but_its_own_refuses_to_run_naming_itself_and_both_versions(marker_owner, other):
    owner, install = marker_owner
    register("test-fix", FIX, (other, "1.0.0"), install)

    with pytest.raises(PatchRefused, match=rf"moto {INSTALLED_MOTO} is installed, but the fix test-fix .* "
                                           rf"verified on moto {other} or 1.0.0 only; install a verified version"):
        with patches.applied(["test-fix"]):
            pass
    assert owner.answer == "library's own"


def test_a_patch_on_one_of_its_verified_releases_applies(marker_owner):
    owner, install = marker_owner
    register("test-fix", FIX, ("1.0.0", INSTALLED_MOTO), install)

    with patches.applied(["test-fix"]):
        assert owner.answer == "patched"


@pytest.mark.parametrize("verified", [">=5.2.5,<5.3", ("~=5.2",), (), ("5.2.*",)])
def test_a_patch_must_name_the_exact_releases_it_was_verified_on_never_a_range(marker_owner, verified):
    _, install = marker_owner
    with pytest.raises(ValueError, match="test-fix: verified"):
        register("test-fix", FIX, verified, install)
    assert "test-fix" not in patches.REGISTRY


def test_a_block_undoes_what_it_applied_and_leaves_an_enclosing_block_s_patches(marker_owner):
    owner, install = marker_owner
    register("test-fix", FIX, (INSTALLED_MOTO,), install)

    with patches.applied(["test-fix"]):
        with patches.applied(["test-fix"]):
            assert owner.answer == "patched"
        assert owner.answer == "patched" and "test-fix" in patches.active()
    assert owner.answer == "library's own" and "test-fix" not in patches.active()


def test_a_speed_patch_can_be_left_out_by_name_and_a_fix_cannot(marker_owner, monkeypatch):
    owner, install = marker_owner
    register("test-speed", SPEED, (INSTALLED_MOTO,), install)
    register("test-fix", FIX, (INSTALLED_MOTO,), install)
    monkeypatch.setenv(patches.WITHOUT_VARIABLE, "test-speed")

    with patches.applied(["test-speed"]):
        assert owner.answer == "library's own"
    monkeypatch.setenv(patches.WITHOUT_VARIABLE, "test-fix")
    with pytest.raises(ValueError, match="test-fix is not a speed patch"):
        with patches.applied(["test-fix"]):
            pass


def test_the_emulator_leaves_moto_and_botocore_as_it_found_them():
    from botocore import endpoint
    from moto.core.botocore_stubber import BotocoreStubber
    from moto.sqs.models import Queue

    before = (BotocoreStubber.__call__, endpoint.Endpoint._send, endpoint.time, vars(Queue).get("attributes"))
    outside = patches.active()  # the suite's own (conftest.py)
    with emulator.running_emulator("eu-west-1"):
        assert set(emulator.EMULATOR_PATCHES) <= patches.active()
        assert endpoint.Endpoint._send is not before[1]
    assert (BotocoreStubber.__call__, endpoint.Endpoint._send, endpoint.time, vars(Queue).get("attributes")) == before
    assert patches.active() == outside


def test_a_request_a_fault_answered_is_not_carried_out():
    from botocore.awsrequest import AWSResponse

    class Body:
        def stream(self, **_):
            yield b'{"__type": "ThrottlingException", "message": "injected"}'

    def throttle(request, **_):
        setattr(request, emulator.ANSWERED, True)
        return AWSResponse(request.url, 400, {"x-amzn-ErrorType": "ThrottlingException"}, Body())

    with emulator.running_emulator("eu-west-1") as running:
        sqs = running.client("sqs")
        url = sqs.create_queue(QueueName="q")["QueueUrl"]
        throttled = boto3.client("sqs", config=Config(retries={"max_attempts": 1}))
        throttled.meta.events.register_first("before-send.sqs.SendMessage", throttle)
        with pytest.raises(ClientError, match="ThrottlingException"):
            throttled.send_message(QueueUrl=url, MessageBody="once")
        assert "Messages" not in sqs.receive_message(QueueUrl=url)


def test_sdk_and_state_machine_retry_waits_are_compressed():
    from botocore import endpoint
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

    with emulator.running_emulator("eu-west-1"):
        for clock in (endpoint.time, retrier_decl.time):
            started = time.monotonic()
            clock.sleep(10)
            assert time.monotonic() - started < 10 * emulator.TIME_SCALE + 0.5


@pytest.mark.parametrize("unknowns", [False, True])
def test_pack_verdicts_are_the_same_without_its_speed_patches(monkeypatch, recordings, policy_analyzer, unknowns):
    """The pack's speed patches (policies/sdk_patches.py, and pack_host.py's SDK parts loaded on
    first use) change how much work the pack does, never a verdict: a program that breaks every rule
    gets the same report from the SDK's own servicer in the SDK's own process (what an unverified
    pulumi-policy or pulumi runs)."""
    from integration_blueprint.preview.analyzer import PolicyAnalyzer
    from integration_blueprint.preview.run import run_preview

    program = REPO / "tests" / "fixtures" / "every_violation"
    recorded = recordings(program, "test", unknowns=unknowns)

    def preview(analyzer) -> dict:
        return run_preview(program, stack="test", unknowns=unknowns, analyzer=analyzer, recorded=recorded).to_json()

    with_patches = preview(policy_analyzer)
    speed = [name for name in (*sdk_patches.NAMES, pack_host.SDK_PARTS_PATCH) if patches.REGISTRY[name].kind == SPEED]
    monkeypatch.setenv(patches.WITHOUT_VARIABLE, ",".join(speed))
    with PolicyAnalyzer(project="every-violation", stack="test", reconfigurable=True) as without_patches:
        assert preview(without_patches) == with_patches
    assert with_patches["violations"]


def test_a_fifo_queue_drops_a_deduplication_id_it_accepted_in_the_last_five_minutes_even_once_consumed():
    """As SQS does (DESIGN: "a deduplication id is remembered for 5 minutes, whether or not the
    message is still queued"); moto compared it only with the messages still queued."""
    with emulator.running_emulator("eu-west-1") as running:
        sqs = running.client("sqs")
        url = sqs.create_queue(QueueName="charges.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]

        def send(body, dedup):
            sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId="g", MessageDeduplicationId=dedup)

        def consume() -> list:
            received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
            for message in received:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
            return [m["Body"] for m in received]

        send("charge", "tenant-1:2026-10")
        assert consume() == ["charge"]
        send("charge again", "tenant-1:2026-10")  # a retried send, after the first was consumed
        send("next", "tenant-2:2026-10")
        assert consume() == ["next"]
