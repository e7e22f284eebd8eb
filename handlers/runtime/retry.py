"""Transient-error classification and in-handler retries with exponential backoff and full jitter,
bounded by the invocation's time budget.

Only transient failures are retried here (throttling, transaction conflicts, 5xx, dropped
connections): they usually clear within milliseconds, and retrying in-process is far cheaper than a
redelivery. Semantic failures (bad payload, unknown tenant) are never retried: retrying cannot fix
them, so they propagate at once and reach the DLQ through the queue's redrive policy.

Time budget: a handler wraps its invocation in `time_budget(context)`. Inside it, a retry whose
backoff would end within TIME_RESERVE of the Lambda timeout is not attempted: the last error is
raised instead, so the handler still has time to report the failure (a batch item failure, a parked
message) rather than being killed mid-way, which would redeliver work it already did. Outside a
budget (tests, scripts) only the attempt count bounds the retries.

A failure that is still transient after the retries is raised as `TransientServiceError`
(`raise_transient`): its name is what a caller that retries by error name (a Step Functions task's
Retry, see TRANSIENT_ERROR_NAME) can match, since the original botocore error reaches it only as a
generic `ClientError`.
"""

import random
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, Optional, TypeVar

from botocore.exceptions import ClientError, ConnectionClosedError, EndpointConnectionError, ReadTimeoutError

from integration_blueprint.handlers.runtime.redaction import PayloadFreeError

T = TypeVar("T")

TRANSIENT_ERROR_CODES = frozenset({
    "ThrottlingException", "Throttling", "ThrottledException", "RequestThrottled",
    "ProvisionedThroughputExceededException", "RequestLimitExceeded", "TooManyRequestsException",
    "TransactionConflictException", "TransactionInProgressException",
    "InternalServerError", "InternalFailure", "InternalError", "ServiceUnavailable",
    "ServiceUnavailableException", "SlowDown", "KMSThrottlingException",
})

# 8 calls: at a 40% transient failure rate per call, 0.4**8 = 0.07% still fail (then the caller
# retries later, by receive or by the Map task's Retry); backoff adds at most ~5 s (full jitter, capped).
DEFAULT_ATTEMPTS = 8
DEFAULT_BASE_DELAY_SECONDS = 0.05
DEFAULT_MAX_DELAY_SECONDS = 2.0
# Time kept back from the invocation's remaining time for reporting a failure: at most this much,
# and at most TIME_RESERVE_FRACTION of what remained when the invocation started (a short budget,
# such as the sandbox's compressed one, would otherwise leave no time to retry at all).
TIME_RESERVE_SECONDS = 1.0
TIME_RESERVE_FRACTION = 0.1


class TransientServiceError(PayloadFreeError, RuntimeError):
    """An AWS call kept failing with a transient error (throttling, 5xx) after the in-handler
    retries and within the time budget. Retrying later can succeed: callers should retry it."""


# The error name a Step Functions Retry (ErrorEquals) matches for TransientServiceError.
TRANSIENT_ERROR_NAME = TransientServiceError.__name__

_deadline: ContextVar[Optional[float]] = ContextVar("retry_deadline", default=None)
# The fraction of a computed backoff actually waited: 1 on AWS; inside compressed_time (a runner
# that compresses time, such as the local sandbox) the handler's waits shrink as botocore's do.
_wait_scale: ContextVar[float] = ContextVar("retry_wait_scale", default=1.0)
# Set by compressed_time: the factor by which the runner's Lambda context compresses the remaining time.
_time_compression: ContextVar[float] = ContextVar("retry_time_compression", default=1.0)


@contextmanager
def compressed_time(scale: float) -> Iterator[None]:
    """For a runner that compresses a function's time by `scale` (0 < scale <= 1): the Lambda
    context it passes reports `scale` of the remaining time. Retry budgets in this block (this
    thread) count the uncompressed time, and backoff waits last `scale` of their length. On AWS
    nothing calls it: the budget is the context's remaining time, the waits are whole."""
    if not 0 < scale <= 1:
        raise ValueError(f"a time compression is a factor in (0, 1], not {scale}")
    token = _time_compression.set(scale)
    try:
        yield
    finally:
        _time_compression.reset(token)


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, TransientServiceError):
        return True
    if isinstance(exc, (EndpointConnectionError, ConnectionClosedError, ReadTimeoutError)):
        return True
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        return error.get("Code") in TRANSIENT_ERROR_CODES or status >= 500
    return False


