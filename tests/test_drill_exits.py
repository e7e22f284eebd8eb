"""How `blueprint drill` ends when it cannot run or is stopped: exit 2 with one line naming the fix
for every "could not run" (1 means the drill found records lost or done twice), 130 on Ctrl-C and
143 on SIGTERM with one line and no traceback, and nothing of the drill left in the temp folder."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from integration_blueprint.cli import main
from integration_blueprint.core import patches
from integration_blueprint.sandbox.emulator import EMULATOR_PATCHES

REPO = Path(__file__).resolve().parents[1]
BLUEPRINT = [sys.executable, "-m", "integration_blueprint"]


def blueprint(*args: str, env: dict, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([*BLUEPRINT, *args], cwd=REPO, env={**os.environ, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def test_an_aws_profile_that_does_not_exist_exits_2_with_one_line_before_anything_starts(monkeypatch, capsys,
                                                                                         tmp_path):
    monkeypatch.setenv("AWS_PROFILE", "no-such-profile")
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))

    code = main(["drill", "--records", "5", "--no-progress"])

    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "AWS_PROFILE=no-such-profile" in err and "unset AWS_PROFILE" in err
    assert list(tmp_path.iterdir()) == []


def test_a_fix_refused_outside_its_verified_versions_exits_2_naming_the_version_to_install(monkeypatch, capsys,
                                                                                           tmp_path):
    name = next(n for n in EMULATOR_PATCHES if patches.REGISTRY[n].kind == patches.FIX)
    monkeypatch.setitem(patches.REGISTRY, name, patches.REGISTRY[name].__class__(
        **{**patches.REGISTRY[name].__dict__, "verified": ("0.0.1",)}))
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))

    code = main(["drill", "--records", "5", "--no-progress"])  # the default: one worker process per pattern

    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"the fix {name}" in err and "pip install '" in err and "0.0.1" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("how, code, said", [(signal.SIGINT, 130, "interrupted (Ctrl-C)"),
                                             (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_a_stopped_drill_exits_128_plus_the_signal_with_one_line_and_leaves_nothing_in_the_temp_folder(
        tmp_path, how, code, said):
    run = blueprint("drill", "--records", "400", "--no-progress", env={"TMPDIR": str(tmp_path)},
                    start_new_session=True)
    deadline = time.monotonic() + 120
    # Stopped while the pattern processes run: their handler logs have been opened.
    while not list(tmp_path.glob("blueprint-drill-dev-*/*_*.log")) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)
    # Ctrl-C reaches the terminal's whole process group; `kill` (SIGTERM) the drill's process only.
    os.killpg(run.pid, how) if how == signal.SIGINT else run.send_signal(how)
    out, err = run.communicate(timeout=60)

    assert run.returncode == code and out == ""
    assert err == f"blueprint drill: {said}; nothing was judged\n"
    assert list(tmp_path.iterdir()) == []
