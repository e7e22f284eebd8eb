"""A Distributed Map child's batch of items (ItemBatcher: {"Items": [...], "BatchInput": {...}}),
processed item by item so one failing item neither fails nor repeats its batch-mates.

`process_batch(items, process_item)` runs `process_item` on every item and returns their results
when all succeeded. When some failed, it raises once every item has been tried:

- TransientServiceError (retry.TRANSIENT_ERROR_NAME) as soon as an item's failure is transient
  (outlived the in-handler retries; the items after it are not tried, they would fail the same way):
  the Map task's Retry runs the batch again later; the items that succeeded are answered from their
  idempotency record that time (no effect twice), the others are tried again;
- BatchItemsFailed otherwise: no Retry lists it, so the child fails at once and its batch-mates,
  already done, are not run again.

Either error's message is JSON naming the failed items by their index in the batch, with the error
type of each (never an item's values: they may be personal data):
{"failedItems": [3, 17], "errors": {"3": "InvalidInvoiceError"}}. Step Functions puts Lambda's
error payload in the child's Cause, and the ResultWriter keeps it beside the child's input, so the
runbook's redrive (`blueprint redrive map`, integration_blueprint.redrive.map_items) re-runs just
those items.

Why not Powertools' batch utility: its BatchProcessor answers an event source mapping's partial
batch response (`batchItemFailures` by message id, for SQS, Kinesis and DynamoDB Streams records);
a Step Functions child has no such contract (it succeeds or fails as a whole), so what it needs is
the failure above, which the Map counts and the ResultWriter keeps.

A failed child counts every item of its batch toward the Map's tolerated failures (AWS's accounting):
a batch of N with one invalid item adds N failed items.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from integration_blueprint.handlers.runtime.redaction import PayloadFreeError
from integration_blueprint.handlers.runtime.retry import TransientServiceError, transient_cause

# The error a child fails with when items of its batch failed for good (not retried).
BATCH_ITEMS_FAILED_ERROR = "BatchItemsFailed"
FAILED_ITEMS_FIELD = "failedItems"


class BatchItemsFailed(PayloadFreeError):
    """Items of the batch failed for good; the message names them (indexes in the batch)."""


def failure_message(errors: dict[int, BaseException]) -> str:
    return json.dumps({FAILED_ITEMS_FIELD: sorted(errors),
                       "errors": {str(i): type(e).__name__ for i, e in sorted(errors.items())}})


def process_batch(items: list, process_item: Callable[[Any], Any]) -> list:
    """Every item's result, or the failure described in the module docstring."""
    if not isinstance(items, list):
        raise BatchItemsFailed(json.dumps({FAILED_ITEMS_FIELD: [], "errors": {"batch": "Items is not a list"}}))
    results: list = []
    errors: dict[int, BaseException] = {}
    for index, item in enumerate(items):
        try:
            results.append(process_item(item))
        except Exception as exc:  # noqa: BLE001 - reported below, by index and type
            errors[index] = exc
            if isinstance(exc, TransientServiceError) or transient_cause(exc) is not None:
                # A dependency still failing after the in-handler retries: the items after it would
                # spend the invocation's time failing the same way. The batch is retried later; the
                # items not tried are reported with it.
                errors.update({later: exc for later in range(index + 1, len(items))})
                raise TransientServiceError(failure_message(errors)) from exc
    if not errors:
        return results
    raise BatchItemsFailed(failure_message(errors))


def failed_indexes(cause: str) -> list[int] | None:
    """The failed items' indexes from a child's Cause (Lambda's error payload holding one of the
    messages above); None when the Cause names none (a crash, a timeout: the whole batch failed)."""
    try:
        payload = json.loads(cause)
        message = json.loads(payload.get("errorMessage", "")) if isinstance(payload, dict) else None
    except (TypeError, ValueError):
        return None
    indexes = message.get(FAILED_ITEMS_FIELD) if isinstance(message, dict) else None
    if not isinstance(indexes, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in indexes):
        return None
    return indexes
