"""IAM policy documents as the provider answers them: `get_policy_document` computed as the provider
computes it (locally, never by AWS), and `get_policy` from the catalogue of AWS managed policies
(integration_blueprint.core.aws_managed_policies) when it holds the policy, else invented.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from integration_blueprint.core.aws_managed_policies import managed_policy
from integration_blueprint.preview.provider.values import PARTITION, last_segment, upper_id

EMPTY_POLICY = json.dumps({"Version": "2012-10-17", "Statement": []})


def policy_lookup(args: dict, region: str, account: str) -> dict:
    arn = str(args.get("arn") or "")
    name = str(args.get("name") or last_segment(arn) or "policy")
    managed = managed_policy(arn or name)
    if managed is not None:
        return {"arn": managed.arn, "name": managed.name, "path": managed.path, "id": managed.arn,
                "policy": json.dumps(managed.document) if managed.document else EMPTY_POLICY,
                "description": managed.description,
                "attachmentCount": 1, "policyId": "ANPA" + upper_id(managed.arn, 17)}
    path = str(args.get("pathPrefix") or "/")
    arn = arn or f"arn:{PARTITION}:iam::{account}:policy{path}{name}"
    return {"arn": arn, "name": name, "path": path, "id": arn, "policy": EMPTY_POLICY}


def managed_policy_known(args: dict) -> bool:
    """Whether a `get_policy` lookup names an AWS managed policy whose document the catalogue holds."""
    managed = managed_policy(str(args.get("arn") or args.get("name") or ""))
    return managed is not None and managed.document is not None


def policy_document_result(args: dict) -> dict:
    """aws.iam.get_policy_document as the provider computes it (it is evaluated locally, never by
    AWS): the document as `json` (2-space indented) and `minifiedJson`. Lists of one collapse to a
    string and actions/resources are sorted, as the provider writes them; source documents come
    first, statements with the same Sid are replaced by later ones, override documents last."""

    def field(value: dict, camel: str):
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
        return value.get(camel, value.get(snake))

    def one_or_many(values) -> Any:
        values = sorted(set(values or []))
        return values[0] if len(values) == 1 else values

    def principals(entries) -> Any:
        found: dict[str, list] = {}
        for entry in entries or []:
            found.setdefault(field(entry, "type"), []).extend(field(entry, "identifiers") or [])
        if list(found) == ["*"]:
            return "*"
        return {kind: one_or_many(ids) for kind, ids in found.items()}

    def statement(raw: dict) -> dict:
        out: dict[str, Any] = {}
        if field(raw, "sid"):
            out["Sid"] = field(raw, "sid")
        out["Effect"] = field(raw, "effect") or "Allow"
        for camel, key in (("actions", "Action"), ("notActions", "NotAction"),
                           ("resources", "Resource"), ("notResources", "NotResource")):
            if field(raw, camel):
                out[key] = one_or_many(field(raw, camel))
        for camel, key in (("principals", "Principal"), ("notPrincipals", "NotPrincipal")):
            if field(raw, camel):
                out[key] = principals(field(raw, camel))
        conditions: dict[str, dict] = {}
        for condition in field(raw, "conditions") or []:
            values = field(condition, "values") or []
            conditions.setdefault(field(condition, "test"), {})[field(condition, "variable")] = (
                values[0] if len(values) == 1 else list(values))
        if conditions:
            out["Condition"] = conditions
        return out

    def merge(into: list, statements: list) -> None:
        for item in statements:
            sid = item.get("Sid")
            same = [i for i, existing in enumerate(into) if sid and existing.get("Sid") == sid]
            if same:
                into[same[0]] = item
            else:
                into.append(item)

    merged: list = []
    # The deprecated `source_json` / `override_json` are one more source / override document.
    sources = [field(args, "sourceJson")] + list(field(args, "sourcePolicyDocuments") or [])
    overrides = [field(args, "overrideJson")] + list(field(args, "overridePolicyDocuments") or [])
    for source in filter(None, sources):
        merge(merged, json.loads(source).get("Statement", []))
    merge(merged, [statement(raw) for raw in field(args, "statements") or []])
    for override in filter(None, overrides):
        merge(merged, json.loads(override).get("Statement", []))
    document: dict[str, Any] = {"Version": field(args, "version") or "2012-10-17"}
    if field(args, "policyId"):
        document["Id"] = field(args, "policyId")
    document["Statement"] = merged
    pretty = json.dumps(document, indent=2)
    return {"id": hashlib.sha256(pretty.encode()).hexdigest()[:10], "json": pretty,
            "minifiedJson": json.dumps(document, separators=(",", ":")), "version": document["Version"],
            "statements": field(args, "statements") or []}
