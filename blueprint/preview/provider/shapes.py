"""AWS's shapes for particular outputs, where a rule by property name or type would be wrong: a
function's invoke ARN, a queue's URL, a load balancer's DNS name, an RDS endpoint, an EKS cluster's
OIDC issuer... and the fields the provider computes inside a nested setting the program gives.
"""

from __future__ import annotations

import base64
from typing import Any, Callable

from integration_blueprint.preview.provider.facts import default_vpc_id, zone_id_prefix
from integration_blueprint.preview.provider.identifiers import (
    Subject,
    add_same_resources,
    execute_api_arn,
    function_arn,
    lambda_invoke_arn,
    target_id,
)
from integration_blueprint.preview.provider.values import (
    PARTITION,
    alnum,
    digest,
    hex_id,
    ip_address,
    name_servers,
    upper_id,
    uuid_of,
)
from integration_blueprint.preview.wire import UNKNOWN

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


def _public_dns(region: str, ip: str) -> str:
    """EC2's public DNS name for an address (us-east-1 has its own domain)."""
    domain = "compute-1.amazonaws.com" if region == "us-east-1" else f"{region}.compute.amazonaws.com"
    return f"ec2-{ip.replace('.', '-')}.{domain}"


def _private_dns(region: str, ip: str) -> str:
    return f"ip-{ip.replace('.', '-')}.{'ec2.internal' if region == 'us-east-1' else f'{region}.compute.internal'}"


CACHE_PORTS = {"redis": 6379, "valkey": 6379, "memcached": 11211}  # the engines' default ports


def _cache_port(s: Subject) -> Any:
    return _port(s.get("port"), CACHE_PORTS.get(str(s.get("engine")), CACHE_PORTS["redis"]))


def _cache_region(s: Subject) -> str:
    return zone_id_prefix(s.region)


def _rds_host(s: Subject, kind: str) -> str:
    """An RDS endpoint's host: the identifier, the account's 12-character RDS suffix, the region."""
    return f"{s.physical}.{kind}{alnum(s.account, 12)}.{s.region}.rds.amazonaws.com"


def _db_port(s: Subject) -> Any:
    return _port(s.get("port"), DB_PORTS.get(str(s.get("engine")), DEFAULT_DB_PORT))


def _port(given: Any, default: int) -> Any:
    """The port the program set (a number, or unknown), else the engine's default."""
    return default if given is None else given if given == UNKNOWN else int(given)


def _lambda_version(s: Subject) -> str:
    return "1" if s.get("publish") else "$LATEST"


def _stage_url(s: Subject, api: str, stage: str, scheme: str = "https") -> str:
    return f"{scheme}://{api}.execute-api.{s.region}.amazonaws.com/{'' if stage == '$default' else stage}"


def _stream_label(s: Subject) -> str:
    return "2024-01-01T00:00:00.000" if s.get("streamEnabled") else ""


def _acm_validation(s: Subject) -> list:
    alternatives = s.get("subjectAlternativeNames")
    domains = [s.get("domainName"), *(alternatives if isinstance(alternatives, list) else [])]
    return [{"domainName": d, "resourceRecordName": f"_{hex_id(s.seed(str(d)), 32)}.{d}.",
             "resourceRecordType": "CNAME",
             "resourceRecordValue": f"_{hex_id(s.seed(str(d) + 'v'), 32)}.{alnum(s.urn, 10)}.acm-validations.aws."}
            for d in domains if d]


def _eks_endpoint_id(s: Subject) -> str:
    return hex_id(s.urn, 32).upper()


