"""The drill's progress line on stderr."""

from __future__ import annotations

import sys
from typing import Optional, TextIO


class ProgressBar:
    """A one-line progress bar, redrawn in place with a carriage return.

    Drawn only on a terminal: a redirected log gets nothing (carriage returns make a log
    unreadable). Redrawn only when what it shows changes (the whole percent or the label), so a
    run writes at most 101 updates per label however often the drill reports. The label is never
    cut; a shorter line is padded to wipe the longer one it replaces."""

    def __init__(self, stream: Optional[TextIO] = None, width: int = 30):
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self._shown: Optional[tuple[int, str]] = None
        self._length = 0  # characters of the line on screen

    def __call__(self, pattern: str, fraction: float) -> None:
        if not self.enabled:
            return
        percent = int(100 * min(max(fraction, 0.0), 1.0))
        label = f"running: {pattern}" if percent < 100 else "done"
        if (percent, label) == self._shown:
            return
        self._shown = (percent, label)
        filled = self.width * percent // 100
        line = f"[{'#' * filled}{'.' * (self.width - filled)}] {percent:3d}% {label}"
        self.stream.write("\r" + line + " " * max(0, self._length - len(line)))
        self.stream.flush()
        self._length = len(line)

    def close(self) -> None:
        if self._length:
            self.stream.write("\n")
            self.stream.flush()
            self._length = 0
