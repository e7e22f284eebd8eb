"""A team's function runs as its Lambda execution environment would: a process of its own that sees
only its archive, its layers and the runtime's SDK, its own environment and /tmp, within its timeout
and memory size; what it does to AWS is made (and journaled) in the sandbox's process."""

import copy
import os
import shutil
import time
from pathlib import Path

import pytest

from integration_blueprint.preview import gate_rules, lambda_archive
from integration_blueprint.preview.locations import Locator
from integration_blueprint.sandbox.emulator import running_emulator
from integration_blueprint.sandbox.errors import FunctionCrashed, FunctionError
from integration_blueprint.sandbox.execution_environment import (
    Environments,
    FunctionCalls,
    FunctionTimedOut,
    guards,
    interpreter_packages,
)
from integration_blueprint.sandbox.interception import FunctionRun, Journal, install_request_hooks
from tests.containment_env import processes_with_argument, team_function
from tests.team_billing import ADD_TO_BALANCE, billing_program


def environments(staging: Path, code: str, *, timeout: int = 3, memory_mb: int = 256, answer=None,
                 environment: dict | None = None, contained: bool = True) -> tuple[Environments, list]:
    """A function whose archive holds app.py = `code`, handler app.handler."""
    return team_function(staging, code, timeout=timeout, memory_mb=memory_mb, contained=contained,
                         environment=environment or {"TABLE": "ledger"},
                         answer=answer or FunctionCalls("eu-west-1").answer)


