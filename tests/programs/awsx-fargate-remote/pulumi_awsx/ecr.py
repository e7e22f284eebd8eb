# coding=utf-8
from typing import Optional

import pulumi


@pulumi.input_type
class RepositoryArgs:
    def __init__(__self__, *, force_delete: Optional[bool] = None):
        if force_delete is not None:
            pulumi.set(__self__, "force_delete", force_delete)

    @property
    @pulumi.getter(name="forceDelete")
    def force_delete(self) -> Optional[bool]:
        return pulumi.get(self, "force_delete")


class Repository(pulumi.ComponentResource):
    def __init__(__self__, resource_name: str, args: Optional[RepositoryArgs] = None,
                 opts: Optional[pulumi.ResourceOptions] = None):
        args = args or RepositoryArgs()
        __props__ = RepositoryArgs.__new__(RepositoryArgs)
        __props__.__dict__["force_delete"] = args.force_delete
        __props__.__dict__["url"] = None
        super(Repository, __self__).__init__("awsx:ecr:Repository", resource_name, __props__, opts, remote=True)

    @property
    @pulumi.getter
    def url(self) -> pulumi.Output[str]:
        return pulumi.get(self, "url")


@pulumi.input_type
class ImageArgs:
    def __init__(__self__, *, repository_url: pulumi.Input[str], context: Optional[str] = None,
                 platform: Optional[str] = None):
        pulumi.set(__self__, "repository_url", repository_url)
        if context is not None:
            pulumi.set(__self__, "context", context)
        if platform is not None:
            pulumi.set(__self__, "platform", platform)

    @property
    @pulumi.getter(name="repositoryUrl")
    def repository_url(self) -> pulumi.Input[str]:
        return pulumi.get(self, "repository_url")

    @property
    @pulumi.getter
    def context(self) -> Optional[str]:
        return pulumi.get(self, "context")

    @property
    @pulumi.getter
    def platform(self) -> Optional[str]:
        return pulumi.get(self, "platform")


class Image(pulumi.ComponentResource):
    def __init__(__self__, resource_name: str, args: ImageArgs, opts: Optional[pulumi.ResourceOptions] = None):
        __props__ = ImageArgs.__new__(ImageArgs)
        __props__.__dict__["repository_url"] = args.repository_url
        __props__.__dict__["context"] = args.context
        __props__.__dict__["platform"] = args.platform
        __props__.__dict__["image_uri"] = None
        super(Image, __self__).__init__("awsx:ecr:Image", resource_name, __props__, opts, remote=True)

    @property
    @pulumi.getter(name="imageUri")
    def image_uri(self) -> pulumi.Output[str]:
        return pulumi.get(self, "image_uri")
