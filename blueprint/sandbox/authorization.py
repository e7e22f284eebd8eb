"""Every AWS call a function makes, authorized as AWS would authorize it, before the emulator
answers it: against its execution role's identity policies and the resource's own policy, as they
stand in the emulated account.

- Realized first (`realize_access`): the program's roles with their inline policies, RolePolicy
  resources, customer managed policies and attachments (IAM in moto), and the resource policies AWS
  reads (a queue's, a topic's, a bucket's); AWS managed policies attached to a role are read from
  the project's catalogue of them (core/aws_managed_policies.py).
- Decided here (`Authorizer.check`), in the sandbox's process, on the thread running the
  invocation, from the hook the sandbox's one seam installs (interception.py): a team's function
  runs in a process of its own and its calls cross a pipe to this process, so nothing it runs can
  reach or turn off the decision. The call is described as AWS authorizes it (iam_requests.py) and
  judged by the project's one evaluator (core/iam_evaluation.py).
- A refusal is answered as the service answers it (AccessDenied, AccessDeniedException,
  AuthorizationError, with AWS's message naming the session, the action, the resource and why); the
  emulator never sees the call.
- Every decision is kept per function (`usage`): the actions its code used, what was refused (with
  the statement to add), and what its role grants that it never used (a least-privilege note).

Cost: the policies of a role and of a resource are read from the emulator and compiled once, and a
decision is cached per (function, action, resource, the request's own condition values); a call
that changes a policy (PutRolePolicy, SetQueueAttributes with a Policy, PutBucketPolicy, ...) empties
both caches.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Optional

from botocore.exceptions import ClientError

from integration_blueprint.core import aws_managed_policies
from integration_blueprint.core.iam_evaluation import (
    EXPLICIT_IDENTITY_DENY,
    EXPLICIT_RESOURCE_DENY,
    Decision,
    Policy,
    PolicyError,
    Principal,
    Request,
    denial_message,
    evaluate,
    statement_to_add,
)
from integration_blueprint.core.patches import FIX, MOTO_VERIFIED, Patcher, patch
from integration_blueprint.preview.recording import RecordedStack
from integration_blueprint.sandbox import iam_requests
from integration_blueprint.sandbox.errors import SandboxError

ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
MANAGED_POLICY = "aws:iam/policy:Policy"
ROLE_POLICY_ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
QUEUE = "aws:sqs/queue:Queue"
QUEUE_POLICY = "aws:sqs/queuePolicy:QueuePolicy"
TOPIC = "aws:sns/topic:Topic"
TOPIC_POLICY = "aws:sns/topicPolicy:TopicPolicy"
BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy"
FUNCTION = "aws:lambda/function:Function"
TABLE = "aws:dynamodb/table:Table"

# What a program declares that decides what its functions may do: realized in the emulated account.
ACCESS_TYPES = (ROLE, ROLE_POLICY, MANAGED_POLICY, ROLE_POLICY_ATTACHMENT, QUEUE_POLICY, TOPIC_POLICY, BUCKET_POLICY)

# Successful calls after which a policy may read otherwise: both caches are emptied.
POLICY_CHANGES = {
    "PutRolePolicy", "DeleteRolePolicy", "AttachRolePolicy", "DetachRolePolicy", "CreatePolicyVersion",
    "SetDefaultPolicyVersion", "DeletePolicyVersion", "PutRolePermissionsBoundary", "SetQueueAttributes",
    "AddPermission", "RemovePermission", "SetTopicAttributes", "PutBucketPolicy", "DeleteBucketPolicy",
    "PutKeyPolicy", "CreateQueue", "CreateTopic", "CreateBucket",
}

# How each service words a refusal: (error code, HTTP status, how it spells the action in its message).
# AWS's responses: DynamoDB, Kinesis, Step Functions, KMS, EventBridge answer AccessDeniedException
# (400), Lambda and Scheduler AccessDeniedException (403), SQS AccessDenied (403) with the action in lower
# case, SNS AuthorizationError (403) with the prefix in capitals, S3 AccessDenied (403) with the ARN quoted.
DENIAL_FORMS: dict[str, tuple[str, int, str]] = {
    "sqs": ("AccessDenied", 403, "lower"), "sns": ("AuthorizationError", 403, "SNS"),
    "s3": ("AccessDenied", 403, "quoted"), "lambda": ("AccessDeniedException", 403, ""),
    "scheduler": ("AccessDeniedException", 403, ""), "sts": ("AccessDenied", 403, ""),
    "iam": ("AccessDenied", 403, ""),
}
DEFAULT_DENIAL = ("AccessDeniedException", 400, "")

# What Lambda itself does with a function's execution role, on the function's behalf: the actions
# a grant is for although the code never calls them (AWS docs: "Lambda execution role" and, per
# event source, the AWSLambdaSQSQueueExecutionRole and AWSLambdaKinesisExecutionRole managed
# policies; "Capturing records of Lambda asynchronous invocations" for destinations; the runtime
# writes the function's logs with CreateLogGroup, CreateLogStream and PutLogEvents).
LAMBDA_LOGS = ("logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents")
LAMBDA_POLLS = {
    "sqs": ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"),
    "kinesis": ("kinesis:GetRecords", "kinesis:GetShardIterator", "kinesis:DescribeStream",
                "kinesis:DescribeStreamSummary", "kinesis:ListShards", "kinesis:ListStreams", "kinesis:SubscribeToShard"),
    "dynamodb": ("dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:DescribeStream", "dynamodb:ListStreams"),
}
LAMBDA_DELIVERS = {"sqs": ("sqs:SendMessage",), "sns": ("sns:Publish",), "s3": ("s3:PutObject", "s3:ListBucket"),
                   "lambda": ("lambda:InvokeFunction",), "events": ("events:PutEvents",)}
MAPPING = "aws:lambda/eventSourceMapping:EventSourceMapping"
INVOKE_CONFIG = "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig"


def lambda_uses(recorded: RecordedStack) -> dict[str, set[str]]:
    """By function name: the actions Lambda performs with its role for it (polling its event
    sources, delivering to its destinations and dead-letter queue, writing its logs)."""
    names = {}
    for function in recorded.of_type(FUNCTION):
        for key in ("name", "arn"):
            if isinstance(function.outputs.get(key), str):
                names[function.outputs[key]] = function.outputs.get("name")
    uses: dict[str, set[str]] = {name: set(LAMBDA_LOGS) for name in names.values() if isinstance(name, str)}

    def service(arn: Any) -> str:
        return arn.split(":")[2] if isinstance(arn, str) and arn.count(":") >= 5 else ""

    for function in recorded.of_type(FUNCTION):
        target = ((function.inputs.get("deadLetterConfig") or {}).get("targetArn"))
        if function.outputs.get("name") in uses:
            uses[function.outputs["name"]].update(LAMBDA_DELIVERS.get(service(target), ()))
    for mapping in recorded.of_type(MAPPING):
        name = names.get(str(mapping.inputs.get("functionName")))
        if name in uses:
            uses[name].update(LAMBDA_POLLS.get(service(mapping.inputs.get("eventSourceArn")), ()))
            destination = ((mapping.inputs.get("destinationConfig") or {}).get("onFailure") or {}).get("destinationArn")
            uses[name].update(LAMBDA_DELIVERS.get(service(destination), ()))
    for config in recorded.of_type(INVOKE_CONFIG):
        name = names.get(str(config.inputs.get("functionName")))
        for outcome in ("onFailure", "onSuccess"):
            destination = ((config.inputs.get("destinationConfig") or {}).get(outcome) or {}).get("destination")
            if name in uses:
                uses[name].update(LAMBDA_DELIVERS.get(service(destination), ()))
    return uses


@dataclass
class Use:
    """One (action, resource) a function's code asked for, and what it was told."""

    action: str
    resource: str
    allowed: int = 0
    denied: int = 0
    decision: Optional[Decision] = None
    message: str = ""


