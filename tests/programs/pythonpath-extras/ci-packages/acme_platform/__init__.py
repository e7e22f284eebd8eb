"""Platform helpers a CI job puts on PYTHONPATH (never installed into a virtualenv)."""

OWNER_TAGS = {"owner": "ledger", "data-classification": "confidential"}


def retention_seconds(days: int) -> int:
    return days * 24 * 60 * 60
