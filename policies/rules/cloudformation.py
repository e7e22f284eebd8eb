"""CloudFormation and Cloud Control: resources a program creates through another resource's content
(a template, a desired state). Every rule judges what they declare (`_nested`); this rule says what
no rule could read, so nothing is created unseen."""

from ._nested import CONTAINERS, OPAQUE, check_nested_judged
from ._policy import ADVISORY, MEDIUM, rule
from ._values import resource_rule

nested_resources_judged = rule(
    "resource", name="nested-resources-judged", display_name="Resources created through templates are judged",
    description=("A CloudFormation stack or stack set's template and a Cloud Control resource's desired state "
                 "create resources the program does not declare: the pack judges the queues, mappings, IAM "
                 "policies and the other types its rules know by the same rules, and reports what it could not "
                 "read (a template given by URL or that does not parse, a transform, a nested stack, a type it "
                 "does not translate) as a check that could not run (`blueprint preview --strict` exits 2)."),
    level=ADVISORY, severity=MEDIUM, tags=["security", "reliability", "cloudformation"],
    remediation=("Declare the resources as Pulumi resources of their own (the pack then judges every setting), "
                 "or give the stack its template as templateBody in JSON or YAML without transforms."),
    url="https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/template-anatomy.html",
    validate=resource_rule(check_nested_judged, *CONTAINERS, *OPAQUE),
)

POLICIES = [nested_resources_judged]
