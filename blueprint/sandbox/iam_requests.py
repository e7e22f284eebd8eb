"""What AWS authorizes for an API call: the IAM action(s) and the resource ARN(s) each is checked
on, with the request's own condition keys, from the call's service, operation and parameters.

Mostly `<prefix>:<Operation>` on the resource the parameters name; where AWS authorizes otherwise,
as the Service Authorization Reference and each service's guide say:
- DynamoDB: TransactWriteItems/TransactGetItems are authorized item by item (PutItem, UpdateItem,
  DeleteItem, ConditionCheckItem, GetItem; there is no dynamodb:TransactWriteItems action), with
  `dynamodb:EnclosingOperation`; PartiQL statements as dynamodb:PartiQLSelect/Insert/Update/Delete
  on their table; a Query or Scan of an index on `table/T/index/I`; BatchWriteItem and BatchGetItem
  on each table they name; `dynamodb:LeadingKeys` from the items' partition keys.
- SQS: the batch operations need the single action (SendMessageBatch: sqs:SendMessage).
- SNS: PublishBatch needs sns:Publish.
- S3: objects at `arn:aws:s3:::bucket/key`, a listing (s3:ListBucket, with `s3:prefix`) on the
  bucket; HeadObject is s3:GetObject, HeadBucket s3:ListBucket, a multipart upload s3:PutObject,
  CopyObject s3:GetObject on the source and s3:PutObject on the target, DeleteObjects
  s3:DeleteObject on each key.
- Kinesis: GetRecords on the stream its shard iterator came from (the caller says which).
- Lambda: Invoke is lambda:InvokeFunction. sts:GetCallerIdentity needs no permission.
- An action with no resource type (cloudwatch:PutMetricData, sqs:ListQueues) on `*`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional
from urllib.parse import urlparse

# botocore's signing name is the IAM prefix, but for these.
IAM_PREFIX = {"monitoring": "cloudwatch", "email": "ses"}

# Operations whose IAM action has another name.
ACTION_NAMES = {
    ("lambda", "Invoke"): "InvokeFunction", ("lambda", "InvokeAsync"): "InvokeFunction",
    ("lambda", "InvokeWithResponseStream"): "InvokeFunction",
    ("sqs", "SendMessageBatch"): "SendMessage", ("sqs", "DeleteMessageBatch"): "DeleteMessage",
    ("sqs", "ChangeMessageVisibilityBatch"): "ChangeMessageVisibility",
    ("sns", "PublishBatch"): "Publish",
    ("s3", "HeadObject"): "GetObject", ("s3", "HeadBucket"): "ListBucket", ("s3", "ListObjects"): "ListBucket",
    ("s3", "ListObjectsV2"): "ListBucket", ("s3", "ListObjectVersions"): "ListBucketVersions",
    ("s3", "CreateMultipartUpload"): "PutObject", ("s3", "UploadPart"): "PutObject",
    ("s3", "CompleteMultipartUpload"): "PutObject", ("s3", "UploadPartCopy"): "PutObject",
    ("s3", "ListParts"): "ListMultipartUploadParts", ("s3", "DeleteObjects"): "DeleteObject",
    ("s3", "GetBucketPolicy"): "GetBucketPolicy", ("s3", "PutBucketPolicy"): "PutBucketPolicy",
    ("s3", "GetObjectAttributes"): "GetObject",
    ("states", "StartSyncExecution"): "StartSyncExecution",
    ("ses", "SendRawEmail"): "SendRawEmail",
}

# Calls AWS answers whatever the policies say.
ALWAYS_ALLOWED = {("sts", "GetCallerIdentity")}

PARTIQL_TABLE = re.compile(r"\b(?:FROM|INTO|UPDATE)\s+\"?([A-Za-z0-9_.-]+)\"?(?:\.\"([A-Za-z0-9_.-]+)\")?",
                           re.IGNORECASE)


@dataclass(frozen=True)
class Check:
    """One authorization AWS makes for a call: `action` on `resource`, with its context keys."""

    action: str
    resource: str
    context: tuple = ()  # (key, value) pairs this request adds to the context


@dataclass
class Where:
    """Where the call goes, for building ARNs."""

    partition: str
    region: str
    account: str
    # (table name) -> its partition key's attribute name, for dynamodb:LeadingKeys
    partition_keys: Callable[[str], Optional[str]] = lambda _table: None
    # (shard iterator) -> the ARN of the stream it reads, if the sandbox handed it out
    iterator_stream: Callable[[str], Optional[str]] = lambda _iterator: None

    def arn(self, service: str, resource: str, region: Optional[str] = None, account: Optional[str] = None) -> str:
        return f"arn:{self.partition}:{service}:{self.region if region is None else region}:" \
               f"{self.account if account is None else account}:{resource}"


def iam_prefix(signing_name: str) -> str:
    return IAM_PREFIX.get(signing_name, signing_name)


def checks(prefix: str, operation: str, params: dict, where: Where) -> Optional[list[Check]]:
    """The authorizations AWS makes for the call (all must allow), or None for a call AWS answers
    whatever the policies say (or one whose resource cannot be told: the emulator answers it)."""
    if (prefix, operation) in ALWAYS_ALLOWED:
        return None
    special = _SPECIAL.get(prefix)
    if special is not None:
        found = special(operation, params, where)
        if found is not NotImplemented:
            return found
    action = f"{prefix}:{ACTION_NAMES.get((prefix, operation), operation)}"
    return [Check(action, _resource(prefix, params, where) or "*")]


def _resource(prefix: str, params: dict, where: Where) -> Optional[str]:
    """The resource the parameters name, by the names services give them."""
    for key in ("ResourceArn", "resourceArn", "Arn", "TopicArn", "TargetArn", "StreamARN", "stateMachineArn",
                "executionArn", "TableArn", "DeliveryStreamARN", "SecretId", "KeyId"):
        value = params.get(key)
        if isinstance(value, str) and value.startswith("arn:"):
            return value
    if isinstance(params.get("QueueUrl"), str):
        return queue_arn(params["QueueUrl"], where)
    if prefix == "sqs" and isinstance(params.get("QueueName"), str):  # CreateQueue, GetQueueUrl
        owner = params.get("QueueOwnerAWSAccountId")
        return where.arn("sqs", params["QueueName"], account=owner if isinstance(owner, str) else None)
    if isinstance(params.get("TableName"), str):
        return table_arn(params["TableName"], where)
    if isinstance(params.get("StreamName"), str):
        return where.arn("kinesis", f"stream/{params['StreamName']}")
    if isinstance(params.get("FunctionName"), str):
        return function_arn(params["FunctionName"], where)
    if isinstance(params.get("DeliveryStreamName"), str):
        return where.arn("firehose", f"deliverystream/{params['DeliveryStreamName']}")
    if prefix == "iam":  # global: no region in its ARNs
        for key, kind in (("RoleName", "role"), ("UserName", "user"), ("GroupName", "group")):
            if isinstance(params.get(key), str):
                return where.arn("iam", f"{kind}/{params[key]}", region="")
        if isinstance(params.get("PolicyArn"), str):
            return params["PolicyArn"]
    if prefix == "kms" and isinstance(params.get("KeyId"), str):
        key = params["KeyId"]
        return where.arn("kms", key if key.startswith("alias/") else f"key/{key}")
    if prefix == "secretsmanager" and isinstance(params.get("SecretId"), str):
        return where.arn("secretsmanager", f"secret:{params['SecretId']}")
    if prefix == "ssm" and isinstance(params.get("Name"), str):
        return where.arn("ssm", f"parameter/{params['Name'].lstrip('/')}")
    return None


def queue_arn(url: str, where: Where) -> str:
    """`https://sqs.<region>.amazonaws.com/<account>/<name>` (or a bare name) as the queue's ARN."""
    parts = [p for p in urlparse(url).path.split("/") if p] if "://" in url else [where.account, url]
    host = urlparse(url).hostname or ""
    region = host.split(".")[1] if host.startswith("sqs.") and host.count(".") >= 3 else where.region
    if len(parts) >= 2:
        return where.arn("sqs", parts[-1], region=region, account=parts[-2])
    return where.arn("sqs", parts[-1] if parts else url, region=region)


