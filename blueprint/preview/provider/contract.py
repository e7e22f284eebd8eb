"""The provider as the engine calls it: the ResourceProvider gRPC contract's Check, Create, Read and
Invoke, answered offline from the provider SDK's declarations by one object, so that the engine asks
one provider what the real engine asks a provider plugin.

- check: the inputs as the provider's Check makes them (auto-names, values as declared; check.py);
- create: the id and outputs after Create (outputs.py), or in a preview of a first deployment
  (`preview`) no id and the checked inputs, everything the provider computes left unknown;
- read: a resource's state for an id (`Resource.get`, a StackReference; outputs.py);
- invoke: a data source's answer, and whether it came from facts or was invented (data_sources.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from integration_blueprint.preview.provider import data_sources, outputs
from integration_blueprint.preview.provider.check import planned_inputs
from integration_blueprint.preview.provider.data_sources import UnknownInvoke
from integration_blueprint.preview.provider.outputs import STACK_REFERENCE
from integration_blueprint.preview.provider.values import PLACEHOLDER_ACCOUNT

__all__ = ["PLACEHOLDER_ACCOUNT", "STACK_REFERENCE", "Invoked", "Provider", "UnknownInvoke"]


@dataclass(frozen=True)
class Invoked:
    """A data source's answer."""

    result: dict
    # Answered from facts (computed as the provider computes it, a fixed AWS fact, an AWS managed
    # policy the catalogue holds) rather than invented as if what it names existed.
    from_facts: bool


class Provider:
    """The provider (pulumi-aws, or any provider whose Python SDK is installed) in one account."""

    def __init__(self, account: str = PLACEHOLDER_ACCOUNT):
        self.account = account

    def check(self, type_token: str, name: str, urn: str, inputs: dict, *, region: str) -> dict:
        return planned_inputs(type_token, name, urn, inputs, region=region)

    def create(self, type_token: str, name: str, urn: str, checked: dict, *, region: str,
               preview: bool) -> tuple[str, dict]:
        """(id, outputs) of a resource with the checked inputs: as after `pulumi up`, or in a preview
        of its first deployment ("" and the checked inputs: what the provider computes is unknown)."""
        if preview:
            return "", checked
        return outputs.known_outputs(type_token, name, urn, checked, region=region, account=self.account)

    def read(self, type_token: str, name: str, id_: str, props: dict, *, region: str) -> dict:
        return outputs.read_outputs(type_token, name, id_, props, region=region, account=self.account)

    def invoke(self, token: str, args: dict, *, region: str) -> Invoked:
        """Raises UnknownInvoke for a token no installed provider SDK declares."""
        result = data_sources.invoke(token, args, region=region, account=self.account)
        return Invoked(result, data_sources.answered_from_facts(token, args))
