"""integration_blueprint: four AWS integration patterns as Pulumi components, the Lambda handler
runtime they deploy, the CrossGuard policy pack that keeps them (and hand-written resources) safe,
and a local engine that previews and drills them without the Pulumi CLI or an AWS account.

One installed namespace, so it never shadows a team's own `components`, `handlers` or `blueprint`
modules. Its parts, each with its own curated API (see each package's docstring):

    integration_blueprint.components         the four ComponentResources and their building blocks
    integration_blueprint.handlers.runtime   the reusable Lambda runtime a team imports in its own code
    integration_blueprint.handlers.reference the reference handlers the components deploy by default
    integration_blueprint.policies           the CrossGuard policy pack (a folder `pulumi preview
                                             --policy-pack` runs) and its rules
    integration_blueprint.core               what every part shares: AWS's numbers (aws_limits), the
                                             project's conventions, the patch registry, the catalogue
                                             of AWS managed policies
    integration_blueprint.program            the blueprint program's stack-config reader
    integration_blueprint.preview            offline preview: recording engine -> policy analyzer
    integration_blueprint.sandbox            local AWS sandbox: emulator, event source mappings
    integration_blueprint.drill              the reliability drill (drill -> sandbox -> recording)
    integration_blueprint.cli                the `blueprint` command

This module imports nothing: it ships inside every Lambda archive with the handlers.
"""

__version__ = "0.1.0"
