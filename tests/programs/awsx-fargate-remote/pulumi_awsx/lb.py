# coding=utf-8
from typing import Optional

import pulumi
import pulumi_aws


class ApplicationLoadBalancer(pulumi.ComponentResource):
    def __init__(__self__, resource_name: str, opts: Optional[pulumi.ResourceOptions] = None):
        __props__: dict = {}
        __props__["load_balancer"] = None
        __props__["default_target_group"] = None
        super(ApplicationLoadBalancer, __self__).__init__(
            "awsx:lb:ApplicationLoadBalancer", resource_name, __props__, opts, remote=True)

    @property
    @pulumi.getter(name="loadBalancer")
    def load_balancer(self) -> pulumi.Output["pulumi_aws.lb.LoadBalancer"]:
        return pulumi.get(self, "load_balancer")

    @property
    @pulumi.getter(name="defaultTargetGroup")
    def default_target_group(self) -> pulumi.Output["pulumi_aws.lb.TargetGroup"]:
        return pulumi.get(self, "default_target_group")
