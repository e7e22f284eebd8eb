"""The component reference in docs/components/ is generated from the settings rows (`make docs`)
and held current: a row, an output docstring or what a component creates changes, and this fails
until the pages are generated again. The README links it."""

import pytest

from integration_blueprint import reference_pages as reference
from integration_blueprint.components.reference import COMPONENTS, describe_setting
from tests.conftest import REPO

DOCS = REPO / reference.DOCS_FOLDER


@pytest.mark.parametrize("file_name, text", reference.pages().items(), ids=list(reference.pages()))
def test_the_generated_pages_are_current(file_name, text):
    assert (DOCS / file_name).is_file(), f"{reference.DOCS_FOLDER}/{file_name} is missing: run `make docs`"
    assert (DOCS / file_name).read_text() == text, f"{reference.DOCS_FOLDER}/{file_name} is stale: run `make docs`"


def test_no_page_is_left_over_from_a_component_that_is_gone():
    assert {p.name for p in DOCS.glob("*.md")} == set(reference.pages())


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
