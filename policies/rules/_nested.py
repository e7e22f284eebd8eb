"""Resources declared inside other resources: a CloudFormation stack's (or stack set's) template and a
Cloud Control resource's desired state create AWS resources the program never declares itself.

The pack judges them by the same rules as the resources a program declares: each declaration is
read as the Pulumi resource the AWS provider would make of it (`TRANSLATIONS`: its type, and its
properties under the provider's names), and every rule runs on it (`_policy.rule` wraps every
rule's validate with `judged_with_nested`). A violation names the declaration and its line in the
template and is reported on the resource that carries it, in the gate and under the Pulumi CLI alike.

What the pack cannot look into is said, never passed over: a template given by URL, a template it
cannot parse, a declaration of a type the rules judge but this module does not translate, a
container whose content is elsewhere (`OPAQUE`). The rule `nested-resources-judged` reports each as
a check that could not run (an advisory note; `blueprint preview --strict` exits 2 naming them).

CloudFormation's intrinsic functions (`Ref`, `Fn::GetAtt`, `Fn::Sub`, ...) are values known only
when the stack deploys: where a rule reads one it is unknown, as an output is during a preview; a
`Ref` to a template parameter reads the value the stack passes (its `parameters`) or the default.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Optional

from pulumi_policy import PolicyResource, ReportViolation, ResourceValidationArgs, StackValidationArgs
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy

from ._values import Unverifiable

CLOUDFORMATION_STACK = "aws:cloudformation/stack:Stack"
CLOUDFORMATION_STACK_SET = "aws:cloudformation/stackSet:StackSet"
CLOUDCONTROL_RESOURCE = "aws:cloudcontrol/resource:Resource"
CONTAINERS = (CLOUDFORMATION_STACK, CLOUDFORMATION_STACK_SET, CLOUDCONTROL_RESOURCE)
# Resources whose content creates resources the pack has no way to read.
OPAQUE = {
    "aws:serverlessrepository/cloudFormationStack:CloudFormationStack":
        "its template is an application of the Serverless Application Repository",
    "aws:servicecatalog/provisionedProduct:ProvisionedProduct": "its template is a Service Catalog product's",
}

# CloudFormation's resource types whose Pulumi counterpart some rule judges, and the counterpart.
# Those with a property translation in TRANSLATIONS are judged; the others are reported unchecked.
JUDGED_TYPES = {
    "AWS::SQS::Queue": "aws:sqs/queue:Queue",
    "AWS::SQS::QueuePolicy": "aws:sqs/queuePolicy:QueuePolicy",
    "AWS::SNS::Topic": "aws:sns/topic:Topic",
    "AWS::SNS::TopicPolicy": "aws:sns/topicPolicy:TopicPolicy",
    "AWS::SNS::Subscription": "aws:sns/topicSubscription:TopicSubscription",
    "AWS::Kinesis::Stream": "aws:kinesis/stream:Stream",
    "AWS::Kinesis::StreamConsumer": "aws:kinesis/streamConsumer:StreamConsumer",
    "AWS::DynamoDB::Table": "aws:dynamodb/table:Table",
    "AWS::Lambda::Function": "aws:lambda/function:Function",
    "AWS::Lambda::EventSourceMapping": "aws:lambda/eventSourceMapping:EventSourceMapping",
    "AWS::Lambda::EventInvokeConfig": "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig",
    "AWS::Lambda::Permission": "aws:lambda/permission:Permission",
    "AWS::Lambda::Alias": "aws:lambda/alias:Alias",
    "AWS::IAM::Role": "aws:iam/role:Role",
    "AWS::IAM::Policy": "aws:iam/rolePolicy:RolePolicy",
    "AWS::IAM::RolePolicy": "aws:iam/rolePolicy:RolePolicy",
    "AWS::IAM::ManagedPolicy": "aws:iam/policy:Policy",
    "AWS::IAM::UserPolicy": "aws:iam/userPolicy:UserPolicy",
    "AWS::IAM::GroupPolicy": "aws:iam/groupPolicy:GroupPolicy",
    "AWS::StepFunctions::StateMachine": "aws:sfn/stateMachine:StateMachine",
    "AWS::Scheduler::Schedule": "aws:scheduler/schedule:Schedule",
    "AWS::Pipes::Pipe": "aws:pipes/pipe:Pipe",
    "AWS::S3::Bucket": "aws:s3/bucket:Bucket",
    "AWS::CloudWatch::Alarm": "aws:cloudwatch/metricAlarm:MetricAlarm",
    "AWS::Logs::LogGroup": "aws:cloudwatch/logGroup:LogGroup",
    "AWS::Events::Rule": "aws:cloudwatch/eventRule:EventRule",
    "AWS::Events::EventBus": "aws:cloudwatch/eventBus:EventBus",
}


def _document(value: Any) -> str:
    """An IAM or redrive document, which the provider takes as a JSON string."""
    return value if isinstance(value, str) else json.dumps(value)


def _inline_policies(value: Any) -> Any:
    if not isinstance(value, list):
        return value
    return [{"name": p.get("PolicyName"), "policy": _document(p.get("PolicyDocument"))} if isinstance(p, dict) else p
            for p in value]


def _stream_encryption(value: Any) -> dict:
    value = value if isinstance(value, dict) else {}
    return {"encryptionType": value.get("EncryptionType", "NONE"), "kmsKeyId": value.get("KeyId")}


def _on_failure(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    on_failure = value.get("OnFailure") or {}
    return {"onFailure": {"destinationArn": on_failure.get("Destination")}}


def _sse(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    return {"enabled": value.get("SSEEnabled"), "kmsKeyArn": value.get("KMSMasterKeyId")}


@dataclass(frozen=True)
class Translation:
    """How one CloudFormation type reads as the provider's resource: property renames (a name, or a
    name and a function of the value; a name of None spreads a dict of properties), and the
    properties that are copied as they are under their camelCase name."""
    renames: Mapping[str, Any]
    as_is: tuple[str, ...] = ()


TRANSLATIONS: dict[str, Translation] = {
    "AWS::SQS::Queue": Translation(
        {"QueueName": "name", "VisibilityTimeout": "visibilityTimeoutSeconds",
         "MessageRetentionPeriod": "messageRetentionSeconds", "RedrivePolicy": ("redrivePolicy", _document),
         "RedriveAllowPolicy": ("redriveAllowPolicy", _document), "ReceiveMessageWaitTimeSeconds":
         "receiveWaitTimeSeconds", "MaximumMessageSize": "maxMessageSize"},
        ("FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit", "DelaySeconds",
         "KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds", "SqsManagedSseEnabled")),
    "AWS::SQS::QueuePolicy": Translation({"PolicyDocument": ("policy", _document)}),
    "AWS::SNS::Topic": Translation({"TopicName": "name"}, ("FifoTopic", "KmsMasterKeyId",
                                                           "ContentBasedDeduplication")),
    "AWS::SNS::TopicPolicy": Translation({"PolicyDocument": ("policy", _document)}),
    "AWS::Kinesis::Stream": Translation(
        {"Name": "name", "RetentionPeriodHours": "retentionPeriod", "StreamEncryption": (None, _stream_encryption)},
        ("ShardCount",)),
    "AWS::DynamoDB::Table": Translation({"TableName": "name", "SSESpecification": ("serverSideEncryption", _sse)},
                                        ("BillingMode",)),
    "AWS::Lambda::Function": Translation(
        {"FunctionName": "name", "ReservedConcurrentExecutions": "reservedConcurrentExecutions",
         "DeadLetterConfig": ("deadLetterConfig", lambda v: {"targetArn": v.get("TargetArn")}
                              if isinstance(v, dict) else v)},
        ("Timeout", "MemorySize", "Handler", "Runtime", "Role")),
    "AWS::Lambda::EventSourceMapping": Translation(
        {"DestinationConfig": ("destinationConfig", _on_failure)},
        ("EventSourceArn", "FunctionName", "BatchSize", "MaximumRetryAttempts", "BisectBatchOnFunctionError",
         "MaximumRecordAgeInSeconds", "FunctionResponseTypes", "StartingPosition", "ParallelizationFactor",
         "MaximumBatchingWindowInSeconds", "Enabled")),
    "AWS::IAM::Role": Translation(
        {"RoleName": "name", "AssumeRolePolicyDocument": ("assumeRolePolicy", _document),
         "Policies": ("inlinePolicies", _inline_policies)},
        ("ManagedPolicyArns",)),
    "AWS::IAM::Policy": Translation({"PolicyDocument": ("policy", _document), "PolicyName": "name"}),
    "AWS::IAM::RolePolicy": Translation({"PolicyDocument": ("policy", _document), "PolicyName": "name",
                                         "RoleName": "role"}),
    "AWS::IAM::ManagedPolicy": Translation({"PolicyDocument": ("policy", _document),
                                            "ManagedPolicyName": "name"}),
    "AWS::IAM::UserPolicy": Translation({"PolicyDocument": ("policy", _document), "PolicyName": "name",
                                         "UserName": "user"}),
    "AWS::IAM::GroupPolicy": Translation({"PolicyDocument": ("policy", _document), "PolicyName": "name",
                                          "GroupName": "group"}),
}


@dataclass(frozen=True)
class Declared:
    """One resource a container declares, read as the provider's resource."""
    logical_id: str
    cfn_type: str
    resource_type: str
    props: dict
    where: str  # "Resources.Queue (line 12 of its template)", "its desired state"


