"""Acme's naming convention: <team>-<service>-<stack>, and the tags every resource carries."""

MAX_NAME_LENGTH = 64


def resource_name(team: str, service: str, stack: str) -> str:
    return f"{team}-{service}-{stack}"[:MAX_NAME_LENGTH]


def tags(team: str, stack: str) -> dict:
    return {"team": team, "environment": stack, "managed-by": "pulumi"}
