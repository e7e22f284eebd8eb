"""Transforms are served as the engine serves them (integration_blueprint.preview.callbacks): the
engine calls back into the program's own Callbacks service before it records a resource, running
the resource's own transforms, then its parents', then the stack's; a transform that raises fails
the preview at the program's line. Each test runs a real program folder in its own process."""

from pathlib import Path

import pytest

from integration_blueprint.preview.recording import ProgramError, record_program
from tests.conftest import python_project


def project(folder: Path, main_py: str) -> Path:
    return python_project(folder, main_py, name="tagging")


TAGGING = '''
import pulumi
import pulumi_aws as aws


def auto_tag(args):
    if args.type_.startswith("aws:") and args.type_ != "aws:iam/rolePolicyAttachment:RolePolicyAttachment":
        tags = {**(args.props.get("tags") or {}), "cost-center": "payments"}
        return pulumi.ResourceTransformResult(props={**args.props, "tags": tags}, opts=args.opts)
    return None


def encrypted(args):
    if args.type_ == "aws:sqs/queue:Queue":
        return pulumi.ResourceTransformResult(props={**args.props, "sqsManagedSseEnabled": True}, opts=args.opts)
    return None


def retained(args):
    if args.type_ == "aws:sqs/queue:Queue":
        return pulumi.ResourceTransformResult(props={**args.props, "messageRetentionSeconds": 1209600},
                                              opts=args.opts)
    return None


class Worker(pulumi.ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("acme:index:Worker", name, None, opts)
        self.queue = aws.sqs.Queue(f"{name}-jobs", opts=pulumi.ResourceOptions(parent=self))
        self.register_outputs({})


pulumi.runtime.register_resource_transform(auto_tag)
plain = aws.sqs.Queue("plain", opts=pulumi.ResourceOptions(transforms=[encrypted]))
worker = Worker("billing", opts=pulumi.ResourceOptions(transforms=[retained]))
pulumi.export("tags", plain.tags)
'''


def test_stack_resource_and_parent_transforms_change_what_is_recorded(tmp_path):
    recorded = record_program(project(tmp_path / "app", TAGGING), stack="dev")

    plain, jobs = recorded.named("plain"), recorded.named("billing-jobs")
    assert plain.inputs["tags"] == {"cost-center": "payments"} and plain.inputs["sqsManagedSseEnabled"] is True
    # The component's transform reaches its child; the stack's reaches everything.
    assert jobs.inputs["messageRetentionSeconds"] == 1209600 and jobs.inputs["tags"] == {"cost-center": "payments"}
    assert "sqsManagedSseEnabled" not in jobs.inputs
    # The program reads back what the transforms made.
    assert recorded.stack_outputs["tags"] == {"cost-center": "payments"}


REFUSING = '''
import pulumi
import pulumi_aws as aws


def require_owner(args):
    if "owner" not in (args.props.get("tags") or {}):
        raise ValueError(f"{args.name} has no owner tag")


pulumi.runtime.register_resource_transform(require_owner)
aws.sqs.Queue("jobs", tags={"team": "x"})
'''


@pytest.mark.slow  # two runs of a program (fail, locate)
def test_a_transform_that_raises_fails_the_preview_at_the_programs_line(tmp_path):
    program = project(tmp_path / "app", REFUSING)

    with pytest.raises(ProgramError) as error:
        record_program(program, stack="dev")

    message = str(error.value)
    assert "a transform of aws:sqs/queue:Queue 'jobs' failed" in message and "jobs has no owner tag" in message
    assert f'{program / "__main__.py"}", line 8' in message  # the transform's own raise
    assert f"(at {program / '__main__.py'}:12)" in message  # the resource it refused, where it is declared


INVOKE_TRANSFORM = '''
import pulumi
import pulumi_aws as aws


def pinned_region(args):
    return pulumi.InvokeTransformResult(args={**args.args, "region": "ap-southeast-2"}, opts=args.opts)


pulumi.runtime.register_invoke_transform(pinned_region)
pulumi.export("region", aws.get_region().name)
'''


def test_an_invoke_transform_changes_the_data_sources_arguments(tmp_path):
    recorded = record_program(project(tmp_path / "app", INVOKE_TRANSFORM), stack="dev")

    assert recorded.stack_outputs["region"] == "ap-southeast-2"


HOOKED = '''
import pulumi
import pulumi_aws as aws


def announce(args):
    print("created", args.urn)


on_preview = pulumi.ResourceHook("announce", announce, opts=pulumi.ResourceHookOptions(on_dry_run=True))
quiet = pulumi.ResourceHook("quiet", announce)
aws.sqs.Queue("jobs", opts=pulumi.ResourceOptions(hooks=pulumi.ResourceHookBinding(after_create=[on_preview, quiet])))
'''


def test_resource_hooks_are_registered_and_one_meant_for_previews_is_noted_as_not_run(tmp_path):
    recorded = record_program(project(tmp_path / "app", HOOKED), stack="dev")

    assert [r.name for r in recorded.resources] == ["jobs"]
    assert [note for note in recorded.notes if "hook" in note] == [
        "resource hook announce asks to run on previews; the offline preview runs no hooks, so what it does was "
        "not checked"]
