"""Deterministic made-up values: every value the provider side invents is a hash of the resource's URN
and the property's path (or of a data source's arguments), so a program gets the same answers on
every run. Also the placeholder account, the partition and the one instant every timestamp is.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from integration_blueprint.preview.wire import UNKNOWN

PLACEHOLDER_ACCOUNT = "123456789012"
PARTITION = "aws"
# One fixed instant for every timestamp a provider reports (creation dates, last-modified...).
TIMESTAMP = "2024-01-01T00:00:00Z"


def digest(*parts: str) -> bytes:
    return hashlib.blake2b("\x00".join(parts).encode(), digest_size=32).digest()


def hex_id(seed: str, n: int) -> str:
    return digest(seed).hex()[:n]


def alnum(seed: str, n: int, alphabet: str = "abcdefghijklmnopqrstuvwxyz0123456789") -> str:
    hashed = digest(seed)
    return "".join(alphabet[b % len(alphabet)] for b in (hashed * (n // 32 + 1))[:n])


def upper_id(seed: str, n: int) -> str:
    return alnum(seed, n, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def uuid_of(seed: str) -> str:
    import uuid  # with platform, 5-10 ms of the gate's start, for the few data sources that answer one

    return str(uuid.UUID(bytes=digest(seed)[:16], version=4))


def ip_address(seed: str, private: bool) -> str:
    d = digest(seed)
    return f"10.0.{d[0]}.{d[1] % 254 + 1}" if private else f"54.{d[0] % 250 + 1}.{d[1]}.{d[2] % 254 + 1}"


def name_suffix(urn: str) -> str:
    """Pulumi's auto-name suffix: 7 random hex characters, here the start of the URN's SHA-256 (the
    offline engine's names have always been these)."""
    return hashlib.sha256(urn.encode()).hexdigest()[:7]


def known(value: Any) -> bool:
    return value is not None and value != UNKNOWN


def last_segment(value: Any) -> str:
    """A referenced resource's name from its id or ARN (`arn:...:cluster/name` -> `name`)."""
    text = str(value)
    return re.split(r"[/:]", text)[-1] if text.startswith("arn:") else text


def name_servers(seed: str) -> list[str]:
    """A hosted zone's delegation set: four Route 53 name servers, one per top-level domain."""
    return [f"ns-{n}.awsdns-{n % 64:02d}.{tld}" for n, tld in zip(digest(seed)[:4], ("com", "net", "org", "co.uk"))]