def table_arn(name: str, where: Where) -> str:
    return name if name.startswith("arn:") else where.arn("dynamodb", f"table/{name}")


def function_arn(name: str, where: Where) -> str:
    """A function's name, partial or full ARN (a qualifier dropped: a grant on the function covers it
    only as `function:NAME` or `function:NAME:*`... AWS authorizes the qualified ARN)."""
    if name.startswith("arn:"):
        return name
    if ":" in name:  # ACCOUNT:function:NAME or NAME:QUALIFIER
        pieces = name.split(":")
        if len(pieces) >= 3 and pieces[1] == "function":
            return where.arn("lambda", ":".join(pieces[1:]), account=pieces[0])
        return where.arn("lambda", f"function:{name}")
    return where.arn("lambda", f"function:{name}")


# ---- DynamoDB -------------------------------------------------------------------------------------

def _leading(where: Where, table: str, key: Any) -> tuple:
    name = where.partition_keys(table.rsplit("/", 1)[-1])
    if not name or not isinstance(key, dict) or not isinstance(key.get(name), dict):
        return ()
    value = next(iter(key[name].values()), None)
    return (("dynamodb:LeadingKeys", [str(value)]),) if value is not None else ()


def _dynamodb(operation: str, params: dict, where: Where) -> Any:
    if operation in ("TransactWriteItems", "TransactGetItems"):
        found = []
        kinds = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem",
                 "Get": "GetItem"}
        for item in params.get("TransactItems") or []:
            for kind, body in (item or {}).items():
                if kind in kinds and isinstance(body, dict):
                    table = str(body.get("TableName", ""))
                    context = (("dynamodb:EnclosingOperation", operation),
                               *_leading(where, table, body.get("Key") or body.get("Item")))
                    found.append(Check(f"dynamodb:{kinds[kind]}", table_arn(table, where), context))
        return found
    if operation in ("BatchWriteItem", "BatchGetItem"):
        return [Check(f"dynamodb:{operation}", table_arn(table, where)) for table in (params.get("RequestItems") or {})]
    if operation in ("ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction"):
        statements = ([params.get("Statement")] if operation == "ExecuteStatement"
                      else [s.get("Statement") for s in (params.get("Statements") or params.get("TransactStatements") or [])
                            if isinstance(s, dict)])
        found = []
        for text in statements:
            check = _partiql(str(text or ""), where)
            if check is not None:
                found.append(check)
        return found
    if operation in ("Query", "Scan") and params.get("IndexName") and isinstance(params.get("TableName"), str):
        return [Check(f"dynamodb:{operation}", f"{table_arn(params['TableName'], where)}/index/{params['IndexName']}")]
    if operation in ("GetItem", "PutItem", "UpdateItem", "DeleteItem") and isinstance(params.get("TableName"), str):
        table = table_arn(params["TableName"], where)
        return [Check(f"dynamodb:{operation}", table, _leading(where, table, params.get("Key") or params.get("Item")))]
    return NotImplemented


