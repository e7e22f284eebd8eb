"""Installed into the project's venv only (pip install -e ./vendor)."""


def queue_name(purpose: str) -> str:
    return f"payouts-{purpose}"
