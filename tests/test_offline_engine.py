"""The offline engine (integration_blueprint.preview.engine, python_host): a program folder runs in
its own interpreter against the engine's real gRPC interfaces, and the policy pack receives what
the Pulumi engine would send it. Each test is a program in a shape public programs take."""

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from integration_blueprint.cli import main
from integration_blueprint.preview import wire
from integration_blueprint.preview.provider import outputs as provider_outputs
from integration_blueprint.preview.recording import UNKNOWN, ProgramError, record_program
from integration_blueprint.preview.run import run_preview

HANDLER = "def handler(event, context):\n    return {'statusCode': 200}\n"


def project(folder: Path, main_py: str, *, files: dict = None, pulumi_yaml: str = "name: app\nruntime: python\n",
            stack_yaml: str = "config:\n  aws:region: eu-west-1\n") -> Path:
    folder.mkdir(parents=True)
    (folder / "Pulumi.yaml").write_text(pulumi_yaml)
    (folder / "Pulumi.dev.yaml").write_text(stack_yaml)
    (folder / "__main__.py").write_text(main_py)
    for name, text in (files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


API_PROGRAM = '''
import json
import pulumi
import pulumi_aws as aws

role = aws.iam.Role("role", assume_role_policy={
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
})
aws.iam.RolePolicyAttachment("logs", role=role,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")
fn = aws.lambda_.Function("api", role=role.arn, runtime="python3.12", handler="app.handler",
                          code=pulumi.FileArchive("./app"))
aws.cloudwatch.LogGroup("api-logs", name=fn.name.apply(lambda name: f"/aws/lambda/{name}"), retention_in_days=14)
# The same archive, read back from another resource's output.
aws.lambda_.Function("api-copy", role=role.arn, runtime="python3.12", handler="app.handler", code=fn.code)
aws.lambda_.Permission("invoke", function=fn, action="lambda:InvokeFunction", principal="apigateway.amazonaws.com")
pulumi.export("role_name", role.name)
pulumi.export("invoke", fn.invoke_arn.apply(lambda arn: "invoke:" + arn))
'''


@pytest.mark.slow
def test_resource_objects_dict_documents_and_archives_reach_the_pack_as_the_engine_sends_them(tmp_path):
    program = project(tmp_path / "api", API_PROGRAM, files={"app/app.py": HANDLER})

    for unknowns in (False, True):
        result = run_preview(program, stack="dev", unknowns=unknowns)
        recorded = result.recorded
        role, attachment = recorded.named("role"), recorded.named("logs")
        permission, copy = recorded.named("invoke"), recorded.named("api-copy")
        # `role=role` and `function=fn` become the referenced resource's id, as the engine sends a
        # resource reference to an analyzer (unknown in a first preview).
        assert attachment.inputs["role"] == (UNKNOWN if unknowns else role.id)
        assert permission.inputs["function"] == (UNKNOWN if unknowns else recorded.named("api").id)
        raw = json.dumps(wire.from_struct(attachment.raw_inputs))
        assert wire.RESOURCE_SIG not in raw and wire.OUTPUT_VALUE_SIG not in raw
        # An IAM document written as a dict is the JSON string the provider makes of it.
        assert json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]["Action"] == "sts:AssumeRole"
        # An archive read back from another function's output is still an archive.
        assert copy.inputs["code"] == {"archive": "FileArchive", "path": "./app"}
        # The copy has no log group: the one true finding, in both modes (its name is known in a
        # first preview too: the provider names it in Check).
        found = {(v.policy, result.recorded.by_urn()[v.urn].name) for v in result.violations}
        assert found == {("lambda-log-group-has-retention", "api-copy")}
    known = run_preview(program, stack="dev").recorded
    assert known.stack_outputs["invoke"].startswith("invoke:arn:aws:apigateway:eu-west-1:lambda:path/")
    assert known.stack_outputs["role_name"] == known.named("role").outputs["name"]


