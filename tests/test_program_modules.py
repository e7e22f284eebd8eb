"""A Python program's own modules are its own under the preview, as under `pulumi preview`: the
preview's shim (python_exec.py) loads nothing before the program that a program's module of the same
name would lose to. The names are not listed by hand: they are what the shim loads beyond what
pulumi-language-python-exec loads (its own imports and the SDK's), read from sys.modules."""

import importlib.machinery
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from integration_blueprint.cli import main
from integration_blueprint.core import patches
from integration_blueprint.preview import program_speed, python_host

# What pulumi-language-python-exec imports before the program (pulumi/pulumi
# sdk/python/cmd/pulumi-language-python-exec): a program cannot use these names there either.
LANGUAGE_HOST_IMPORTS = "import argparse, asyncio, logging, os, runpy, sys, traceback; import pulumi, pulumi.runtime"
# The tool's own namespace, which a program's interpreter may have installed: one name that never
# shadows a team's module (DESIGN.md, Layout).
TOOL_NAMESPACE = "integration_blueprint"


def write_project(folder: Path, main: str) -> Path:
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: own-modules\nruntime: python\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (folder / "__main__.py").write_text(textwrap.dedent(main))
    return folder


def modules_at_the_program_s_first_line(tmp_path: Path, capsys) -> set[str]:
    program = write_project(tmp_path / "looker", """
        import json, sys
        print(json.dumps(sorted(sys.modules)))
    """)
    assert main(["preview", "--program", str(program), "--format", "json"]) == 0, capsys.readouterr().err
    return set(json.loads(json.loads(capsys.readouterr().out)["programOutput"]["stdout"]))


@pytest.mark.slow
def test_a_program_that_ships_modules_named_like_everything_the_shim_loads_imports_its_own(tmp_path, capsys):
    language_host = subprocess.run([sys.executable, "-c", f"{LANGUAGE_HOST_IMPORTS}; import json; "
                                    "print(json.dumps(sorted(sys.modules)))"],
                                   capture_output=True, text=True, check=True, timeout=60)
    by_language_host = {name.partition(".")[0] for name in json.loads(language_host.stdout)}
    by_shim = {name.partition(".")[0] for name in modules_at_the_program_s_first_line(tmp_path, capsys)}
    names = sorted(by_shim - by_language_host - set(sys.builtin_module_names) - {TOOL_NAMESPACE})
    assert "secrets" in names  # the shim does load modules of its own: what this test is about

    # The preview's modules beside the shim, which the program does not ship itself.
    siblings = sorted(path.stem for path in python_host.EXEC_SCRIPT.parent.glob("*.py") if path.stem not in names)
    program = write_project(tmp_path / "shipper", f"""
        import importlib, importlib.util

        shadowed = [name for name in {names!r} if getattr(importlib.import_module(name), "OWNER", "") != "program"]
        if shadowed:
            raise RuntimeError(f"the program got the tool's {{shadowed}}, not its own modules")
        reachable = [name for name in {siblings!r} if importlib.util.find_spec(name) is not None]
        if reachable:
            raise RuntimeError(f"the preview's own modules {{reachable}} are importable by a bare name")

        import pulumi_aws as aws
        aws.sqs.Queue("orders", visibility_timeout_seconds=180)
    """)
    for name in names:
        (program / f"{name}.py").write_text('OWNER = "program"\n')

    exit_code = main(["preview", "--program", str(program), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert report["error"] is None and exit_code in (0, 1), report["error"]
    assert [resource["name"] for resource in report["resources"] if resource["type"] == "aws:sqs/queue:Queue"] \
        == ["orders"]


# The SDK imported as the shim imports it when the program's interpreter has this package: the
# Automation API and dynamic providers loaded on first use (preview/program_speed.py).
SHIM_SDK_IMPORTS = ("import argparse, asyncio, logging, os, runpy, sys, traceback\n"
                    "from integration_blueprint.core import patches\n"
                    "from integration_blueprint.preview import program_speed\n"
                    "with patches.applied([program_speed.SDK_PARTS_PATCH]):\n"
                    "    import pulumi, pulumi.runtime\n")


def loaded_by(code: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", f"{code}\nimport json; print(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, check=True, timeout=60, cwd="/")
    return set(json.loads(done.stdout))


def test_what_the_sdk_parts_left_for_first_use_import_is_exactly_what_the_shim_keeps_the_sdk_s():
    """The names the shim resolves from the SDK's own search path whatever the program ships
    (program_speed.SDK_PARTS_IMPORT) are what the eager import loads and the shim's does not; and
    what the shim loads to apply the patch is either the SDK's too or the tool's own namespace."""
    eager, shim = loaded_by(LANGUAGE_HOST_IMPORTS), loaded_by(SHIM_SDK_IMPORTS)
    top_eager, top_shim = ({name.partition(".")[0] for name in loaded} for loaded in (eager, shim))
    importable = {name for name in top_eager - top_shim - set(sys.builtin_module_names)
                  if importlib.machinery.PathFinder.find_spec(name) is not None}
    assert sorted(importable) == sorted(program_speed.SDK_PARTS_IMPORT)
    assert "yaml" in importable and "pulumi.automation._local_workspace" not in shim
    assert top_shim - top_eager == {TOOL_NAMESPACE}


@pytest.mark.slow
def test_a_program_shipping_modules_named_like_the_sdk_s_gets_the_sdk_s_whether_its_parts_load_first_or_later(
        tmp_path, capsys, monkeypatch):
    """A program with its own yaml.py, grpc.py (and a module named like every other the SDK's deferred
    parts import) sees what it sees under `pulumi preview`, where the SDK loaded them all before it: the
    SDK's modules, from its `import yaml` as from the Automation API it reads afterwards."""
    names = sorted({"grpc", *program_speed.SDK_PARTS_IMPORT})
    program = write_project(tmp_path / "shadows", f"""
        import importlib, json, sys
        import pulumi

        def owner(module):
            return getattr(module, "OWNER", "") or "sdk"

        seen = {{name: owner(importlib.import_module(name)) for name in {names!r}}}
        assert pulumi.automation.LocalWorkspace and pulumi.dynamic.ResourceProvider  # each part, read: loaded
        seen["automation's yaml"] = owner(sys.modules["pulumi.automation._local_workspace"].yaml)
        seen["dynamic's dill"] = owner(sys.modules["pulumi.dynamic.dynamic"].dill)
        print(json.dumps(seen))
    """)
    for name in names:
        (program / f"{name}.py").write_text('OWNER = "program"\n')

    def seen(left_out: str) -> dict:
        monkeypatch.setenv(patches.WITHOUT_VARIABLE, left_out)
        exit_code = main(["preview", "--program", str(program), "--format", "json"])
        report = json.loads(capsys.readouterr().out)
        assert report["error"] is None and exit_code == 0, report["error"]
        return json.loads(report["programOutput"]["stdout"])

    with_patch = seen("")
    assert with_patch == seen(program_speed.SDK_PARTS_PATCH)
    assert set(with_patch.values()) == {"sdk"} and len(with_patch) == len(names) + 2
