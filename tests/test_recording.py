"""The recording engine (integration_blueprint.preview.recording): what `blueprint preview` and the
sandbox see of a program must be what the Pulumi engine would see, the same on every run."""

import hashlib
from pathlib import Path

import pulumi
import pulumi_aws as aws
import pytest

from integration_blueprint.cli import main
from integration_blueprint.preview.recording import ProgramError, record_program

REPO = Path(__file__).resolve().parents[1]


class Pipeline(pulumi.ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("acme:index:Pipeline", name, None, opts)
        stage = Stage(f"{name}-stage", opts=pulumi.ResourceOptions(parent=self))
        aws.sqs.Queue(f"{name}-jobs", opts=pulumi.ResourceOptions(parent=stage))
        self.register_outputs({})


class Stage(pulumi.ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("acme:index:Stage", name, None, opts)
        self.register_outputs({})


def test_urns_are_the_real_engines_the_stack_is_no_part_of_a_type_chain():
    def program():
        aws.sqs.Queue("jobs")
        Pipeline("etl")

    urns = {r.name: r.urn for r in record_program(program, stack="test", project="app").resources}

    assert urns["jobs"] == "urn:pulumi:test::app::aws:sqs/queue:Queue::jobs"
    assert urns["etl"] == "urn:pulumi:test::app::acme:index:Pipeline::etl"
    assert urns["etl-stage"] == "urn:pulumi:test::app::acme:index:Pipeline$acme:index:Stage::etl-stage"
    # A grandchild chains every ancestor's type, as `pulumi preview` prints it.
    assert urns["etl-jobs"] == ("urn:pulumi:test::app::acme:index:Pipeline$acme:index:Stage$"
                                "aws:sqs/queue:Queue::etl-jobs")


@pytest.mark.slow
def test_recording_the_blueprint_again_gives_the_same_urns_order_and_generated_names(recordings):
    """What lets the tests share one recording per program and stack (conftest `recordings`): a
    second run of the program, in a process of its own, records exactly what the first did."""
    runs = [recordings(REPO, "dev"), record_program(REPO, stack="dev")]
    fingerprints = [[(r.urn, r.id, r.outputs.get("name"), r.outputs.get("arn"), r.inputs) for r in run.resources]
                    for run in runs]

    assert len(fingerprints[0]) > 50
    assert fingerprints[1] == fingerprints[0]


def test_a_generated_physical_name_derives_from_its_own_resources_urn():
    def program():
        for i in range(40):
            aws.sqs.Queue(f"queue-{i}")

    for resource in record_program(program, stack="test", project="app").resources:
        suffix = hashlib.sha256(resource.urn.encode()).hexdigest()[:7]
        assert resource.outputs["name"] == f"{resource.name}-{suffix}", resource.urn


def _project(folder: Path, main_py: str, stacks: tuple = ()) -> Path:
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: app\nruntime: python\nstackConfigDir: stacks\n")
    (folder / "__main__.py").write_text(main_py)
    (folder / "stacks").mkdir()
    for stack in stacks:
        (folder / "stacks" / f"Pulumi.{stack}.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    return folder


def test_a_syntax_error_is_reported_at_the_programs_file_and_line(tmp_path, capsys):
    program = _project(tmp_path / "app", "import pulumi\n\nqueue = (\n\ndef broken(:\n    pass\n")

    with pytest.raises(ProgramError, match=r"SyntaxError: .* \(at .*__main__\.py:\d+\)"):
        record_program(program, stack="dev")
    assert main(["preview", "--program", str(program)]) == 2

    error = capsys.readouterr().err
    assert f"{program / '__main__.py'}:" in error
    assert "asyncio" not in error and "runpy" not in error and "Traceback" not in error


def test_a_stack_without_a_file_among_stack_files_is_unknown_and_the_error_lists_the_stacks(tmp_path, capsys):
    program = _project(tmp_path / "app", "import pulumi_aws as aws\naws.sqs.Queue('jobs')\n", ("dev", "prod"))

    with pytest.raises(ProgramError, match=r"no stack 'qa'.*dev, prod"):
        record_program(program, stack="qa")
    assert record_program(program, stack="prod").config == {"aws:region": "eu-west-1"}
    assert main(["preview", "--program", str(REPO), "--stack", "qa"]) == 2
    assert "no stack 'qa'" in capsys.readouterr().err


def test_a_project_without_stack_files_records_with_empty_config(tmp_path):
    program = _project(tmp_path / "app", "import pulumi_aws as aws\naws.sqs.Queue('jobs')\n")

    recorded = record_program(program, stack="anything")

    assert recorded.config == {} and [r.name for r in recorded.resources] == ["jobs"]


def test_an_alias_arn_is_its_functions_arn_qualified_by_the_alias_name():
    """As AWS names it, so an event source mapping or permission that uses `alias.arn` links to the
    function in a known-values preview too."""

    def program():
        function = aws.lambda_.Function("worker", role="arn:aws:iam::123456789012:role/r", runtime="python3.12",
                                        handler="app.handler", code=pulumi.AssetArchive({}))
        aws.lambda_.Alias("live", function_name=function.name, function_version="$LATEST", name="live")

    recorded = record_program(program)
    function = recorded.named("worker")
    alias = recorded.named("live")
    assert alias.outputs["arn"] == f"{function.outputs['arn']}:live"


def test_the_collector_pauses_while_a_program_records_and_objects_frozen_before_stay_frozen():
    import gc

    enabled_while_recording = []

    def program():
        enabled_while_recording.append(gc.isenabled())
        aws.sqs.Queue("jobs")

    record_program(program)
    assert enabled_while_recording == [False] and gc.isenabled()

    gc.freeze()  # as a fork server does before forking
    try:
        frozen = gc.get_freeze_count()
        record_program(program)
        # (objects freed meanwhile leave the count; unfreezing would have emptied it)
        assert gc.get_freeze_count() > frozen // 2 and gc.isenabled()
    finally:
        gc.unfreeze()
