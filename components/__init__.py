"""Pulumi components for the integration blueprint; import a pattern from here."""
