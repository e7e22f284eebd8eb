"""A Lambda function's code as the program recorded it (a FileArchive folder or zip, an AssetArchive
of files and archives, in wire.plain form): its entries as Lambda lays them out under /var/task,
whether its handler is among them (a note of the preview), and the layout itself (the sandbox
unpacks it to run the function).

An entry whose name would land outside the function's folder (`../../x.py`, an absolute path) is
refused with ArchiveError naming it: nothing is ever written outside the folder it is unpacked to.
So is a link inside a FileArchive folder that points outside it: Pulumi packs the file a link points
to, so the function would hold a copy of whatever it names (a key, /proc/self/environ). Reading
and copying a folder never follow a link out of it.
"""

from __future__ import annotations

import ast
import difflib
import os
import posixpath
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Callable, Optional

from integration_blueprint.core import aws_limits

Reader = Callable[[], bytes]


class ArchiveError(ValueError):
    """The archive holds an entry Lambda's folder cannot hold."""


def _entry_name(prefix: str, name: str) -> str:
    """`name` under `prefix`, as a relative path inside the function's folder; refused if it is not."""
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise ArchiveError(f"archive entry {name!r} is an absolute path; an entry must name a place inside the "
                           "function's folder (e.g. 'app.py' or 'lib/util.py')")
    joined = posixpath.normpath(posixpath.join(prefix, name.replace("\\", "/"))) if name not in ("", ".") else prefix
    if joined == ".." or joined.startswith("../"):
        raise ArchiveError(f"archive entry {name!r} would land outside the function's folder ({joined!r}); an entry "
                           "must name a place inside it (e.g. 'app.py' or 'lib/util.py')")
    return "" if joined == "." else joined


def members(code: dict, program_dir: Path, prefix: str = "",
            view: Optional[Callable[[Path], Path]] = None) -> Optional[dict[str, Reader]]:
    """Every file of the archive by its path in the function's folder, with how to read it; None
    when the archive cannot be read from this machine (a remote archive, a missing file). `view`:
    where a file the program wrote inside its sandbox is read (program_view.ProgramView.path)."""
    kind, path = code.get("archive") or code.get("asset"), code.get("path")
    if kind == "AssetArchive":
        found: dict[str, Reader] = {}
        for name, member in (code.get("assets") or {}).items():
            inner = members(member, program_dir, _entry_name(prefix, str(name)), view) \
                if isinstance(member, dict) else None
            if inner is None:
                return None
            found.update(inner)
        return found or None
    if not isinstance(path, str):
        return None
    source = program_dir / path
    source = view(source) if view is not None else source
    if kind == "FileAsset" and source.is_file():
        if not prefix:
            raise ArchiveError(f"a file asset ({path}) needs a name in its AssetArchive")
        _refuse_link_out_of_program(source, program_dir, prefix)
        return {prefix: source.read_bytes}
    if kind == "FileArchive" and source.is_dir():
        refuse_links_out(source)
        return {_entry_name(prefix, p.relative_to(source).as_posix()): p.read_bytes
                for p in sorted(source.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}
    if kind == "FileArchive" and zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as archive:
            names = [info.filename for info in archive.infolist() if not info.is_dir()]

        def read(name: str) -> Reader:
            def reader() -> bytes:
                with zipfile.ZipFile(source) as archive:
                    return archive.read(name)
            return reader
        return {_entry_name(prefix, name): read(name) for name in names}
    return None


def unpack(code: dict, program_dir: Path, into: Path) -> bool:
    """Lay the archive out under `into`; False if it cannot be read from this machine."""
    found = members(code, program_dir)
    if found is None:
        return False
    root = into.resolve()
    for name, read in found.items():
        target = (root / name).resolve()
        if not target.is_relative_to(root):  # a name that passed the check but a link inside leads out
            raise ArchiveError(f"archive entry {name!r} would land outside the function's folder ({target})")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(read())
    return True


def _refuse_link_out_of_program(source: Path, program_dir: Path, entry: str) -> None:
    """ArchiveError when a file of the program's folder (a component lays a FileArchive folder out
    as one FileAsset per file) is reached through a link that leads out of that folder. Files
    named outside it (the handler runtime the component adds, from the installed package) are the
    program's choice, not a link."""
    root = Path(os.path.abspath(program_dir))
    lexical = Path(os.path.abspath(source))
    if not lexical.is_relative_to(root):
        return
    target = lexical.resolve()  # once: each resolve is a stat of every folder on the way
    if _installed(lexical, root, target):
        return
    if not target.is_relative_to(root.resolve()):
        raise ArchiveError(
            f"archive entry {entry!r} ({lexical.relative_to(root).as_posix()}) is a link to {target}, outside the "
            f"program's folder {root}; Pulumi packs the file a link points to, so the deployed function would hold a "
            "copy of it: copy what the function needs into the folder and remove the link")


# Where an installed package lives: a file reached through one of these (or through a virtualenv, a
# folder holding pyvenv.cfg) is a package's, whatever links lead there.
INSTALLED_PACKAGE_FOLDERS = ("site-packages", "dist-packages", "node_modules")


def _installed(lexical: Path, root: Path, target: Path) -> bool:
    """Whether `lexical` (inside the program's folder `root`, leading to `target`) is a file of an
    installed package: the handler runtime a component adds from its installed package (through a
    `.venv` that links to a shared virtualenv: monorepos, Nix). Pulumi packs what the link points to,
    the package's own file: judged as such, never as the team's link out of its folder. Its target
    must be a package's too."""
    if not any(part in INSTALLED_PACKAGE_FOLDERS for part in target.parts):
        return False  # a link that leads out of every package folder (to a key, /proc/self/environ) is the team's
    parts = lexical.relative_to(root).parts[:-1]
    if any(part in INSTALLED_PACKAGE_FOLDERS for part in parts):
        return True
    return any((root.joinpath(*parts[:depth]) / "pyvenv.cfg").is_file() for depth in range(1, len(parts) + 1))


def refuse_links_out(folder: Path) -> None:
    """ArchiveError naming the first link in `folder` (at any depth) whose target is outside it."""
    root = folder.resolve()
    for path in sorted(folder.rglob("*")):
        if not path.is_symlink() or "__pycache__" in path.parts:
            continue
        target = path.resolve()  # through every link of the chain: where reading it would land
        if not target.is_relative_to(root):
            raise ArchiveError(
                f"archive entry {path.relative_to(folder).as_posix()!r} is a link to {target}, outside the archive's "
                f"folder {folder}; Pulumi packs the file a link points to, so the deployed function would hold a copy "
                "of it: copy what the function needs into the folder and remove the link")


def copy_folder(source: Path, into: Path) -> None:
    """A FileArchive folder, as it is (the sandbox runs a copy: the program's folder is never written).
    Its links are copied as links (never followed here); one that leads out of it is refused."""
    refuse_links_out(source)
    shutil.copytree(source, into, symlinks=True, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))


