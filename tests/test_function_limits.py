"""A team's function gets Lambda's limits in the drill (issue 46 item 3): its memory size bounds
everything it holds (heap, memory files, /tmp, child processes), /tmp is its ephemeral storage,
processes and threads and file descriptors stop at Lambda's 1,024, and what it prints is kept to a
bounded head and tail. Where the machine cannot bound memory, the drill says so."""

import shutil
import tempfile
from pathlib import Path

import pytest

from integration_blueprint import containment
from integration_blueprint.core import aws_limits
from integration_blueprint.sandbox import execution_environment
from integration_blueprint.sandbox.errors import FunctionError
from integration_blueprint.sandbox.execution_environment import (
    LOG_HEAD_BYTES,
    LOG_TAIL_BYTES,
    FunctionOutOfMemory,
    guards,
)
from tests.containment_env import team_function

needs_sandbox = pytest.mark.skipif(not containment.containment().available,
                                   reason="bubblewrap cannot make the sandbox here")
needs_cgroup = pytest.mark.skipif(not (containment.cgroup_place().memory and containment.cgroup_place().pids),
                                  reason="no cgroup with memory and pids can be made here (the report says so: "
                                         "test_where_no_cgroup_can_be_made_the_drill_says_memory_is_not_enforced)")


@pytest.fixture
def staging():
    folder = Path(tempfile.mkdtemp(prefix="blueprint-limits-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def function(staging: Path, code: str, *, memory_mb: int = 128, ephemeral_storage_mb: int = 512):
    return team_function(staging, code, memory_mb=memory_mb, ephemeral_storage_mb=ephemeral_storage_mb)


@needs_sandbox
@needs_cgroup
def test_a_128_mb_function_holding_256_mb_in_a_memory_file_ends_out_of_memory_as_lambda_ends_it(staging):
    functions, incidents = function(staging, """
        import os

        def handler(event, context):
            if event.get("small"):
                return "served"
            held = os.memfd_create("cache")  # not heap: RLIMIT_AS never counted it
            for _ in range(256):
                os.write(held, b"x" * (1024 * 1024))
            return "held 256 MB"
    """, memory_mb=128)
    with pytest.raises(FunctionOutOfMemory, match=r"Runtime.OutOfMemory.*128 MB"):
        functions.invoke({"record": "r1"}, None)
    assert functions.invoke({"small": True}, None) == "served"  # a fresh environment, as after a crash on Lambda
    functions.close()

    assert [(i.kind, i.event) for i in incidents] == [("out-of-memory", {"record": "r1"})]


@pytest.mark.slow
@needs_sandbox
@needs_cgroup
def test_what_a_function_holds_in_tmp_and_in_child_processes_counts_in_its_memory_size(staging):
    functions, incidents = function(staging, """
        import subprocess, sys

        def handler(event, context):
            if event.get("tmp"):  # /tmp is memory here: its pages count
                with open("/tmp/cache", "wb") as out:
                    for _ in range(200):
                        out.write(b"x" * (1024 * 1024))
            else:  # a child process holding what the function does not
                subprocess.run([sys.executable, "-c", "held = b'x' * (200 * 1024 * 1024)"], check=True)
            return "held"
    """, memory_mb=128)
    for event in ({"tmp": True}, {"child": True}):
        with pytest.raises(FunctionOutOfMemory):
            functions.invoke(event, None)
    functions.close()
    assert [i.kind for i in incidents] == ["out-of-memory", "out-of-memory"]


@needs_sandbox
def test_tmp_is_the_functions_ephemeral_storage_and_it_gets_lambdas_file_descriptor_limit(staging):
    functions, _ = function(staging, """
        import os, resource

        def handler(event, context):
            tmp = os.statvfs("/tmp")
            try:
                with open("/tmp/big", "wb") as out:
                    out.write(b"x" * (24 * 1024 * 1024))
                written = "all"
            except OSError as exc:
                written = exc.strerror
            return {"tmp_mb": tmp.f_blocks * tmp.f_frsize // (1024 * 1024), "written": written,
                    "files": list(resource.getrlimit(resource.RLIMIT_NOFILE)),
                    "shm_mb": os.statvfs("/dev/shm").f_blocks * os.statvfs("/dev/shm").f_frsize // (1024 * 1024)}
    """, memory_mb=512, ephemeral_storage_mb=16)  # Lambda's least is 512 MB: scaled, the same rule
    seen = functions.invoke({}, None)
    functions.close()

    assert seen["tmp_mb"] == 16 and seen["written"] == "No space left on device"
    assert seen["files"] == [aws_limits.LAMBDA_FILE_DESCRIPTORS_MAX] * 2
    assert seen["shm_mb"] <= 1


@pytest.mark.slow
@needs_sandbox
@needs_cgroup
def test_1200_threads_at_init_are_refused_at_lambdas_1024_as_an_init_error(staging):
    functions, incidents = function(staging, """
        import threading

        hold = threading.Event()
        for _ in range(1200):
            threading.Thread(target=hold.wait, daemon=True).start()

        def handler(event, context):
            return "served"
    """, memory_mb=2048)
    with pytest.raises(FunctionError, match="can't start new thread"):
        functions.invoke({}, None)
    functions.close()

    assert any(i.kind == "tasks" and "1024" in i.detail for i in incidents)


@pytest.mark.slow
@needs_sandbox
def test_a_function_printing_megabytes_at_init_leaves_only_its_capped_head_and_tail_in_the_drills_log(staging, capfd):
    functions, _ = function(staging, """
        import sys
        sys.stdout.write("first line\\n" + "y" * (16 * 1024 * 1024) + "\\nlast line\\n")  # 64 MiB: the same, slower
        sys.stdout.flush()

        def handler(event, context):
            return "served"
    """, memory_mb=512)
    assert functions.invoke({}, None) == "served"
    functions.close()
    logged = capfd.readouterr().out

    assert len(logged) < LOG_HEAD_BYTES + LOG_TAIL_BYTES + 4096
    assert logged.startswith("[team-fn] first line") and logged.rstrip().endswith("last line")
    assert f"bytes of function team-fn's output left out: it printed {16 * 1024 * 1024 + 22} bytes" in logged


def test_where_no_cgroup_can_be_made_the_drill_says_memory_is_not_enforced(monkeypatch):
    nowhere = containment.CgroupPlace(reason="this process's cgroup is not writable", fix="run it in a delegated cgroup")
    monkeypatch.setattr(execution_environment, "cgroup_place", lambda: nowhere)
    monkeypatch.setattr(containment, "cgroup_place", lambda: nowhere)

    described = guards(True)

    assert described["memory"].startswith("NOT ENFORCED: this process's cgroup is not writable")
    assert "run it in a delegated cgroup" in described["memory"]
    assert described["processes and threads"].startswith("NOT ENFORCED")
    assert described["file descriptors"].startswith("Lambda's 1024")