@dataclass
class FunctionAccess:
    name: str
    principal: Principal
    uses: dict = field(default_factory=dict)  # (action, resource) -> Use


class Authorizer:
    """The sandbox's authorization of its functions' calls (see the module's docstring)."""

    def __init__(self, emulator: Any, session: Any, recorded: RecordedStack, aws_managed: dict[str, list[str]]):
        self.emulator = emulator
        self.session = session
        self.region = emulator.region
        self.aws_managed = aws_managed  # role name -> AWS managed policy ARNs attached to it
        self.functions: dict[str, FunctionAccess] = {}
        self.partition_keys: dict[str, str] = {}
        self.lambda_uses = lambda_uses(recorded)  # what Lambda does with each function's role for it
        for table in recorded.of_type(TABLE):
            name, key = table.outputs.get("name"), table.inputs.get("hashKey")
            if isinstance(name, str) and isinstance(key, str):
                self.partition_keys[name] = key
        for function in recorded.of_type(FUNCTION):
            name, role, arn = function.outputs.get("name"), function.inputs.get("role"), function.outputs.get("arn")
            if isinstance(name, str) and isinstance(role, str) and role.startswith("arn:") and ":role/" in role:
                parts = role.split(":")
                principal = Principal(account=parts[4], role_name=role.rsplit("/", 1)[-1], session=name,
                                      partition=parts[1])
                self.functions[name] = FunctionAccess(name, principal)
                self.functions[name].arn = arn  # type: ignore[attr-defined]
        # A function whose role the program does not declare (an existing role named by ARN): what it
        # may do is not known here, so its calls are answered unauthorized and the report says so.
        self.unknown_roles: dict[str, str] = {}
        declared = {r.outputs.get("arn") for r in recorded.of_type(ROLE)}
        for name, access in list(self.functions.items()):
            if access.principal.role_arn not in declared:
                self.unknown_roles[name] = access.principal.role_arn
                del self.functions[name]
        self._lock = threading.RLock()
        self._identity: dict[str, list[Policy]] = {}  # role name -> its compiled policies
        self._resource: dict[str, Optional[Policy]] = {}  # resource ARN -> its compiled policy (None: none)
        self._decisions: OrderedDict = OrderedDict()
        self._iterators: OrderedDict = OrderedDict()  # shard iterator -> stream ARN (the last 10,000)
        self.decisions_made = 0
        self.cache_hits = 0

    # ---- the hook's side ---------------------------------------------------------------------------

    def check(self, function: str, service: str, operation: str, params: dict, region: str) -> Optional[dict]:
        """None: the call may go to the emulator. Else the parsed refusal botocore raises ClientError from."""
        access = self.functions.get(function)
        if access is None:
            return None  # not a function of the recording (the sandbox's own test doubles)
        prefix = iam_requests.iam_prefix(service)
        where = iam_requests.Where(access.principal.partition, region or self.region, access.principal.account,
                                   self.partition_keys.get, self._iterators.get)
        found = iam_requests.checks(prefix, operation, params, where)
        for check in found or []:
            decision = self._decide(access, check, region or self.region)
            with self._lock:
                use = access.uses.get((check.action, check.resource))
                if use is None:
                    use = access.uses[(check.action, check.resource)] = Use(check.action, check.resource)
                if decision.allowed:
                    use.allowed += 1
                    continue
                use.denied += 1
                use.decision = decision
                use.message = denial_message(access.principal, check.action, check.resource, decision.reason,
                                             _shown(service, check.action))
                return _refusal(service, use.message, check.resource)
        return None

    def observe(self, operation: str, params: dict, parsed: dict) -> None:
        """After a function's call succeeded: remember where shard iterators lead, and forget what a
        changed policy may have decided."""
        if operation == "GetShardIterator" and isinstance(parsed.get("ShardIterator"), str):
            stream = params.get("StreamARN") or (
                f"arn:aws:kinesis:{self.region}:{self._account()}:stream/{params.get('StreamName')}")
            self._remember_iterator(parsed["ShardIterator"], stream)
        elif operation == "GetRecords" and isinstance(parsed.get("NextShardIterator"), str):
            stream = params.get("StreamARN") or self._iterators.get(str(params.get("ShardIterator")))
            if stream:
                self._remember_iterator(parsed["NextShardIterator"], stream)
        elif operation in POLICY_CHANGES:
            with self._lock:
                self._identity.clear()
                self._resource.clear()
                self._decisions.clear()

    def _remember_iterator(self, iterator: str, stream: str) -> None:
        with self._lock:
            self._iterators[iterator] = stream
            while len(self._iterators) > 10_000:
                self._iterators.popitem(last=False)

    def _account(self) -> str:
        return next((a.principal.account for a in self.functions.values()), "123456789012")

    # ---- deciding ----------------------------------------------------------------------------------

    def _decide(self, access: FunctionAccess, check: iam_requests.Check, region: str) -> Decision:
        principal = access.principal
        resource_account = _account_of(check.resource) or principal.account
        with self._lock:
            identity = self._identity_policies(principal.role_name)
            resource_policy = self._resource_policy(check.resource)
        read = frozenset().union(*(p.keys for p in identity), resource_policy.keys if resource_policy else ())
        # The decision depends on the request's own values only for the keys a statement reads.
        request_keys = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in check.context if k.lower() in read)
        timely = "aws:currenttime" in read or "aws:epochtime" in read
        key = (access.name, check.action, check.resource, region, request_keys)
        with self._lock:
            if not timely and key in self._decisions:
                self.cache_hits += 1
                return self._decisions[key]
        context = self._context(access, region, resource_account, check.context, timely)
        request = Request(principal, check.action, check.resource, resource_account, context)
        decision = evaluate(request, identity, resource_policy, key_policy_required=check.action.lower().startswith("kms:"))
        with self._lock:
            self.decisions_made += 1
            self._decisions[key] = decision
            while len(self._decisions) > 50_000:
                self._decisions.popitem(last=False)
        return decision

    def _context(self, access: FunctionAccess, region: str, resource_account: str, extra: tuple, timely: bool) -> tuple:
        principal = access.principal
        values: list[tuple[str, Any]] = [
            ("aws:PrincipalArn", principal.role_arn), ("aws:PrincipalAccount", principal.account),
            ("aws:PrincipalType", "AssumedRole"), ("aws:userid", f"AROASANDBOX:{principal.session}"),
            ("aws:SecureTransport", "true"), ("aws:RequestedRegion", region),
            ("aws:ResourceAccount", resource_account), ("aws:ViaAWSService", "false"),
            ("aws:PrincipalIsAWSService", "false"),
            ("lambda:SourceFunctionArn", str(getattr(access, "arn", "") or "")), *extra]
        if timely:
            import datetime

            now = datetime.datetime.now(datetime.timezone.utc)
            values += [("aws:CurrentTime", now.strftime("%Y-%m-%dT%H:%M:%SZ")), ("aws:EpochTime", str(int(now.timestamp())))]
        return tuple(values)

    def _client(self, service: str) -> Any:
        return self.emulator.client(service, self.session)

    def _identity_policies(self, role_name: str) -> list[Policy]:
        """The role's policies as the emulated account holds them, compiled (cached until a change)."""
        if role_name in self._identity:
            return self._identity[role_name]
        iam = self._client("iam")
        policies: list[Policy] = []
        try:
            for name in _all(iam, "list_role_policies", "PolicyNames", RoleName=role_name):
                document = iam.get_role_policy(RoleName=role_name, PolicyName=name)["PolicyDocument"]
                policies.append(_compiled(f"inline policy {name} of role {role_name}", document))
            for attached in _all(iam, "list_attached_role_policies", "AttachedPolicies", RoleName=role_name):
                arn = attached["PolicyArn"]
                version = iam.get_policy(PolicyArn=arn)["Policy"]["DefaultVersionId"]
                document = iam.get_policy_version(PolicyArn=arn, VersionId=version)["PolicyVersion"]["Document"]
                policies.append(_compiled(f"managed policy {arn}", document))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "NoSuchEntity":
                raise
        for arn in self.aws_managed.get(role_name, []):
            known = aws_managed_policies.managed_policy(arn)
            if known is not None and known.document is not None:
                policies.append(_compiled(f"AWS managed policy {known.arn}", known.document))
        self._identity[role_name] = policies
        return policies

    def _resource_policy(self, arn: str) -> Optional[Policy]:
        """The policy AWS reads on the resource (a queue's, topic's, bucket's: the bucket's for its
        objects), as the emulated account holds it."""
        owner = _policy_holder(arn)
        if owner is None:
            return None
        if owner in self._resource:
            return self._resource[owner]
        service = owner.split(":")[2]
        text = None
        try:
            if service == "sqs":
                url = self._client("sqs").get_queue_url(QueueName=owner.rsplit(":", 1)[-1],
                                                        QueueOwnerAWSAccountId=owner.split(":")[4])["QueueUrl"]
                text = self._client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"]).get(
                    "Attributes", {}).get("Policy")
            elif service == "sns":
                text = self._client("sns").get_topic_attributes(TopicArn=owner)["Attributes"].get("Policy")
            elif service == "s3":
                text = self._client("s3").get_bucket_policy(Bucket=owner.rsplit(":", 1)[-1])["Policy"]
            elif service == "kms":
                text = self._client("kms").get_key_policy(KeyId=owner, PolicyName="default")["Policy"]
        except ClientError:
            text = None  # no such resource, or no policy on it: the identity policies decide
        policy = _compiled(f"resource policy of {owner}", text) if text else None
        self._resource[owner] = policy
        return policy

    # ---- the report --------------------------------------------------------------------------------

    def usage(self) -> dict[str, dict]:
        """Per function: the actions its code used (and on what), what was refused (the message and
        the statement to add, or the deny to lift), and the actions its role grants it never used."""
        found: dict[str, dict] = {name: {"role": role, "not_evaluated": f"its role {role} is not declared in the program "
                                         "(the drill cannot read its policies): its calls were not authorized"}
                                  for name, role in sorted(self.unknown_roles.items())}
        for name, access in sorted(self.functions.items()):
            with self._lock:
                uses = list(access.uses.values())
            if not uses:
                continue
            used = sorted({u.action for u in uses if u.allowed})
            denied = []
            for use in sorted((u for u in uses if u.denied), key=lambda u: (u.action, u.resource)):
                assert use.decision is not None
                entry = {"action": use.action, "resource": use.resource, "count": use.denied,
                         "reason": use.decision.reason, "message": use.message}
                if use.decision.reason in (EXPLICIT_IDENTITY_DENY, EXPLICIT_RESOURCE_DENY):
                    entry["fix"] = f"narrow or remove the deny at {use.decision.statement}"
                else:
                    entry["statement_to_add"] = statement_to_add(use.action, use.resource)
                if use.decision.absent_keys:
                    entry["conditions_absent"] = list(use.decision.absent_keys)
                denied.append(entry)
            with self._lock:
                identity = list(self._identity_policies(access.principal.role_name))
            for_it = sorted(self.lambda_uses.get(name, set()))
            found[name] = {"role": access.principal.role_arn, "used": used, "denied": denied,
                           "used_by_lambda": for_it,
                           "unused_grants": unused_grants(identity, {(u.action, u.resource) for u in uses},
                                                          set(for_it))}
        return found