@pytest.fixture
def staging(tmp_path_factory):
    folder = Path(__import__("tempfile").mkdtemp(prefix="blueprint-sandbox-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_function_sees_its_own_environment_and_tmp_and_nothing_of_the_users(staging, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    monkeypatch.setenv("AWS_PROFILE", "prod-admin")
    functions, incidents = environments(staging, """
        import os, sys

        def handler(event, context):
            with open("/tmp/mine.txt", "w") as f:
                f.write("scratch")
            refused = []
            for path in (os.path.expanduser("~root/.aws/credentials"), "/etc/blueprint-escape.txt"):
                try:
                    open(path, "w").write("x")
                except OSError as exc:
                    refused.append(type(exc).__name__)
            try:
                import integration_blueprint
                shipped = True
            except ImportError:
                shipped = False
            base_packages = [p for p in BASE_PACKAGES if os.path.isdir(p) and os.listdir(p)]
            return {"env": dict(os.environ), "refused": refused, "shipped": shipped, "base_packages": base_packages,
                    "tmp": os.listdir("/tmp" if os.environ["TMPDIR"] == "/tmp" else os.environ["TMPDIR"]),
                    "remaining_ms": context.get_remaining_time_in_millis(), "powertools": "aws_lambda_powertools" in
                    {p.split("/")[-1] for p in os.listdir(sys.path[1])}}
    """.replace("BASE_PACKAGES", repr(interpreter_packages())))
    try:
        result = functions.invoke({}, None)
    finally:
        functions.close()

    env = result["env"]
    assert "GITHUB_TOKEN" not in env and "AWS_PROFILE" not in env
    assert env["TABLE"] == "ledger" and env["AWS_LAMBDA_FUNCTION_NAME"] == "team-fn"
    assert env["AWS_ACCESS_KEY_ID"] == "sandbox" and env["_HANDLER"] == "app.handler"
    assert "mine.txt" in result["tmp"] and result["powertools"]
    assert result["shipped"] is False  # the package is not in its archive: not importable
    assert interpreter_packages() and result["base_packages"] == []  # nor what the interpreter has installed
    assert result["refused"] == ["PermissionError", "PermissionError"]
    assert {i.kind for i in incidents} == {"write"}
    assert result["remaining_ms"] <= 6  # 3 s, compressed by the sandbox (TIME_SCALE)
    assert not (Path("/etc/blueprint-escape.txt")).exists()


def test_an_import_its_archive_does_not_hold_fails_as_lambda_fails_naming_module_and_archive(staging):
    functions, _ = environments(staging, """
        from integration_blueprint.handlers.runtime.idempotent_stream import make_handler
        handler = make_handler(process_record=print)
    """)
    with pytest.raises(FunctionError) as failed:
        functions.invoke({}, None)
    functions.close()

    assert failed.value.error_type == "Runtime.ImportModuleError"
    assert "Unable to import module 'app': No module named 'integration_blueprint'" in str(failed.value)
    assert "FileArchive ./app" in str(failed.value)


def test_a_connection_is_refused_and_reported(staging):
    functions, incidents = environments(staging, """
        import socket

        def handler(event, context):
            socket.create_connection(("127.0.0.1", 9), timeout=1)
    """)
    with pytest.raises(FunctionError, match="refused by the sandbox"):
        functions.invoke({"record": "r1"}, None)
    functions.close()

    assert [(i.kind, i.event) for i in incidents][:1] == [("connection", {"record": "r1"})]


@pytest.mark.slow
def test_a_handler_that_never_returns_is_ended_with_what_it_started_and_the_next_invocation_starts_fresh(staging):
    marker = f"{os.getpid() % 1000 + 100}.{time.time_ns() % 10**9}"  # a sleep the host can find by its argument
    functions, incidents = environments(staging, f"""
        import subprocess, time

        def handler(event, context):
            if event.get("hang"):
                subprocess.Popen(["sleep", "{marker}"], start_new_session=True)
                while True:
                    time.sleep(0.05)
            return "served"
    """, timeout=1)
    started = time.monotonic()
    with pytest.raises(FunctionTimedOut, match="Task timed out after 1 seconds"):
        functions.invoke({"hang": True}, None)
    ended = time.monotonic() - started

    assert ended < 4  # the enforced timeout (its 2 s floor), not forever
    assert functions.invoke({}, None) == "served" and functions.started == 2  # a fresh environment
    functions.close()
    assert incidents[0].kind == "timeout" and incidents[0].event == {"hang": True}
    assert processes_with_argument(marker) == []  # the process it started, in a session of its own, ended with it


def test_memory_past_the_functions_size_ends_the_invocation(staging):
    functions, incidents = environments(staging, """
        def handler(event, context):
            hog = b"x" * (2 * 1024 * 1024 * 1024)  # touched, not only reserved: held
            return len(hog)
    """, memory_mb=256, timeout=300)  # the kernel's reclaim before it ends it is slow on a busy machine
    with pytest.raises(FunctionCrashed, match="Runtime.OutOfMemory"):
        functions.invoke({}, None)
    functions.close()
    assert [i.kind for i in incidents] == ["out-of-memory"]


@pytest.mark.slow
def test_its_aws_calls_are_made_journaled_and_answered_in_the_sandboxs_process(staging):
    with running_emulator("eu-west-1") as emulator:
        ddb = emulator.client("dynamodb")
        ddb.create_table(TableName="ledger", BillingMode="PAY_PER_REQUEST",
                         KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                         AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
        install_request_hooks(None, emulator.on_stop)
        functions, incidents = environments(staging, """
            import socket

            import boto3
            from botocore.exceptions import ClientError

            ddb = boto3.client("dynamodb")
            TABLES = ddb.list_tables()["TableNames"]  # a call at init, as some handlers make
            try:
                socket.create_connection(("127.0.0.1", 9), timeout=1)
            except OSError:
                pass

            def handler(event, context):
                assert TABLES == ["ledger"]
                ddb.put_item(TableName="ledger", Item={"pk": {"S": event["id"]}},
                             ConditionExpression="attribute_not_exists(pk)")
                try:
                    ddb.put_item(TableName="ledger", Item={"pk": {"S": event["id"]}},
                                 ConditionExpression="attribute_not_exists(pk)")
                except ClientError as error:
                    return error.response["Error"]["Code"]
        """)
        journal = Journal()
        with FunctionRun("team-fn", {"id": "r1"}, journal):
            answer = functions.invoke({"id": "r1"}, None)
        functions.close()
        stored = ddb.get_item(TableName="ledger", Key={"pk": {"S": "r1"}})["Item"]

    assert answer == "ConditionalCheckFailedException" and stored == {"pk": {"S": "r1"}}
    [invocation] = journal.invocations
    assert [c.operation for c in invocation.calls] == ["ListTables", "PutItem"]  # the init's call is the first invocation's
    assert invocation.calls[1].params["Item"] == {"pk": {"S": "r1"}}
    assert [i.kind for i in incidents] == ["connection"]


@pytest.mark.parametrize("entry", ["../../escape.py", "/tmp/escape.py", "lib/../../escape.py"])
def test_an_archive_entry_outside_the_functions_folder_is_refused_naming_it(tmp_path, entry):
    (tmp_path / "app.py").write_text("def handler(e, c): return 1\n")
    code = {"archive": "AssetArchive", "assets": {"app.py": {"asset": "FileAsset", "path": "app.py"},
                                                   entry: {"asset": "FileAsset", "path": "app.py"}}}
    into = tmp_path / "deep" / "er" / "fn"
    into.mkdir(parents=True)

    with pytest.raises(lambda_archive.ArchiveError, match=f"archive entry {entry!r}"):
        lambda_archive.unpack(code, tmp_path, into)
    assert not (tmp_path / "deep" / "escape.py").exists() and not Path("/tmp/escape.py").exists()
    assert lambda_archive.handler_problem(code, tmp_path, "app.handler").startswith(f"archive entry {entry!r}")


def test_the_preview_names_a_handler_whose_module_or_function_is_not_in_its_archive(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "orders.py").write_text("def handler(event, context):\n    return 1\n")
    code = {"archive": "FileArchive", "path": "./app"}

    assert lambda_archive.handler_problem(code, tmp_path, "orders.handler") is None
    assert "module 'auth' is not in the function's archive" in lambda_archive.handler_problem(code, tmp_path, "auth.handler")
    assert "Runtime.HandlerNotFound" in lambda_archive.handler_problem(code, tmp_path, "orders.main")
    (tmp_path / "app" / "runtime_user.py").write_text(
        "from integration_blueprint.handlers.runtime.billing import Charge\n\ndef handler(e, c):\n    return 1\n")
    assert "imports integration_blueprint, which the function's archive does not hold" in \
        lambda_archive.handler_problem(code, tmp_path, "runtime_user.handler")


def test_every_guard_says_how_it_is_enforced_contained_or_not():
    for contained in (True, False):
        described = guards(contained)
        assert {"network", "processes", "files", "privileges", "memory", "timeout", "output"} <= set(described)
        walls = {described[name] for name in ("network", "processes", "files", "privileges")}
        assert all(how.startswith("bubblewrap") if contained else how.startswith("NOT CONTAINED") for how in walls)


FORGING_CONSUMER = '''
"""Adds on every delivery (a duplicate effect per redelivery) and, at its first invocation, rewrites
the drill's verdict: in the drill's process this passed with "every record processed exactly once"."""
import json
import os

import boto3

ddb = boto3.client("dynamodb")
forged = []


def forge():
    from integration_blueprint.drill import effects

    effects._duplicated = lambda deliveries: None  # "no record's effect landed twice"


def handler(event, context):
    if not forged:
        forged.append(True)
        try:
            forge()
        except ImportError:
            pass  # the package is not in this function's archive
''' + ADD_TO_BALANCE

FORGING_PROGRAM = billing_program("team-billing")


@pytest.mark.slow
def test_a_handler_that_rewrites_the_drills_verdict_still_fails_the_drill(tmp_path):
    from integration_blueprint.drill.patterns import DRIVERS
    from integration_blueprint.drill.report import DrillOptions
    from integration_blueprint.drill.runner import run_drill

    (tmp_path / "Pulumi.yaml").write_text("name: forging\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (tmp_path / "__main__.py").write_text(FORGING_PROGRAM)
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "charges.py").write_text(FORGING_CONSUMER)

    report = run_drill(DrillOptions(program_dir=tmp_path, records=20, seed=3, duplicates=0.3, crashes=1,
                                    transient=0.0), drivers={"fifo_billing": DRIVERS["fifo_billing"]}, workers=1)

    billing = report.patterns["fifo_billing"]
    assert not report.passed and billing.duplicate_effects > 0, billing.notes
    assert any("execution environment(s) of its own" in note for note in billing.notes)
    assert not list((tmp_path / "code").glob("__pycache__"))  # nothing written into the program's folder


def test_the_drills_own_environment_is_out_of_reach_through_proc(staging, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    functions, incidents = environments(staging, f"""
        def handler(event, context):
            try:
                return open("/proc/{os.getpid()}/environ", "rb").read().decode(errors="replace")
            except OSError as exc:
                return type(exc).__name__
    """)
    answer = functions.invoke({}, None)
    functions.close()
    assert "ghp_secret" not in answer


TEAM_PROGRAM = Path(__file__).parent / "fixtures" / "team_program"


@pytest.mark.slow
def test_a_team_folder_ships_with_the_handler_runtime_beside_it_and_its_handler_is_found(recordings):
    recorded = copy.deepcopy(recordings(TEAM_PROGRAM, stack="fixed"))  # shared: changed below
    consumer = recorded.named("orders-consumer")
    members = lambda_archive.members(consumer.inputs["code"], TEAM_PROGRAM)

    assert "orders.py" in members and "once.py" in members  # the team's own files, at the root
    assert "integration_blueprint/handlers/runtime/idempotent_stream.py" in members  # what orders.py imports
    assert gate_rules.handler_violations(recorded) == []
    consumer.inputs["handler"] = "order.handler"
    [violation] = gate_rules.handler_violations(recorded)
    assert (violation.policy, violation.level, violation.urn) == ("lambda-handler-in-archive", "mandatory", consumer.urn)
    assert violation.message.endswith(
        "function orders-consumer: handler 'order.handler': module 'order' is not in the function's archive "
        "(order.py) (did you mean 'orders'?); Lambda would fail every invocation with Runtime.ImportModuleError")
    # The component's call, where the team wrote it: the program declares both stream consumers in one loop.
    component_line = next(number for number, line in enumerate(
        (TEAM_PROGRAM / "__main__.py").read_text().splitlines(), start=1) if line.strip() == "consumer(name, {")
    assert Locator(recorded)(violation.urn).line == component_line
    consumer.inputs["layers"] = ["arn:aws:lambda:eu-west-1:123456789012:layer:shared:3"]
    assert gate_rules.handler_violations(recorded) == []  # a layer may hold the module: not judged


def test_not_contained_the_audit_hook_still_reports_and_refuses(staging):
    """--no-isolation: no walls, a plain process; the audit hook (a report, not a wall) still says
    what the function tried."""
    functions, incidents = environments(staging, contained=False, code="""
        import os, socket

        def handler(event, context):
            refused = []
            for attempt in (lambda: open("/etc/blueprint-escape.txt", "w"),
                            lambda: socket.create_connection(("127.0.0.1", 9), timeout=1)):
                try:
                    attempt()
                except PermissionError:
                    refused.append(True)
            with open(os.path.join(os.environ["TMPDIR"], "scratch"), "w") as f:
                f.write("mine")
            return {"refused": len(refused), "tmp": os.environ["TMPDIR"]}
    """)
    result = functions.invoke({}, None)
    functions.close()

    assert result["refused"] == 2 and result["tmp"].startswith(str(staging))
    assert [i.kind for i in incidents] == ["write", "connection"]


@pytest.mark.slow
def test_a_timeout_is_the_functions_own_failure_not_a_crash_the_drill_injected(staging):
    import random

    from integration_blueprint.drill.invoker import Invoker
    from integration_blueprint.sandbox.faults import FaultInjector

    functions, incidents = environments(staging, """
        import time

        def handler(event, context):
            time.sleep(60)
    """, timeout=1)
    invoker = Invoker(function=functions.invoke, faults=FaultInjector(), rng=random.Random(1), duplicate_rate=0.0)

    with pytest.raises(FunctionTimedOut):
        invoker({"Records": []})
    functions.close()
    assert invoker.crashes == 0 and [i.kind for i in incidents] == ["timeout"]


@pytest.mark.parametrize("link_to", ["outside/credentials", "/proc/self/environ", "app/inner/../../outside"])
def test_a_link_out_of_a_file_archive_folder_is_refused_naming_it_and_never_followed(tmp_path, link_to):
    """Pulumi packs what a link points to: a link out of the folder would ship the drill's (or the
    developer's) secrets in the function. Refused, naming the entry and saying why; nothing copied."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "credentials").write_text("aws_secret_access_key = host")
    app = tmp_path / "app"
    (app / "inner").mkdir(parents=True)
    (app / "app.py").write_text("def handler(e, c): return 1\n")
    target = link_to if link_to.startswith("/") else tmp_path / link_to
    (app / "inner" / "leak").symlink_to(target)
    into = tmp_path / "copy"

    with pytest.raises(lambda_archive.ArchiveError, match=r"archive entry 'inner/leak' is a link to .*outside the "
                       r"archive's folder .*Pulumi packs the file a link points to"):
        lambda_archive.copy_folder(app, into)
    assert not into.exists()
    problem = lambda_archive.handler_problem({"archive": "FileArchive", "path": "app"}, tmp_path, "app.handler")
    assert problem is not None and problem.startswith("archive entry 'inner/leak' is a link to")


def test_a_link_inside_a_file_archive_folder_is_copied_as_a_link(tmp_path):
    app = tmp_path / "app"
    (app / "lib").mkdir(parents=True)
    (app / "lib" / "shared.py").write_text("VALUE = 1\n")
    (app / "shared.py").symlink_to("lib/shared.py")
    into = tmp_path / "copy"

    lambda_archive.copy_folder(app, into)

    assert (into / "shared.py").is_symlink() and (into / "shared.py").read_text() == "VALUE = 1\n"
