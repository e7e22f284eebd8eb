"""The pages the CLI and its messages point to, as `blueprint docs <topic>` prints them: the guides
shipped in the package (docs/*.md, as package data of `integration_blueprint.docs`), the README (the
distribution's long description, so it travels in the wheel's metadata) and, by component name, the
component reference pages (generated, integration_blueprint.reference_pages).

A message that points at a page names the command that prints it (`docs_command`), so a team
without the repository reads it too.

Public: `GUIDES`, `topics`, `guide_text`, `nearest`, `docs_command`, `UnknownTopic`.
"""

from __future__ import annotations

import difflib
from importlib import metadata, resources
from pathlib import Path

# The guides by topic: the file in docs/ and what it answers.
GUIDES = {
    "drill": ("drill.md", "the drill's records: the payload each lane hands to your code, --sample-records"),
    "deploying": ("deploying.md", "deploying with the policy pack, environment by environment, and in CI"),
    "architecture": ("architecture.md", "how the blueprint is built: where each concept lives, the flows"),
}
README = "readme"  # the topic of the README (what a user does: install, preview, drill, report fields)
DISTRIBUTION = "integration-blueprint"


class UnknownTopic(LookupError):
    """A topic `blueprint docs` does not know; the message names the ones it does."""


def topics() -> dict[str, str]:
    """Every guide topic with what it answers (component pages aside)."""
    return {README: "the front page: install, preview, drill, the reports' fields",
            **{topic: about for topic, (_, about) in GUIDES.items()}}


def guide_text(topic: str) -> str:
    """The guide's Markdown (`drill`, `docs/drill.md` and `README.md` are read alike); UnknownTopic if
    it is none."""
    name = topic.lower().removeprefix("docs/").removesuffix(".md")
    if name == README:
        return _readme()
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
