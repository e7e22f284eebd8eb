"""What a team reads about the components, generated from the settings rows: the descriptions and
enums of the multi-language package schema (plugin/), and the reference pages in docs/components/.

Each argument is described once, by its row (`settings.Setting`): what it does and why, its type,
default and what is allowed. Outputs are described by the docstrings under their annotations on the
component class (or the mixin it shares them with); each component class says what it is.

Public: `COMPONENTS` (each component class and its settings table), `describe_setting`,
`output_descriptions`, `enum_type_name`, `document_schema` (the plugin's schema), and for the pages
`pages`, `render_page`, `render_index`, `created_resources`, `EXAMPLES`, `DOCS_FOLDER`; run as a
module (`make docs`) it writes the pages.
"""

import ast
import inspect
import json
import textwrap
from typing import Any, Mapping, Optional

from integration_blueprint.components import (
    distributed_map_definition,
    fifo_billing_queue,
    idempotent_stream_consumer,
    non_idempotent_stream_consumer,
)
from integration_blueprint.components.distributed_map_batch import DistributedMapBatch
from integration_blueprint.components.fifo_billing_queue import FifoBillingQueue
from integration_blueprint.components.idempotent_stream_consumer import IdempotentStreamConsumer
from integration_blueprint.components.non_idempotent_stream_consumer import NonIdempotentStreamConsumer
from integration_blueprint.components.settings import Setting, SettingsTable, camel_case, camel_case_names

__all__ = ["COMPONENTS", "DOCS_FOLDER", "EXAMPLES", "created_resources", "describe_setting", "document_schema",
           "enum_type_name", "output_descriptions", "pages", "render_index", "render_page"]

COMPONENTS: dict[type, SettingsTable] = {
    FifoBillingQueue: fifo_billing_queue.SETTINGS,
    IdempotentStreamConsumer: idempotent_stream_consumer.SETTINGS,
    NonIdempotentStreamConsumer: non_idempotent_stream_consumer.SETTINGS,
    DistributedMapBatch: distributed_map_definition.SETTINGS,
}


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def default_text(setting: Setting) -> Optional[str]:
    """The default in words, or None for a required argument."""
    if setting.required:
        return None
    if setting.default is None or setting.default == []:
        return "not set"
    if isinstance(setting.default, bool):
        return str(setting.default).lower()
    return f"`{setting.default}`"


def describe_setting(setting: Setting) -> str:
    """One argument, for the schema and the docs: why, default, what is allowed."""
    parts = [_sentence(setting.why) if setting.why else ""]
    default = default_text(setting)
    parts.append("Required." if default is None else f"Default: {default}.")
    parts.append(f"Allowed: {setting.allowed()}.")
    return " ".join(p for p in parts if p)


def enum_type_name(setting: Setting) -> str:
    """The schema type of a fixed set of values (e.g. `StreamMode` for stream_mode)."""
    return camel_case(setting.arg)[:1].upper() + camel_case(setting.arg)[1:]


def output_descriptions(component: type) -> dict[str, str]:
    """The docstring under each output annotation of `component` and its bases, by attribute name."""
    found: dict[str, str] = {}
    for cls in reversed(component.__mro__):
        if cls.__module__.startswith("pulumi") or cls is object:
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        body = tree.body[0].body  # type: ignore[attr-defined]
        for statement, following in zip(body, body[1:]):
            if (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                    and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)):
                found[statement.target.id] = " ".join(following.value.value.split())
    return found


def _enum_type(setting: Setting) -> dict[str, Any]:
    kind = "integer" if setting.kind is int else "string"
    return {"type": kind, "description": _sentence(setting.why) if setting.why else setting.allowed(),
            "enum": [{"value": value, "name": str(value) if kind == "string" else f"Days{value}"}
                     for value in setting.choices]}


