"""Every stack key is checked: a key no code of the program reads (the project's own namespace, a
provider's) is a note naming the stack file's line and the key it resembles, in every report format,
and `--strict` fails the run on it (exit 2)."""

import json
from pathlib import Path

import pytest

from integration_blueprint.cli import main

PROGRAM = '''import pulumi
import pulumi_aws as aws

config = pulumi.Config()
aws.sqs.Queue("billing", max_message_size=config.get_int("billingMaxMessageSize") or 262144,
              message_retention_seconds=config.get_int("billingMaxReceiveCount") or 345600)
'''
STACK = '''config:
  aws:region: eu-west-1
  aws:skipRequestingAccountId: true
  orders:billingMaxMessageSize: 1024
  orders:billingMaxRecieveCount: 8
  aws:defualtTags:
    tags:
      team: orders
'''
UNREAD = {"orders:billingMaxRecieveCount": ("stacks/Pulumi.prod.yaml:5", "orders:billingMaxReceiveCount"),
          "aws:defualtTags": ("stacks/Pulumi.prod.yaml:6", "aws:defaultTags")}


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("keys") / "orders"
    (folder / "stacks").mkdir(parents=True)
    (folder / "Pulumi.yaml").write_text("name: orders\nruntime: python\nstackConfigDir: stacks\n")
    (folder / "stacks" / "Pulumi.prod.yaml").write_text(STACK)
    (folder / "__main__.py").write_text(PROGRAM)
    return folder


@pytest.fixture(scope="module")
def reports(program, tmp_path_factory):
    """One run, every format (and its exit code), then the same under --strict."""
    out = tmp_path_factory.mktemp("reports")
    formats = ("json", "text", "markdown", "sarif")
    code = main(["preview", "--program", str(program), "--stack", "prod", "--format", "text",
                 *[arg for name in formats for arg in ("--report", f"{name}={out / name}")]])
    strict = main(["preview", "--program", str(program), "--stack", "prod", "--strict", "--format", "text"])
    return code, strict, {name: (out / name).read_text() for name in formats}


@pytest.mark.slow  # two previews as the CLI runs them
def test_a_key_no_code_reads_is_a_note_with_its_line_and_did_you_mean_in_every_format(reports):
    code, _, written = reports
    assert code in (0, 1)  # a note, not a failure, without --strict
    notes = json.loads(written["json"])["notes"]
    for key, (where, guess) in UNREAD.items():
        (note,) = [n for n in notes if f"stack key {key} " in n]
        assert f"at {where}" in note and f"did you mean {guess}?" in note
        for name in ("text", "markdown", "sarif"):
            assert key in written[name] and guess in written[name], name
    # The keys the program and the provider read are not named.
    assert not [n for n in notes if "billingMaxMessageSize" in n or "skipRequestingAccountId" in n]


@pytest.mark.slow
def test_strict_fails_the_run_on_an_unread_key(reports):
    _, strict, _ = reports
    assert strict == 2


REFUSED_PROGRAM = '''import pulumi

from integration_blueprint.components import FifoBillingQueue

config = pulumi.Config()
batch = config.get_int("billingBatchSize") or 10
FifoBillingQueue("billing", {
    "consumer_timeout_seconds": 60,
    "batch_size": batch,
})
'''


@pytest.mark.slow  # a preview as the CLI runs it
def test_a_refused_value_read_from_the_stack_file_names_that_file_and_line(tmp_path, capsys):
    folder = tmp_path / "orders"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: orders\nruntime: python\n")
    (folder / "Pulumi.prod.yaml").write_text("config:\n  aws:region: eu-west-1\n  orders:billingBatchSize: 50\n")
    (folder / "__main__.py").write_text(REFUSED_PROGRAM)
    assert main(["preview", "--program", str(folder), "--stack", "prod", "--format", "json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["kind"] == "refused" and error["line"] == 9  # the program's line, as before
    assert "the value comes from the stack file: Pulumi.prod.yaml:3 (orders:billingBatchSize: 50)" in error["message"]
