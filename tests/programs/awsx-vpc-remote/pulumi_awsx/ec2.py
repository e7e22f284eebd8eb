# coding=utf-8
from typing import Optional, Sequence

import pulumi


@pulumi.input_type
class NatGatewayConfigurationArgs:
    def __init__(__self__, *, strategy: pulumi.Input[str]):
        pulumi.set(__self__, "strategy", strategy)

    @property
    @pulumi.getter
    def strategy(self) -> pulumi.Input[str]:
        return pulumi.get(self, "strategy")


@pulumi.input_type
class VpcArgs:
    def __init__(__self__, *, cidr_block: Optional[pulumi.Input[str]] = None,
                 number_of_availability_zones: Optional[int] = None,
                 nat_gateways: Optional["NatGatewayConfigurationArgs"] = None):
        if cidr_block is not None:
            pulumi.set(__self__, "cidr_block", cidr_block)
        if number_of_availability_zones is not None:
            pulumi.set(__self__, "number_of_availability_zones", number_of_availability_zones)
        if nat_gateways is not None:
            pulumi.set(__self__, "nat_gateways", nat_gateways)

    @property
    @pulumi.getter(name="cidrBlock")
    def cidr_block(self) -> Optional[pulumi.Input[str]]:
        return pulumi.get(self, "cidr_block")

    @property
    @pulumi.getter(name="numberOfAvailabilityZones")
    def number_of_availability_zones(self) -> Optional[int]:
        return pulumi.get(self, "number_of_availability_zones")

    @property
    @pulumi.getter(name="natGateways")
    def nat_gateways(self) -> Optional["NatGatewayConfigurationArgs"]:
        return pulumi.get(self, "nat_gateways")


class Vpc(pulumi.ComponentResource):
    def __init__(__self__, resource_name: str, args: Optional[VpcArgs] = None,
                 opts: Optional[pulumi.ResourceOptions] = None):
        args = args or VpcArgs()
        opts = opts or pulumi.ResourceOptions()
        __props__ = VpcArgs.__new__(VpcArgs)
        __props__.__dict__["cidr_block"] = args.cidr_block
        __props__.__dict__["number_of_availability_zones"] = args.number_of_availability_zones
        __props__.__dict__["nat_gateways"] = args.nat_gateways
        __props__.__dict__["vpc_id"] = None
        __props__.__dict__["private_subnet_ids"] = None
        __props__.__dict__["public_subnet_ids"] = None
        super(Vpc, __self__).__init__("awsx:ec2:Vpc", resource_name, __props__, opts, remote=True)

    @property
    @pulumi.getter(name="vpcId")
    def vpc_id(self) -> pulumi.Output[str]:
        return pulumi.get(self, "vpc_id")

    @property
    @pulumi.getter(name="privateSubnetIds")
    def private_subnet_ids(self) -> pulumi.Output[Sequence[str]]:
        return pulumi.get(self, "private_subnet_ids")

    @property
    @pulumi.getter(name="publicSubnetIds")
    def public_subnet_ids(self) -> pulumi.Output[Sequence[str]]:
        return pulumi.get(self, "public_subnet_ids")
