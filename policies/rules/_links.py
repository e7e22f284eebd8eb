"""How one resource refers to another, for the cross-resource (stack) rules.

A reference is followed through the referring property's `property_dependencies` first: during a
real preview ARNs, names and URLs of new resources are unknown, but the engine still knows which
resources fed the property. Where that does not single out one resource of the wanted type, the
value itself is matched against the ARNs, names and URLs of the stack's resources (an ARN may be
qualified, a queue may be named by URL, a function by name or ARN).

`StackIndex` is built once per stack policy run; every lookup is a dict hit, so a rule stays
linear in the number of resources.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from pulumi_policy import PolicyResource
from pulumi_policy.proxy import UnknownValueError

from integration_blueprint.core import aws_limits

from ._iam import Statement, statements
from ._values import Malformed, gather, get, is_set, json_document, shown, whole_number

QUEUE = "aws:sqs/queue:Queue"
REDRIVE_POLICY = "aws:sqs/redrivePolicy:RedrivePolicy"
FUNCTION = "aws:lambda/function:Function"
MAPPING = "aws:lambda/eventSourceMapping:EventSourceMapping"
STREAM = "aws:kinesis/stream:Stream"
STREAM_CONSUMER = "aws:kinesis/streamConsumer:StreamConsumer"
TABLE = "aws:dynamodb/table:Table"
ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
SCHEDULE = "aws:scheduler/schedule:Schedule"
ALIAS = "aws:lambda/alias:Alias"
INVOKE_CONFIG = "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig"
PERMISSION = "aws:lambda/permission:Permission"
TOPIC = "aws:sns/topic:Topic"
SUBSCRIPTION = "aws:sns/topicSubscription:TopicSubscription"
EVENT_TARGET = "aws:cloudwatch/eventTarget:EventTarget"
BUCKET_NOTIFICATION = "aws:s3/bucketNotification:BucketNotification"
PIPE = "aws:pipes/pipe:Pipe"
LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"
STATE_MACHINE = "aws:sfn/stateMachine:StateMachine"
ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
MANAGED_POLICY = "aws:iam/policy:Policy"
ROLE_POLICY_ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
QUEUE_POLICY = "aws:sqs/queuePolicy:QueuePolicy"
TOPIC_POLICY = "aws:sns/topicPolicy:TopicPolicy"

STREAM_SOURCES = (STREAM, STREAM_CONSUMER, TABLE)
# what the rules look up by value (ARN, name, URL)
_REFERABLE = frozenset((QUEUE, FUNCTION, ALIAS, ROLE, MANAGED_POLICY, TOPIC, LOG_GROUP, *STREAM_SOURCES))
_ARN = re.compile(r"^arn:[^:]+:(?P<service>[^:]+):[^:]*:[^:]*:(?P<resource>.+)$")


def arn_service(ref: str) -> Optional[str]:
    match = _ARN.match(ref)
    return match.group("service") if match else None


def _names_in_reference(type_token: str, ref: str) -> list[str]:
    """The resource name a reference of this type carries, besides the reference itself."""
    match = _ARN.match(ref)
    if type_token == FUNCTION:
        if match:  # arn:aws:lambda:r:a:function:NAME[:qualifier]
            parts = ref.split(":")
            return [parts[6]] if len(parts) > 6 else []
        return [ref.split(":")[0]]  # NAME or NAME:alias
    if type_token == QUEUE:
        if "://" in ref:  # https://sqs.<region>.amazonaws.com/<account>/<name>
            return [ref.rstrip("/").rsplit("/", 1)[-1]]
        return [ref.rsplit(":", 1)[-1]] if match else []
    if match and type_token in (STREAM, TABLE):  # stream/NAME, table/NAME[/stream/label]
        parts = match.group("resource").split("/")
        return [parts[1]] if len(parts) > 1 else []
    if match and type_token in (ROLE, MANAGED_POLICY):  # role/[path/]NAME
        return [match.group("resource").rsplit("/", 1)[-1]]
    if match and type_token == TOPIC:
        return [match.group("resource")]
    if match and type_token == LOG_GROUP:  # log-group:NAME[:*]
        resource = match.group("resource")
        return [resource.split(":", 2)[1]] if resource.startswith("log-group:") else []
    return []


def name_in_arn(ref: str) -> str:
    """The last name in an ARN or queue URL (the queue name of either)."""
    return ref.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]


class StackIndex:
    def __init__(self, resources: list[PolicyResource]):
        self.resources = resources
        self.by_urn = {r.urn: r for r in resources}
        self._by_type: dict[str, list[PolicyResource]] = defaultdict(list)
        self._by_key: dict[tuple[str, str], PolicyResource] = {}
        for resource in resources:
            self._by_type[resource.resource_type].append(resource)
            if resource.resource_type not in _REFERABLE:
                continue
            for key in ("arn", "name", "url", "streamArn"):
                try:
                    value = get(resource.props, key)
                except UnknownValueError:
                    continue  # not known yet: reachable through property dependencies only
                if isinstance(value, str) and value:
                    self._by_key[(resource.resource_type, value)] = resource

    def of_type(self, *types: str) -> list[PolicyResource]:
        return [r for t in types for r in self._by_type.get(t, [])]

    def lookup(self, ref: str, types: Iterable[str]) -> Optional[PolicyResource]:
        for type_token in types:
            for key in [ref, *_names_in_reference(type_token, ref)]:
                found = self._by_key.get((type_token, key))
                if found is not None:
                    return found
        return None

    def follow(self, resource: PolicyResource, prop: str, value: Callable[[], object],
               types: Iterable[str]) -> Optional[PolicyResource]:
        """The resource of one of `types` that `resource.<prop>` refers to, or None when it refers
        to nothing in this stack. `value()` reads the reference (it may raise UnknownValueError:
        then the link cannot be known and the caller's item is skipped)."""
        types = tuple(types)
        linked = [d for d in resource.property_dependencies.get(prop, []) if d.resource_type in types]
        if len(linked) == 1:
            return linked[0]
        ref = value()
        if ref is None:
            return None
        if not isinstance(ref, str):
            raise Malformed(f"{prop} must be an ARN, name or URL string, got {ref!r}")
        return self.lookup(ref, types)


# ---- the relations the SQS and Lambda rules share ----------------------------------------------

def redrive_document(props) -> dict:
    document = json_document(props, "redrivePolicy")
    if document is None:
        raise Malformed("redrivePolicy is empty; give deadLetterTargetArn and maxReceiveCount")
    return document


def max_receive_count(props) -> float:
    value = redrive_document(props).get("maxReceiveCount")
    if value is None:
        raise Malformed("redrivePolicy has no maxReceiveCount; set it (this project requires > 3)")
    return whole_number(value, "redrivePolicy.maxReceiveCount")


@dataclass
class Redrive:
    """A redrive declared by a queue's `redrivePolicy` or by a separate RedrivePolicy resource."""

    owner: PolicyResource  # the resource that declares it (a Queue or a RedrivePolicy)
    source: Optional[PolicyResource]

    def dlq(self, index: StackIndex) -> Optional[PolicyResource]:
        def target():
            arn = redrive_document(self.owner.props).get("deadLetterTargetArn")
            if not arn or (isinstance(arn, str) and not arn.strip()):
                raise Malformed("redrivePolicy has no deadLetterTargetArn; set it to the DLQ's ARN")
            return arn
        return index.follow(self.owner, "redrivePolicy", target, [QUEUE])

    def dlq_arn(self) -> Optional[str]:
        """The DLQ's ARN as written (for a DLQ outside the stack), or None when not yet known."""
        arn = redrive_document(self.owner.props).get("deadLetterTargetArn")
        return arn if isinstance(arn, str) else None

    def max_receive_count(self) -> float:
        return max_receive_count(self.owner.props)


def redrive_owners(index: StackIndex) -> list[PolicyResource]:
    queues = [q for q in index.of_type(QUEUE) if is_set(q.props, "redrivePolicy")]
    return queues + index.of_type(REDRIVE_POLICY)


def redrive(index: StackIndex, owner: PolicyResource) -> Redrive:
    if owner.resource_type == QUEUE:
        return Redrive(owner=owner, source=owner)
    source = index.follow(owner, "queueUrl", lambda: get(owner.props, "queueUrl"), [QUEUE])
    return Redrive(owner=owner, source=source)


class RedrivesBySource:
    """Every redrive of the stack keyed by its source queue's URN, built once per rule run.

    A RedrivePolicy resource whose queue cannot be known yet might belong to any queue, so asking
    about a queue with no known redrive then raises that UnknownValueError (the item is skipped)."""

    def __init__(self, index: StackIndex):
        self.by_source: dict[str, Redrive] = {}
        self.unresolved: list[UnknownValueError] = []
        self.malformed: set[str] = set()
        for owner in redrive_owners(index):
            try:
                link = redrive(index, owner)
            except UnknownValueError as exc:
                self.unresolved.append(exc)
                continue
            except Malformed:
                self.malformed.add(owner.urn)  # the owner's own rule reports it
                continue
            if link.source is not None:
                self.by_source[link.source.urn] = link

    def of(self, queue: PolicyResource) -> Optional[Redrive]:
        found = self.by_source.get(queue.urn)
        if found is None and self.unresolved:
            raise self.unresolved[0]
        return found


def schedule_target(index: StackIndex, schedule: PolicyResource, types: Iterable[str]) -> Optional[PolicyResource]:
    """The resource of one of `types` a Scheduler schedule invokes. Its `target` property also holds
    the role and the DLQ, so its property dependencies single the target out only once those are
    set aside: the known ARN decides; unknown, the one dependency that is neither the role nor
    (when a DLQ is set) the one queue."""
    types = tuple(types)
    target = get(schedule.props, "target", default={})
    try:
        ref = get(target, "arn")
    except UnknownValueError:
        fed_by = [d for d in schedule.property_dependencies.get("target", []) if d.resource_type != ROLE]
        queues = [d for d in fed_by if d.resource_type == QUEUE]
        if is_set(get(target, "deadLetterConfig", default={}), "arn") and len(queues) == 1 and len(fed_by) == 2:
            fed_by = [d for d in fed_by if d is not queues[0]]
        if len(fed_by) != 1:
            raise
        return fed_by[0] if fed_by[0].resource_type in types else None
    return index.lookup(ref, types) if isinstance(ref, str) else None


def mapping_source(index: StackIndex, mapping: PolicyResource) -> Optional[PolicyResource]:
    return index.follow(mapping, "eventSourceArn", lambda: get(mapping.props, "eventSourceArn"),
                        [QUEUE, *STREAM_SOURCES])


def mapping_source_kind(index: StackIndex, mapping: PolicyResource) -> Optional[str]:
    """'sqs', 'stream' (Kinesis or DynamoDB Streams) or None (Kafka, MQ, ...)."""
    source = mapping_source(index, mapping)
    if source is not None:
        return "sqs" if source.resource_type == QUEUE else "stream"
    arn = get(mapping.props, "eventSourceArn")
    service = arn_service(arn) if isinstance(arn, str) else None
    if service == "sqs":
        return "sqs"
    if service in ("kinesis", "dynamodb"):
        return "stream"
    return None


def function_at(index: StackIndex, resource: PolicyResource, prop: str, value: Callable[[], object]
                ) -> Optional[PolicyResource]:
    """The function `resource.<prop>` invokes, also through an alias (or a qualified ARN: the
    function is the same whatever version or alias is invoked)."""
    found = index.follow(resource, prop, value, [FUNCTION, ALIAS])
    if found is not None and found.resource_type == ALIAS:
        return index.follow(found, "functionName", lambda: get(found.props, "functionName"), [FUNCTION])
    return found


def function_timeout(function: PolicyResource) -> float:
    timeout = whole_number(get(function.props, "timeout", default=aws_limits.LAMBDA_TIMEOUT_DEFAULT_SECONDS),
                           f"function {label(function)}: timeout")
    if not 1 <= timeout <= aws_limits.LAMBDA_TIMEOUT_MAX_SECONDS:
        raise Malformed(f"function {label(function)}: timeout is {shown(timeout)}; Lambda accepts "
                        f"1-{aws_limits.LAMBDA_TIMEOUT_MAX_SECONDS} s")
    return timeout


def mapping_function(index: StackIndex, mapping: PolicyResource) -> Optional[PolicyResource]:
    return function_at(index, mapping, "functionName", lambda: get(mapping.props, "functionName"))


def fifo(queue: PolicyResource) -> bool:
    """A queue is FIFO only with fifoQueue = true (AWS refuses a .fifo name without it)."""
    flag = get(queue.props, "fifoQueue", default=False)
    if not isinstance(flag, bool):
        raise Malformed(f"fifoQueue must be true or false, got {flag!r}")
    return flag


def fifo_by_name(ref: str) -> bool:
    """For a queue outside the stack, its ARN or URL says it: a FIFO queue's name ends `.fifo`
    and a standard queue's name cannot contain a dot (SQS CreateQueue naming rules)."""
    return name_in_arn(ref).endswith(aws_limits.SQS_FIFO_SUFFIX)


def label(resource: Optional[PolicyResource]) -> str:
    return f"'{resource.name}'" if resource is not None else "(outside this stack)"


class ResourcePolicies:
    """Every queue's and topic's resource policy: its own `policy` and the QueuePolicy/TopicPolicy
    resources that name it. A QueuePolicy whose queue is not known yet might be any queue's:
    `unplaced` holds those unknowns, for the rule to raise when the answer depends on them."""

    def __init__(self, index: StackIndex):
        self._documents: dict[str, list[dict]] = defaultdict(list)
        self.unplaced = gather(index.of_type(QUEUE_POLICY), lambda p: self._add(p, index.follow(
            p, "queueUrl", lambda: get(p.props, "queueUrl"), [QUEUE])))
        self.unplaced += gather(index.of_type(TOPIC_POLICY), lambda p: self._add(p, index.follow(
            p, "arn", lambda: get(p.props, "arn"), [TOPIC])))

    def _add(self, holder: PolicyResource, owner: Optional[PolicyResource]) -> None:
        if owner is not None:
            document = json_document(holder.props, "policy")
            if document is not None:
                self._documents[owner.urn].append(document)

    def statements(self, resource: PolicyResource) -> list[Statement]:
        """The statements of every policy of the queue or topic (its own `policy` first)."""
        own = json_document(resource.props, "policy") if is_set(resource.props, "policy") else None
        documents = ([own] if own is not None else []) + self._documents.get(resource.urn, [])
        return [s for document in documents for s in statements(document, "policy")]