def handler_problem(code: dict, program_dir: Path, handler: str,
                    provided: frozenset[str] = frozenset(),
                    view: Optional[Callable[[Path], Path]] = None) -> Optional[str]:
    """Why `handler` (module.function) would not be found in this archive on Lambda, or None (also
    when the archive or the module cannot be read here: nothing to say). `provided`: the modules the
    runtime and layers give the function (runtime_provided); a package the handler module imports
    at load that neither they nor the archive hold is named. Empty: imports are not checked."""
    try:
        found = members(code, program_dir, view=view)
    except ArchiveError as exc:
        return str(exc)
    module, _, function = handler.rpartition(".")
    if found is None or not module or not function:
        return None
    base = module.replace(".", "/")
    source = found.get(f"{base}.py") or found.get(f"{base}/__init__.py")
    if source is None:
        modules = sorted({name[:-3].replace("/", ".") for name in found if name.endswith(".py")}
                         | {name[:-len("/__init__.py")].replace("/", ".") for name in found if name.endswith("/__init__.py")})
        return (f"handler {handler!r}: module {module!r} is not in the function's archive ({base}.py){_guess(module, modules)}; "
                "Lambda would fail every invocation with Runtime.ImportModuleError")
    try:
        tree = ast.parse(source())
    except (SyntaxError, ValueError):
        return f"handler {handler!r}: module {module!r} is not valid Python (Runtime.UserCodeSyntaxError on Lambda)"
    if not _defines(tree, function):
        return (f"handler {handler!r}: module {module!r} defines no {function!r} at its top level"
                f"{_guess(function, _functions(tree))}; Lambda would fail every invocation with Runtime.HandlerNotFound")
    if PACKAGE in _imported(tree) and f"{PACKAGE}/__init__.py" not in found:
        return (f"handler {handler!r}: module {module!r} imports {PACKAGE}, which the function's archive does not hold "
                "(a zip or remote archive ships as it is; give a folder or an AssetArchive and the component adds the "
                "handler runtime); Lambda would fail every invocation with Runtime.ImportModuleError")
    missing = [] if not provided else sorted(name for name in _imported_at_load(tree)
                     if name not in provided and not _holds(found, name) and name != PACKAGE)
    if missing:
        return (f"handler {handler!r}: module {module!r} imports {', '.join(missing)}, which neither the function's "
                "archive nor the Lambda runtime provides; Lambda would fail every invocation with "
                f"Runtime.ImportModuleError. Ship {'them' if len(missing) > 1 else 'it'} in the function's code (e.g. "
                f"`pip install --target <code folder> {' '.join(missing)}`) or in a layer")
    return None


def runtime_provided(powertools_layer: bool) -> frozenset[str]:
    """The top-level modules a Python function may import without shipping them: the standard
    library, the runtime's AWS SDK, and the Powertools layer's packages when it has that layer."""
    provided = set(sys.stdlib_module_names) | aws_limits.LAMBDA_PYTHON_RUNTIME_PACKAGES
    return frozenset(provided | (aws_limits.POWERTOOLS_LAYER_PACKAGES if powertools_layer else set()))


def _holds(found: dict, name: str) -> bool:
    """Whether the archive's root holds module or package `name` (Lambda puts /var/task on the path)."""
    return f"{name}.py" in found or any(entry.startswith(f"{name}/") for entry in found) or any(
        entry.startswith(f"{name}.") and entry.endswith((".so", ".pyd")) for entry in found)


def _imported_at_load(tree: ast.Module) -> set[str]:
    """The top-level packages a module imports when it loads, unconditionally: its own top-level
    import statements (one inside a try, an if or a function may be optional, so it is left out)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


PACKAGE = "integration_blueprint"  # this package: no Lambda runtime or layer provides it


def _guess(written: str, names) -> str:
    """", did you mean 'x'?" for the name closest to what was written, or nothing."""
    close = difflib.get_close_matches(written, list(names), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _functions(tree: ast.Module) -> list[str]:
    """The functions a module defines at its top level."""
    return [node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _imported(tree: ast.Module) -> set[str]:
    """The top-level package names a module imports."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def _defines(tree: ast.Module, name: str) -> bool:
    """Whether a module binds `name` at its top level (a def, an assignment, an import, or anything
    it cannot tell: a star import, a module __getattr__)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in (name, "__getattr__"):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" or (alias.asname or alias.name).split(".")[0] == name for alias in node.names):
                return True
        if isinstance(node, (ast.Name,)) and isinstance(node.ctx, ast.Store) and node.id == name:
            return True
    return False
