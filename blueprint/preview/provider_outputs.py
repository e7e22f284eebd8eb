"""The provider's side of the offline engine (interim: the typed version replaces it)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

PLACEHOLDER_ACCOUNT = "123456789012"


class UnknownInvoke(Exception):
    """No installed provider SDK declares this data source."""


def _resource_class(type_token: str):
    """The provider SDK's class for a type token (`aws:iam/role:Role` -> pulumi_aws.iam.role.Role)."""
    import importlib
    import keyword
    import re

    package, module, name = type_token.split(":")
    parts = [f"{p}_" if keyword.iskeyword(p) else p for p in module.split("/")]
    parts[-1] = re.sub(r"(?<!^)(?=[A-Z])", "_", parts[-1]).lower()
    try:
        return getattr(importlib.import_module(".".join([f"pulumi_{package}", *parts])), name, None)
    except ImportError:
        return None


def _string_properties(type_token: str) -> set[str]:
    cls = _resource_class(type_token)
    found = set()
    for attribute in vars(cls).values() if cls else ():
        getter = getattr(attribute, "fget", None)
        wire_name = getattr(getter, "_pulumi_name", None)
        if wire_name and getattr(getter, "__annotations__", {}).get("return") == __import__("pulumi").Output[str]:
            found.add(wire_name)
    return found


def planned_inputs(type_token: str, name: str, urn: str, inputs: dict, *, region: str) -> dict:
    """A string property given as an object (an IAM document written as a dict) is JSON-encoded,
    as the provider's Check does."""
    planned = dict(inputs)
    objects = [key for key, value in planned.items() if isinstance(value, (dict, list))]
    if objects:
        strings = _string_properties(type_token)
        for key in objects:
            if key in strings:
                planned[key] = json.dumps(planned[key])
    return planned


def known_outputs(type_token: str, name: str, urn: str, inputs: dict, *, region: str,
                  account: str = PLACEHOLDER_ACCOUNT) -> tuple[str, dict]:
    return placeholder_outputs(type_token, name, urn, inputs, region)


def read_outputs(type_token: str, name: str, id_: str, props: dict, *, region: str,
                 account: str = PLACEHOLDER_ACCOUNT) -> dict:
    return placeholder_outputs(type_token, name, id_, props, region)[1]


def invoke(token: str, args: dict, *, region: str, account: str = PLACEHOLDER_ACCOUNT) -> dict:
    if token == "aws:index/getRegion:getRegion":
        return {"name": region, "region": region, "id": region, "description": region,
                "endpoint": f"ec2.{region}.amazonaws.com"}
    if token == "aws:index/getCallerIdentity:getCallerIdentity":
        return {"accountId": account, "id": account, "arn": f"arn:aws:iam::{account}:user/preview", "userId": "PREVIEW"}
    if token == "aws:index/getPartition:getPartition":
        return {"partition": "aws", "id": "aws", "dnsSuffix": "amazonaws.com", "reverseDnsPrefix": "com.amazonaws"}
    if token == "aws:iam/getPolicyDocument:getPolicyDocument":
        return policy_document_result(args)
    raise UnknownInvoke(token)


def _physical_name(name: str, urn: str, inputs: dict, max_len: int = 80) -> str:
    """Pulumi's auto-naming: the logical name plus a random suffix (here a stable hash)."""
    if inputs.get("name"):
        return inputs["name"]
    suffix = hashlib.sha256(urn.encode()).hexdigest()[:7]
    base = f"{name}-{suffix}"
    return base[:max_len]


