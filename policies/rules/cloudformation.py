"""CloudFormation and Cloud Control: resources a program creates through another resource's content
(a template, a desired state). Every rule judges what they declare (`_nested`); this rule says what
no rule could read, so nothing is created unseen."""

from ._nested import CONTAINERS, OPAQUE, check_nested_judged
from ._policy import rule
from ._values import resource_rule

nested_resources_judged = rule("resource", "nested-resources-judged", resource_rule(check_nested_judged, *CONTAINERS, *OPAQUE))

POLICIES = [nested_resources_judged]
