# coding=utf-8
from typing import Optional

import pulumi
import pulumi_aws


@pulumi.input_type
class RouteArgs:
    def __init__(__self__, *, path: str, method: Optional[str] = None,
                 event_handler: Optional[pulumi.Input["pulumi_aws.lambda_.Function"]] = None):
        pulumi.set(__self__, "path", path)
        if method is not None:
            pulumi.set(__self__, "method", method)
        if event_handler is not None:
            pulumi.set(__self__, "event_handler", event_handler)

    @property
    @pulumi.getter
    def path(self) -> str:
        return pulumi.get(self, "path")

    @property
    @pulumi.getter
    def method(self) -> Optional[str]:
        return pulumi.get(self, "method")

    @property
    @pulumi.getter(name="eventHandler")
    def event_handler(self) -> Optional[pulumi.Input["pulumi_aws.lambda_.Function"]]:
        return pulumi.get(self, "event_handler")
