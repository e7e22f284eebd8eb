"""Stack settings, checked once, before any resource is declared."""
from dataclasses import dataclass

import pulumi

ENVIRONMENTS = ("dev", "staging", "prod")


@dataclass(frozen=True)
class Settings:
    environment: str
    export_hour: int


def load() -> Settings:
    config = pulumi.Config()
    environment = config.require("environment")
    if environment not in ENVIRONMENTS:
        raise ValueError(f"billing-exports:environment is {environment!r}; use one of {', '.join(ENVIRONMENTS)}")
    return Settings(environment=environment, export_hour=config.require_int("exportHour"))


SETTINGS = load()
