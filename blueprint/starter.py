"""`blueprint init`: a team's starting point, every file the docs describe, in one folder.

A Python program with one component, its three stacks (dev, staging, prod) and their policy
configs, an organisation's policy pack folder with its config in a folder of its own (never beside
the pack's folder: Node.js would load it instead of the pack), and the CI workflow
(examples/ci/policy-preview.yml, shipped in the wheel) with that pack listed once in POLICY_PACKS.
Nothing that exists is overwritten: `init` refuses and names the files in the way.
"""

from __future__ import annotations

import importlib.resources
import re
from pathlib import Path

from integration_blueprint import __version__
from integration_blueprint.install_source import install_command

ORG_PACK = "policy/org"
ORG_CONFIG = "policy/config/org.json"
WORKFLOW = ".github/workflows/policy-preview.yml"

PROGRAM = '''"""{project}: one blueprint component; `blueprint docs FifoBillingQueue` lists its settings."""

from integration_blueprint.components import FifoBillingQueue

FifoBillingQueue("billing", {{"consumer_timeout_seconds": 60, "batch_size": 10,
                             "schedule_expression": "cron(0 3 1 * ? *)"}})
'''
PROJECT = '''name: {project}
description: A team's integrations on the integration blueprint
runtime:
  name: python
  options:
    toolchain: pip
    virtualenv: .venv
stackConfigDir: stacks
'''
STACK = '''# `blueprint preview --stack {stack}` checks every key of this file; `blueprint docs` lists the settings.
config:
  aws:region: {region}
  blueprint:platform:
    logRetentionDays: {retention}
'''
# Each stack's levels for the blueprint's pack: prod makes every policy mandatory.
POLICY = {"dev": '{\n  "dlq-has-depth-alarm": "advisory"\n}\n', "staging": "{}\n", "prod": '{\n  "all": "mandatory"\n}\n'}
ORG_PACK_FILES = {
    "PulumiPolicy.yaml": '''description: The organisation's rules, judged beside the blueprint's in every preview
version: 0.1.0
runtime:
  name: python
  options:
    toolchain: pip
    virtualenv: venv
''',
    "requirements.txt": "pulumi-policy>=1.21,<2\n",
    "__main__.py": '''"""The organisation's policy pack: every taggable resource names its owner (a tag policy)."""

from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy

REQUIRED_TAGS = ("owner",)


def tagged(args, report_violation):
    tags = args.props.get("tags")
    if tags is None and "tags" not in args.props:
        return  # not a taggable resource
    missing = [key for key in REQUIRED_TAGS if key not in (tags or {})]
    if missing:
        report_violation(f"tags {', '.join(missing)} missing: set them in the component's `tags` setting "
                         "or the provider's default tags")


PolicyPack(
    name="org-rules",
    enforcement_level=EnforcementLevel.ADVISORY,
    policies=[ResourceValidationPolicy(name="resources-tagged-with-owner", description="Every taggable "
                                       "resource has an owner tag.", validate=tagged)],
)
''',
}
ORG_CONFIG_TEXT = '{\n  "resources-tagged-with-owner": "advisory"\n}\n'
GITIGNORE = ".venv/\nvenv/\nnode_modules/\n.blueprint/\n__pycache__/\npolicy-preview/\n"


def requirement() -> str:
    """The requirements.txt line for this package, from the source it was installed from."""
    command = install_command("local")
    spec = command.split("pip install ", 1)[1].strip("'")
    if spec.startswith("-e"):  # an editable checkout: the index name (edit it to a commit or wheel pin)
        return f"integration-blueprint[local]=={__version__}"
    return spec if "@" in spec else f"integration-blueprint[local]=={__version__}"


def workflow() -> str:
    """The CI example with the organisation's pack listed once."""
    text = importlib.resources.files("integration_blueprint.examples").joinpath("policy-preview.yml").read_text()
    listed, count = re.subn(r'^  POLICY_PACKS: ""$', f"  POLICY_PACKS: {ORG_PACK}={ORG_CONFIG}", text, flags=re.M)
    assert count == 1, "the CI example lists its packs in one env line, POLICY_PACKS"
    return listed


def files(project: str, region: str) -> dict[str, str]:
    found = {"Pulumi.yaml": PROJECT.format(project=project), "__main__.py": PROGRAM.format(project=project),
             "requirements.txt": requirement() + "\n", ".gitignore": GITIGNORE, WORKFLOW: workflow(),
             ORG_CONFIG: ORG_CONFIG_TEXT}
    for stack, retention in (("dev", 7), ("staging", 14), ("prod", 30)):
        found[f"stacks/Pulumi.{stack}.yaml"] = STACK.format(stack=stack, region=region, retention=retention)
        found[f"stacks/policy.{stack}.json"] = POLICY[stack]
    found.update({f"{ORG_PACK}/{name}": text for name, text in ORG_PACK_FILES.items()})
    return found


class StarterExists(Exception):
    """Files `init` would write are there already."""


def write(folder: Path, *, project: str = "", region: str = "eu-west-1") -> list[Path]:
    """Write the starting point into `folder`; the paths written. Refused (StarterExists) when any
    of them exists: nothing is written then."""
    folder = Path(folder)
    wanted = files(project or folder.resolve().name, region)
    there = sorted(name for name in wanted if (folder / name).exists())
    if there:
        raise StarterExists(f"{folder}: {', '.join(there)} exist already; run `blueprint init` in an empty folder "
                            "(nothing was written)")
    written = []
    for name, text in wanted.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written
