"""Data sources (a provider's Invoke): every field of the declared result filled and typed, the
`getX` lookups answered as the resource `X` they describe would be (its twin), and the lookups
whose answer is a fact (regions, zones, the caller, a computed policy document) told apart from
those answered by invention.
"""

from __future__ import annotations

import base64
import json
from functools import lru_cache
from pathlib import Path
from typing import Callable, Optional

from integration_blueprint.preview.provider.facts import (
    DEFAULT_VPC_CIDR,
    ELB_SERVICE_ACCOUNTS,
    NEW_VPC_CIDR,
    REGION_DESCRIPTIONS,
    default_vpc_id,
    zone_id_prefix,
    zone_names,
)
from integration_blueprint.preview.provider.identifiers import Subject
from integration_blueprint.preview.provider.makers import SETTING_EMPTY
from integration_blueprint.preview.provider.naming import naming_of
from integration_blueprint.preview.provider.outputs import Plan, fill, known_outputs, make_plan, read_outputs
from integration_blueprint.preview.provider.policy_documents import (
    EMPTY_POLICY,
    managed_policy_known,
    policy_document_result,
    policy_lookup,
)
from integration_blueprint.preview.provider.sdk import function_decl, resource_decl, sdk_root
from integration_blueprint.preview.provider.values import (
    PARTITION,
    PLACEHOLDER_ACCOUNT,
    TIMESTAMP,
    alnum,
    digest,
    hex_id,
    known,
    last_segment,
    name_servers,
    upper_id,
    uuid_of,
)


class UnknownInvoke(Exception):
    """No installed provider SDK declares this data source (function) token."""

    def __init__(self, token: str):
        super().__init__(f"no installed provider SDK declares the function {token!r}: install the "
                         f"provider's Python SDK (pulumi_{token.split(':')[0].replace('-', '_')}) "
                         f"into the interpreter that runs the preview")
        self.token = token


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
    s = Subject(token, token.rsplit(":", 1)[-1], f"invoke::{token}::{json.dumps(args, sort_keys=True, default=str)}",
                {**twin, **args, **answered}, region, account, None)
    if "id" in twin:
        s.__dict__["id"] = twin["id"]
    if "arn" in twin:
        s.__dict__["arn"] = twin["arn"]
    declared = {f.wire for f in decl.result}
    return fill(s, _function_plan(token) or Plan({}, (), keep_none=True),
                {k: v for k, v in s.props.items() if k in declared})


def _twin_outputs(token: str, args: dict, region: str, account: str) -> dict:
    """A `getX` data source describes the resource `X` of its module: the resource's outputs for the
    name the lookup gives (`get_function(function_name=...)`, `get_bucket(bucket=...)`...)."""
    twin = _twin_token(token)
    decl = resource_decl(twin) if twin else None
    if twin is None or decl is None:
        return {}
    cls = twin.rsplit(":", 1)[-1]
    naming = naming_of(twin, decl)
    name = next((str(v) for k, v in args.items()
                 if known(v) and isinstance(v, str) and (k == "name" or k.endswith("Name") or (naming and k == naming.prop))),
                None)
    inputs = {k: v for k, v in args.items() if k in decl.inputs}
    if name is not None and naming is not None:
        inputs[naming.prop] = name
    if name is None and isinstance(args.get("arn"), str):
        inputs.setdefault(naming.prop if naming else "name", last_segment(args["arn"]))
    given_id = args.get("id")
    if isinstance(given_id, str) and known(given_id):  # a lookup by id reads that resource
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
    return make_plan(token, decl.result, optional_settings, "name", SETTING_EMPTY)


def _zones(args: dict, region: str, account: str) -> dict:
    prefix = zone_id_prefix(region)
    zones = [(name, f"{prefix}-az{i + 1}") for i, name in enumerate(zone_names(region))
             if name not in (args.get("excludeNames") or [])
             and f"{prefix}-az{i + 1}" not in (args.get("excludeZoneIds") or [])]
    return {"names": [name for name, _ in zones], "zoneIds": [zone_id for _, zone_id in zones], "id": region,
            "groupNames": [region] * len(zones), "state": args.get("state") or "available"}


def _zone(args: dict, region: str, account: str) -> dict:
    names = zone_names(region)
    name = str(args.get("name") or names[0])
    index = names.index(name) if name in names else 0
    return {"name": name, "zoneId": args.get("zoneId") or f"{zone_id_prefix(region)}-az{index + 1}",
            "region": region, "nameSuffix": name[len(region):], "state": "available",
            "groupName": region, "networkBorderGroup": region, "optInStatus": "opt-in-not-required",
            "zoneType": "availability-zone", "groupLongName": REGION_DESCRIPTIONS.get(region, region),
            "parentZoneId": "", "parentZoneName": ""}


def _caller(args: dict, region: str, account: str) -> dict:
    return {"accountId": account, "id": account, "arn": f"arn:{PARTITION}:iam::{account}:user/preview",
            "userId": "AIDA" + upper_id(account, 17)}


