"""The program's files as its sandbox shows them, for the gate to read: a program that writes into its
repository (its zip, by `shutil.make_archive`; a `dist` it builds) writes into an overlay the run
throws away (program_walls), so the file its FileArchive names exists only inside the sandbox.
`pulumi preview` reads it from the program's folder, where the program wrote it; so does the gate:
the engine, at the registration that names it, and the gate's own rules after the run
(lambda-handler-in-archive reads the handler from the archive).

A path that exists on the host is read there (the checkout as it is); one that does not is looked for
in the sandbox's view of the repository: a handle on the overlay's root, taken through
/proc/<sandbox>/root while the program runs (it waits for the engine's answer to its registration),
keeps the overlay mounted after the sandbox ends, until the gate is done with the run (`close`).
Reading there follows no mount of the host: it is the program's own view, so a path the program was
not shown (~/.aws) is not read for it either.
"""

from __future__ import annotations

import os
import threading
import weakref
from pathlib import Path
from typing import Callable, Optional


class ProgramView:
    """Where the gate reads a path the program may have written: the host's file, else the
    sandbox's (`path`). `sandbox_pid` names the sandbox's first process while it runs."""

    def __init__(self, repository: Path, sandbox_pid: Callable[[], Optional[int]]):
        self.repository = Path(os.path.abspath(repository))
        self._sandbox_pid = sandbox_pid
        self._handle: Optional[int] = None
        self._lock = threading.Lock()
        self._closer: Optional[weakref.finalize] = None

    def _root(self) -> Optional[str]:
        """The sandbox's view of the repository (/proc/self/fd/N), taken on first need."""
        with self._lock:
            if self._handle is None:
                pid = self._sandbox_pid()
                if pid is None:
                    return None
                try:
                    self._handle = os.open(f"/proc/{pid}/root{self.repository}", os.O_PATH | os.O_DIRECTORY)
                except OSError:
                    return None
                self._closer = weakref.finalize(self, os.close, self._handle)
            return f"/proc/self/fd/{self._handle}"

    def path(self, path: Path) -> Path:
        """`path` (absolute, as the program names it) where the gate can read it."""
        path = Path(os.path.abspath(path))
        if os.path.lexists(path) or not path.is_relative_to(self.repository):
            return path
        root = self._root()
        if root is None:
            return path
        inside = Path(root, path.relative_to(self.repository))
        return inside if os.path.lexists(inside) else path

    def shown(self, text: str) -> str:
        """`text` with the view's own paths written as the program's."""
        root = f"/proc/self/fd/{self._handle}" if self._handle is not None else None
        return text.replace(root, str(self.repository)) if root else text

    def close(self) -> None:
        if self._closer is not None:
            self._closer()

    def __getstate__(self) -> dict:
        """A recording kept (pickled) outlives its sandbox: its copy reads the host's files only."""
        return {"repository": self.repository}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["repository"], _no_sandbox)  # type: ignore[misc]


def _no_sandbox() -> Optional[int]:
    return None
