"""A team's stack file read as the team meant it: a `blueprint:` section its program never reads is
named (with the arguments that would carry its settings, and its misspelled keys), and a config
key the program requires but the stack does not set names the stack file and the key it resembles."""

import json
from pathlib import Path

import pytest

from integration_blueprint.preview.recording import ProgramError, record_program
from integration_blueprint.preview.stack_sections import reads_sections, unread_section_notes

REPO = Path(__file__).resolve().parents[1]
TEAM_PROGRAM = '''import pulumi
from integration_blueprint.components import FifoBillingQueue

FifoBillingQueue("payroll", {"consumer_timeout_seconds": 60, "max_receive_count": 5})
'''
SECTION = {"blueprint:fifoBilling": json.dumps({"maxReceiveCount": 2, "batchSise": 10}),
           "blueprint:suppressions": "[]", "aws:region": "eu-west-1"}


def test_a_section_a_team_program_never_reads_is_named_with_its_arguments_and_its_typo(tmp_path):
    (tmp_path / "__main__.py").write_text(TEAM_PROGRAM)
    (tmp_path / ".venv" / "lib").mkdir(parents=True)  # an installed package that reads sections is not the program
    (tmp_path / ".venv" / "lib" / "reader.py").write_text("from integration_blueprint.program import stack_config\n")

    [note] = unread_section_notes(SECTION, tmp_path, "python", "Pulumi.dev.yaml")

    assert note.startswith("blueprint:fifoBilling in Pulumi.dev.yaml is read by no code of this program")
    assert "give them to the component's arguments instead (max_receive_count: 2)" in note
    assert "'batchSise' is not a setting of the section (did you mean 'batchSize'?)" in note
    assert "maxReceiveCount = 2 is not allowed: a whole number from 4" in note
    assert unread_section_notes(SECTION, tmp_path, "nodejs", "Pulumi.dev.yaml")[0].count("maxReceiveCount: 2") == 1


def test_a_misspelled_section_is_named_and_the_blueprints_own_program_reads_its_sections(tmp_path):
    (tmp_path / "__main__.py").write_text(TEAM_PROGRAM)
    [note] = unread_section_notes({"blueprint:fifoBiling": "{}"}, tmp_path, "python", "Pulumi.dev.yaml")
    assert "nor is 'fifoBiling' a section of the blueprint (did you mean blueprint:fifoBilling?)" in note

    assert reads_sections(REPO, "python")  # __main__.py reads them through stack_config, which refuses typos itself
    assert unread_section_notes(SECTION, REPO, "python", "stacks/Pulumi.dev.yaml") == []


def test_a_required_config_key_the_stack_misspells_names_the_stack_file_and_the_key_it_sets(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: payments\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(
        "config:\n  aws:region: eu-west-1\n  payments:oncalTopicArn: arn:aws:sns:eu-west-1:123456789012:oncall\n")

    def refusal(require: str) -> str:
        (tmp_path / "__main__.py").write_text(f"import pulumi\n\npulumi.Config().{require}\n")
        with pytest.raises(ProgramError) as raised:
            record_program(tmp_path, stack="dev")
        return str(raised.value)

    message = refusal('require("oncallTopicArn")')
    assert ("stacks/Pulumi.dev.yaml sets no 'payments:oncallTopicArn'; it sets 'payments:oncalTopicArn': did you mean "
            "that key?") in message
    assert "Add `payments:oncallTopicArn: <value>` under `config:` in stacks/Pulumi.dev.yaml" in message

    # A secret is never advised into the file in plain text: the command that writes it encrypted.
    message = refusal('require_secret("webhookUrl")')
    assert ("stacks/Pulumi.dev.yaml sets no 'payments:webhookUrl' Run `pulumi config set --secret payments:webhookUrl "
            "<value>`, which writes it there encrypted") in message
    assert "under `config:`" not in message