def error_code(exc: BaseException) -> str:
    """The AWS error code of a ClientError, else the exception's class name (for logs)."""
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Code") or type(exc).__name__)
    return type(exc).__name__


def full_jitter_delay(attempt: int, base: float = DEFAULT_BASE_DELAY_SECONDS,
                      cap: float = DEFAULT_MAX_DELAY_SECONDS, rng: Callable[[], float] = random.random) -> float:
    """AWS's "full jitter": uniform in [0, min(cap, base * 2**attempt)]."""
    return rng() * min(cap, base * (2 ** attempt))


@contextmanager
def time_budget(context: Any) -> Iterator[None]:
    """Retries in this block (this thread) end before `context`, a Lambda context, runs out of time.
    Without a context (None, or no get_remaining_time_in_millis) the block has no budget."""
    remaining_ms = getattr(context, "get_remaining_time_in_millis", None)
    if remaining_ms is None:
        yield
        return
    remaining = remaining_ms() / 1000
    # Under compressed_time (the local sandbox) the context reports a compressed remaining time, so
    # Powertools' INPROGRESS records expire quickly, while a handler's work runs at real speed:
    # budget retries on the uncompressed time. Backoff waits are compressed by the same factor, as
    # the sandbox compresses botocore's; the budget counts the time they really take.
    scale = _time_compression.get()
    remaining /= scale
    reserve = min(TIME_RESERVE_SECONDS, remaining * TIME_RESERVE_FRACTION)
    token = _deadline.set(time.monotonic() + remaining - reserve)
    scale_token = _wait_scale.set(scale)
    try:
        yield
    finally:
        _wait_scale.reset(scale_token)
        _deadline.reset(token)


def seconds_left() -> Optional[float]:
    """Seconds until the current budget's deadline (None: no budget)."""
    deadline = _deadline.get()
    return None if deadline is None else deadline - time.monotonic()


def call_with_retries(fn: Callable[[], T], *, attempts: int = DEFAULT_ATTEMPTS,
                      sleep: Optional[Callable[[float], None]] = None,
                      on_retry: Optional[Callable[[BaseException, int], None]] = None) -> T:
    """Call `fn`; retry transient failures up to `attempts` calls in all and within the current
    time budget, then re-raise the last error. `sleep` defaults to time.sleep, looked up at each
    call (so a test can patch it)."""
    for attempt in range(attempts):
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - classified right below
            if not is_transient(exc) or attempt == attempts - 1:
                raise
            delay = full_jitter_delay(attempt)
            left = seconds_left()
            if left is not None and delay >= left:
                raise  # no time for another attempt: report the failure while we still can
            if on_retry is not None:
                on_retry(exc, attempt + 1)
            (sleep or time.sleep)(delay * _wait_scale.get())
    raise AssertionError("unreachable")


def transient_cause(exc: Optional[BaseException]) -> Optional[BaseException]:
    """`exc` or the first exception in its cause chain that is transient (libraries such as
    Powertools wrap the botocore error in their own), else None."""
    seen = 0
    while exc is not None and seen < 10:
        if is_transient(exc):
            return exc
        exc, seen = exc.__cause__, seen + 1
    return None


def raise_transient(exc: BaseException, what: str) -> None:
    """If `exc` is (or was caused by) a transient failure that outlived the retries, raise it as
    TransientServiceError naming `what` failed and the AWS error code (never a payload); any other
    error is left to the caller."""
    cause = transient_cause(exc)
    if cause is not None and not isinstance(exc, TransientServiceError):
        raise TransientServiceError(f"{what} kept failing with a transient error ({error_code(cause)}) after "
                                    "the in-handler retries; retry it later") from exc
