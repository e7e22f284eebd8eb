"""Lambda's asynchronous invocation, run locally: what happens after Scheduler (or EventBridge, SNS,
S3) hands an event to Lambda.

Documented semantics it follows (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html
and invocation-async-retain-records.html):
- a function error (an exception, a crash or timeout) is retried up to MaximumRetryAttempts times
  (0-2, default 2), about one minute before the first retry and two minutes before the second;
- an event older than MaximumEventAgeInSeconds (default 6 hours) is not retried any more;
- an event that failed every attempt (condition RetriesExhausted) or grew too old (EventAgeExceeded)
  goes to the on-failure destination if there is one, as the invocation record: version,
  timestamp, requestContext {requestId, functionArn, condition, approximateInvokeCount},
  requestPayload (the original event), responseContext {statusCode, executedVersion,
  functionError} and responsePayload (the last error); without a destination it is dropped.

Time compression (sandbox COMPRESSION "lambda_async_retries"): the retry delays are not waited out;
the event's age advances by them, so the maximum event age still cuts retries where AWS would.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Optional

from integration_blueprint.core import aws_limits
from integration_blueprint.sandbox.errors import FunctionCrashed, error_type

# What Lambda reports for an invocation whose instance died (timeout, out of memory).
_CRASH_MESSAGE = "RequestId: {request_id} Error: Runtime exited before completing request ({detail})"


@dataclass
class AsyncInvokeSettings:
    """A function's FunctionEventInvokeConfig; Lambda's defaults when it has none."""

    maximum_retry_attempts: int = aws_limits.LAMBDA_ASYNC_RETRY_ATTEMPTS_MAX
    maximum_event_age_seconds: int = aws_limits.LAMBDA_ASYNC_EVENT_AGE_MAX_SECONDS
    on_failure_queue_url: Optional[str] = None


@dataclass
class AsyncResult:
    request_id: str
    succeeded: bool
    attempts: int
    condition: Optional[str] = None  # why it failed for good
    destination_record: Optional[dict] = None  # what was sent to the on-failure destination
    response: Any = None


@dataclass
class AsyncInvocation:
    """One function's asynchronous entry point."""

    function_arn: str
    handler: Callable[[dict, Any], Any]
    settings: AsyncInvokeSettings
    sqs: Any = None  # boto3 SQS client, for the on-failure destination
    context_factory: Optional[Callable[[], Any]] = None
    results: list = field(default_factory=list)

    def __call__(self, event: dict, *, received_at: Optional[datetime] = None) -> AsyncResult:
        request_id = str(uuid.uuid4())
        received_at = received_at or datetime.now(timezone.utc)
        delays = aws_limits.LAMBDA_ASYNC_RETRY_DELAYS_SECONDS
        age = 0
        attempts = 0
        condition = aws_limits.LAMBDA_ASYNC_CONDITION_RETRIES_EXHAUSTED
        error: dict = {}
        for attempt in range(1 + self.settings.maximum_retry_attempts):
            if attempt:
                age += delays[min(attempt - 1, len(delays) - 1)]
                if age > self.settings.maximum_event_age_seconds:
                    condition = aws_limits.LAMBDA_ASYNC_CONDITION_EVENT_AGE_EXCEEDED
                    break
            attempts += 1
            # Each attempt gets the event as sent: it crosses a JSON boundary, as into a real function.
            try:
                response = self.handler(json.loads(json.dumps(event)),
                                        self.context_factory() if self.context_factory else None)
            except FunctionCrashed as exc:
                error = {"errorMessage": _CRASH_MESSAGE.format(request_id=request_id, detail=exc)}
                continue
            except Exception as exc:  # noqa: BLE001 - Lambda retries any function error
                error = {"errorMessage": str(exc), "errorType": error_type(exc)}
                continue
            result = AsyncResult(request_id, True, attempts, response=response)
            self.results.append(result)
            return result
        record = {
            "version": "1.0",
            "timestamp": (received_at + timedelta(seconds=age)).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "requestContext": {"requestId": request_id, "functionArn": f"{self.function_arn}:$LATEST",
                               "condition": condition, "approximateInvokeCount": attempts},
            "requestPayload": event,
            "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
            "responsePayload": error,
        }
        if self.settings.on_failure_queue_url:
            self.sqs.send_message(QueueUrl=self.settings.on_failure_queue_url, MessageBody=json.dumps(record))
        result = AsyncResult(request_id, False, attempts, condition=condition,
                             destination_record=record if self.settings.on_failure_queue_url else None)
        self.results.append(result)
        return result
