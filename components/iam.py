"""IAM building blocks: named-action statements, policy documents, and the service role every
function, schedule and state machine gets (one role per principal, a policy of exactly its
statements).

A role that a service assumes on behalf of a resource (Scheduler for a schedule, Step Functions for
a state machine) names that resource in its trust policy with `aws:SourceAccount` and
`aws:SourceArn`, so another account's resource cannot make the service use it (confused-deputy
protection: https://docs.aws.amazon.com/IAM/latest/UserGuide/confused-deputy.html).

Public: `Statement`, `policy_document`, `ServiceRole`, `service_role`, `SourceCondition`,
`AccountContext`, `account_context`, `renamed` (a child's options, aliased to its former name).
"""

import json
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import pulumi
import pulumi_aws as aws

__all__ = ["AccountContext", "ServiceRole", "SourceCondition", "Statement", "account_context", "policy_document", "renamed",
           "service_role"]


@dataclass(frozen=True)
class Statement:
    """One IAM allow statement. Actions are always named: no wildcard actions anywhere."""

    actions: Sequence[str]
    resources: Sequence[pulumi.Input[str]]

    def __post_init__(self) -> None:
        for action in self.actions:
            if "*" in action:
                raise ValueError(f"IAM action {action!r} has a wildcard; name the exact actions")


def _allow(statement: Statement) -> pulumi.Output[dict[str, Any]]:
    actions = sorted(statement.actions)
    return pulumi.Output.all(*statement.resources).apply(
        lambda resources: {"Effect": "Allow", "Action": actions, "Resource": list(resources)})


def policy_document(statements: Sequence[Statement]) -> pulumi.Output[str]:
    return pulumi.Output.all(*[_allow(s) for s in statements]).apply(
        lambda docs: json.dumps({"Version": "2012-10-17", "Statement": list(docs)}))


@dataclass(frozen=True)
class AccountContext:
    """Where the stack deploys, as Outputs (the provider's answer, so no resource is needed)."""

    partition: pulumi.Output[str]
    region: pulumi.Output[str]
    account: pulumi.Output[str]

    def arn(self, service: str, resource: pulumi.Input[str]) -> pulumi.Output[str]:
        return pulumi.Output.format("arn:{0}:{1}:{2}:{3}:{4}", self.partition, service, self.region, self.account,
                                    resource)


def account_context() -> AccountContext:
    return AccountContext(partition=aws.get_partition_output().partition, region=aws.get_region_output().region,
                          account=aws.get_caller_identity_output().account_id)


@dataclass(frozen=True)
class SourceCondition:
    """The resource a service acts for: its account and ARN (a pattern with `*` is matched with ArnLike)."""

    account: pulumi.Input[str]
    arn: pulumi.Input[str]


def _trust_policy(service: str, source: Optional[SourceCondition]) -> pulumi.Output[str]:
    def document(condition: Optional[dict[str, Any]]) -> str:
        statement: dict[str, Any] = {"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}
        if condition:
            statement["Condition"] = condition
        return json.dumps({"Version": "2012-10-17", "Statement": [statement]})

    if source is None:
        return pulumi.Output.from_input(document(None))
    return pulumi.Output.all(source.account, source.arn).apply(lambda v: document({
        "StringEquals": {"aws:SourceAccount": v[0]},
        "ArnLike": {"aws:SourceArn": v[1]},
    }))


@dataclass
class ServiceRole:
    role: aws.iam.Role
    policy: aws.iam.RolePolicy


def service_role(name: str, *, parent: pulumi.Resource, service: str, statements: Sequence[Statement],
                 source: Optional[SourceCondition] = None, formerly: Optional[str] = None) -> ServiceRole:
    """`<name>-role`, assumable by `service` (e.g. `lambda.amazonaws.com`) only, with the inline
    policy `<name>-policy` that allows exactly `statements`. Make the resource that uses the role
    depend on `policy`: AWS checks some permissions when the resource is created. `formerly`: the
    `name` they had in an earlier version (aliased, so a deployed stack keeps them)."""
    role = aws.iam.Role(f"{name}-role", assume_role_policy=_trust_policy(service, source),
                        opts=renamed(parent, formerly and f"{formerly}-role"))
    policy = aws.iam.RolePolicy(f"{name}-policy", role=role.id, policy=policy_document(statements),
                                opts=renamed(parent, formerly and f"{formerly}-policy"))
    return ServiceRole(role=role, policy=policy)


def renamed(parent: pulumi.Resource, former_name: Optional[str], **options: Any) -> pulumi.ResourceOptions:
    """A child's options (`options` besides its parent); with `former_name`, aliased to the name it
    had in an earlier version, so Pulumi moves the deployed resource to the new name instead of
    replacing it."""
    return pulumi.ResourceOptions(parent=parent, aliases=[pulumi.Alias(name=former_name)] if former_name else None,
                                  **options)
