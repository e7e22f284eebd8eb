"""The pages the CLI and its messages point to, as `blueprint docs <topic>` prints them: every page of
the manual (docs/*.md, as package data of `integration_blueprint.docs`; the site `make docs` builds
is made of the same files), the README (the distribution's long description, so it travels in the
wheel's metadata), the rule reference (generated from the rules, integration_blueprint.rule_pages)
and, by component name, the component reference pages (generated, integration_blueprint.reference_pages).

A message that points at a page names the command that prints it (`docs_command`), so a team
without the repository reads it too.

Public: `GUIDES`, `README`, `RULES`, `topics`, `guide_text`, `nearest`, `docs_command`, `UnknownTopic`.
"""

from __future__ import annotations

import difflib
from importlib import metadata, resources
from pathlib import Path

# The rule reference's page in docs/ (`make docs` writes it); `blueprint docs rules` renders it afresh.
GENERATED_RULES_PAGE = "rules.md"


def _guides() -> dict[str, tuple[str, str]]:
    """Every page of the manual shipped in the package, by topic (its file name without `.md`): its
    file and its title (its first heading), read from the pages themselves."""
    guides = {}
    for page in sorted(resources.files("integration_blueprint.docs").iterdir(), key=lambda page: page.name):
        if page.name.endswith(".md") and page.name != GENERATED_RULES_PAGE:
            lines = page.read_text(encoding="utf-8").splitlines()
            title = next((line.removeprefix("# ") for line in lines if line.startswith("# ")), page.name)
            guides[page.name.removesuffix(".md")] = (page.name, title)
    return guides

# The guides by topic: the file in docs/ (every page of the manual, mkdocs.yml's navigation) and its
# title. The rule reference (`rules`) and the component pages are generated when asked for.
GUIDES = _guides()
README = "readme"  # the topic of the README, the front page (what it is, quick start, install, the manual's map)
RULES = "rules"  # the rule reference, generated from the rules (integration_blueprint.rule_pages)
DISTRIBUTION = "integration-blueprint"


class UnknownTopic(LookupError):
    """A topic `blueprint docs` does not know; the message names the ones it does."""


def topics() -> dict[str, str]:
    """Every guide topic with what it answers (component pages aside)."""
    return {README: "the front page: what it is, the quick start, installing it, the manual's map",
            **{topic: about for topic, (_, about) in GUIDES.items()},
            RULES: "every rule of the policy pack and the gate: why, the fix, the AWS page"}


def guide_text(topic: str) -> str:
    """The guide's Markdown (`drill`, `docs/drill.md` and `README.md` are read alike); UnknownTopic if
    it is none."""
    name = topic.lower().removeprefix("docs/").removesuffix(".md")
    if name == README:
        return _readme()
    if name == RULES:
        from integration_blueprint.rule_pages import render

        return render()
    if name not in GUIDES:
        raise UnknownTopic(topic)
    return resources.files("integration_blueprint.docs").joinpath(GUIDES[name][0]).read_text(encoding="utf-8")


def _readme() -> str:
    """The README: the checkout's own when the package runs from one (an editable install), else the
    long description the wheel's metadata carries."""
    checkout = Path(__file__).resolve().parents[1] / "README.md"
    if checkout.is_file() and (checkout.parent / "pyproject.toml").is_file():
        return checkout.read_text(encoding="utf-8")
    meta = metadata.metadata(DISTRIBUTION)
    # Core metadata 2.1 puts the long description in the body; older writers in a field.
    return str(meta.get_payload() or meta.get("Description") or "")  # type: ignore[attr-defined]


def nearest(name: str, known: list[str]) -> str:
    """The known name `name` was most likely meant to be, or ""."""
    lowered = {k.lower(): k for k in known}
    near = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[near[0]] if near else ""


def docs_command(topic: str) -> str:
    """The command that prints a topic, as a message names it."""
    return f"`blueprint docs {topic}`"
