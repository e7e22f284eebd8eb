# coding=utf-8
# Shaped like the pulumi_aws_apigateway SDK (trimmed): RestAPI is a remote component that the
# aws-apigateway plugin constructs, not this process.
from ._inputs import RouteArgs
from .rest_api import RestAPI, RestAPIArgs

__all__ = ["RestAPI", "RestAPIArgs", "RouteArgs"]
