"""What a previewed program (and its language host) sees from inside the sandbox every run puts it in
(integration_blueprint.containment, bubblewrap): its project folder, its interpreter or Node.js with
the packages it resolves, and the tool's own start-up script, all read-only; the engine's socket;
a private /tmp. Nothing of the pack (its socket's folder is not there, its process is outside the
program's PID namespace), nothing of the user's home (~/.aws) and no network. The program's
processes end with the preview: its PID namespace ends with its first process, a `setsid` daemon too.

Where the machine cannot make the sandbox (no unprivileged user namespaces), the program runs as
before, uncontained, and every report says so (`not_contained_note`); `--strict` fails on it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

from integration_blueprint.containment import SYSTEM_READ_ONLY, Walls, containment

# A start-up folder for a virtualenv: `home` in its pyvenv.cfg names the base interpreter's bin folder.
PYVENV_CONFIG = "pyvenv.cfg"


def not_contained_note(reason: str, fix: str) -> str:
    """How every report says the program ran outside the sandbox, and how to make one."""
    return (f"the program ran without the sandbox (not contained: it could read what your user can read and "
            f"start processes that outlive the preview): {reason}. Fix: {fix}")


def why_not_contained() -> Optional[str]:
    """None where the sandbox can be made on this machine, else the report's note saying why not."""
    probed = containment()
    return None if probed.available else not_contained_note(probed.reason, probed.fix)


def _existing(paths: Iterable[Path]) -> list[str]:
    return sorted({str(path) for path in paths if os.path.lexists(path)})


def python_paths(interpreter: str, environ: Mapping[str, str]) -> list[Path]:
    """What a Python interpreter needs to start, read without running it (the program's own
    virtualenv is code under test): its folder's parent (a virtualenv, or an installation), the base
    installation a virtualenv's pyvenv.cfg names, the installation the executable links to, and the
    PYTHONPATH entries the program's environment adds."""
    executable = Path(interpreter if os.sep in interpreter else _which(interpreter, environ) or interpreter)
    paths = [executable.absolute().parent.parent, Path(os.path.realpath(executable)).parent.parent]
    config = executable.absolute().parent.parent / PYVENV_CONFIG
    if config.is_file():
        for line in config.read_text(errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                paths.append(Path(value.strip()).parent)
    paths += [Path(entry) for entry in environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    return paths


def node_paths(node: str, run_entry: str, pwd: Path, environ: Mapping[str, str]) -> list[Path]:
    """What Node.js needs to run a program: its installation, every node_modules folder Node resolves
    from the program's folder (each through its links: a linked or workspace install), the SDK's own
    folder, and NODE_PATH's entries."""
    paths = [Path(os.path.realpath(node)).parent.parent, Path(run_entry).parents[4]]
    for folder in (pwd, *pwd.parents):
        modules = folder / "node_modules"
        if modules.exists():
            paths += [modules, Path(os.path.realpath(modules)), *_linked_packages(modules)]
    paths += [Path(entry) for entry in environ.get("NODE_PATH", "").split(os.pathsep) if entry]
    return paths


def tool_folders() -> list[Path]:
    """Where this tool's own packages are, for a program run by the tool's interpreter (it may import
    the components and the handler runtime, integration_blueprint.*): an installed tool is in that
    interpreter's site-packages, already visible; an editable install (a checkout of this tool, its
    packages mapped from the checkout's folders) needs its checkout."""
    import integration_blueprint

    package = Path(integration_blueprint.__file__).resolve().parent
    return [] if "site-packages" in package.parts else [package.parent]


def _linked_packages(modules: Path) -> list[Path]:
    """Where the packages of a node_modules folder that are links lead (`npm link`, a workspace, a
    folder dependency): Node.js loads them from there."""
    linked = []
    for entry in modules.iterdir():
        for package in (entry.iterdir() if entry.name.startswith("@") and entry.is_dir() else [entry]):
            if package.is_symlink():
                linked.append(Path(os.path.realpath(package)))
    return linked


def _which(name: str, environ: Mapping[str, str]) -> Optional[str]:
    import shutil

    return shutil.which(name, path=environ.get("PATH"))


def program_walls(*, project_dir: Path, cwd: Path, read_only: Sequence[Path], engine_socket: str,
                  writable_files: Sequence[Path], environment: Mapping[str, str],
                  pass_fds: Sequence[int]) -> Walls:
    """The walls of one program run: `read_only` (the host's list: interpreter, packages, its own
    start-up script) with the project folder and the system's libraries; the engine's socket and
    `writable_files` (files the start-up script writes for the engine) writable; the environment
    the host made, with a private /tmp as its temporary folder."""
    socket = engine_socket.removeprefix("unix:")
    # A listed folder that is a link (a project's virtualenv linked from a cache) is seen through:
    # its target is listed too.
    reads = [*map(Path, SYSTEM_READ_ONLY), project_dir, cwd, *read_only]
    reads += [Path(os.path.realpath(path)) for path in reads]
    return Walls(read_only=_existing(reads),
                 writable=_existing([Path(socket), *writable_files]),
                 environment={**environment, "TMPDIR": "/tmp"}, cwd=cwd, network=False, pass_fds=tuple(pass_fds))
