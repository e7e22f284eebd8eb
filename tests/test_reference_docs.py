"""The generated reference pages of the manual, held current: the component reference in
docs/components/, from the settings rows (a row, an output docstring or what a component creates
changes, and this fails until the pages are generated again: `make docs`), and the rule reference,
docs/rules.md, from the rules themselves. The README links them."""

from urllib.parse import urlparse

import pytest

from integration_blueprint import reference_pages as reference
from integration_blueprint import rule_pages
from integration_blueprint.components.reference import COMPONENTS, describe_setting
from integration_blueprint.policies.rules import POLICIES
from integration_blueprint.preview import gate_rules
from tests.conftest import REPO

DOCS = REPO / reference.DOCS_FOLDER


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    """The pages as `make docs` writes them, rendered once when a test asks (each records its
    component's example offline: not at collection, in every worker)."""
    return reference.pages()


@pytest.mark.parametrize("file_name", reference.page_names())
def test_the_generated_pages_are_current(pages, file_name):
    assert (DOCS / file_name).is_file(), f"{reference.DOCS_FOLDER}/{file_name} is missing: run `make docs`"
    assert (DOCS / file_name).read_text() == pages[file_name], f"{reference.DOCS_FOLDER}/{file_name} is stale: run `make docs`"


def test_no_page_is_left_over_from_a_component_that_is_gone(pages):
    assert set(reference.page_names()) == set(pages)
    assert {p.name for p in DOCS.glob("*.md")} == set(pages)


@pytest.mark.parametrize("component", list(COMPONENTS), ids=lambda c: c.__name__)
def test_each_page_documents_every_argument_and_output_and_what_the_example_creates(component):
    page = (DOCS / f"{component.__name__}.md").read_text()
    for setting in COMPONENTS[component].arguments():
        assert f"| `{setting.arg}` | `{reference.camel_case(setting.arg)}` |" in page
        assert setting.allowed().replace("|", "\\|") in page
    for output in reference.output_descriptions(component):
        assert f"| `{output}` |" in page
    assert "| `aws:lambda/function:Function` |" in page
    assert "```python" in page and "```typescript" in page


def test_a_description_says_why_the_default_and_what_is_allowed():
    row = COMPONENTS[next(iter(COMPONENTS))]["max_receive_count"]
    assert describe_setting(row) == ("Receives before a message moves to the DLQ; 3 or fewer sends messages that hit one "
                                     "transient error to the DLQ. Default: `5`. Allowed: a whole number from 4 to 1000.")


def test_the_readme_links_the_reference():
    readme = (REPO / "README.md").read_text()
    assert "(docs/components/README.md)" in readme
    for component in COMPONENTS:
        assert f"(docs/components/{component.__name__}.md)" in readme


def test_the_rule_reference_is_current():
    assert (REPO / rule_pages.PAGE).read_text() == rule_pages.render(), f"{rule_pages.PAGE} is stale: run `make docs`"


def test_every_rule_has_its_why_its_fix_and_its_aws_page_on_the_rule_reference():
    page = rule_pages.render()
    sections = {section.split("\n", 1)[0]: section for section in page.split("\n### ")[1:]}
    rules = [(p.name, p.description, p.remediation_steps, p.url, p.config_schema) for p in POLICIES] + \
        [(r.name, r.description, r.remediation, r.url, None) for r in gate_rules.RULES.values()]
    assert list(sections) == [name for name, *_ in rules]
    for name, why, fix, url, schema in rules:
        section = sections[name]
        assert f"**Why.** {' '.join(why.split())}" in section, name
        assert f"**Fix.** {' '.join(fix.split())}" in section, name
        assert f"**AWS.** <{url}>" in section, name
        assert url.startswith("https://") and urlparse(url).hostname.endswith((".amazon.com", ".aws.dev")), name  # AWS's
        for setting in (schema.properties if schema else {}):
            assert f"| `{setting}` |" in section, (name, setting)
    assert f"[`{POLICIES[0].name}`](#{POLICIES[0].name})" in page  # the index links each rule


def test_the_readme_links_the_rule_reference():
    assert "(docs/rules.md)" in (REPO / "README.md").read_text()
