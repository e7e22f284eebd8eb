# coding=utf-8
# Shaped like the pulumi_awsx SDK pulumi generates (trimmed): each class is a remote component.
from . import ecr, ecs, lb

__all__ = ["ecr", "ecs", "lb"]
