"""The CI example (policy-preview.yml), shipped in the wheel: `blueprint init` writes it into a project."""
