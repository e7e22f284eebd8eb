"""A preview's channels (the engine, the policy pack, the component plugin) are the run's alone: a
process beside a running `blueprint preview` that finds them (in /proc, as anyone can) cannot
reconfigure the pack or register resources with the engine, and the verdict stays the program's.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc, resource_pb2, resource_pb2_grpc

from integration_blueprint.preview import private_channel

BLUEPRINT = Path(sys.executable).with_name("blueprint")
ATTACK_SECONDS = 3
# A program with three mandatory violations (among them a redrive after a single receive) that holds still
# while the attacker works, so the preview's channels are open (a sandboxed program can tell nobody outside
# when it is ready: the test waits for the channels to appear).
PROGRAM = f'''
import json, time
import pulumi_aws as aws

dlq = aws.sqs.Queue("dlq")
aws.sqs.Queue("orders", redrive_policy=dlq.arn.apply(
    lambda arn: json.dumps({{"deadLetterTargetArn": arn, "maxReceiveCount": 1}})))
time.sleep({ATTACK_SECONDS + 6})
'''


def write_program(folder: Path) -> Path:
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: attacked\nruntime: python\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (folder / "__main__.py").write_text(PROGRAM)
    return folder


def descendants(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        parent = queue.pop()
        found.append(parent)
        for task in Path(f"/proc/{parent}/task").glob("*"):
            children = (task / "children").read_text().split() if (task / "children").exists() else []
            queue += [int(child) for child in children]
    return found


def channels_of(pid: int) -> set[str]:
    """Every address an attacker can learn for the preview's processes: the Unix sockets they hold
    (their inodes in /proc/net/unix) and any address on a command line."""
    inodes = set()
    addresses = set()
    for process in descendants(pid):
        try:
            for fd in Path(f"/proc/{process}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[len("socket:["):-1])
            command = Path(f"/proc/{process}/cmdline").read_bytes().split(b"\0")
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        addresses |= {arg.decode() for arg in command if re.match(rb"^(unix:/|127\.0\.0\.1:[1-9]\d*$)", arg)}
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 8 and fields[6] in inodes and fields[7].startswith("/"):
            addresses.add(f"unix:{fields[7]}")
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and fields[9] in inodes:  # listening
            addresses.add(f"127.0.0.1:{int(fields[1].split(':')[1], 16)}")
    return addresses


def attack(address: str) -> list[grpc.StatusCode]:
    """Disable the violated policy and register a clean twin of the violating queue: how each was answered."""
    answers = []
    with grpc.insecure_channel(address) as channel:
        configure = analyzer_pb2.ConfigureAnalyzerRequest()
        configure.policyConfig["sqs-dlq-max-receive-count"].enforcementLevel = analyzer_pb2.DISABLED
        register = resource_pb2.RegisterResourceRequest(type="aws:sqs/queue:Queue", name="orders", custom=True)
        for call in (lambda: analyzer_pb2_grpc.AnalyzerStub(channel).Configure(configure, timeout=5),
                     lambda: resource_pb2_grpc.ResourceMonitorStub(channel).RegisterResource(register, timeout=5)):
            try:
                call()
                answers.append(grpc.StatusCode.OK)
            except grpc.RpcError as error:
                answers.append(error.code())
    return answers


@pytest.mark.slow
def test_a_process_beside_a_running_preview_can_neither_disable_a_policy_nor_register_a_resource(tmp_path):
    program = write_program(tmp_path / "program")
    preview = subprocess.Popen([str(BLUEPRINT), "preview", "--program", str(program), "--format", "json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and preview.poll() is None and not {"engine", "analyzer"} <= {
                Path(a.removeprefix("unix:")).stem for a in channels_of(preview.pid) if a.startswith("unix:")}:
            time.sleep(0.05)
        assert preview.poll() is None, preview.stderr.read()
        # Over a few seconds (before and after the gate configures the pack), every channel found.
        seen: set[str] = set()
        answers: list[grpc.StatusCode] = []
        end = time.monotonic() + ATTACK_SECONDS
        while time.monotonic() < end:
            for address in channels_of(preview.pid):
                seen.add(address)
                answers += attack(address)
            time.sleep(0.2)
        out, err = preview.communicate(timeout=60)
    finally:
        if preview.poll() is None:
            preview.kill()
            preview.wait()
    assert {"engine", "analyzer"} <= {Path(a.removeprefix("unix:")).stem for a in seen if a.startswith("unix:")}
    assert not any(address.startswith("127.0.0.1:") for address in seen)  # no TCP port to find
    assert answers and set(answers) <= {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.UNAVAILABLE}
    assert grpc.StatusCode.UNAUTHENTICATED in answers  # the attacker reached a server and was refused
    report = json.loads(out)
    assert preview.returncode == 1, err
    assert [(v["policy"], v["name"]) for v in report["violations"] if v["level"] == "mandatory"] == \
        [("dlq-has-depth-alarm", "dlq"), ("sqs-dlq-max-receive-count", "orders"),
         ("sqs-dlq-retention-exceeds-source", "dlq")]
    assert [r["name"] for r in report["resources"]].count("orders") == 1


def test_calls_without_the_run_s_token_are_refused_and_with_it_answered(tmp_path):
    from concurrent import futures

    from pulumi.runtime.proto import engine_pb2, engine_pb2_grpc

    class Root(engine_pb2_grpc.EngineServicer):
        def GetRootResource(self, request, context):
            return engine_pb2.GetRootResourceResponse(urn="urn:pulumi:dev::p::pulumi:pulumi:Stack::p-dev")

    token = private_channel.new_token()
    server = grpc.server(futures.ThreadPoolExecutor(1), interceptors=[private_channel.TokenCheck(token)])
    engine_pb2_grpc.add_EngineServicer_to_server(Root(), server)
    address = private_channel.socket_address(str(tmp_path), "engine")
    server.add_insecure_port(address)
    server.start()
    try:
        request = engine_pb2.GetRootResourceRequest()
        with grpc.insecure_channel(address) as bare:
            with pytest.raises(grpc.RpcError) as refused:
                engine_pb2_grpc.EngineStub(bare).GetRootResource(request, timeout=5)
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
            wrong = private_channel.with_token(bare, private_channel.new_token())
            with pytest.raises(grpc.RpcError):
                engine_pb2_grpc.EngineStub(wrong).GetRootResource(request, timeout=5)
            right = private_channel.with_token(bare, token)
            assert engine_pb2_grpc.EngineStub(right).GetRootResource(request, timeout=5).urn.endswith("::p-dev")
    finally:
        server.stop(None)


def test_a_run_s_folder_is_closed_to_other_users(tmp_path):
    """The kernel refuses another user's connect before any token is read (the folder is 0700)."""
    from integration_blueprint.preview.engine import OfflineEngine

    with OfflineEngine(project="p", stack="dev", config={}) as engine:
        assert os.stat(engine.folder).st_mode & 0o777 == 0o700
        if os.geteuid() != 0:
            pytest.skip("trying another user's connect needs root to become that user")
        path = engine.address.removeprefix("unix:")
        probe = ("import socket, sys\ns = socket.socket(socket.AF_UNIX)\n"
                 "try:\n    s.connect(sys.argv[1])\nexcept PermissionError:\n    print('refused')\n"
                 "else:\n    print('connected')\n")
        python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable  # one `nobody` may run
        done = subprocess.run([python, "-c", probe, path], capture_output=True, text=True, timeout=30,
                              user=65534, group=65534, cwd="/")
        assert done.stdout.strip() == "refused", done.stderr
    assert not Path(engine.folder).exists()
