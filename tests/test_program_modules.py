"""A Python program's own modules are its own under the preview, as under `pulumi preview`: the
preview's shim (python_exec.py) loads nothing before the program that a program's module of the same
name would lose to. The names are not listed by hand: they are what the shim loads beyond what
pulumi-language-python-exec loads (its own imports and the SDK's), read from sys.modules."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from integration_blueprint.cli import main
from integration_blueprint.preview import python_host

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
