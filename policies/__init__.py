"""The blueprint's CrossGuard policy pack. This folder is the pack itself (PulumiPolicy.yaml,
__main__.py, requirements.txt): `pulumi preview --policy-pack <this folder>` runs it, and
`blueprint preview` starts it the same way. The rules are in `integration_blueprint.policies.rules`."""
