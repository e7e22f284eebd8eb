"""The tags every resource of the organisation carries."""


def standard_tags(service: str) -> dict:
    return {"service": service, "owner": "platform", "managed-by": "pulumi"}
