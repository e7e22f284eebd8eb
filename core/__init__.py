"""What every part of the package shares, and nothing else: AWS's numbers, the project's own
conventions, the registry of third-party patches and the catalogue of AWS managed policies.

    aws_limits            AWS's defaults, limits and prices, each with its documentation source
    conventions           the project's own choices that components, handlers and the pack share
    patches               the one registry of changes to third-party libraries (versions, kind, figure)
    aws_managed_policies  the AWS managed policies the pack judges, and what each grants

These modules import only each other and the standard library (patches also `packaging`), never
the CLI, the preview, the sandbox or the components: Lambda handlers (aws_limits and conventions
ship inside every Lambda archive) and the policy pack import them as they are.
"""
