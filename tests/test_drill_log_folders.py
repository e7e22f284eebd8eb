"""A drill without --logs keeps its logs in a folder of the temporary directory: the newest ten stay,
older ones go when the next drill starts, and never one a running drill still writes to."""

import os
import tempfile
import time

import pytest

from integration_blueprint.drill import log_folders

pytestmark = pytest.mark.skipif(log_folders.fcntl is None, reason="no flock on this platform: nothing is removed")


def _folder(directory, name: str, age_seconds: float):
    folder = directory / name
    folder.mkdir()
    (folder / "fifo_billing.log").write_text("a handler's log\n")
    then = time.time() - age_seconds
    os.utime(folder, (then, then))
    return folder


def test_old_drill_logs_go_when_a_drill_starts_but_the_newest_and_a_running_drills_stay(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    finished = [_folder(tmp_path, f"blueprint-drill-dev-7-{n:02d}", age_seconds=1000 + n) for n in range(12)]
    scratch = _folder(tmp_path, "blueprint-drill-work-abc", age_seconds=5000)  # a running drill's workers'
    teams = _folder(tmp_path, "drill-logs", age_seconds=5000)  # a folder named with --logs
    elsewhere = _folder(tmp_path, "other", age_seconds=5000)
    (tmp_path / "blueprint-drill-dev-7-link").symlink_to(elsewhere)  # a link is not a folder of ours

    with log_folders.new_log_folder("dev", 7) as running:
        # Making its folder, the drill removed what was past the ten newest of the finished ones.
        assert [p.name for p in finished if p.is_dir()] == [p.name for p in finished[:10]]
        # A running drill holds its folder: however many newer drills start, it stays until it ends.
        assert (running / log_folders.IN_USE).exists()
        os.utime(running, (time.time() - 9000, time.time() - 9000))
        newer = [_folder(tmp_path, f"blueprint-drill-dev-7-new{n:02d}", age_seconds=n) for n in range(10)]
        assert set(log_folders.remove_old()) == set(finished[:10])
        assert running.is_dir()

    assert sorted(p.name for p in running.iterdir()) == []  # a finished drill's folder holds only its logs
    # Its end counts as its latest write: it is now the newest, and the eleventh newest goes.
    assert log_folders.remove_old() == [newer[-1]]
    assert running.is_dir() and all(p.is_dir() for p in newer[:-1])
    assert scratch.is_dir() and teams.is_dir() and elsewhere.is_dir()
    assert (tmp_path / "blueprint-drill-dev-7-link").is_symlink()
