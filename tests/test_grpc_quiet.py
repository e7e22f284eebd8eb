"""gRPC's own log lines (a GOAWAY as a channel closes, about 1 run in 25) never reach a report: the
command's child processes (here the program) run with gRPC's logging off unless the user set it."""

import json
import os
import subprocess
import sys

import pytest

PROGRAM = '''import os
import pulumi_aws as aws

print("grpc verbosity:", os.environ.get("GRPC_VERBOSITY"))
aws.sqs.Queue("quiet")
'''


@pytest.mark.slow  # one preview, the command as a user runs it
def test_the_program_runs_with_grpc_logging_off(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: quiet\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (tmp_path / "__main__.py").write_text(PROGRAM)
    env = {key: value for key, value in os.environ.items() if not key.startswith("GRPC_")}
    ran = subprocess.run([sys.executable, "-m", "integration_blueprint", "preview", "--program", str(tmp_path),
                          "--stack", "dev", "--format", "json"], capture_output=True, text=True, env=env, timeout=300)
    report = json.loads(ran.stdout)
    assert "grpc verbosity: NONE" in report["programOutput"]["stdout"], report["programOutput"]
    assert "GOAWAY" not in ran.stderr
