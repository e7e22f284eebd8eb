"""Where a drill's logs go when no folder is named (`blueprint drill` without --logs, `run_drill`
without log_dir): a new folder in the temporary directory, which the report names.

Each drill leaves its folder (about 8 MB at 1,500 records per pattern), so a developer who runs
`make local` all day filled the temporary directory. The newest KEPT of them stay; the older ones are
removed when a drill makes its own folder, except a folder a drill still writes to: a drill holds a
lock on its folder (an flock on its IN_USE file) while it runs, and the file goes with the lock.
A folder named with --logs is the team's and is never touched; nor is anything in the temporary
directory that is not a drill's log folder of this user.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock; folders are made as before, and none is removed
    fcntl = None  # type: ignore[assignment]

# How many of the newest drill log folders stay in the temporary directory.
KEPT = 10
PREFIX = "blueprint-drill-"
# The pattern workers' scratch folder (runner._run_in_processes) shares the prefix; it is not a log
# folder, and the drill that made it removes it.
SCRATCH_PREFIX = "blueprint-drill-work-"
IN_USE = ".in-use"


@contextlib.contextmanager
def new_log_folder(stack: str, seed: int) -> Iterator[Path]:
    """A new log folder for one drill, locked while the block runs; older unlocked ones past the
    newest KEPT are removed first."""
    remove_old()
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{stack}-{seed}-"))
    if fcntl is None:
        yield folder
        return
    marker = folder / IN_USE
    descriptor = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield folder
    finally:
        with contextlib.suppress(OSError):
            marker.unlink()  # before the lock goes: a folder without it is a finished drill's
        os.close(descriptor)


def remove_old() -> list[Path]:
    """Remove the drill log folders of this user in the temporary directory past the newest KEPT,
    except those a running drill holds; returns what was removed."""
    if fcntl is None:
        return []
    folders = []
    with contextlib.suppress(OSError), os.scandir(tempfile.gettempdir()) as entries:
        for entry in entries:
            if not entry.name.startswith(PREFIX) or entry.name.startswith(SCRATCH_PREFIX):
                continue
            with contextlib.suppress(OSError):
                details = entry.stat(follow_symlinks=False)
                if entry.is_dir(follow_symlinks=False) and details.st_uid == os.getuid():
                    folders.append((details.st_mtime, Path(entry.path)))
    removed = []
    for _, folder in sorted(folders, reverse=True)[KEPT:]:
        if _held(folder):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _held(folder: Path) -> bool:
    """Whether a running drill holds `folder` (its IN_USE file locked)."""
    try:
        descriptor = os.open(folder / IN_USE, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return False  # a finished drill's, or one made before the lock existed
    except OSError:
        return True  # unreadable or a link: not ours to judge, so left alone
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)
    return False
