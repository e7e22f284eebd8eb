# coding=utf-8
from typing import Any, Mapping, Optional

import pulumi
import pulumi_aws


@pulumi.input_type
class FargateServiceArgs:
    def __init__(__self__, *, cluster: Optional[pulumi.Input[str]] = None, assign_public_ip: Optional[bool] = None,
                 task_definition_args: Optional[Mapping[str, Any]] = None):
        if cluster is not None:
            pulumi.set(__self__, "cluster", cluster)
        if assign_public_ip is not None:
            pulumi.set(__self__, "assign_public_ip", assign_public_ip)
        if task_definition_args is not None:
            pulumi.set(__self__, "task_definition_args", task_definition_args)

    @property
    @pulumi.getter
    def cluster(self) -> Optional[pulumi.Input[str]]:
        return pulumi.get(self, "cluster")

    @property
    @pulumi.getter(name="assignPublicIp")
    def assign_public_ip(self) -> Optional[bool]:
        return pulumi.get(self, "assign_public_ip")

    @property
    @pulumi.getter(name="taskDefinitionArgs")
    def task_definition_args(self) -> Optional[Mapping[str, Any]]:
        return pulumi.get(self, "task_definition_args")


class FargateService(pulumi.ComponentResource):
    def __init__(__self__, resource_name: str, args: FargateServiceArgs, opts: Optional[pulumi.ResourceOptions] = None):
        __props__ = FargateServiceArgs.__new__(FargateServiceArgs)
        __props__.__dict__["cluster"] = args.cluster
        __props__.__dict__["assign_public_ip"] = args.assign_public_ip
        __props__.__dict__["task_definition_args"] = args.task_definition_args
        __props__.__dict__["service"] = None
        super(FargateService, __self__).__init__("awsx:ecs:FargateService", resource_name, __props__, opts,
                                                 remote=True)

    @property
    @pulumi.getter
    def service(self) -> pulumi.Output["pulumi_aws.ecs.Service"]:
        return pulumi.get(self, "service")