def _partiql(text: str, where: Where) -> Optional[Check]:
    verb = text.strip().split(None, 1)[0].upper() if text.strip() else ""
    action = {"SELECT": "PartiQLSelect", "EXISTS": "PartiQLSelect", "INSERT": "PartiQLInsert", "UPDATE": "PartiQLUpdate",
              "DELETE": "PartiQLDelete"}.get(verb)
    match = PARTIQL_TABLE.search(text)
    if action is None or match is None:
        return None
    table = table_arn(match.group(1), where)
    return Check(f"dynamodb:{action}", f"{table}/index/{match.group(2)}" if match.group(2) else table)


# ---- S3 -------------------------------------------------------------------------------------------

def _s3(operation: str, params: dict, where: Where) -> Any:
    bucket = params.get("Bucket")
    if not isinstance(bucket, str):
        return NotImplemented
    bucket_arn = f"arn:{where.partition}:s3:::{bucket}"
    action = f"s3:{ACTION_NAMES.get(('s3', operation), operation)}"
    if operation == "DeleteObjects":
        objects = ((params.get("Delete") or {}).get("Objects") or [])
        return [Check(action, f"{bucket_arn}/{o.get('Key')}") for o in objects if isinstance(o, dict)]
    if operation in ("CopyObject", "UploadPartCopy"):
        source = params.get("CopySource")
        if isinstance(source, dict):
            source = f"{source.get('Bucket')}/{source.get('Key')}"
        source = str(source or "").lstrip("/").split("?", 1)[0]
        return [Check("s3:GetObject", f"arn:{where.partition}:s3:::{source}"),
                Check("s3:PutObject", f"{bucket_arn}/{params.get('Key')}")]
    if isinstance(params.get("Key"), str):
        return [Check(action, f"{bucket_arn}/{params['Key']}")]
    if operation in ("ListObjects", "ListObjectsV2", "ListObjectVersions"):
        return [Check(action, bucket_arn, (("s3:prefix", str(params.get("Prefix") or "")),))]
    return [Check(action, bucket_arn)]


# ---- the others -----------------------------------------------------------------------------------

def _kinesis(operation: str, params: dict, where: Where) -> Any:
    if operation == "GetRecords":
        stream = params.get("StreamARN") or where.iterator_stream(str(params.get("ShardIterator")))
        return [Check("kinesis:GetRecords", stream)] if stream else None  # an iterator it never got: moto refuses it
    return NotImplemented


def _events(operation: str, params: dict, where: Where) -> Any:
    if operation != "PutEvents":
        return NotImplemented
    buses = {str(e.get("EventBusName") or "default") for e in params.get("Entries") or [] if isinstance(e, dict)}
    return [Check("events:PutEvents", bus if bus.startswith("arn:") else where.arn("events", f"event-bus/{bus}"))
            for bus in sorted(buses or {"default"})]


def _ses(operation: str, params: dict, where: Where) -> Any:
    source = params.get("Source") or params.get("FromEmailAddress")
    if not isinstance(source, str):
        return NotImplemented
    address = source.rsplit("<", 1)[-1].rstrip(">").strip()
    return [Check(f"ses:{ACTION_NAMES.get(('ses', operation), operation)}", where.arn("ses", f"identity/{address}"))]


_SPECIAL: dict[str, Callable[[str, dict, Where], Any]] = {
    "dynamodb": _dynamodb, "s3": _s3, "kinesis": _kinesis, "events": _events, "ses": _ses}
