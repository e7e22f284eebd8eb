"""Every component takes `tags` (a map; `blueprint:platform` `tags` in the blueprint's own stacks)
and puts them on every taggable resource it creates, a tag the provider's default tags also set
taken from the component (AWS's merge: resource tags win over default tags on the same key)."""

import importlib

import pytest

from integration_blueprint.components import DistributedMapBatch, FifoBillingQueue, IdempotentStreamConsumer
from integration_blueprint.components.non_idempotent_stream_consumer import NonIdempotentStreamConsumer
from integration_blueprint.components.platform import PLATFORM_SETTINGS
from integration_blueprint.preview.recording import record_program

TAGS = {"owner": "payments", "costCenter": "4711"}


def taggable(type_token: str) -> bool:
    """Whether the AWS resource type takes tags (its pulumi_aws class has a `tags` argument)."""
    package, module_and_class = type_token.split(":", 1)
    if package != "aws":
        return False
    module, cls = module_and_class.split(":")
    resource = getattr(importlib.import_module(f"pulumi_aws.{module.split('/')[0].replace('lambda', 'lambda_')}"), cls)
    return "tags" in resource._internal_init.__code__.co_varnames


@pytest.mark.parametrize("declare", [
    lambda: FifoBillingQueue("billing", {"tags": TAGS, "schedule_enabled": False}),
    lambda: DistributedMapBatch("invoices", {"tags": TAGS, "max_concurrency": 5}),
    lambda: IdempotentStreamConsumer("orders", {"tags": TAGS}),
    lambda: NonIdempotentStreamConsumer("events", {"tags": TAGS}),
], ids=["fifo", "map", "idempotent", "non-idempotent"])
def test_every_taggable_resource_a_component_creates_carries_its_tags(declare):
    recorded = record_program(declare, stack="test")
    children = [r for r in recorded.resources if r.type.startswith("aws:") and not r.type.startswith("aws:providers")]
    tagged = [r for r in children if taggable(r.type)]
    assert len(tagged) >= 5
    for resource in tagged:
        assert {k: resource.inputs.get("tags", {}).get(k) for k in TAGS} == TAGS, (resource.type, resource.name)
    for resource in children:
        if not taggable(resource.type):
            assert "tags" not in resource.inputs, resource.type  # nothing invented where AWS takes no tags


def test_tags_are_a_platform_setting_of_every_component_and_a_stack_value():
    row = next(s for s in PLATFORM_SETTINGS if s.arg == "tags")
    assert row.kind is dict and row.in_stack and row.key == "tags"  # blueprint:platform: {tags: {...}}
    with pytest.raises(ValueError, match="tags"):
        FifoBillingQueue("billing", {"tags": ["owner"]})  # a list is refused, naming the setting



@pytest.mark.slow
def test_the_plugins_schema_gives_every_component_tags_for_the_typescript_sdk():
    """The TypeScript SDK is generated from this schema, itself from the settings rows."""
    from integration_blueprint.plugin import package_schema

    for token, resource in package_schema()["resources"].items():
        assert resource["inputProperties"]["tags"]["additionalProperties"] == {"type": "string"}, token
