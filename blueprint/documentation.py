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

# The guides by topic: the file in docs/ (every page of the manual, mkdocs.yml's navigation) and what
# it answers. The rule reference (`rules`) and the component pages are generated when asked for.
GUIDES = {
    "getting-started": ("getting-started.md", "the repository's commands, a stack's settings, installing in a team's repo"),
    "fifo-billing": ("fifo-billing.md", "the FIFO billing queue pattern: dispatcher, consumer, poison and order"),
    "stream-consumers": ("stream-consumers.md", "the Kinesis consumer patterns, with and without idempotency"),
    "distributed-map": ("distributed-map.md", "the Distributed Map batch pattern: batches, thresholds, idempotency"),
    "handlers": ("handlers.md", "the handler runtime under faults and bad input"),
    "cost": ("cost.md", "what each pattern would cost on AWS per million records"),
    "policies": ("policies.md", "the policy pack: how its rules read a stack"),
    "gate": ("gate.md", "blueprint preview: how it runs a program, reports and their fields, suppressions, exit codes"),
    "ci": ("ci.md", "the gate in CI and before a commit"),
    "sandbox": ("sandbox.md", "blueprint drill: faults, the report, what its AWS enforces, a team's program"),
    "drill": ("drill.md", "the drill's records: the payload each lane hands to your code, --sample-records"),
    "deploying": ("deploying.md", "deploying with the policy pack, environment by environment, and in CI"),
    "runbook": ("runbook.md", "each alarm, what it means, the redrive commands"),
    "performance": ("performance.md", "today's figures against their targets"),
    "architecture": ("architecture.md", "how the blueprint is built: where each concept lives, the flows"),
}
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
