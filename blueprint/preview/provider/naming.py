"""Who names a resource: the input that holds its AWS name, AWS's length limit and case for it, and the
name Pulumi's aws provider makes up when the program leaves it out ("<logical name>-<7 hex>", or
Terraform's prefix-plus-unique-id for a `namePrefix`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from integration_blueprint.preview.provider.sdk import ResourceDecl
from integration_blueprint.preview.provider.values import name_suffix


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


def naming_of(type_token: str, decl: Optional[ResourceDecl]) -> Optional[Naming]:
    if type_token in NAMING:
        return NAMING[type_token]
    if decl is not None and "name" in decl.inputs and "name" not in decl.required_inputs:
        return Naming("name", DEFAULT_NAME_LIMIT)
    return None


def _is_fifo(type_token: str, inputs: dict) -> bool:
    return (type_token == "aws:sqs/queue:Queue" and inputs.get("fifoQueue") is True) or (
        type_token == "aws:sns/topic:Topic" and inputs.get("fifoTopic") is True)


def auto_name(type_token: str, name: str, urn: str, inputs: dict, naming: Naming) -> str:
    suffix = FIFO_SUFFIX if _is_fifo(type_token, inputs) else ""
    random = "-" + name_suffix(urn)
    base = name.lower() if naming.lower else name
    return base[: naming.max_len - len(random) - len(suffix)] + random + suffix

