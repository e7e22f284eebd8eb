# coding=utf-8
# Shaped like the pulumi_awsx SDK pulumi generates (trimmed to what this program uses): each class
# is a remote component that the awsx plugin constructs, not this process.
from . import ec2

__all__ = ["ec2"]
