"""What AWS managed policies grant, as the rules read it: the shared catalogue
(integration_blueprint.core.aws_managed_policies, also the offline engine's `aws.iam.get_policy`),
narrowed to the policies whose grant it holds. A managed policy that is not there is not guessed at:
`managed_policy` returns None and the rules say they could not check it."""

from __future__ import annotations

from typing import Optional, TypedDict

from integration_blueprint.core import aws_managed_policies
from integration_blueprint.core.aws_managed_policies import AWS_MANAGED_PREFIX, is_aws_managed

__all__ = ["AWS_MANAGED_PREFIX", "ManagedPolicy", "is_aws_managed", "managed_policy"]


class ManagedPolicy(TypedDict):
    arn: str
    path: str
    document: dict


def managed_policy(name_or_arn: str) -> Optional[ManagedPolicy]:
    """The AWS managed policy named or given by its ARN, with the document of its default version;
    None where the catalogue does not hold its grant."""
    policy = aws_managed_policies.managed_policy(name_or_arn)
    if policy is None or policy.document is None:
        return None
    return {"arn": policy.arn, "path": policy.path, "document": policy.document}