def test_secure_config_is_a_secret_placeholder_and_the_program_that_reads_it_runs(tmp_path):
    main_py = ('import pulumi\nimport pulumi_aws as aws\n'
               'cfg = pulumi.Config()\n'
               'aws.ssm.Parameter("db", type="SecureString", value=cfg.require_secret("dbPassword"))\n'
               'aws.sqs.Queue("jobs", message_retention_seconds=cfg.require_int("retention"))\n')
    stack = ("config:\n  aws:region: eu-west-1\n  app:retention: 86400\n"
             "  app:dbPassword:\n    secure: v1:AAABAG5vdC1hLXJlYWwtY2lwaGVydGV4dA==\n"
             "  app:unusedToken:\n    secure: v1:AAABAGFub3RoZXItb25l\n")
    program = project(tmp_path / "app", main_py, stack_yaml=stack)

    recorded = record_program(program, stack="dev")

    assert recorded.secrets == ["app:dbPassword", "app:unusedToken"]
    assert recorded.named("jobs").inputs["messageRetentionSeconds"] == 86400
    # The secret reaches the pack as a secret, as the engine keeps secrets for an analyzer.
    assert wire.from_struct(recorded.named("db").raw_inputs)["value"][wire.SIG] == wire.SECRET_SIG


@pytest.mark.slow
def test_an_error_in_the_programs_own_code_is_located_at_its_file_and_line_also_inside_an_apply(tmp_path, capsys):
    naming = "def label(arn):\n    return arn.split(':')[99]\n"
    main_py = ('import pulumi_aws as aws\nfrom infra.naming import label\n'
               'queue = aws.sqs.Queue("jobs")\n'
               'aws.sqs.Queue("audit", tags=queue.arn.apply(lambda arn: {"source": label(arn)}))\n')
    program = project(tmp_path / "app", main_py, files={"infra/__init__.py": "", "infra/naming.py": naming})

    with pytest.raises(ProgramError, match=rf"IndexError: list index out of range \(at {program}/infra/naming.py:2\)"):
        record_program(program, stack="dev")
    # In a first preview the ARN is unknown: the engine skips the apply, as `pulumi preview` does.
    assert len(record_program(program, stack="dev", unknowns=True).resources) == 2

    assert main(["preview", "--program", str(program)]) == 2
    error = capsys.readouterr().err
    assert "naming.py:2" in error and "asyncio" not in error and "Traceback" not in error


def test_a_missing_module_names_the_programs_interpreter_and_the_install_command(tmp_path):
    program = project(tmp_path / "app", "import pulumi\nimport acme_internal_tags\n")

    with pytest.raises(ProgramError) as raised:
        record_program(program, stack="dev")

    message = str(raised.value)
    assert f"No module named 'acme_internal_tags' (at {program}/__main__.py:2)" in message
    assert f"the program imports acme_internal_tags, which is not installed for {sys.executable}" in message
    assert "name the program's own virtualenv in Pulumi.yaml (runtime.options.virtualenv)" in message


