"""`blueprint docs <topic>` prints the pages the CLI points to, from the installed package (a team
that installed the wheel has no repository to open), and every message that points at a page names
the command that prints it."""

import ast
import re
from pathlib import Path

import pytest

from integration_blueprint import documentation
from integration_blueprint.cli import main

REPO = Path(__file__).resolve().parents[1]
# The folders the wheel installs as code (pyproject's package-dir), whose text a user may read.
INSTALLED = ("blueprint", "components", "core", "handlers", "policies", "plugin")
# A pointer at a page: `docs/drill.md`, `docs/components/FifoBillingQueue.md`, the README.
POINTER = re.compile(r"\bdocs/[\w/.-]+\.md\b|\bREADME\b")
COMMAND = re.compile(r"`blueprint docs ([\w.-]+)`")


@pytest.mark.parametrize("topic, page", [("drill", "docs/drill.md"), ("deploying", "docs/deploying.md"),
                                         ("architecture", "docs/architecture.md"), ("readme", "README.md"),
                                         ("docs/drill.md", "docs/drill.md"), ("README.md", "README.md"),
                                         ("gate", "docs/gate.md"), ("getting-started", "docs/getting-started.md"),
                                         ("docs/runbook.md", "docs/runbook.md"), ("rules", "docs/rules.md")])
def test_each_guide_prints_as_the_repository_has_it(capsys, topic, page):
    assert main(["docs", topic]) == 0
    assert capsys.readouterr().out == (REPO / page).read_text() + "\n"


def test_every_page_of_the_site_prints_by_its_name(capsys):
    """The wheel carries the whole manual: each page of the site's navigation (mkdocs.yml) prints
    with `blueprint docs <its file name>`, the component pages by the component's name."""
    import yaml

    def pages(nav):
        for entry in nav:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            yield from (pages(value) if isinstance(value, list) else [value])

    from integration_blueprint.components.reference import COMPONENTS

    site = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    for page in pages(site["nav"]):
        if page.startswith("components/") and Path(page).stem in {c.__name__ for c in COMPONENTS}:
            continue  # rendered from the settings rows: tests/test_reference_docs.py holds the files current
        if page == "index.md":  # the README, read at build time (tools/mkdocs_hooks.py)
            topic, expected = "readme", REPO / "README.md"
        else:
            topic, expected = Path(page).stem if page != "components/README.md" else "components", REPO / "docs" / page
        assert main(["docs", topic]) == 0, page
        assert capsys.readouterr().out == expected.read_text() + "\n", page


def test_without_a_topic_the_topics_are_listed_and_a_near_miss_is_named(capsys):
    assert main(["docs"]) == 0
    listing = capsys.readouterr().out
    for topic in ("drill", "deploying", "architecture", "readme", "components", "FifoBillingQueue", "gate", "rules",
                  "getting-started", "runbook"):
        assert topic in listing

    assert main(["docs", "dril"]) == 2
    error = capsys.readouterr().err
    assert "no topic or component 'dril' (did you mean 'drill'?)" in error
    assert "the components are FifoBillingQueue, " in error

    assert main(["docs", "components"]) == 0
    assert capsys.readouterr().out == (REPO / "docs" / "components" / "README.md").read_text() + "\n"


def test_the_guides_are_package_data_of_the_installed_namespace():
    """What the wheel ships (pyproject's package-data) is what `blueprint docs` reads."""
    import tomllib

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert pyproject["package-dir"]["integration_blueprint.docs"] == "docs"
    assert pyproject["package-data"]["integration_blueprint.docs"] == ["*.md"]
    for topic, (file, _) in documentation.GUIDES.items():
        assert (REPO / "docs" / file).is_file(), topic


def _messages(path: Path):
    """Every string literal of a module but its docstrings, with its line: an implicitly joined
    literal (`"a " "b"`, an f-string's text parts) is one message."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    parts_of_fstrings = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    for node in ast.walk(tree):
        if id(node) in docstrings or id(node) in parts_of_fstrings:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr):
            yield node.lineno, "".join(v.value for v in node.values if isinstance(v, ast.Constant))


def test_every_message_that_points_at_a_page_names_the_command_that_prints_it(capsys):
    pointing = []
    for folder in INSTALLED:
        for path in sorted((REPO / folder).rglob("*.py")):
            for line, text in _messages(path):
                if POINTER.search(text) and text.strip() not in ("README.md",):  # a file's name, not a pointer
                    pointing.append((f"{path.relative_to(REPO)}:{line}", text))
    assert pointing  # the drill's hint, the CLI's help, a setting's reason, ...
    unnamed = [f"{where}: {text[:100]!r}" for where, text in pointing if not COMMAND.search(text)]
    assert unnamed == [], "points at a page without naming `blueprint docs <topic>`"
    for where, text in pointing:
        for topic in COMMAND.findall(text):
            assert main(["docs", topic]) == 0, (where, topic)
            assert capsys.readouterr().out.strip(), (where, topic)