def unused_grants(identity: list[Policy], used: set[tuple[str, str]], by_lambda: set[str]) -> list[str]:
    """What the role's Allow statements grant (each action on each resource, wildcards as written)
    that no call of the code asked for (`used`: (action, resource), allowed or not) and Lambda does not use for it
    (`by_lambda`: actions): `dynamodb:GetItem on arn:aws:dynamodb:...:table/ledger`."""
    from integration_blueprint.core.iam_evaluation import action_matches, resource_matches

    granted = []
    for policy in identity:
        for statement in policy.statements:
            if statement.effect != "Allow":
                continue
            if statement.not_actions is not None:
                granted.append("every action but " + ", ".join(statement.not_actions))
                continue
            resources = statement.resources if statement.resources is not None else ["*"]
            for action in statement.actions or []:
                if any(action_matches(action, done) for done in by_lambda):
                    continue
                unused = [r for r in resources if not any(action_matches(action, a) and resource_matches(r, res)
                                                         for a, res in used)]
                if len(unused) == len(resources):
                    granted.append(action if resources == ["*"] else f"{action} on {', '.join(resources)}")
                elif unused:
                    granted.append(f"{action} on {', '.join(unused)}")
    return sorted(set(granted), key=str.lower)


def _all(client: Any, method: str, key: str, **params: Any) -> list:
    return [item for page in client.get_paginator(method).paginate(**params) for item in page.get(key, [])]


