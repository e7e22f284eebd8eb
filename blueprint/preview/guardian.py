"""The preview's guardian (process_tree.py starts it, `python -I -S guardian.py`, its stdin the read
end of a pipe only the preview holds): it keeps the process groups the preview adopts ("+<pgid>")
and releases ("-<pgid>"), one a line, and when the pipe ends (the preview is gone, SIGKILL
included) kills every group still adopted. A script of its own, importing os and signal alone: it
starts with every preview, and process_tree.py's imports (subprocess, threading, pathlib) were
0.05 s of CPU where 0.02 s does."""

import os
import signal


def _guard() -> None:
    """The guardian: keep the groups the preview adopts, and kill those left when it is gone."""
    groups: set[int] = set()
    pending = b""
    while True:
        try:
            data = os.read(0, 4096)
        except InterruptedError:
            continue
        if not data:
            break
        pending += data
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if line[:1] == b"+":
                groups.add(int(line[1:]))
            elif line[:1] == b"-":
                groups.discard(int(line[1:]))
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the preview's to handle
    _guard()
