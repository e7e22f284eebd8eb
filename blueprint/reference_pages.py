"""The component reference pages (docs/components/, `blueprint docs <Component>`), generated from the
settings rows and descriptions of integration_blueprint.components.reference, with the resources each
page's example creates recorded offline by the preview.

Public: `pages`, `render_page`, `render_index`, `created_resources`, `DOCS_FOLDER`; run as a module
(`make docs`) it writes the pages.
"""

import json
from typing import Any, Optional

from integration_blueprint.components.distributed_map_batch import DistributedMapBatch
from integration_blueprint.components.fifo_billing_queue import FifoBillingQueue
from integration_blueprint.components.idempotent_stream_consumer import IdempotentStreamConsumer
from integration_blueprint.components.non_idempotent_stream_consumer import NonIdempotentStreamConsumer
from integration_blueprint.components.reference import (
    COMPONENTS,
    EXAMPLES,
    default_text,
    enum_type_name,
    output_descriptions,
)
from integration_blueprint.components.settings import Setting, camel_case
from integration_blueprint.preview.recording import record_program

DOCS_FOLDER = "docs/components"
EXAMPLE_REGION = "eu-west-1"

_TYPE_NAMES = {int: "integer", float: "number", bool: "boolean", str: "string", dict: "map of strings"}


def _type_name(setting: Setting) -> str:
    if setting.choices:
        return "enum " + enum_type_name(setting)
    if setting.kind is list:
        return "list of strings" if setting.items is str else "list of {actions, resources}"
    return _TYPE_NAMES.get(setting.kind, "Archive")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _python_value(value: Any) -> str:
    return repr(value) if isinstance(value, bool) else json.dumps(value)


def _typescript_value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "[" + ", ".join(_typescript_value(v) for v in value) + "]"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def _examples(component: type) -> list[str]:
    name = component.__name__
    example = EXAMPLES[component]
    python = [f"{name}(\"example\", {{"] + [f'    "{k}": {_python_value(v)},' for k, v in example.items()] + ["})"]
    typescript = [f"const example = new blueprint.{name}(\"example\", {{"] + \
        [f"    {camel_case(k)}: {_typescript_value(v)}," for k, v in example.items()] + ["});"]
    # Each block is marked as a program (tests/test_manual_examples.py runs every example of the manual).
    return ["Python:", "", "<!-- example: program -->", "```python", f"from integration_blueprint.components import {name}",
            "", *python, "```",
            "", "TypeScript (the SDK `blueprint sdk` writes, or `pulumi package add`: docs/getting-started.md, "
            "`blueprint docs getting-started`):", "", "<!-- example: program, slow (TypeScript) -->", "```typescript",
            'import * as blueprint from "@pulumi/blueprint";', "", *typescript, "```"]


def _argument_rows(settings: list[Setting], section: Optional[str]) -> list[str]:
    """A table of `settings`; the stack file key is shown within `blueprint:<section>` (None: no section)."""
    lines = ["| argument (Python) | other languages | stack file key | type | default | allowed | why |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for s in settings:
        default = default_text(s) or "**required**"
        key = f"`blueprint:{section}.{s.key}`" if s.in_stack and section else "-"
        lines.append(f"| `{s.arg}` | `{camel_case(s.arg)}` | {key} | {_type_name(s)} | "
                     f"{_cell(default)} | {_cell(s.allowed())} | {_cell(s.why)} |")
    return lines


def created_resources(component: type) -> list[tuple[str, int]]:
    """(Pulumi type, count) of what the page's example declares, recorded offline."""
    recorded = record_program(lambda: component("example", EXAMPLES[component]),
                              config={"aws:region": EXAMPLE_REGION})
    counts: dict[str, int] = {}
    for resource in recorded.resources:
        counts[resource.type] = counts.get(resource.type, 0) + 1
    return sorted(counts.items())


def render_page(component: type) -> str:
    """The reference page of `component`, from its rows, output docstrings and a recorded example."""
    table = COMPONENTS[component]
    name = component.__name__
    own = {s.arg for s in table}
    section = next((key for key, value in _SECTIONS.items() if value is component), None)
    outputs = output_descriptions(component)
    lines = [f"# {name}", "",
             "<!-- Generated from the settings rows by `make docs` (blueprint/reference_pages.py); "
             "tests/test_reference_docs.py keeps it current. Do not edit by hand. -->", "",
             " ".join((component.__doc__ or "").split()), "",
             f"Type token `blueprint:index:{name}`. Stack file section: "
             + (f"`blueprint:{section}` (plus `blueprint:platform`)." if section else "none."), "",
             "## Example", "", *_examples(component), "",
             "## Arguments", "",
             "Every argument is checked when the component is declared: an unknown name is refused with the nearest "
             "known one, a value of the wrong type or outside what is allowed with what is allowed and why.", "",
             *_argument_rows([s for s in table.arguments() if s.arg in own], section), "",
             "### Platform arguments (every component takes them)", "",
             *_argument_rows([s for s in table.arguments() if s.arg not in own], "platform"), "",
             "## Outputs", "",
             "| output (Python) | other languages | description |", "| --- | --- | --- |",
             *[f"| `{n}` | `{camel_case(n)}` | {_cell(text)} |" for n, text in outputs.items()], "",
             "## Resources it creates", "",
             "What the example above declares (`blueprint preview` records it offline):", "",
             "| resource type | count |", "| --- | --- |",
             *[f"| `{t}` | {count} |" for t, count in created_resources(component)], ""]
    return "\n".join(lines)


def render_index() -> str:
    lines = ["# Component reference", "",
             "<!-- Generated by `make docs` (blueprint/reference_pages.py). Do not edit by hand. -->", "",
             "One page per component: every argument (type, default, what is allowed and why), every output, "
             "the resources it creates, a Python and a TypeScript example. The same rows check the arguments, "
             "read the stack files and describe the multi-language package's schema.", ""]
    lines += [f"- [{c.__name__}]({c.__name__}.md): {' '.join((c.__doc__ or '').split()).split(':')[0]}."
              for c in COMPONENTS]
    return "\n".join(lines) + "\n"


INDEX_PAGE = "README.md"


def page_names() -> list[str]:
    """The file name of every generated page under DOCS_FOLDER: the index, then one per component."""
    return [INDEX_PAGE, *(f"{c.__name__}.md" for c in COMPONENTS)]


def pages() -> dict[str, str]:
    """Every generated file under DOCS_FOLDER, by file name."""
    return dict(zip(page_names(), [render_index(), *(render_page(c) for c in COMPONENTS)]))


_SECTIONS = {"fifoBilling": FifoBillingQueue, "distributedMap": DistributedMapBatch,
             "idempotentStream": IdempotentStreamConsumer, "nonIdempotentStream": NonIdempotentStreamConsumer}


if __name__ == "__main__":
    import sys
    from pathlib import Path

    folder = Path(sys.argv[1] if len(sys.argv) > 1 else DOCS_FOLDER)
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, text in pages().items():
        (folder / file_name).write_text(text)