def _compiled(name: str, document: Any) -> Policy:
    try:
        return Policy.compile(name, document)
    except PolicyError as exc:
        raise SandboxError(f"{exc}: the emulated account holds a policy AWS would refuse") from None


def _account_of(arn: str) -> str:
    parts = arn.split(":")
    return parts[4] if len(parts) > 5 and parts[0] == "arn" else ""


def _policy_holder(arn: str) -> Optional[str]:
    """The ARN of the resource whose policy AWS reads for `arn` (a bucket's for an object)."""
    parts = arn.split(":", 5)
    if len(parts) != 6 or parts[0] != "arn":
        return None
    if parts[2] == "sqs" or parts[2] == "sns":
        return arn
    if parts[2] == "s3":
        return f"arn:{parts[1]}:s3:::{parts[5].split('/', 1)[0]}"
    if parts[2] == "kms" and parts[5].startswith("key/"):
        return arn
    return None


def _shown(service: str, action: str) -> str:
    form = DENIAL_FORMS.get(service, DEFAULT_DENIAL)[2]
    if form == "lower":
        return action.lower()
    if form == "SNS":
        return "SNS:" + action.split(":", 1)[1]
    return action


def _refusal(service: str, message: str, resource: str) -> dict:
    code, status, form = DENIAL_FORMS.get(service, DEFAULT_DENIAL)
    if form == "quoted":
        message = message.replace(f"on resource: {resource} ", f'on resource: "{resource}" ')
    error = {"Code": code, "Message": message}
    if service in ("sns", "sqs", "sts", "iam"):
        error["Type"] = "Sender"
    return {"Error": error, "ResponseMetadata": {"HTTPStatusCode": status, "HTTPHeaders": {}, "RetryAttempts": 0}}


