"""A StackReference's outputs are read from where a team keeps them offline (stack_references.py):
`--stack-reference NAME=FILE`, `stack-references/<name>.json` in the project, a file:// backend's
state; in any of the formats the Pulumi CLI writes them. One not read is unknown and reported (and
fails `--strict`); an output the program requires and the stack lacks is reported at its line."""

import gzip
import json
from pathlib import Path

import pytest

from integration_blueprint.preview.project import SECRET_PLACEHOLDER, ProgramError
from integration_blueprint.preview.recording import RecordedStack, record_program
from integration_blueprint.preview.run import PreviewResult
from integration_blueprint.preview.stack_references import StackOutputs, StackReferences, Unread
from tests.conftest import python_project

SECRET = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}


def state(outputs: dict, *, key: str = "checkpoint") -> dict:
    resources = [{"urn": "urn:pulumi:prod::network::pulumi:pulumi:Stack::network-prod", "type": "pulumi:pulumi:Stack",
                  "outputs": outputs},
                 {"urn": "urn:pulumi:prod::network::aws:ec2/vpc:Vpc::main", "type": "aws:ec2/vpc:Vpc",
                  "outputs": {"id": "vpc-0"}}]
    if key == "checkpoint":
        return {"version": 3, "checkpoint": {"stack": "prod", "latest": {"resources": resources}}}
    return {"version": 3, "deployment": {"resources": resources}}


def references(tmp_path: Path, **kwargs) -> StackReferences:
    return StackReferences(project="app", program_dir=tmp_path, environ=kwargs.pop("environ", {}), **kwargs)


def test_a_file_per_referenced_stack_in_the_project_is_read(tmp_path):
    (tmp_path / "stack-references" / "acme" / "network").mkdir(parents=True)
    (tmp_path / "stack-references" / "acme" / "network" / "prod.json").write_text(
        json.dumps({"vpc_id": "vpc-1", "db_password": "[secret]"}))

    found = references(tmp_path).lookup("acme/network/prod")

    assert found == StackOutputs("acme/network/prod", {"vpc_id": "vpc-1", "db_password": SECRET_PLACEHOLDER},
                                 ("db_password",), "stack-references/acme/network/prod.json")


def test_a_stack_export_named_on_the_command_line_gives_its_stack_resources_outputs(tmp_path):
    export = tmp_path / "network.json"
    export.write_text(json.dumps(state({"vpc_id": "vpc-2", "token": {**SECRET, "plaintext": '"t0k"'}},
                                       key="deployment")))

    found = references(tmp_path, given={"acme/network/prod": export}).lookup("acme/network/prod")

    assert isinstance(found, StackOutputs) and found.source == "--stack-reference acme/network/prod"
    assert found.outputs == {"vpc_id": "vpc-2", "token": "t0k"} and found.secret_names == ("token",)


def test_a_local_backends_gzipped_state_is_read_and_an_encrypted_secret_is_a_placeholder(tmp_path):
    stacks = tmp_path / "backend" / ".pulumi" / "stacks" / "network"
    stacks.mkdir(parents=True)
    (stacks / "prod.json.gz").write_bytes(gzip.compress(json.dumps(
        state({"vpc_id": "vpc-3", "key": {**SECRET, "ciphertext": "v1:abc"}})).encode()))

    found = references(tmp_path, environ={"PULUMI_BACKEND_URL": f"file://{tmp_path / 'backend'}"}).lookup(
        "organization/network/prod")

    assert isinstance(found, StackOutputs)
    assert found.outputs == {"vpc_id": "vpc-3", "key": SECRET_PLACEHOLDER} and found.secret_names == ("key",)


def test_a_stack_no_source_holds_is_unread_with_how_to_provide_it(tmp_path):
    refs = references(tmp_path)
    found = refs.lookup("acme/network/prod", ("/app/__main__.py", 4))

    assert isinstance(found, Unread) and refs.unread() == [found]
    assert "stack-references/acme/network/prod.json" in found.reason and "--stack-reference" in found.reason
    [note] = refs.notes()
    assert note.startswith("stack reference acme/network/prod (at /app/__main__.py:4) could not be read offline")


def test_a_file_named_on_the_command_line_must_exist(tmp_path):
    with pytest.raises(ProgramError, match="does not exist"):
        references(tmp_path, given={"net": tmp_path / "missing.json"}).lookup("net")


PROGRAM = '''
import pulumi
import pulumi_aws as aws

network = pulumi.StackReference("acme/network/prod")
aws.ec2.SecurityGroup("web", vpc_id=network.require_output("vpc_id"))
pulumi.export("subnets", network.get_output("subnet_ids"))
'''


@pytest.mark.slow  # three runs of a program (read, fail, locate)
def test_a_program_reads_another_stacks_outputs_and_one_it_lacks_fails_at_the_reference(tmp_path):
    program = python_project(tmp_path / "app", PROGRAM)
    outputs = tmp_path / "network.json"
    outputs.write_text(json.dumps({"vpc_id": "vpc-9", "subnet_ids": ["subnet-1", "subnet-2"]}))

    recorded = record_program(program, stack="dev", stack_references={"acme/network/prod": outputs})

    assert recorded.named("web").inputs["vpcId"] == "vpc-9"
    assert recorded.stack_outputs["subnets"] == ["subnet-1", "subnet-2"]
    assert recorded.unread_stack_references == [] and "read from --stack-reference" in " ".join(recorded.notes)

    outputs.write_text(json.dumps({"subnet_ids": []}))
    with pytest.raises(ProgramError) as error:
        record_program(program, stack="dev", stack_references={"acme/network/prod": outputs})
    assert f"(at {program / '__main__.py'}:5)" in str(error.value)
    assert "acme/network/prod (read from --stack-reference acme/network/prod) has no output 'vpc_id'" in str(error.value)


def test_strict_fails_a_preview_with_a_reference_it_could_not_read():
    recorded = RecordedStack("app", "dev", None, {}, False, [], unread_stack_references=["acme/network/prod"])

    assert PreviewResult(recorded, [], None).exit_code == 0
    strict = PreviewResult(recorded, [], None, strict=True)
    assert strict.exit_code == 2 and (
        "stack reference acme/network/prod was not read: what the program derives from its outputs was not checked "
        "(--strict: this fails the preview)") in strict.notes()


@pytest.mark.slow  # two previews of a program through the CLI
def test_the_cli_reports_an_unread_reference_and_strict_exits_2(tmp_path, capsys):
    from integration_blueprint.cli import main

    program = python_project(tmp_path / "app", PROGRAM)

    assert main(["preview", "--program", str(program), "--stack", "dev", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["unreadStackReferences"] == ["acme/network/prod"]
    assert any(note.startswith(f"stack reference acme/network/prod (at {program / '__main__.py'}:5) could not be "
                               "read offline") for note in report["notes"])
    assert main(["preview", "--program", str(program), "--stack", "dev", "--strict"]) == 2
