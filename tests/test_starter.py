"""`blueprint init`: a team's starting point that works as written. The files a team needs (program,
stacks, policy configs, an organisation pack beside its config folder, the CI workflow with every
pack listed once), nothing overwritten, and the CI example's own offline step run over it judges
the program with both packs."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from integration_blueprint import starter
from integration_blueprint.cli import main
from integration_blueprint.preview import policy_packs


def test_init_writes_a_starting_point_and_refuses_to_overwrite_it(tmp_path, capsys):
    assert main(["init", str(tmp_path / "payments"), "--region", "us-east-1"]) == 0
    folder = tmp_path / "payments"
    written = set(capsys.readouterr().out.split())
    assert {"Pulumi.yaml", "__main__.py", "requirements.txt", "stacks/Pulumi.prod.yaml", "stacks/policy.prod.json",
            "policy/org/PulumiPolicy.yaml", "policy/config/org.json", ".github/workflows/policy-preview.yml"} <= written
    assert yaml.safe_load((folder / "Pulumi.yaml").read_text())["name"] == "payments"
    assert yaml.safe_load((folder / "stacks" / "Pulumi.dev.yaml").read_text())["config"]["aws:region"] == "us-east-1"
    assert json.loads((folder / "stacks" / "policy.prod.json").read_text()) == {"all": "mandatory"}
    # The pack's config is in a folder of its own: nothing beside the pack's folder shadows it.
    assert policy_packs.shadowing_files(folder / "policy" / "org") == []
    workflow = yaml.safe_load((folder / ".github" / "workflows" / "policy-preview.yml").read_text())
    assert workflow["env"]["POLICY_PACKS"] == "policy/org=policy/config/org.json"
    assert "integration-blueprint[local]" in (folder / "requirements.txt").read_text()

    (folder / "__main__.py").write_text("# the team's own work\n")
    assert main(["init", str(folder)]) == 2
    assert "__main__.py" in capsys.readouterr().err
    assert (folder / "__main__.py").read_text() == "# the team's own work\n"  # nothing overwritten


@pytest.mark.slow  # a preview with two packs
def test_the_starting_point_passes_its_own_ci_step_with_the_org_pack_judging_beside_ours(tmp_path):
    folder = tmp_path / "payments"
    starter.write(folder)
    for venv in (folder / ".venv", folder / "policy" / "org" / "venv"):  # stand-ins for the installs
        venv.symlink_to(Path(sys.prefix))
    workflow = yaml.safe_load((folder / ".github" / "workflows" / "policy-preview.yml").read_text())
    steps = {s.get("name", ""): s for s in workflow["jobs"]["offline-preview"]["steps"]}
    preview = next(s for name, s in steps.items() if name.startswith("Offline policy preview"))
    runner = tmp_path / "runner"
    runner.mkdir()
    env = {**os.environ, "STACKS": "dev", "RUNNER_TEMP": str(runner), "GITHUB_OUTPUT": str(runner / "output"),
           "GITHUB_STEP_SUMMARY": str(runner / "summary"), "POLICY_PACKS": workflow["env"]["POLICY_PACKS"]}
    ran = subprocess.run(["bash", "-e", "-c", preview["run"]], cwd=folder, env=env, capture_output=True, text=True,
                         timeout=600)
    assert ran.returncode == 0, ran.stderr
    assert "exit-code=0" in (runner / "output").read_text(), (runner / "summary").read_text()
    sarif = json.loads((folder / "policy-preview" / "dev.sarif").read_text())
    assert "org-rules" in json.dumps(sarif) and "integration-blueprint" in json.dumps(sarif)  # both packs judged