# ---- realizing what decides ------------------------------------------------------------------------

def realize_access(recorded: RecordedStack, emulator: Any, session: Any, queue_urls: dict[str, str]) -> dict[str, list[str]]:
    """The program's roles, their policies and the resource policies AWS reads, in the emulated
    account. Returns the AWS managed policies attached to each role (by role name), which the
    emulator does not hold (read from core/aws_managed_policies.py)."""
    iam = emulator.client("iam", session)
    aws_managed: dict[str, list[str]] = {}
    roles: dict[str, str] = {}  # recorded id, name and ARN -> role name
    for role in recorded.of_type(ROLE):
        name = role.outputs.get("name")
        if not isinstance(name, str):
            continue
        trust = role.inputs.get("assumeRolePolicy") or "{}"
        iam.create_role(RoleName=name, Path=role.inputs.get("path") or "/",
                        AssumeRolePolicyDocument=trust if isinstance(trust, str) else json.dumps(trust))
        for key in (name, role.outputs.get("id"), role.outputs.get("arn")):
            if isinstance(key, str):
                roles[key] = name
        for i, inline in enumerate(role.inputs.get("inlinePolicies") or []):
            if isinstance(inline, dict) and inline.get("policy"):
                iam.put_role_policy(RoleName=name, PolicyName=str(inline.get("name") or f"inline-{i}"),
                                    PolicyDocument=_text(inline["policy"]))
        for arn in role.inputs.get("managedPolicyArns") or []:
            aws_managed.setdefault(name, []).append(arn)
    managed: dict[str, str] = {}  # recorded ARN -> the emulator's
    for policy in recorded.of_type(MANAGED_POLICY):
        name = policy.outputs.get("name")
        if isinstance(name, str) and policy.inputs.get("policy"):
            created = iam.create_policy(PolicyName=name, Path=policy.inputs.get("path") or "/",
                                        PolicyDocument=_text(policy.inputs["policy"]))["Policy"]["Arn"]
            managed[str(policy.outputs.get("arn"))] = created
    for holder in recorded.of_type(ROLE_POLICY):
        role_name = roles.get(str(holder.inputs.get("role")))
        if role_name is not None and holder.inputs.get("policy"):
            iam.put_role_policy(RoleName=role_name, PolicyName=str(holder.outputs.get("name") or holder.name),
                                PolicyDocument=_text(holder.inputs["policy"]))
    for attachment in recorded.of_type(ROLE_POLICY_ATTACHMENT):
        role_name = roles.get(str(attachment.inputs.get("role")))
        arn = str(attachment.inputs.get("policyArn"))
        if role_name is None:
            continue
        if arn in managed:
            iam.attach_role_policy(RoleName=role_name, PolicyArn=managed[arn])
        else:
            aws_managed.setdefault(role_name, []).append(arn)
    for name, arns in aws_managed.items():  # customer managed ones of this stack, named by ARN on the role
        for arn in [a for a in arns if a in managed]:
            iam.attach_role_policy(RoleName=name, PolicyArn=managed[arn])
            arns.remove(arn)
    _realize_resource_policies(recorded, emulator, session, queue_urls)
    return aws_managed