def placeholder_outputs(type_token: str, name: str, urn: str, inputs: dict,
                        region: str) -> tuple[str, dict]:
    """(id, outputs) for a resource, shaped like what AWS returns after `pulumi up`."""
    acct = PLACEHOLDER_ACCOUNT
    out = dict(inputs)
    physical = _physical_name(name, urn, inputs)
    if type_token == "aws:sqs/queue:Queue":
        if inputs.get("fifoQueue") and not physical.endswith(".fifo"):
            physical = f"{physical[:75]}.fifo"
        url = f"https://sqs.{region}.amazonaws.com/{acct}/{physical}"
        out.update(name=physical, arn=f"arn:aws:sqs:{region}:{acct}:{physical}", url=url)
        return url, out
    arn_formats = {
        "aws:lambda/function:Function": "arn:aws:lambda:{r}:{a}:function:{n}",
        "aws:iam/role:Role": "arn:aws:iam::{a}:role/{n}",
        "aws:iam/policy:Policy": "arn:aws:iam::{a}:policy/{n}",
        "aws:dynamodb/table:Table": "arn:aws:dynamodb:{r}:{a}:table/{n}",
        "aws:kinesis/stream:Stream": "arn:aws:kinesis:{r}:{a}:stream/{n}",
        "aws:kinesis/streamConsumer:StreamConsumer": "arn:aws:kinesis:{r}:{a}:stream/consumer/{n}:1",
        "aws:sfn/stateMachine:StateMachine": "arn:aws:states:{r}:{a}:stateMachine:{n}",
        "aws:cloudwatch/logGroup:LogGroup": "arn:aws:logs:{r}:{a}:log-group:{n}",
        "aws:cloudwatch/metricAlarm:MetricAlarm": "arn:aws:cloudwatch:{r}:{a}:alarm:{n}",
        "aws:scheduler/schedule:Schedule": "arn:aws:scheduler:{r}:{a}:schedule/default/{n}",
        "aws:sns/topic:Topic": "arn:aws:sns:{r}:{a}:{n}",
        "aws:s3/bucket:Bucket": "arn:aws:s3:::{n}",
        "aws:s3/bucketV2:BucketV2": "arn:aws:s3:::{n}",
        "aws:kms/key:Key": "arn:aws:kms:{r}:{a}:key/{n}",
        "aws:lambda/eventSourceMapping:EventSourceMapping": "arn:aws:lambda:{r}:{a}:event-source-mapping:{n}",
    }
    if type_token == "aws:kms/key:Key":
        physical = hashlib.sha256(urn.encode()).hexdigest()[:36]
    fmt = arn_formats.get(type_token)
    if fmt is not None:
        out.setdefault("name", physical)
        out["arn"] = fmt.format(r=region, a=acct, n=physical)
    if type_token == "aws:lambda/function:Function":
        out["invokeArn"] = (f"arn:aws:apigateway:{region}:lambda:path/2015-03-31/functions/"
                            f"{out['arn']}/invocations")
        out["qualifiedArn"] = f"{out['arn']}:$LATEST"
    if type_token == "aws:lambda/alias:Alias":
        # An alias's ARN is its function's ARN qualified by the alias name, so a mapping or a
        # permission that names `alias.arn` still links to the function.
        function = str(inputs.get("functionName") or physical)
        function_arn = function if function.startswith("arn:") else f"arn:aws:lambda:{region}:{acct}:function:{function}"
        out["arn"] = f"{function_arn}:{inputs.get('name') or physical}"
        out["invokeArn"] = f"arn:aws:apigateway:{region}:lambda:path/2015-03-31/functions/{out['arn']}/invocations"
    if type_token == "aws:kms/key:Key":
        out["keyId"] = physical
    if type_token in ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2"):
        out["bucket"] = inputs.get("bucket") or physical
        out["arn"] = f"arn:aws:s3:::{out['bucket']}"
        physical = out["bucket"]
    if type_token == "aws:dynamodb/table:Table":
        out["streamArn"] = f"{out['arn']}/stream/1970-01-01T00:00:00.000"
    if type_token == "aws:lambda/eventSourceMapping:EventSourceMapping":
        out["uuid"] = hashlib.sha256(urn.encode()).hexdigest()[:32]
        physical = out["uuid"]
    return physical, out


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
    for source in field(args, "sourcePolicyDocuments") or []:
        merge(merged, json.loads(source).get("Statement", []))
    merge(merged, [statement(raw) for raw in field(args, "statements") or []])
    for override in field(args, "overridePolicyDocuments") or []:
        merge(merged, json.loads(override).get("Statement", []))
    document: dict[str, Any] = {"Version": field(args, "version") or "2012-10-17"}
    if field(args, "policyId"):
        document["Id"] = field(args, "policyId")
    document["Statement"] = merged
    pretty = json.dumps(document, indent=2)
    return {"id": hashlib.sha256(pretty.encode()).hexdigest()[:10], "json": pretty,
            "minifiedJson": json.dumps(document, separators=(",", ":")), "version": document["Version"],
            "statements": field(args, "statements") or []}