SHAPES: dict[str, dict[str, Callable[[Subject], Any]]] = {
    "aws:apigateway/restApi:RestApi": {
        "executionArn": lambda s: execute_api_arn(s, s.id),
        "rootResourceId": lambda s: alnum(s.seed("root"), 10),
        "policy": lambda s: "", "description": lambda s: "", "minimumCompressionSize": lambda s: "",
        "apiKeySource": lambda s: "HEADER",
    },
    "aws:apigateway/stage:Stage": {
        "invokeUrl": lambda s: _stage_url(s, s.get("restApi"), s.get("stageName")),
        "executionArn": lambda s: execute_api_arn(s, s.get("restApi"), f"/{s.get('stageName')}"),
        "webAclArn": lambda s: "",
    },
    "aws:apigateway/resource:Resource": {"path": lambda s: f"/{s.get('pathPart') or ''}"},
    "aws:apigatewayv2/api:Api": {
        "apiEndpoint": lambda s: (f"wss://{s.id}.execute-api.{s.region}.amazonaws.com"
                                  if s.get("protocolType") == "WEBSOCKET"
                                  else f"https://{s.id}.execute-api.{s.region}.amazonaws.com"),
        "executionArn": lambda s: execute_api_arn(s, s.id),
    },
    "aws:apigatewayv2/stage:Stage": {
        "invokeUrl": lambda s: _stage_url(s, s.get("apiId"), s.physical),
        "executionArn": lambda s: execute_api_arn(s, s.get("apiId"), f"/{s.physical}"),
    },
    "aws:lambda/function:Function": {
        "invokeArn": lambda s: lambda_invoke_arn(s.region, s.arn),
        "version": _lambda_version,
        "qualifiedArn": lambda s: f"{s.arn}:{_lambda_version(s)}",
        "qualifiedInvokeArn": lambda s: lambda_invoke_arn(s.region, f"{s.arn}:{_lambda_version(s)}"),
        "responseStreamingInvokeArn": lambda s: (
            f"arn:{PARTITION}:apigateway:{s.region}:lambda:path/2021-11-15/functions/{s.arn}"
            "/response-streaming-invocations"),
        "signingJobArn": lambda s: "", "signingProfileVersionArn": lambda s: "",
        "sourceCodeHash": lambda s: base64.b64encode(digest(s.urn)).decode(),
        "architectures": lambda s: ["x86_64"],
        "tracingConfig": lambda s: {"mode": "PassThrough"},
        "ephemeralStorage": lambda s: {"size": 512},
        "packageType": lambda s: "Zip",
    },
    "aws:lambda/alias:Alias": {
        "invokeArn": lambda s: lambda_invoke_arn(s.region, s.arn),
        "functionVersion": lambda s: "$LATEST",
    },
    "aws:lambda/eventSourceMapping:EventSourceMapping": {
        "uuid": lambda s: s.id,
        "functionArn": lambda s: function_arn(s, s.get("functionName")),
        "batchSize": lambda s: (SQS_BATCH_SIZE_DEFAULT if ":sqs:" in str(s.get("eventSourceArn"))
                                else STREAM_BATCH_SIZE_DEFAULT),
        "state": lambda s: "Enabled", "stateTransitionReason": lambda s: "USER_INITIATED",
        "lastProcessingResult": lambda s: "No records processed",
    },
    "aws:lambda/permission:Permission": {"statementId": lambda s: s.id},
    "aws:lambda/functionUrl:FunctionUrl": {
        "urlId": lambda s: alnum(s.urn, 32),
        "functionUrl": lambda s: f"https://{alnum(s.urn, 32)}.lambda-url.{s.region}.on.aws/",
        "functionArn": lambda s: function_arn(s, s.get("functionName")),
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
    "aws:iam/role:Role": {"uniqueId": lambda s: "AROA" + upper_id(s.urn, 17), "path": lambda s: "/"},
    "aws:iam/user:User": {"uniqueId": lambda s: "AIDA" + upper_id(s.urn, 17), "path": lambda s: "/"},
    "aws:iam/policy:Policy": {"policyId": lambda s: "ANPA" + upper_id(s.urn, 17), "attachmentCount": lambda s: 0,
                              "path": lambda s: "/"},
    "aws:iam/instanceProfile:InstanceProfile": {"uniqueId": lambda s: "AIPA" + upper_id(s.urn, 17)},
    "aws:iam/accessKey:AccessKey": {"secret": lambda s: alnum(s.urn, 40), "status": lambda s: "Active"},
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
    "aws:ec2/eip:Eip": {"allocationId": lambda s: s.id, "publicIp": lambda s: ip_address(s.urn, private=False),
                         "publicDns": lambda s: _public_dns(s.region, ip_address(s.urn, private=False))},
    "aws:ec2/instance:Instance": {
        "publicIp": lambda s: ip_address(s.urn, private=False), "privateIp": lambda s: ip_address(s.urn, private=True),
        "publicDns": lambda s: _public_dns(s.region, ip_address(s.urn, private=False)),
        "privateDns": lambda s: _private_dns(s.region, ip_address(s.urn, private=True)),
    },
    "aws:elasticache/cluster:Cluster": {
        "cacheNodes": lambda s: [{"id": "0001", "address": f"{s.physical}.{alnum(s.account, 6)}.0001.{_cache_region(s)}"
                                  ".cache.amazonaws.com", "port": _cache_port(s),
                                  "availabilityZone": f"{s.region}a", "outpostArn": None}],
        "port": _cache_port,
    },
    "aws:cloudwatch/eventTarget:EventTarget": {"targetId": lambda s: target_id(s)},
    "aws:route53/record:Record": {"fqdn": lambda s: str(s.get("name")).rstrip(".")},
    "aws:ec2/securityGroup:SecurityGroup": {"vpcId": lambda s: default_vpc_id(s.region, s.account)},
    "aws:ecs/taskDefinition:TaskDefinition": {
        "revision": lambda s: 1, "arnWithoutRevision": lambda s: s.arn.rsplit(":", 1)[0]},
    "aws:eks/cluster:Cluster": {
        "endpoint": lambda s: f"https://{_eks_endpoint_id(s)}.gr7.{s.region}.eks.amazonaws.com",
        "certificateAuthority": lambda s: {"data": _FAKE_PEM},
        "identities": lambda s: [{"oidcs": [{"issuer": f"https://oidc.eks.{s.region}.amazonaws.com/id/"
                                                       f"{_eks_endpoint_id(s)}"}]}],
        "version": lambda s: DEFAULT_EKS_VERSION, "platformVersion": lambda s: "eks.1",
        "status": lambda s: "ACTIVE", "clusterId": lambda s: uuid_of(s.urn),
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
        "dnsName": lambda s: f"{s.physical}-{int(hex_id(s.urn, 8), 16) % 10**10}.{s.region}.elb.amazonaws.com",
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
        "nameServers": lambda s: name_servers(s.urn),
    },
    "aws:cloudfront/distribution:Distribution": {
        "domainName": lambda s: f"d{alnum(s.urn, 13)}.cloudfront.net",
        "hostedZoneId": lambda s: CLOUDFRONT_HOSTED_ZONE_ID, "status": lambda s: "Deployed",
    },
    "aws:cognito/userPool:UserPool": {
        "endpoint": lambda s: f"cognito-idp.{s.region}.amazonaws.com/{s.id}"},
}
# Fields the provider computes inside a nested setting the program gives. The SDK declares them
# Optional, like the settings around them, so no generic rule can tell them apart.
COMPUTED_IN_SETTINGS: dict[str, dict[str, Callable[[Subject, dict], dict]]] = {
    "aws:eks/cluster:Cluster": {
        "vpcConfig": lambda s, given: {
            **given, "clusterSecurityGroupId": given.get("clusterSecurityGroupId") or f"sg-{hex_id(s.seed('sg'), 17)}",
            "vpcId": given.get("vpcId") or f"vpc-{hex_id(s.seed('vpc'), 17)}"},
    },
}

add_same_resources(SHAPES)