def _realize_resource_policies(recorded: RecordedStack, emulator: Any, session: Any, queue_urls: dict[str, str]) -> None:
    sqs, sns, s3 = (emulator.client(s, session) for s in ("sqs", "sns", "s3"))
    for queue in recorded.of_type(QUEUE):
        url = queue_urls.get(str(queue.outputs.get("url")))
        if url and queue.inputs.get("policy"):
            sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": _text(queue.inputs["policy"])})
    for holder in recorded.of_type(QUEUE_POLICY):
        url = queue_urls.get(str(holder.inputs.get("queueUrl")))
        if url and holder.inputs.get("policy"):
            sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": _text(holder.inputs["policy"])})
    topics = {str(t.outputs.get("arn")) for t in recorded.of_type(TOPIC)}
    for topic in recorded.of_type(TOPIC):
        if topic.inputs.get("policy"):
            sns.set_topic_attributes(TopicArn=topic.outputs["arn"], AttributeName="Policy",
                                     AttributeValue=_text(topic.inputs["policy"]))
    for holder in recorded.of_type(TOPIC_POLICY):
        if str(holder.inputs.get("arn")) in topics and holder.inputs.get("policy"):
            sns.set_topic_attributes(TopicArn=holder.inputs["arn"], AttributeName="Policy",
                                     AttributeValue=_text(holder.inputs["policy"]))
    buckets = {str(b.outputs.get("bucket")) for token in ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2")
               for b in recorded.of_type(token)}
    for holder in recorded.of_type(BUCKET_POLICY):
        if str(holder.inputs.get("bucket")) in buckets and holder.inputs.get("policy"):
            s3.put_bucket_policy(Bucket=holder.inputs["bucket"], Policy=_text(holder.inputs["policy"]))


# The patch every emulator applies for its block (emulator.EMULATOR_PATCHES).
NAMES = ("bucket_policies_judged_by_the_authorizer",)


@patch("bucket_policies_judged_by_the_authorizer", target="moto.s3.models.FakeBucket.get_permission", package="moto",
       verified=MOTO_VERIFIED, kind=FIX,
       buys="a bucket policy no longer refuses what it does not deny: moto's own partial check returns DENIED for "
            "any statement whose condition it cannot read (a TLS-only bucket's Deny on aws:SecureTransport false "
            "refused every PutObject, the sandbox's own included); the sandbox's authorizer judges bucket policies")
def _bucket_policies_judged_by_the_authorizer(patcher: Patcher) -> None:
    from moto.iam.access_control import PermissionResult
    from moto.s3.models import FakeBucket

    def get_permission(self: Any, action: str, resource: str) -> Any:
        return PermissionResult.NEUTRAL

    patcher.replace(FakeBucket, "get_permission", get_permission)


def _text(document: Any) -> str:
    return document if isinstance(document, str) else json.dumps(document)


__all__ = ["ACCESS_TYPES", "Authorizer", "lambda_uses", "realize_access", "unused_grants"]
