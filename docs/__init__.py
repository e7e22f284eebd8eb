"""The project's documentation, shipped in the package (`integration_blueprint.docs`) so a team that
installed the wheel reads the pages the CLI points to with `blueprint docs <topic>`
(integration_blueprint.documentation). The pages are Markdown files; this package holds no code."""