@dataclass(frozen=True)
class Unjudged:
    """Something a container creates that no rule looked into, and why."""
    what: str
    why: str


@functools.cache
def _cfn_loader() -> type:
    """A YAML loader for templates with CloudFormation's short forms (!Ref X, !GetAtt A.B, !Sub ...),
    made (and PyYAML imported) when the first template is read: most stacks have none, and the
    import was 15-20 ms of the pack's start."""
    import yaml

    class CfnLoader(yaml.SafeLoader):
        pass

    def short_form(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict:
        name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
        if isinstance(node, yaml.ScalarNode):
            return {name: loader.construct_scalar(node)}
        if isinstance(node, yaml.SequenceNode):
            return {name: loader.construct_sequence(node, deep=True)}
        return {name: loader.construct_mapping(node, deep=True)}

    CfnLoader.add_multi_constructor("!", short_form)
    return CfnLoader


def _parse(text: str) -> dict:
    """A template's document; ValueError (with PyYAML's message) if it is not one."""
    import yaml

    try:
        document = yaml.load(text, Loader=_cfn_loader())  # noqa: S506 - a safe loader; JSON is read by the same parser
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from exc
    if not isinstance(document, dict):
        raise ValueError("it is not a JSON or YAML object")
    return document


def _intrinsic(value: Any) -> Optional[str]:
    if isinstance(value, dict) and len(value) == 1:
        (key,) = value
        if key == "Ref" or key.startswith("Fn::"):
            return key
    return None


class _Resolver:
    """Template values as a rule reads them: a parameter's value where a Ref names one, otherwise
    an intrinsic function is unknown at the top of a property and shown as written inside a
    document (a policy whose resource is `!GetAtt Queue.Arn` names no wildcard)."""

    def __init__(self, parameters: Mapping[str, Any], declared_parameters: Mapping[str, Any]):
        self.parameters = parameters
        self.declared = declared_parameters

    def value(self, value: Any, inside_document: bool = False) -> Any:
        kind = _intrinsic(value)
        if kind == "Ref" and isinstance(value["Ref"], str) and value["Ref"] in self.declared:
            name = value["Ref"]
            if name in self.parameters:
                return self.parameters[name]
            default = (self.declared[name] or {}).get("Default") if isinstance(self.declared[name], dict) else None
            if default is not None:
                return default
        if kind is not None:
            return f"{{{kind}: {json.dumps(value[kind], default=str)}}}" if inside_document else UNKNOWN_STRING_VALUE
        if isinstance(value, dict):
            return {k: self.value(v, inside_document) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, inside_document) for v in value]
        return value


