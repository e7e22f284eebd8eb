"""A plugin process as the Pulumi engine starts one: the policy pack (analyzer.py) and a component
package (engine.py ComponentPlugin) alike.

The child is started in a process group of its own (process_tree), with the run's private-channel
settings handed over on an inherited pipe (private_channel: its socket's address and token, never
on its command line or in its environment), and prints its port as its first line, as every Pulumi
plugin does; past that line its stdout is drained so a plugin that prints cannot fill the pipe and
stall its server. What it writes on stderr is kept for the error message a failure needs.
"""

from __future__ import annotations

import os
import select
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Mapping, Optional, Sequence

from integration_blueprint.preview import private_channel, process_tree


class PluginDidNotStart(Exception):
    """The plugin exited or printed something other than its port within the start timeout.
    `exit_code`: how it ended, None when it was still running (then it was ended here)."""

    def __init__(self, printed: bytes, stderr: str, exit_code: Optional[int] = None, timeout: float = 0):
        self.printed, self.stderr, self.exit_code = printed, stderr, exit_code
        self.exited_without_serving = exit_code is not None and not printed.strip()
        super().__init__(self._words(printed, exit_code, timeout))

    @staticmethod
    def _words(printed: bytes, exit_code: Optional[int], timeout: float) -> str:
        text = printed.decode(errors="replace").strip()
        if text:
            return f"it printed {text[:200]!r} where its port was expected"
        if exit_code is None:
            return f"it printed nothing (not its port) within {timeout:g} s"
        return f"it exited with code {exit_code} without serving (it printed no port)"


class PluginProcess:
    def __init__(self, argv: Sequence[str], *, settings: dict, start_timeout: float,
                 cwd: Optional[Path] = None, env: Optional[Mapping[str, str]] = None):
        self.stderr = tempfile.TemporaryFile()
        handed = private_channel.hand_over(settings)
        try:
            self.process = subprocess.Popen(
                list(argv), cwd=cwd, stdout=subprocess.PIPE, stderr=self.stderr, pass_fds=[handed],
                env={**(os.environ if env is None else env), private_channel.FD_VARIABLE: str(handed)},
                start_new_session=True)
        finally:
            os.close(handed)
        process_tree.adopt(self.process)
        stdout = self.process.stdout
        assert stdout is not None  # Popen(stdout=PIPE)
        ready, _, _ = select.select([stdout], [], [], start_timeout)
        line = stdout.readline() if ready else b""
        if not line.strip().isdigit():
            exited = self.process.poll() if line or ready else None
            if ready and not line:  # end of its output: it is ending, let it say how
                try:
                    exited = self.process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    exited = None
            process_tree.end(self.process, grace=0)
            stderr = self.stderr_text()
            self.stderr.close()
            raise PluginDidNotStart(line, stderr, exited, start_timeout)
        self.port = int(line)
        threading.Thread(target=stdout.read, daemon=True).start()

    def stderr_text(self) -> str:
        """What the plugin wrote on stderr."""
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def close(self) -> None:
        """End the plugin and everything it started."""
        process_tree.end(self.process)
        self.stderr.close()
