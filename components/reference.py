"""What a team reads about the components, generated from the settings rows: the descriptions and
enums of the multi-language package schema (plugin/), and the reference pages in docs/components/.

Each argument is described once, by its row (`settings.Setting`): what it does and why, its type,
default and what is allowed. Outputs are described by the docstrings under their annotations on the
component class (or the mixin it shares them with); each component class says what it is.

Public: `COMPONENTS` (each component class and its settings table), `describe_setting`,
`default_text`, `output_descriptions`, `enum_type_name`, `document_schema` (the plugin's schema) and
`EXAMPLES` (each page's example). The pages themselves are rendered by
integration_blueprint.reference_pages (`make docs`, `blueprint docs`), which records each example
offline: the preview is the CLI's, and the components never import it.
"""

import ast
import inspect
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

__all__ = ["COMPONENTS", "EXAMPLES", "default_text", "describe_setting", "document_schema", "enum_type_name",
           "output_descriptions"]

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
