"""Assets and archives read as the Pulumi engine reads them when a program registers a resource.

The engine hashes every asset and archive a registration carries, in a preview too (the resource
monitor unmarshals the inputs with ComputeAssetHashes; pulumi/pulumi sdk/go/common/resource/plugin
rpc.go, asset/asset.go, archive/archive.go). A path it cannot read fails the registration, and the
program sees its error at the line that declared the resource:
`failed to compute archive hash for "code": couldn't read archive path '/abs/dist': stat /abs/dist:
no such file or directory`. A build step not run (`FileArchive("./dist")` with no `dist`) stops
`pulumi preview` there, so it stops the offline preview there too, in the engine's words.

What the engine does, for each kind (a relative path is taken from the program's working directory):

- FileAsset: opens the file; a folder is refused ("try using an archive");
- FileArchive: a path ending in a known archive extension is opened as a file and hashed as bytes;
  any other path must be a folder, walked with every file read (a link is followed; a link to a
  folder is skipped, a broken one fails the walk; `.pulumi` is skipped);
- AssetArchive: each member in turn, as above, before the archive: the error names the member;
- a `file://` URI is opened; other URIs (http, https) are fetched, which an offline preview does not
  do: they are left unread.

Reading is checked by opening each file: what fails the engine's hash (a missing path, a file it may
not read, a broken link) fails the open, without reading a build folder's every byte.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Iterator, Optional
from urllib.parse import unquote, urlparse

from integration_blueprint.preview import wire
from integration_blueprint.preview.program_view import ProgramView

# The engine's archive formats by extension (archive.go ArchiveExts, detectArchiveFormat): such a
# path is hashed as the file's bytes; any other path must be a folder.
ARCHIVE_EXTENSIONS = (".tar", ".tgz", ".tar.gz", ".zip", ".jar")
# The folder the engine never puts in a folder archive (archive.go BookkeepingDir).
BOOKKEEPING_DIR = ".pulumi"


class Unreadable(Exception):
    """An asset or archive the engine could not read; the message is the engine's reason."""


def unreadable(inputs: dict, working_directory: Path, view: Optional[ProgramView] = None) -> Optional[str]:
    """The engine's error for the first asset or archive of a registration's inputs that cannot be
    read from `working_directory` (the program's), or None when every one can. `view`: where a path
    the program wrote inside its sandbox is read (program_view)."""
    found = _first_unreadable(inputs, working_directory, view.path if view is not None else (lambda path: path))
    if found is None:
        return None
    key, value, reason = found
    what = "archive" if value.get(wire.SIG) == wire.ARCHIVE_SIG else "asset"
    message = f'failed to compute {what} hash for "{key}": {reason}'
    return view.shown(message) if view is not None else message


def archive_problem(archive: dict, working_directory: Path) -> Optional[str]:
    """Why the engine could not hash one asset or archive (wire form) read from `working_directory`,
    in its words, naming the member of an AssetArchive that fails; None when it can. For a check
    made before the engine's, which names the argument the team wrote (`consumer_code`) where the
    engine can name only the resource's own property (`code`)."""
    found = _first_unreadable(archive, working_directory, lambda path: path)
    if found is None:
        return None
    key, _, reason = found
    return f"its member {key!r}: {reason}" if key else reason


def _first_unreadable(value: Any, working_directory: Path,
                      where: Callable[[Path], Path]) -> Optional[tuple[str, dict, str]]:
    """(key, asset or archive, the engine's reason) of the first one in `value` it cannot read."""
    for key, item in assets_in(value, ""):
        try:
            _read(item, working_directory, where)
        except Unreadable as exc:
            return key, item, str(exc)
    return None


def assets_in(value: Any, key: str = "") -> Iterator[tuple[str, dict]]:
    """Every asset or archive a value holds (inside secrets, lists and objects), with the key the
    engine names it by, in the order it hashes them: an AssetArchive's members (by name, each
    named by its own key) before the archive itself, object keys in sorted order."""
    sig = value.get(wire.SIG) if isinstance(value, dict) else None
    if sig in (wire.ASSET_SIG, wire.ARCHIVE_SIG):
        if isinstance(value.get("assets"), dict):
            for name in sorted(value["assets"]):
                yield from assets_in(value["assets"][name], name)
        yield key, value
    elif sig in (wire.SECRET_SIG, wire.OUTPUT_VALUE_SIG):
        yield from assets_in(value.get("value"), key)
    elif isinstance(value, dict):
        for name in sorted(value):
            yield from assets_in(value[name], name)
    elif isinstance(value, list):
        for item in value:
            yield from assets_in(item, key)


def _read(value: dict, working_directory: Path, where: Callable[[Path], Path]) -> None:
    """Read one asset or archive as the engine does to hash it (an AssetArchive's members are
    read on their own, before it)."""
    if isinstance(value.get("path"), str) and value["path"]:
        path = where(Path(os.path.normpath(working_directory / value["path"])))  # as Go's filepath.Join
        if value.get(wire.SIG) == wire.ARCHIVE_SIG:
            _read_archive_path(path)
        else:
            _read_asset_path(path)
    elif isinstance(value.get("uri"), str) and urlparse(value["uri"]).scheme == "file":
        _open(where(Path(unquote(urlparse(value["uri"]).path))))


def _read_asset_path(path: Path) -> None:
    if path.is_dir():
        raise Unreadable(f"asset path '{path}' is a directory; try using an archive")
    try:
        _open(path)
    except Unreadable as exc:
        raise Unreadable(f"failed to open asset file '{path}': {exc}") from None


def _read_archive_path(path: Path) -> None:
    if str(path).endswith(ARCHIVE_EXTENSIONS):
        _open(path)
        return
    try:
        os.stat(path)
    except OSError as exc:
        raise Unreadable(f"couldn't read archive path '{path}': stat {path}: {_reason(exc)}") from None
    if not path.is_dir():
        raise Unreadable(f"'{path}' is neither a recognized archive type nor a directory")
    _walk(path)


def _walk(folder: Path) -> None:
    """The folder as the engine walks it (filepath.Walk, links not followed into folders)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError as exc:
        raise Unreadable(f"open {folder}: {_reason(exc)}") from None
    for entry in entries:
        path = Path(entry.path)
        if entry.name == BOOKKEEPING_DIR:
            continue
        if entry.is_dir(follow_symlinks=False):
            _walk(path)
            continue
        if entry.is_symlink():
            if not path.exists():  # a broken link: the engine's stat of it fails
                raise Unreadable(f"stat {path}: no such file or directory")
            if entry.is_dir():  # a link to a folder is skipped
                continue
        try:
            _open(path)
        except Unreadable as exc:
            raise Unreadable(f"failed to open asset file '{path}': {exc}") from None


def _open(path: Path) -> None:
    try:
        # O_NONBLOCK: a named pipe in a build folder is not waited on (the engine would block on it).
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except OSError as exc:
        raise Unreadable(f"open {path}: {_reason(exc)}") from None


def _reason(exc: OSError) -> str:
    """An OS error as Go words it (syscall.Errno's text, lower case: "no such file or directory")."""
    text = os.strerror(exc.errno) if exc.errno else str(exc)
    return text[:1].lower() + text[1:]
