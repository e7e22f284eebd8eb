# coding=utf-8
from typing import Optional, Sequence

import pulumi


@pulumi.input_type
class DistributedMapBatchArgs:
    def __init__(__self__, *,
                 max_concurrency: pulumi.Input[int],
                 tolerated_failure_percentage: Optional[pulumi.Input[float]] = None,
                 csv_headers: Optional[pulumi.Input[Sequence[str]]] = None,
                 alarm_actions: Optional[pulumi.Input[Sequence[pulumi.Input[str]]]] = None):
        pulumi.set(__self__, "max_concurrency", max_concurrency)
        if tolerated_failure_percentage is not None:
            pulumi.set(__self__, "tolerated_failure_percentage", tolerated_failure_percentage)
        if csv_headers is not None:
            pulumi.set(__self__, "csv_headers", csv_headers)
        if alarm_actions is not None:
            pulumi.set(__self__, "alarm_actions", alarm_actions)

    @property
    @pulumi.getter(name="maxConcurrency")
    def max_concurrency(self) -> pulumi.Input[int]:
        return pulumi.get(self, "max_concurrency")

    @property
    @pulumi.getter(name="toleratedFailurePercentage")
    def tolerated_failure_percentage(self) -> Optional[pulumi.Input[float]]:
        return pulumi.get(self, "tolerated_failure_percentage")

    @property
    @pulumi.getter(name="csvHeaders")
    def csv_headers(self) -> Optional[pulumi.Input[Sequence[str]]]:
        return pulumi.get(self, "csv_headers")

    @property
    @pulumi.getter(name="alarmActions")
    def alarm_actions(self) -> Optional[pulumi.Input[Sequence[pulumi.Input[str]]]]:
        return pulumi.get(self, "alarm_actions")


class DistributedMapBatch(pulumi.ComponentResource):
    def __init__(__self__, resource_name: str, args: DistributedMapBatchArgs,
                 opts: Optional[pulumi.ResourceOptions] = None):
        if opts is None:
            opts = pulumi.ResourceOptions()
        if opts.id is not None:
            raise ValueError("ComponentResource classes do not support opts.id")
        __props__ = DistributedMapBatchArgs.__new__(DistributedMapBatchArgs)
        if args.max_concurrency is None:
            raise TypeError("Missing required property 'max_concurrency'")
        __props__.__dict__["max_concurrency"] = args.max_concurrency
        __props__.__dict__["tolerated_failure_percentage"] = args.tolerated_failure_percentage
        __props__.__dict__["csv_headers"] = args.csv_headers
        __props__.__dict__["alarm_actions"] = args.alarm_actions
        __props__.__dict__["state_machine_arn"] = None
        __props__.__dict__["state_machine_name"] = None
        __props__.__dict__["input_bucket_name"] = None
        __props__.__dict__["ops_queue_url"] = None
        super(DistributedMapBatch, __self__).__init__(
            "blueprint:index:DistributedMapBatch", resource_name, __props__, opts, remote=True)

    @property
    @pulumi.getter(name="stateMachineArn")
    def state_machine_arn(self) -> pulumi.Output[str]:
        return pulumi.get(self, "state_machine_arn")

    @property
    @pulumi.getter(name="stateMachineName")
    def state_machine_name(self) -> pulumi.Output[str]:
        return pulumi.get(self, "state_machine_name")

    @property
    @pulumi.getter(name="inputBucketName")
    def input_bucket_name(self) -> pulumi.Output[str]:
        return pulumi.get(self, "input_bucket_name")

    @property
    @pulumi.getter(name="opsQueueUrl")
    def ops_queue_url(self) -> pulumi.Output[str]:
        return pulumi.get(self, "ops_queue_url")
