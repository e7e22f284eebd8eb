# coding=utf-8
from typing import Optional, Sequence

import pulumi

from ._inputs import RouteArgs


@pulumi.input_type
class RestAPIArgs:
    def __init__(__self__, *, routes: Optional[Sequence[RouteArgs]] = None, stage_name: Optional[str] = None):
        if routes is not None:
            pulumi.set(__self__, "routes", routes)
        if stage_name is not None:
            pulumi.set(__self__, "stage_name", stage_name)

    @property
    @pulumi.getter
    def routes(self) -> Optional[Sequence[RouteArgs]]:
        return pulumi.get(self, "routes")

    @property
    @pulumi.getter(name="stageName")
    def stage_name(self) -> Optional[str]:
        return pulumi.get(self, "stage_name")


class RestAPI(pulumi.ComponentResource):
    def __init__(__self__, resource_name: str, args: Optional[RestAPIArgs] = None,
                 opts: Optional[pulumi.ResourceOptions] = None):
        args = args or RestAPIArgs()
        __props__ = RestAPIArgs.__new__(RestAPIArgs)
        __props__.__dict__["routes"] = args.routes
        __props__.__dict__["stage_name"] = args.stage_name
        __props__.__dict__["url"] = None
        __props__.__dict__["api"] = None
        super(RestAPI, __self__).__init__("aws-apigateway:index:RestAPI", resource_name, __props__, opts, remote=True)

    @property
    @pulumi.getter
    def url(self) -> pulumi.Output[str]:
        return pulumi.get(self, "url")