def document_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Pulumi's inferred package `schema` with every resource, input and output described (from the
    rows and docstrings), and each fixed set of values an enum type."""
    package = schema["name"]
    documented = {**schema, "resources": dict(schema["resources"]), "types": dict(schema.get("types", {}))}
    for component, table in COMPONENTS.items():
        token = f"{package}:index:{component.__name__}"
        resource = dict(documented["resources"][token])
        resource["description"] = " ".join((component.__doc__ or "").split())
        inputs = {}
        for setting in table.arguments():
            name = camel_case(setting.arg)
            prop = dict(resource["inputProperties"][name])
            prop["description"] = describe_setting(setting)
            if setting.choices:
                enum_token = f"{package}:index:{enum_type_name(setting)}"
                documented["types"][enum_token] = _enum_type(setting)
                prop = {"$ref": f"#/types/{enum_token}", "description": prop["description"]}
            inputs[name] = prop
        resource["inputProperties"] = inputs
        outputs = {camel_case(name): text for name, text in output_descriptions(component).items()}
        undescribed = sorted(set(resource["properties"]) - set(outputs))
        if undescribed:
            raise ValueError(f"{component.__name__} outputs {', '.join(undescribed)} have no docstring: describe "
                             "each under its annotation")
        resource["properties"] = {name: {**prop, "description": outputs[name]}
                                  for name, prop in resource["properties"].items()}
        documented["resources"][token] = resource
    return _in_schema_names(documented, _python_names())


def _python_names() -> set[str]:
    """Every argument and output name of the components as Python spells it."""
    return {s.arg for table in COMPONENTS.values() for s in table.arguments()} | {
        name for component in COMPONENTS for name in output_descriptions(component)}


def _in_schema_names(value: Any, names: set[str]) -> Any:
    """Every description in `value` speaking the schema's (camelCase) names, not Python's."""
    if isinstance(value, dict):
        return {key: camel_case_names(item, names) if key == "description" and isinstance(item, str)
                else _in_schema_names(item, names) for key, item in value.items()}
    if isinstance(value, list):
        return [_in_schema_names(item, names) for item in value]
    return value


# ---- the reference pages (docs/components/<Component>.md) ------------------------------------------

DOCS_FOLDER = "docs/components"
EXAMPLE_REGION = "eu-west-1"
ALARM_TOPIC = "arn:aws:sns:eu-west-1:123456789012:payments-oncall"
# Each page's example: what a team sets first (the required arguments, the alarm topic, a few
# settings a team usually chooses). tests/test_reference_docs.py builds each one.
EXAMPLES: dict[type, dict[str, Any]] = {
    FifoBillingQueue: {"consumer_timeout_seconds": 60, "max_receive_count": 5,
                       "schedule_timezone": "Europe/Dublin", "alarm_actions": [ALARM_TOPIC]},
    IdempotentStreamConsumer: {"retention_hours": 48, "maximum_retry_attempts": 3, "alarm_actions": [ALARM_TOPIC]},
    NonIdempotentStreamConsumer: {"stream_mode": "PROVISIONED", "shard_count": 2, "alarm_actions": [ALARM_TOPIC]},
    DistributedMapBatch: {"max_concurrency": 20, "tolerated_failure_percentage": 5, "item_reserved_concurrency": 20,
                          "alarm_actions": [ALARM_TOPIC]},
}
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
    return ["Python:", "", "```python", f"from integration_blueprint.components import {name}", "", *python, "```",
            "", "TypeScript (through `pulumi package add`, see the README):", "", "```typescript",
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
    from integration_blueprint.preview.recording import record_program

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
             "<!-- Generated from the settings rows by `make docs` (components/reference.py); "
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
             "<!-- Generated by `make docs` (components/reference.py). Do not edit by hand. -->", "",
             "One page per component: every argument (type, default, what is allowed and why), every output, "
             "the resources it creates, a Python and a TypeScript example. The same rows check the arguments, "
             "read the stack files and describe the multi-language package's schema.", ""]
    lines += [f"- [{c.__name__}]({c.__name__}.md): {' '.join((c.__doc__ or '').split()).split(':')[0]}."
              for c in COMPONENTS]
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """Every generated file under DOCS_FOLDER, by file name."""
    return {"README.md": render_index(), **{f"{c.__name__}.md": render_page(c) for c in COMPONENTS}}


_SECTIONS = {"fifoBilling": FifoBillingQueue, "distributedMap": DistributedMapBatch,
             "idempotentStream": IdempotentStreamConsumer, "nonIdempotentStream": NonIdempotentStreamConsumer}


if __name__ == "__main__":
    import sys
    from pathlib import Path

    folder = Path(sys.argv[1] if len(sys.argv) > 1 else DOCS_FOLDER)
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, text in pages().items():
        (folder / file_name).write_text(text)
