"""One verdict wherever the pack runs: the findings a team accepted (`# blueprint: ignore[rule]
reason` comments, the stack's `blueprint:suppressions`) reach the pack through the policy config
`blueprint policy config` writes, so the pack started as the Pulumi CLI starts it
(`python -u -m pulumi.policy <engine> <pack>` in the pack's folder, asked over its gRPC Analyzer
interface) leaves out the same findings the offline gate reports as suppressed, and reports the
others exactly as the gate does.
"""

import json
import os
import select
import subprocess
import sys
import tempfile
from pathlib import Path

import grpc
import pytest
from google.protobuf import empty_pb2
from policy_env import SUPPRESSED_QUEUES, suppressing_stack
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from integration_blueprint.preview import policy_config
from integration_blueprint.preview.analyzer import (
    _LEVEL_NAMES,
    _LEVELS,
    DEFAULT_PACK_DIR,
    START_TIMEOUT_SECONDS,
    Analysis,
    AnalyzerError,
)
from integration_blueprint.preview.run import PackRequest, run_preview

# End to end: the program runs three times (policy config, the gate twice) and a pack starts for each.
pytestmark = pytest.mark.slow

PACK_NAME = "integration-blueprint"
# Four findings of the pack: the DLQ has no depth alarm, keeps messages no longer than its source,
# the source redrives after one receive (each accepted: two comments, one stack-file entry), and a
# second queue redrives after one receive too (not accepted: both paths report it).
PROGRAM = SUPPRESSED_QUEUES + '''aws.sqs.Queue("refunds", redrive_policy=dlq.arn.apply(
    lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1})))
'''
STACK = suppressing_stack()
# The stack's own policy config, which the written config keeps.
POLICY = {"dlq-has-depth-alarm": "mandatory", "sqs-dlq-max-receive-count": {"minimum": 2}}


class CliStartedPack:
    """The blueprint's pack started as pulumi-language-python starts a policy pack for the Pulumi CLI,
    configured as the CLI configures it (ReconcilePolicyPackConfig: schema defaults, the pack's own
    initial config, then the file, every property sent)."""

    def __init__(self, stack: str, project: str):
        env = dict(os.environ, PULUMI_PROJECT=project, PULUMI_STACK=stack, PULUMI_DRY_RUN="true")
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen([sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:0",
                                         str(DEFAULT_PACK_DIR)], cwd=DEFAULT_PACK_DIR, env=env,
                                        stdout=subprocess.PIPE, stderr=self.stderr)
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], START_TIMEOUT_SECONDS)
        line = self.process.stdout.readline() if ready else b""
        assert line.strip().isdigit(), f"the pack printed {line!r}, not its port"
        self.channel = grpc.insecure_channel(f"127.0.0.1:{int(line)}")
        self._stub = analyzer_pb2_grpc.AnalyzerStub(self.channel)
        self.info = self._stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=60)
        self.name, self.version = self.info.name, self.info.version

    def _call(self, method, request):
        try:
            return method(request)
        except grpc.RpcError as exc:
            self.stderr.seek(0)
            raise AnalyzerError(f"{exc.details()}: {self.stderr.read().decode(errors='replace')[-2000:]}") from None

    def configure(self, document: dict) -> None:
        initial = {name: {"enforcementLevel": _LEVEL_NAMES[entry.enforcementLevel]}
                   for name, entry in self.info.initialConfig.items()}
        resolved = policy_config.resolve(list(self.info.policies), document, level_names=_LEVEL_NAMES,
                                         initial=initial)
        request = analyzer_pb2.ConfigureAnalyzerRequest()
        for name, entry in resolved.items():
            request.policyConfig[name].enforcementLevel = _LEVELS[entry.enforcement_level]
            request.policyConfig[name].properties.SetInParent()
            request.policyConfig[name].properties.update(entry.properties)
        self._stub.Configure(request, timeout=60)

    def close(self) -> None:
        self.channel.close()
        self.process.terminate()
        self.process.wait(timeout=10)
        self.stderr.close()


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("one-verdict") / "team"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: team\nruntime: python\nstackConfigDir: stacks\n")
    (folder / "stacks").mkdir()
    (folder / "stacks" / "Pulumi.dev.yaml").write_text(STACK)
    (folder / "stacks" / "policy.dev.json").write_text(json.dumps(POLICY))
    (folder / "__main__.py").write_text(PROGRAM)
    return folder


