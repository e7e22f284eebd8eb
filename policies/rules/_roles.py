"""What a role of this stack is allowed to do, from every policy attached to it in the stack:
its inline policies, RolePolicy resources, attached managed policies of the stack, and the AWS
managed policies the pack knows (_managed_policies)."""

from __future__ import annotations

from collections import defaultdict
from typing import Optional

from pulumi_policy import PolicyResource
from pulumi_policy.proxy import UnknownValueError

from ._iam import Statement, arn_covers, grants, statements
from ._links import FUNCTION, MANAGED_POLICY, ROLE, ROLE_POLICY, ROLE_POLICY_ATTACHMENT, StackIndex
from ._managed_policies import managed_policy
from ._values import UNEXPECTED_SHAPE, Malformed, Unverifiable, get, json_document, plain


class RoleGrants:
    def __init__(self, index: StackIndex):
        self.index = index
        self._statements: dict[str, list[Statement]] = defaultdict(list)
        self._gaps: dict[str, list[UnknownValueError]] = defaultdict(list)
        self._unlinked: list[UnknownValueError] = []  # a policy whose role is not known yet
        for holder in index.of_type(ROLE_POLICY, ROLE_POLICY_ATTACHMENT):
            try:
                role = index.follow(holder, "role", lambda h=holder: get(h.props, "role"), [ROLE])  # type: ignore[misc]
            except UnknownValueError as exc:
                self._unlinked.append(exc)
                continue
            except (Malformed, *UNEXPECTED_SHAPE):
                continue  # a role that is no reference at all grants nothing here; its own rules say why
            if role is not None:
                self._add(role.urn, holder)
        for role in index.of_type(ROLE):
            self._add(role.urn, role)

    def _add(self, role_urn: str, holder: PolicyResource) -> None:
        try:
            if holder.resource_type == ROLE:
                inline = plain(get(holder.props, "inlinePolicies", default=[])) or []
                for i, entry in enumerate(inline if isinstance(inline, list) else []):
                    if isinstance(entry, dict) and entry.get("policy"):
                        self._document(role_urn, json_document(entry, "policy"), f"inlinePolicies[{i}]")
                for arn in plain(get(holder.props, "managedPolicyArns", default=[])) or []:
                    self._managed(role_urn, holder, "managedPolicyArns", arn)
            elif holder.resource_type == ROLE_POLICY:
                self._document(role_urn, json_document(holder.props, "policy"), f"RolePolicy {holder.name}")
            else:
                self._managed(role_urn, holder, "policyArn", get(holder.props, "policyArn"))
        except UnknownValueError as exc:
            self._gaps[role_urn].append(exc)
        except (Malformed, *UNEXPECTED_SHAPE):
            pass  # a malformed policy is iam-no-wildcard-actions' to report

    def _document(self, role_urn: str, document: Optional[dict], where: str) -> None:
        if document is not None:
            self._statements[role_urn] += statements(document, where)

    def _managed(self, role_urn: str, holder: PolicyResource, prop: str, arn) -> None:
        policy = self.index.follow(holder, prop, lambda: arn, [MANAGED_POLICY])
        if policy is not None:
            self._document(role_urn, json_document(policy.props, "policy"), f"policy {policy.name}")
            return
        known = managed_policy(arn) if isinstance(arn, str) else None
        if known is not None:
            self._statements[role_urn] += statements(known["document"], known["arn"])
            return
        self._gaps[role_urn].append(Unverifiable(
            f"role has managed policy {arn} from outside this stack and not among the AWS managed policies "
            "the pack knows; its permissions could not be checked"))

    def role_of(self, function: PolicyResource) -> Optional[PolicyResource]:
        assert function.resource_type == FUNCTION
        return self.index.follow(function, "role", lambda: get(function.props, "role"), [ROLE])

    def allows(self, role: PolicyResource, action: str, arn: Optional[str]) -> bool:
        """Whether `role` may do `action` on `arn` (None: on the resource, whatever its ARN)."""
        def on(statement: Statement) -> bool:
            if arn is None or statement.not_resources is not None:
                return True
            return any(arn_covers(r, arn) for r in statement.resources)

        held = self._statements.get(role.urn, [])
        denied = any(not s.allows and not s.condition and grants(s, action) and on(s) for s in held)
        allowed = any(s.allows and grants(s, action) and on(s) for s in held)
        if allowed and not denied:
            return True
        gaps = self._gaps.get(role.urn, []) + self._unlinked
        if gaps:
            raise gaps[0]  # a policy we cannot read may grant it
        return False