def _camel(name: str) -> str:
    return name[:1].lower() + name[1:]


def translate(cfn_type: str, properties: Mapping[str, Any], resolver: _Resolver) -> dict:
    """A declaration's properties under the provider's names."""
    translation = TRANSLATIONS[cfn_type]
    props: dict[str, Any] = {}
    for key, raw in properties.items():
        documents = translation.renames.get(key)
        converter: Optional[Callable[[Any], Any]] = None
        if isinstance(documents, tuple):
            name, converter = documents
        elif isinstance(documents, str):
            name = documents
        elif key in translation.as_is:
            name = _camel(key)
        else:
            continue  # a property no rule reads under a name we would only guess
        if converter is not None and _intrinsic(raw) is None:
            value = converter(resolver.value(raw, inside_document=True))
        else:
            value = resolver.value(raw)
        if name is None:  # a property the provider spreads over several (a stream's encryption)
            assert converter is not None
            props.update(value if isinstance(value, dict) else {k: UNKNOWN_STRING_VALUE for k in converter({})})
        else:
            props[name] = value
    return props


def _line_of(text: str, logical_id: str) -> Optional[int]:
    match = re.search(rf'^\s*"?{re.escape(logical_id)}"?\s*:', text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _text(props: Mapping, key: str) -> Any:
    try:
        return props[key] if key in props else None
    except UnknownValueError:
        return UNKNOWN_STRING_VALUE


def _template_declarations(text: str, parameters: Mapping[str, Any]) -> tuple[list[Declared], list[Unjudged]]:
    template = _parse(text)
    resources = template.get("Resources") or {}
    resolver = _Resolver(parameters, template.get("Parameters") or {})
    declared: list[Declared] = []
    unjudged: list[Unjudged] = []
    for logical_id, body in resources.items() if isinstance(resources, dict) else []:
        if not isinstance(body, dict):
            continue
        cfn_type = body.get("Type")
        line = _line_of(text, str(logical_id))
        where = f"Resources.{logical_id}" + (f" (line {line} of its template)" if line else "")
        if cfn_type in TRANSLATIONS:
            properties = body.get("Properties") or {}
            declared.append(Declared(str(logical_id), cfn_type, JUDGED_TYPES[cfn_type],
                                     translate(cfn_type, properties if isinstance(properties, dict) else {}, resolver),
                                     where))
        elif cfn_type in JUDGED_TYPES:
            unjudged.append(Unjudged(f"{where} ({cfn_type})", "the pack does not read this type inside a template"))
        elif isinstance(cfn_type, str) and cfn_type.startswith(("AWS::CloudFormation::Stack", "AWS::Serverless::")):
            unjudged.append(Unjudged(f"{where} ({cfn_type})", "its resources are declared elsewhere (a nested stack "
                                     "or a transform), which the pack cannot read"))
    if template.get("Transform"):
        unjudged.append(Unjudged("the template's Transform", "a transform (SAM, a macro) declares resources only "
                                 "when CloudFormation expands it"))
    return declared, unjudged


@functools.lru_cache(maxsize=64)  # every rule of the pack reads the same template
def _template_declarations_once(text: str, parameters: str) -> tuple[list[Declared], list[Unjudged]]:
    return _template_declarations(text, json.loads(parameters))


def contents(resource_type: str, props: Mapping) -> tuple[list[Declared], list[Unjudged]]:
    """What a container declares (read as the provider's resources) and what could not be read.
    Raises UnknownValueError where the content itself is unknown during the preview."""
    if resource_type in OPAQUE:
        return [], [Unjudged("the resources it creates", OPAQUE[resource_type])]
    if resource_type in (CLOUDFORMATION_STACK, CLOUDFORMATION_STACK_SET):
        body = _text(props, "templateBody")
        if body is None:
            url = _text(props, "templateUrl")
            return [], [Unjudged("its template", f"it is given by URL ({url}), which the pack does not fetch")
                        if url else Unjudged("its template", "the resource gives none")]
        if body == UNKNOWN_STRING_VALUE:
            raise Unverifiable("its templateBody is unknown during the preview")
        parameters = _text(props, "parameters")
        parameters = dict(parameters) if isinstance(parameters, Mapping) else {}
        try:
            return _template_declarations_once(body, json.dumps(parameters, sort_keys=True, default=str))
        except (ValueError, AttributeError) as exc:
            return [], [Unjudged("its template", f"it cannot be read as JSON or YAML ({str(exc).splitlines()[0]})")]
    if resource_type == CLOUDCONTROL_RESOURCE:
        type_name, state = _text(props, "typeName"), _text(props, "desiredState")
        if UNKNOWN_STRING_VALUE in (type_name, state):
            raise Unverifiable("its typeName or desiredState is unknown during the preview")
        if type_name not in JUDGED_TYPES:
            return [], []
        if type_name not in TRANSLATIONS:
            return [], [Unjudged(f"its desired state ({type_name})", "the pack does not read this type")]
        try:
            properties = json.loads(state) if isinstance(state, str) else {}
        except ValueError as exc:
            return [], [Unjudged(f"its desired state ({type_name})", f"it is not JSON ({exc})")]
        if not isinstance(properties, dict):
            return [], [Unjudged(f"its desired state ({type_name})", "it is not a JSON object")]
        return [Declared("desiredState", type_name, JUDGED_TYPES[type_name],
                         translate(type_name, properties, _Resolver({}, {})), "its desired state")], []
    return [], []


def _prefixed(report: ReportViolation, declared: Declared) -> ReportViolation:
    def say(message: str, urn: Optional[str] = None) -> None:
        report(f"{declared.where} ({declared.cfn_type}): {message}", urn)
    return say


def _nested_args(args: ResourceValidationArgs, declared: Declared) -> ResourceValidationArgs:
    return ResourceValidationArgs(declared.resource_type, unknown_checking_proxy(declared.props), args.urn,
                                  f"{args.name}/{declared.logical_id}", args.opts, args.provider,
                                  args.get_config(), getattr(args, "stack_tags", None))


def judged_with_nested(validate: Callable, kind: str) -> Callable:
    """`validate` run on what a program declares and on what its containers declare."""
    if kind == "resource":
        def resource(args: ResourceValidationArgs, report: ReportViolation):
            validate(args, report)
            if args.resource_type not in CONTAINERS:
                return
            try:
                declared, _ = contents(args.resource_type, args.props)
            except UnknownValueError:
                return  # said once, by nested-resources-judged
            unknown: Optional[UnknownValueError] = None
            for item in declared:
                try:
                    validate(_nested_args(args, item), _prefixed(report, item))
                except UnknownValueError as exc:
                    unknown = unknown or exc
            if unknown is not None:
                raise unknown
        return resource

    def stack(args: StackValidationArgs, report: ReportViolation):
        nested = list(_nested_resources(args.resources))
        if not nested:
            return validate(args, report)
        by_urn = {resource.urn: (container, item) for resource, container, item in nested}

        def say(message: str, urn: Optional[str] = None) -> None:
            if urn in by_urn:  # a violation of a declaration is reported on the resource that carries it
                container, item = by_urn[urn]
                return report(f"{item.where} ({item.cfn_type}): {message}", container.urn)
            report(message, urn)
        widened = StackValidationArgs(list(args.resources) + [resource for resource, _, _ in nested],
                                      args.get_config(), getattr(args, "stack_tags", None))
        return validate(widened, say)
    return stack


def _nested_resources(resources) -> Iterator[tuple[PolicyResource, PolicyResource, Declared]]:
    for container in resources:
        if container.resource_type not in CONTAINERS:
            continue
        try:
            declared, _ = contents(container.resource_type, container.props)
        except UnknownValueError:
            continue
        for item in declared:
            yield (PolicyResource(item.resource_type, unknown_checking_proxy(item.props),
                                  f"{container.urn}$${item.logical_id}", f"{container.name}/{item.logical_id}",
                                  container.opts, container.provider, container, [], {}), container, item)


def check_nested_judged(args: ResourceValidationArgs, report: ReportViolation) -> None:
    """Raise, as a check that could not run, naming what a container creates that no rule read."""
    if args.resource_type not in CONTAINERS and args.resource_type not in OPAQUE:
        return
    _, unjudged = contents(args.resource_type, args.props)  # an unknown content raises: not checked
    if unjudged:
        raise Unverifiable(f"{args.name} creates resources the pack did not judge: "
                           + "; ".join(f"{u.what}: {u.why}" for u in unjudged)
                           + ". Declare them as Pulumi resources of their own, or review them by hand")