def _virtualenv_with_our_packages(folder: Path) -> Path:
    """A virtualenv of the program's own (made offline: no pip), seeing this environment's packages
    through a .pth file, plus a package that exists only in it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    site = next(folder.glob("lib/python*/site-packages"))
    (site / "ours.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (site / "acme_tags.py").write_text("OWNER = 'team-payments'\n")
    return folder


def test_a_program_runs_in_the_virtualenv_its_pulumi_yaml_names(tmp_path):
    main_py = ('import sys\nimport pulumi\nimport pulumi_aws as aws\nimport acme_tags\n'
               'aws.sqs.Queue("jobs", tags={"owner": acme_tags.OWNER})\n'
               'pulumi.export("python", sys.executable)\n')
    yaml = "name: app\nruntime:\n  name: python\n  options:\n    toolchain: pip\n    virtualenv: venv\n"
    program = project(tmp_path / "app", main_py, pulumi_yaml=yaml)

    with pytest.raises(ProgramError, match=r"virtualenv is 'venv', but .* does not exist; create it: python3 -m venv venv"):
        record_program(program, stack="dev")

    venv = _virtualenv_with_our_packages(program / "venv")
    recorded = record_program(program, stack="dev")

    assert recorded.stack_outputs["python"] == str(venv / "bin" / "python")
    assert recorded.named("jobs").inputs["tags"] == {"owner": "team-payments"}


def remote_component_class(name: str, type_token: str) -> str:
    """A component class as a generated SDK declares it: registered remote, constructed by its package."""
    return (f"class {name}(pulumi.ComponentResource):  # what a generated SDK declares\n"
            "    def __init__(self, name, args, opts=None):\n"
            f"        super().__init__({type_token!r}, name, args, opts, remote=True)\n")


def test_a_remote_component_of_another_package_is_reported_not_expanded_and_strict_fails_on_it(tmp_path, capsys,
                                                                                            cli_reuses_recordings):
    # The program runs once: the report and the CLI's --strict exit read the same recording.
    main_py = ('import pulumi\nimport pulumi_aws as aws\n' + remote_component_class("Vpc", "awsx:ec2:Vpc") +
               'vpc = Vpc("main", {"cidrBlock": "10.0.0.0/16", "vpcId": None})\n'
               'aws.sqs.Queue("jobs")\n')
    program = project(tmp_path / "app", main_py)

    result = run_preview(program, stack="dev")

    [component] = result.recorded.not_expanded
    assert (component.type, component.name, component.package) == ("awsx:ec2:Vpc", "main", "awsx")
    assert result.exit_code == 0 and any("main (awsx:ec2:Vpc, package 'awsx') was not expanded" in note
                                         for note in result.notes())
    assert main(["preview", "--program", str(program), "--strict"]) == 2
    assert "remote component main (awsx:ec2:Vpc, package 'awsx') was not expanded" in capsys.readouterr().out


@pytest.mark.slow
def test_our_own_component_used_remotely_is_constructed_through_the_plugin_with_its_children(tmp_path):
    """As a TypeScript program's generated SDK registers it: the engine constructs it through plugin/."""
    main_py = ('import pulumi\n' + remote_component_class("FifoBillingQueue", "blueprint:index:FifoBillingQueue") +
               'FifoBillingQueue("billing", {\n'
               '    "consumerTimeoutSeconds": 30, "batchSize": 10, "maxReceiveCount": 5,\n'
               '    "scheduleEnabled": False, "alarmActions": [],\n'
               '})\n')
    program = project(tmp_path / "app", main_py)

    recorded = record_program(program, stack="dev")

    component = recorded.named("billing")
    assert component.type == "blueprint:index:FifoBillingQueue" and not recorded.not_expanded
    children = [r for r in recorded.resources if r.urn.startswith(
        "urn:pulumi:dev::app::blueprint:index:FifoBillingQueue$")]
    fifo = {r.name for r in children if r.type == "aws:sqs/queue:Queue" and r.inputs.get("fifoQueue")}
    assert len(children) > 20 and fifo == {"billing-charges", "billing-dlq"}
    # The children point at the line of the program that declared the component.
    assert {(r.source_file, r.source_line) for r in children} == {(str(program / "__main__.py"), 5)}


def test_a_failure_of_the_engine_itself_says_it_is_the_tools_and_not_the_programs(tmp_path, monkeypatch):
    program = project(tmp_path / "app", "import pulumi_aws as aws\naws.sqs.Queue('jobs')\n")

    def broken(*args, **kwargs):
        raise KeyError("arnFormat")

    monkeypatch.setattr(provider_outputs, "known_outputs", broken)
    with pytest.raises(ProgramError, match=r"the offline engine itself failed .* bug in blueprint"):
        record_program(program, stack="dev")


def test_the_program_gets_the_callers_environment_pythonpath_included_and_the_hosts_config(tmp_path, monkeypatch):
    extras = tmp_path / "ci-packages"
    (extras / "acme_platform").mkdir(parents=True)
    (extras / "acme_platform" / "__init__.py").write_text("OWNER = 'ledger'\n")
    monkeypatch.setenv("PYTHONPATH", str(extras))
    monkeypatch.setenv("ACME_CI_JOB", "nightly")
    main_py = ('import json, os\nimport pulumi\nimport pulumi_aws as aws\nimport acme_platform\n'
               'aws.sqs.Queue("jobs", tags={"owner": acme_platform.OWNER})\n'
               'pulumi.export("job", os.environ["ACME_CI_JOB"])\n'
               'pulumi.export("config", json.loads(os.environ["PULUMI_CONFIG"]))\n')
    program = project(tmp_path / "app", main_py)

    recorded = record_program(program, stack="dev")

    assert recorded.named("jobs").inputs["tags"] == {"owner": "ledger"}
    assert recorded.stack_outputs["job"] == "nightly"
    assert recorded.stack_outputs["config"] == {"aws:region": "eu-west-1"}
