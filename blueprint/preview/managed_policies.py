"""The AWS managed policies a stack attaches that the pack cannot judge, for "How this preview ran".

The pack judges an AWS managed policy by the document the shared catalogue holds
(integration_blueprint.core.aws_managed_policies, a dated snapshot). A policy the catalogue does not
hold cannot be judged by what it grants (another service's, `AmazonRDSReadOnlyAccess`,
`AmazonCognitoPowerUser`): the report lists each one with the resources that attach it, so a
reviewer knows what went unread instead of reading silence as a pass.
"""

from __future__ import annotations

from integration_blueprint.core.aws_managed_policies import managed_policy, snapshot_date
from integration_blueprint.preview import wire
from integration_blueprint.preview.recording import RecordedStack

__all__ = ["not_judged", "snapshot_date"]

# An AWS managed policy's ARN in any partition: arn:<partition>:iam::aws:policy/<path><name>.
_MANAGED = ":iam::aws:policy/"


def not_judged(recorded: RecordedStack) -> dict[str, list[str]]:
    """AWS managed policy ARN -> the names of the resources that name it, for each one the
    catalogue holds no document for; in ARN order."""
    found: dict[str, list[str]] = {}
    for resource in recorded.resources:
        for text in wire.strings(resource.inputs):
            if text.startswith("arn:") and _MANAGED in text:
                known = managed_policy(text)
                if known is None or known.document is None:
                    holders = found.setdefault(text, [])
                    if resource.name not in holders:
                        holders.append(resource.name)
    return dict(sorted(found.items()))
