"""What a log line or a raised error may say about a failure and a record: never a payload value,
and never an unbounded one.

A team's `process_record` may raise with a payload value in its message (`int(payload["card"])`
raises "invalid literal for int() with base 10: '4111...'"): the runtime logs and re-raises a
failure by its type and where it was raised (`describe_error`), never by its message. Ids that come
from the record (event ids, partition keys, idempotency keys) are logged, but at most
LOG_VALUE_MAX_CHARS of each (`bounded`): a 300 KB event id must not make a 300 KB log line.
"""

from __future__ import annotations

import hashlib
import os
import traceback
from typing import Any

# Long enough for every id AWS generates (a Kinesis sequence number has up to 129 digits, a shard id
# 128 characters) and for readable business keys; a longer value keeps its start and a digest.
LOG_VALUE_MAX_CHARS = 256
# A reason this project wrote (PayloadFreeError) is short; bounded all the same.
ERROR_MESSAGE_MAX_CHARS = 1000


def bounded(value: Any, limit: int = LOG_VALUE_MAX_CHARS) -> Any:
    """`value` if it is not a string or is short; else its first `limit` characters, the length and a
    digest (two long values that differ only at the end stay distinguishable)."""
    if not isinstance(value, str) or len(value) <= limit:
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{value[:limit]}... ({len(value)} characters, sha256 {digest})"


class PayloadFreeError(Exception):
    """Base of the errors whose messages this project writes to name a record and a reason, never a
    payload value: `describe_error` keeps their message."""


def describe_error(exc: BaseException) -> str:
    """`exc`'s type and where it was raised (file:line in function); its message only when it is a
    PayloadFreeError (any other message may quote the payload)."""
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno} in {frames[-1].name}" if frames else ""
    message = f": {bounded(str(exc), ERROR_MESSAGE_MAX_CHARS)}" if isinstance(exc, PayloadFreeError) else ""
    return f"{type(exc).__name__}{where}{message}"
