"""Transient-error classification and in-handler retries with exponential backoff and full jitter.

Only transient failures are retried here (throttling, transaction conflicts, 5xx, dropped
connections): they usually clear within milliseconds, and retrying in-process is far cheaper than a
redelivery. Semantic failures (bad payload, unknown tenant) are never retried: retrying cannot fix
them, so they propagate at once and reach the DLQ through the queue's redrive policy.
"""

import random
import time
from typing import Callable, Optional, TypeVar

from botocore.exceptions import ClientError, ConnectionClosedError, EndpointConnectionError, ReadTimeoutError

T = TypeVar("T")

TRANSIENT_ERROR_CODES = frozenset({
    "ThrottlingException", "Throttling", "ThrottledException", "RequestThrottled",
    "ProvisionedThroughputExceededException", "RequestLimitExceeded", "TooManyRequestsException",
    "TransactionConflictException", "TransactionInProgressException",
    "InternalServerError", "InternalFailure", "InternalError", "ServiceUnavailable",
    "ServiceUnavailableException", "SlowDown", "KMSThrottlingException",
})

DEFAULT_ATTEMPTS = 4
DEFAULT_BASE_DELAY_SECONDS = 0.05
DEFAULT_MAX_DELAY_SECONDS = 2.0


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, (EndpointConnectionError, ConnectionClosedError, ReadTimeoutError)):
        return True
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        return error.get("Code") in TRANSIENT_ERROR_CODES or status >= 500
    return False


def full_jitter_delay(attempt: int, base: float = DEFAULT_BASE_DELAY_SECONDS,
                      cap: float = DEFAULT_MAX_DELAY_SECONDS, rng: Callable[[], float] = random.random) -> float:
    """AWS's "full jitter": uniform in [0, min(cap, base * 2**attempt)]."""
    return rng() * min(cap, base * (2 ** attempt))


def call_with_retries(fn: Callable[[], T], *, attempts: int = DEFAULT_ATTEMPTS,
                      sleep: Callable[[float], None] = time.sleep,
                      on_retry: Optional[Callable[[BaseException, int], None]] = None) -> T:
    """Call `fn`; retry transient failures up to `attempts` calls in all, then re-raise."""
    for attempt in range(attempts):
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - classified right below
            if not is_transient(exc) or attempt == attempts - 1:
                raise
            if on_retry is not None:
                on_retry(exc, attempt + 1)
            sleep(full_jitter_delay(attempt))
    raise AssertionError("unreachable")
