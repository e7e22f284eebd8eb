"""Assets and archives read as the Pulumi engine reads them to hash them (preview/assets.py): what it
cannot read fails the registration in the engine's words, naming the path; what it can is silent."""

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pulumi
import pytest

from integration_blueprint import components
from integration_blueprint.preview import wire
from integration_blueprint.preview.assets import unreadable
from integration_blueprint.preview.recording import ProgramError, record_program
from tests.conftest import REGION_CONFIG


def file_archive(path: str) -> dict:
    return {wire.SIG: wire.ARCHIVE_SIG, "path": path}


def file_asset(path: str) -> dict:
    return {wire.SIG: wire.ASSET_SIG, "path": path}


def asset_archive(members: dict) -> dict:
    return {wire.SIG: wire.ARCHIVE_SIG, "assets": members}


@pytest.fixture
def program(tmp_path):
    """A program's folder after its build step: dist/ with a handler, a library folder and a zip."""
    (tmp_path / "dist" / "lib").mkdir(parents=True)
    (tmp_path / "dist" / "app.py").write_text("def handler(event, context):\n    return event\n")
    (tmp_path / "dist" / "lib" / "util.py").write_text("X = 1\n")
    with zipfile.ZipFile(tmp_path / "layer.zip", "w") as archive:
        archive.writestr("python/dep.py", "Y = 2\n")
    return tmp_path


def test_what_the_build_left_is_read_silently_in_every_shape_a_program_gives_it(program):
    inputs = {"code": asset_archive({".": file_archive("./dist"), "extra.txt": {wire.SIG: wire.ASSET_SIG, "text": "x"},
                                     "vendor": file_archive("layer.zip")}),
              "layers": [file_archive(str(program / "layer.zip"))],
              "source": wire.secret(file_asset("dist/app.py")),
              "remote": {wire.SIG: wire.ARCHIVE_SIG, "uri": "https://example.com/lambda.zip"},
              "local": {wire.SIG: wire.ASSET_SIG, "uri": f"file://{program}/dist/app.py"}}

    assert unreadable(inputs, program) is None


def test_a_build_folder_not_built_fails_as_the_engine_fails_it_naming_the_absolute_path(program):
    assert unreadable({"code": file_archive("./build")}, program) == (
        f"failed to compute archive hash for \"code\": couldn't read archive path '{program}/build': "
        f"stat {program}/build: no such file or directory")


def test_a_missing_member_of_an_asset_archive_is_named_by_its_own_key(program):
    """The engine hashes an AssetArchive's members (in name order) before the archive."""
    code = asset_archive({".": file_archive("./dist"), "config.json": file_asset("settings/config.json"),
                          "python": file_archive("./layer")})

    assert unreadable({"code": code}, program) == (
        f"failed to compute asset hash for \"config.json\": failed to open asset file '{program}/settings/config.json'"
        f": open {program}/settings/config.json: no such file or directory")


def test_a_missing_zip_a_folder_as_file_asset_a_plain_file_as_archive_and_a_path_through_a_file_are_refused(program):
    assert unreadable({"code": file_archive("../artifacts/lambda.zip")}, program) == (
        f"failed to compute archive hash for \"code\": open {program.parent}/artifacts/lambda.zip: "
        "no such file or directory")
    assert unreadable({"source": file_asset("dist")}, program) == (
        f"failed to compute asset hash for \"source\": asset path '{program}/dist' is a directory; "
        "try using an archive")
    assert unreadable({"code": file_archive("dist/app.py")}, program) == (
        f"failed to compute archive hash for \"code\": '{program}/dist/app.py' is neither a recognized archive "
        "type nor a directory")
    assert unreadable({"source": file_asset("dist/app.py/handler.py")}, program) == (
        f"failed to compute asset hash for \"source\": failed to open asset file '{program}/dist/app.py/handler.py': "
        f"open {program}/dist/app.py/handler.py: not a directory")


def test_a_broken_link_in_a_build_folder_fails_the_walk_and_links_to_folders_are_skipped(program):
    (program / "dist" / "shared").symlink_to(program / "dist" / "lib", target_is_directory=True)
    (program / ".pulumi").mkdir()
    (program / "dist" / ".pulumi").mkdir()
    (program / "dist" / ".pulumi" / "stale").symlink_to(program / "gone")
    assert unreadable({"code": file_archive("dist")}, program) is None

    (program / "dist" / "lib" / "vendored.py").symlink_to(program / "node_modules" / "vendored.py")

    assert unreadable({"code": file_archive("dist")}, program) == (
        f"failed to compute archive hash for \"code\": stat {program}/dist/lib/vendored.py: no such file or directory")


