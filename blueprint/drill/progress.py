"""The drill's progress line on stderr."""

import sys


class ProgressBar:
    """A one-line progress bar on stderr (only when stderr is a terminal or forced)."""

    def __init__(self, stream=sys.stderr, width: int = 30):
        self.stream = stream
        self.width = width

    def __call__(self, pattern: str, fraction: float) -> None:
        filled = int(self.width * fraction)
        label = f"running: {pattern}" if fraction < 1 else "done"
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {fraction:4.0%} {label:<70.70}")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()
