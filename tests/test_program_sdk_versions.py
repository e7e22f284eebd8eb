"""A program's own SDK versions decide what the engine answers (provider_sdk.searching): the provider
declarations, data sources and Check defaults of the pulumi_aws the program's interpreter imports,
the tool's own only when the program has none; and the program's process copes with what older
SDKs lack or do (python_exec: Settings without root_directory, an exception chain that loops)."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from integration_blueprint.preview import python_host
from integration_blueprint.preview.provider_outputs import known_outputs
from integration_blueprint.preview.provider_sdk import (
    function_decl,
    provenance,
    resource_decl,
    sdk_root,
    searching,
)

QUEUE = "aws:sqs/queue:Queue"
OLD_ONLY_FUNCTION = "aws:ec2/getSubnetIds:getSubnetIds"  # pulumi-aws 5's, removed in 6


def old_pulumi_aws(site_packages: Path) -> Path:
    """A pulumi_aws as an old version generates it: a queue with two outputs, and get_subnet_ids."""
    package = site_packages / "pulumi_aws"
    (package / "sqs").mkdir(parents=True)
    (package / "ec2").mkdir()
    modules = [{"pkg": "aws", "mod": "sqs/queue", "fqn": "pulumi_aws.sqs", "classes": {QUEUE: "Queue"}}]
    (package / "__init__.py").write_text(f'_utilities.register(resource_modules="""\n{json.dumps(modules)}\n""")\n')
    (package / "sqs" / "queue.py").write_text('''
class QueueArgs:
    @property
    @pulumi.getter(name="visibilityTimeoutSeconds")
    def visibility_timeout_seconds(self) -> Optional[pulumi.Input[int]]:
        return pulumi.get(self, "visibility_timeout_seconds")


class Queue(pulumi.CustomResource):
    @property
    @pulumi.getter
    def arn(self) -> pulumi.Output[str]:
        return pulumi.get(self, "arn")

    @property
    @pulumi.getter(name="visibilityTimeoutSeconds")
    def visibility_timeout_seconds(self) -> pulumi.Output[Optional[int]]:
        """
        The visibility timeout for the queue. Defaults to `45`.
        """
        return pulumi.get(self, "visibility_timeout_seconds")
''')
    (package / "ec2" / "get_subnet_ids.py").write_text('''
@pulumi.output_type
class GetSubnetIdsResult:
    @property
    @pulumi.getter
    def ids(self) -> Sequence[str]:
        return pulumi.get(self, "ids")


def get_subnet_ids(vpc_id=None, opts=None):
    __ret__ = pulumi.runtime.invoke('aws:ec2/getSubnetIds:getSubnetIds', __args__, opts=opts, typ=GetSubnetIdsResult).value
''')
    return package


def test_the_programs_own_provider_sdk_declares_what_the_engine_answers(tmp_path):
    package = old_pulumi_aws(tmp_path / "site-packages")
    ours = resource_decl(QUEUE)

    with searching(["", str(tmp_path / "elsewhere"), str(tmp_path / "site-packages")]):
        assert sdk_root("aws") == package
        assert [f.wire for f in resource_decl(QUEUE).outputs] == ["arn", "visibilityTimeoutSeconds"]
        assert [f.wire for f in function_decl(OLD_ONLY_FUNCTION).result] == ["ids"]
        # Its own stated default, not the tool's version's (30 s).
        _, queue = known_outputs(QUEUE, "jobs", "urn:pulumi:dev::app::aws:sqs/queue:Queue::jobs", {}, region="eu-west-1")
        assert queue["visibilityTimeoutSeconds"] == 45 and "url" not in queue

    assert provenance("aws", [str(tmp_path / "site-packages")]) == (
        "aws resources and data sources answered as the program's own pulumi_aws (version unknown) declares them "
        f"({tmp_path / 'site-packages'})")
    assert provenance("aws", [str(tmp_path / "elsewhere")]).startswith(
        "aws resources and data sources answered as blueprint's own pulumi_aws ")
    # Outside, and for a program without a pulumi_aws of its own, the tool's own answers.
    assert resource_decl(QUEUE) == ours and function_decl(OLD_ONLY_FUNCTION) is None
    with searching([str(tmp_path / "elsewhere")]):
        assert resource_decl(QUEUE) == ours


@pytest.fixture(scope="module")
def python_exec():
    """The exec script as the program's interpreter loads it: a script whose folder is first on sys.path."""
    sys.path.insert(0, str(python_host.EXEC_SCRIPT.parent))
    try:
        spec = importlib.util.spec_from_file_location("blueprint_python_exec", python_host.EXEC_SCRIPT)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(python_host.EXEC_SCRIPT.parent))


class Args:
    monitor, engine, project, stack, parallel = "127.0.0.1:1", "127.0.0.1:1", "app", "dev", "4"
    dry_run, organization, root_directory = "true", "organization", "/app"


class OldSettings:
    """pulumi 3.80's runtime Settings: no root_directory."""

    def __init__(self, project, stack, monitor=None, engine=None, parallel=None, dry_run=None,
                 legacy_apply_enabled=None, organization=None):
        self.project, self.parallel, self.organization = project, parallel, organization


class OldPulumi:
    class runtime:
        Settings = OldSettings


def test_an_older_sdks_settings_get_the_parameters_it_knows(python_exec):
    settings = python_exec._settings(OldPulumi, Args, "monitor-stub", "engine-stub")

    assert (settings.project, settings.parallel, settings.organization) == ("app", 4, "organization")


def test_an_exception_chain_that_loops_is_walked_once(python_exec):
    first, second = ValueError("first"), KeyError("second")
    first.__context__, second.__context__ = second, first

    assert list(python_exec._chain(first)) == [first, second]
    assert python_exec._program_frame(first, "/nowhere") is None