@pytest.fixture(scope="module")
def written(program: Path, tmp_path_factory) -> Path:
    """`blueprint policy config --stack dev` as CI runs it: the path of the config it wrote."""
    output = tmp_path_factory.mktemp("written") / "policy.dev.json"
    printed = subprocess.run([sys.executable, "-m", "integration_blueprint", "policy", "config", "--stack", "dev",
                              "--program", str(program), "--output", str(output)],
                             capture_output=True, text=True, timeout=300)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.strip() == str(output)
    return output


def test_the_written_config_keeps_the_stacks_levels_and_carries_each_suppression_with_its_reason(written):
    document = json.loads(written.read_text())
    assert document["sqs-dlq-max-receive-count"]["minimum"] == 2  # the stack's own settings, kept
    assert document["dlq-has-depth-alarm"]["enforcementLevel"] == "mandatory"
    accepted = {(policy, entry["resource"].rsplit("::", 1)[-1], entry["reason"], entry["where"])
                for policy, value in document.items() if isinstance(value, dict)
                for entry in value.get("suppressions", [])}
    assert accepted == {
        ("dlq-has-depth-alarm", "dlq", "the team's pager watches this DLQ through Datadog (OPS-12)", "__main__.py:4"),
        ("sqs-dlq-max-receive-count", "orders", "no retries (PAY-7)", "__main__.py:6"),
        ("sqs-dlq-retention-exceeds-source", "dlq", "the DLQ is drained hourly by the replay job",
         "stacks/Pulumi.dev.yaml")}


def test_the_pack_as_the_cli_starts_it_and_the_gate_suppress_the_same_findings(program, written):
    gate = run_preview(program, stack="dev")
    ours = [f for f in gate.findings() if f.pack == PACK_NAME and not f.skipped]
    gate_reported = {(f.policy, f.urn, f.level) for f in ours if f.suppression is None}
    gate_suppressed = {(f.policy, f.urn) for f in ours if f.suppression is not None}
    assert {(policy, urn.rsplit("::", 1)[-1]) for policy, urn in gate_suppressed} == {
        ("dlq-has-depth-alarm", "dlq"), ("sqs-dlq-max-receive-count", "orders"),
        ("sqs-dlq-retention-exceeds-source", "dlq")}
    assert ("sqs-dlq-max-receive-count", "refunds") in {(p, u.rsplit("::", 1)[-1]) for p, u, _ in gate_reported}

    pack = CliStartedPack(stack="dev", project="team")
    try:
        pack.configure(json.loads(written.read_text()))
        analysis = Analysis(pack)  # type: ignore[arg-type]  # the same requests the gate sends
        pack._stub.ConfigureStack(analyzer_pb2.AnalyzerStackConfigureRequest(
            stack="dev", project="team", dry_run=True), timeout=60)
        for resource in gate.recorded.resources:
            analysis.add(resource)
        cli = analysis.finish(gate.recorded)
    finally:
        pack.close()
    cli_reported = {(v.policy, v.urn, v.level) for v in cli if not v.message.startswith("can't run policy")}
    assert cli_reported == gate_reported
    assert not gate_suppressed & {(policy, urn) for policy, urn, _ in cli_reported}
    # Under the CLI without the written config, the accepted findings would block the deploy.
    assert gate.exit_code == 1  # refunds is not accepted: both paths fail the run on it


def test_the_gate_given_the_written_config_reports_each_suppression_once(program, written):
    result = run_preview(program, stack="dev", packs=[PackRequest(DEFAULT_PACK_DIR, written)])
    listed = result.suppressions_json()
    assert sorted((s["policy"], s["kind"]) for s in listed) == [
        ("dlq-has-depth-alarm", "inSource"), ("sqs-dlq-max-receive-count", "inSource"),
        ("sqs-dlq-retention-exceeds-source", "external")]
    assert not any(s["matchesNothing"] for s in listed)
    assert result.exit_code == 1
