"""Released like a library: one version (integration_blueprint.__version__) that the release tag,
the CHANGELOG, the pack, the SDK and the docs agree on; a license; a pre-commit hook that runs."""

import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import yaml
from packaging.version import Version

from integration_blueprint import __version__
from integration_blueprint.cli import build_parser

REPO = Path(__file__).resolve().parents[1]
RELEASE_TAG = re.compile(r"^v(\d+\.\d+\.\d+\S*)$")


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=30)


def released_versions() -> list[Version]:
    """The versions of the release tags (`v<version>`) this commit descends from."""
    tags = git("tag", "--merged", "HEAD", "--list", "v*").stdout.split()
    return sorted(Version(found.group(1)) for tag in tags if (found := RELEASE_TAG.match(tag)))


def test_the_version_is_the_tag_at_a_release_and_newer_than_every_release_before_it():
    """`git describe --tags`: at a tagged commit the tag is exactly v<__version__>; between
    releases the version names the release being prepared, never one already tagged before."""
    described = git("describe", "--tags", "--exact-match", "--match", "v*")
    if described.returncode == 0:
        assert described.stdout.strip() == f"v{__version__}"
    else:
        assert all(Version(__version__) > released for released in released_versions()), (
            f"{__version__} is already released: set __version__ in blueprint/__init__.py to the next version")


def test_the_changelog_has_a_section_with_upgrade_notes_for_the_version():
    changelog = (REPO / "CHANGELOG.md").read_text()
    sections = re.findall(r"^## (\S+)", changelog, re.MULTILINE)
    assert sections[:2] == ["Unreleased", __version__], "the newest release section must be this version"
    assert "### Upgrade notes" in changelog.split(f"## {__version__}", 1)[1].split("\n## ", 1)[0]


# The pages a team reads to install a release: the front page and the manual's.
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
TAG = re.compile(r"@v(\d+\.\d+\.\d+)|rev: v(\d+\.\d+\.\d+)")
PIN = re.compile(r"integration-blueprint==(\d+\.\d+\.\d+)")


def cited_versions(text: str) -> set[str]:
    return {version for match in TAG.finditer(text) for version in match.groups() if version} | set(PIN.findall(text))


def test_the_readme_the_manual_and_the_hook_cite_this_versions_tag_and_pin():
    readme = (REPO / "README.md").read_text()
    assert cited_versions(readme) == {__version__}
    assert set().union(*(cited_versions(path.read_text()) for path in DOCS)) == {__version__}
    assert f"rev: v{__version__}" in (REPO / ".pre-commit-hooks.yaml").read_text()


def test_every_pin_the_docs_give_says_how_to_pin_what_exists():
    """A release tag is made at the release (`git tag v<version>`): a pin of it says how to find the
    tags, and what to pin (the commit) while the release has none."""
    pinning = [path for path in DOCS if TAG.search(path.read_text())]
    assert REPO / "README.md" in pinning and len(pinning) > 1  # the front page and the manual's CI page
    for path in (*pinning, REPO / ".pre-commit-hooks.yaml"):
        text = path.read_text()
        assert "git ls-remote --tags" in text and "commit SHA" in text, path.name
    for path in DOCS:
        for line in path.read_text().splitlines():
            if line.strip().startswith("rev: v"):
                assert "commit SHA" in line, path.name


def test_the_package_declares_its_license():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert pyproject["license"] == "MIT" and pyproject["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text().startswith("MIT License")


def test_the_pre_commit_hook_runs_the_installed_preview_on_the_project():
    [hook] = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert {"id", "name", "entry", "language"} <= set(hook)
    assert hook["language"] == "python" and hook["pass_filenames"] is False
    command, *words = shlex.split(hook["entry"])
    assert command == "blueprint"
    assert build_parser().parse_args(words + ["--stack", "prod"]).run.__name__ == "_run_preview"
    files = re.compile(hook["files"])
    assert all(files.search(path) for path in ("Pulumi.yaml", "stacks/Pulumi.prod.yaml", "__main__.py", "index.ts",
                                               "stacks/policy.prod.json"))
    assert not files.search("README.md")
