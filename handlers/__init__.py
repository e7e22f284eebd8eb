"""Lambda code. Two parts:

    integration_blueprint.handlers.runtime    the reusable runtime: import it in your own handlers
    integration_blueprint.handlers.reference  the reference handlers the components deploy

No Pulumi here: this package ships inside the Lambda archive.
"""