def _region(args: dict, region: str, account: str) -> dict:
    region = str(args.get("name") or region)  # `name` is the deprecated spelling of `region`
    return {"name": region, "region": region, "id": region, "endpoint": f"ec2.{region}.amazonaws.com",
            "description": REGION_DESCRIPTIONS.get(region, region)}


def _partition(args: dict, region: str, account: str) -> dict:
    return {"partition": PARTITION, "id": PARTITION, "dnsSuffix": "amazonaws.com",
            "reverseDnsPrefix": "com.amazonaws"}


def _vpc(args: dict, region: str, account: str) -> dict:
    """A VPC lookup: the region's default VPC unless the lookup names another (by id, tags, filters)."""
    default = args.get("default") is True or not any(args.get(k) for k in ("id", "filters", "tags", "cidrBlock"))
    vpc = str(args.get("id") or (default_vpc_id(region, account) if default else
                                 f"vpc-{hex_id(json.dumps(args, sort_keys=True, default=str) + region, 17)}"))
    return {"id": vpc, "default": default,
            "cidrBlock": args.get("cidrBlock") or (DEFAULT_VPC_CIDR if default else NEW_VPC_CIDR),
            "ownerId": account, "state": "available",
            "enableDnsHostnames": True, "enableDnsSupport": True, "instanceTenancy": "default",
            "arn": f"arn:{PARTITION}:ec2:{region}:{account}:vpc/{vpc}"}


def _subnets(args: dict, region: str, account: str) -> dict:
    seed = f"{account}:{region}:{json.dumps(args, sort_keys=True, default=str)}"
    return {"ids": [f"subnet-{hex_id(seed + zone, 17)}" for zone in zone_names(region)[:3]], "id": region}


def _subnet(args: dict, region: str, account: str) -> dict:
    seed = json.dumps(args, sort_keys=True, default=str) + region
    return {"cidrBlock": f"172.31.{digest(seed)[0] % 16 * 16}.0/20",  # a default VPC's subnets are /20s
            "availableIpAddressCount": 4091, "state": "available"}


def _ami(args: dict, region: str, account: str) -> dict:
    image = f"ami-{hex_id(json.dumps(args, sort_keys=True, default=str) + region, 17)}"
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
        value = f"ami-{hex_id(name + region, 17)}"  # AWS's public AMI parameters hold an image id
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
    zone = str(args.get("zoneId") or "Z" + upper_id(name, 20))
    servers = name_servers(name)
    return {"primaryNameServer": servers[0], "linkedServicePrincipal": "", "linkedServiceDescription": "",
            "id": zone, "zoneId": zone, "name": name, "privateZone": bool(args.get("privateZone")),
            "arn": f"arn:{PARTITION}:route53:::hostedzone/{zone}", "callerReference": uuid_of(name),
            "nameServers": servers}


def _certificate(args: dict, region: str, account: str) -> dict:
    domain = str(args.get("domain") or "example.com")
    arn = f"arn:{PARTITION}:acm:{region}:{account}:certificate/{uuid_of(domain + region)}"
    return {"arn": arn, "id": arn, "domain": domain, "status": "ISSUED", "type": "AMAZON_ISSUED",
            "keyTypes": args.get("keyTypes") or ["RSA_2048"]}


def _secret_version(args: dict, region: str, account: str) -> dict:
    secret = str(args.get("secretId") or "secret")
    name = last_segment(secret)
    arn = secret if secret.startswith("arn:") else (
        f"arn:{PARTITION}:secretsmanager:{region}:{account}:secret:{name}-{alnum(name, 6)}")
    return {"arn": arn, "secretArn": arn, "id": f"{arn}|AWSCURRENT", "secretString": f"preview-secret-of-{name}",
            "secretBinary": "",
            "versionId": uuid_of(arn), "versionStages": ["AWSCURRENT"], "secretId": secret}


def _role(args: dict, region: str, account: str) -> dict:
    # The role's trust policy is the account's own business: a document that trusts nobody.
    return {"assumeRolePolicy": EMPTY_POLICY, "maxSessionDuration": 3600}


def _bucket(args: dict, region: str, account: str) -> dict:
    return {"websiteDomain": "", "websiteEndpoint": "", "bucketRegion": region}


def _kms_alias(args: dict, region: str, account: str) -> dict:
    name = str(args.get("name") or "alias/aws/s3")
    key = uuid_of(name + region + account)
    return {"name": name, "id": f"arn:{PARTITION}:kms:{region}:{account}:{name}",
            "arn": f"arn:{PARTITION}:kms:{region}:{account}:{name}", "targetKeyId": key,
            "targetKeyArn": f"arn:{PARTITION}:kms:{region}:{account}:key/{key}"}


def _kms_key(args: dict, region: str, account: str) -> dict:
    given = str(args.get("keyId") or "key")
    key = given.rsplit("/", 1)[-1] if "key/" in given else uuid_of(given + region + account)
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
    "aws:iam/getPolicy:getPolicy": policy_lookup,
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
        return managed_policy_known(args)
    return token in FACT_LOOKUPS