def test_a_file_the_engine_may_not_read_fails_naming_it():
    """Read as a user who may not read it: root reads any file, so as root the check runs in a user
    namespace of its own (`unshare --user`: an unmapped uid, without root's override)."""
    folder = Path(tempfile.mkdtemp(prefix="blueprint-unreadable-"))  # 0755: another user may walk it
    try:
        folder.chmod(0o755)
        (folder / "dist" / "lib").mkdir(parents=True)
        (folder / "dist" / "app.py").write_text("def handler(event, context):\n    return event\n")
        (folder / "dist" / "lib" / "util.py").write_text("X = 1\n")
        (folder / "dist" / "lib" / "util.py").chmod(0)
        check = (f"from pathlib import Path\nfrom integration_blueprint.preview import assets, wire\n"
                 f"print(assets.unreadable({{'code': {{wire.SIG: wire.ARCHIVE_SIG, 'path': 'dist'}}}}, Path({str(folder)!r})))")
        as_user = ["unshare", "--user"] if os.geteuid() == 0 else []
        done = subprocess.run([*as_user, sys.executable, "-c", check], capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(folder)
    if as_user and done.stderr.startswith("unshare:"):
        pytest.skip(f"root without user namespaces cannot be another user here: {done.stderr.strip()}")

    assert done.stdout.strip() == (
        f"failed to compute archive hash for \"code\": failed to open asset file '{folder}/dist/lib/util.py': "
        f"open {folder}/dist/lib/util.py: permission denied"), done.stderr


# ---- a component's code argument: named as the team wrote it ------------------------------------

@pytest.mark.parametrize("component, code_arg, handler_arg", [
    ("FifoBillingQueue", "consumer_code", "consumer_handler"),
    ("FifoBillingQueue", "dispatcher_code", "dispatcher_handler"),
    ("IdempotentStreamConsumer", "code", "handler"),
    ("NonIdempotentStreamConsumer", "code", "handler"),
    ("DistributedMapBatch", "item_code", "item_handler"),
])
def test_a_code_argument_the_engine_could_not_read_is_refused_naming_the_argument_the_program_wrote(
        program, monkeypatch, component, code_arg, handler_arg):
    """The engine's own error names the function's property (`"code"`), which the program never
    wrote: the component refuses first, naming its own argument, with the engine's reason."""
    monkeypatch.chdir(program)  # a program runs from its folder

    def declares():
        required = {"max_concurrency": 4} if component == "DistributedMapBatch" else {}
        getattr(components, component)("payments", {code_arg: pulumi.FileArchive("./build"),
                                                     handler_arg: "app.handler", **required})

    with pytest.raises(ProgramError) as refused:
        record_program(declares, config=REGION_CONFIG)

    message = str(refused.value)
    assert (f"{component}: {code_arg} cannot be read: couldn't read archive path '{program}/build': "
            f"stat {program}/build: no such file or directory. Run the build step that makes it, or point "
            f"{code_arg} at where it is") in message
    assert '"code"' not in message


def test_a_code_archives_missing_member_is_named_with_the_argument(program, monkeypatch):
    monkeypatch.chdir(program)
    code = pulumi.AssetArchive({"app.py": pulumi.FileAsset("dist/app.py"),
                                "settings.json": pulumi.FileAsset(str(program / "settings.json"))})
    def declares():
        components.FifoBillingQueue("payments", {"consumer_code": code, "consumer_handler": "app.handler"})

    with pytest.raises(ProgramError, match=(
            rf"FifoBillingQueue: consumer_code cannot be read: its member 'settings.json': failed to open asset file "
            rf"'{program}/settings.json': open {program}/settings.json: no such file or directory")):
        record_program(declares, config=REGION_CONFIG)
    # What the engine can read passes: the same archive once the file is there.
    (program / "settings.json").write_text("{}")
    record_program(declares, config=REGION_CONFIG)


def test_what_only_the_engine_can_read_is_left_to_it(program, monkeypatch, tmp_path_factory):
    """A path outside the program's folder, or a link to one, may be hidden from the program by the
    preview's sandbox while the engine reads it: the component judges only what is missing inside."""
    outside = tmp_path_factory.mktemp("outside")
    (outside / "shared.py").write_text("X = 1\n")
    (program / "dist" / "shared.py").symlink_to(outside / "shared.py")
    monkeypatch.chdir(program)

    def declares(code):
        return lambda: components.FifoBillingQueue("payments", {"consumer_code": code, "consumer_handler": "app.handler"})

    record_program(declares(pulumi.FileArchive("./dist")), config=REGION_CONFIG)
    record_program(declares(pulumi.AssetArchive({"lib": pulumi.FileArchive(str(outside))})), config=REGION_CONFIG)
