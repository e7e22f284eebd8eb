# coding=utf-8
from typing import Optional, Sequence

import pulumi


@pulumi.input_type
class FifoBillingQueueArgs:
    def __init__(__self__, *,
                 consumer_timeout_seconds: Optional[pulumi.Input[int]] = None,
                 max_receive_count: Optional[pulumi.Input[int]] = None,
                 alarm_actions: Optional[pulumi.Input[Sequence[pulumi.Input[str]]]] = None):
        if consumer_timeout_seconds is not None:
            pulumi.set(__self__, "consumer_timeout_seconds", consumer_timeout_seconds)
        if max_receive_count is not None:
            pulumi.set(__self__, "max_receive_count", max_receive_count)
        if alarm_actions is not None:
            pulumi.set(__self__, "alarm_actions", alarm_actions)

    @property
    @pulumi.getter(name="consumerTimeoutSeconds")
    def consumer_timeout_seconds(self) -> Optional[pulumi.Input[int]]:
        return pulumi.get(self, "consumer_timeout_seconds")

    @property
    @pulumi.getter(name="maxReceiveCount")
    def max_receive_count(self) -> Optional[pulumi.Input[int]]:
        return pulumi.get(self, "max_receive_count")

    @property
    @pulumi.getter(name="alarmActions")
    def alarm_actions(self) -> Optional[pulumi.Input[Sequence[pulumi.Input[str]]]]:
        return pulumi.get(self, "alarm_actions")


class FifoBillingQueue(pulumi.ComponentResource):
    def __init__(__self__, resource_name: str, args: Optional[FifoBillingQueueArgs] = None,
                 opts: Optional[pulumi.ResourceOptions] = None):
        args = args or FifoBillingQueueArgs()
        opts = opts or pulumi.ResourceOptions()
        __props__ = FifoBillingQueueArgs.__new__(FifoBillingQueueArgs)
        __props__.__dict__["consumer_timeout_seconds"] = args.consumer_timeout_seconds
        __props__.__dict__["max_receive_count"] = args.max_receive_count
        __props__.__dict__["alarm_actions"] = args.alarm_actions
        __props__.__dict__["queue_url"] = None
        __props__.__dict__["dlq_url"] = None
        super(FifoBillingQueue, __self__).__init__(
            "blueprint:index:FifoBillingQueue", resource_name, __props__, opts, remote=True)

    @property
    @pulumi.getter(name="queueUrl")
    def queue_url(self) -> pulumi.Output[str]:
        return pulumi.get(self, "queue_url")

    @property
    @pulumi.getter(name="dlqUrl")
    def dlq_url(self) -> pulumi.Output[str]:
        return pulumi.get(self, "dlq_url")
