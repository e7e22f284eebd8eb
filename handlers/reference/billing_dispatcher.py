"""Monthly billing dispatcher, started by an EventBridge Scheduler cron.

It only enumerates and enqueues: one FIFO message per billable employee, grouped per tenant and
month, deduplicated on the deterministic idempotency key. Charging is the consumer's job. Running
it twice for a month is safe: within SQS's 5-minute window FIFO deduplication drops the resends,
and after it the consumer's conditional ledger write refuses to charge a key twice.
"""

import time
from datetime import datetime, timezone
from decimal import Decimal
from typing import Iterable, Iterator, Optional

import boto3
from aws_lambda_powertools import Logger

from integration_blueprint.core.aws_limits import SQS_SEND_BATCH_MAX_ENTRIES
from integration_blueprint.handlers.runtime import config
from integration_blueprint.handlers.runtime.billing import (
    ACCOUNTS_SK,
    EMPLOYEE_SK_PREFIX,
    MONTH_PATTERN,
    Charge,
    InvalidCharge,
)
from integration_blueprint.handlers.runtime.redaction import PayloadFreeError, bounded, describe_error
from integration_blueprint.handlers.runtime.retry import call_with_retries, full_jitter_delay, time_budget

logger = Logger(service=config.service_name("billing-dispatcher"))

SEND_ATTEMPTS = 5


class DispatchIncomplete(RuntimeError):
    """Some charges could not be enqueued. Raised so Scheduler retries the run (safe: see above)."""


def billing_month(event: dict, now: Optional[datetime] = None) -> str:
    """The month to bill: `event["month"]` if given, else the month before the schedule's
    scheduled time (a run on 1 July bills June). Using the scheduled time, not the clock, keeps a
    retried or late run on the same month."""
    if event.get("month"):
        month = event["month"]
        if not isinstance(month, str) or not MONTH_PATTERN.fullmatch(month):
            raise ValueError(f"event month {month!r} is not YYYY-MM")
        return month
    scheduled = event.get("scheduled_time")
    when = (datetime.fromisoformat(scheduled.replace("Z", "+00:00")) if scheduled
            else (now or datetime.now(timezone.utc)))
    year, month = (when.year, when.month - 1) if when.month > 1 else (when.year - 1, 12)
    return f"{year:04d}-{month:02d}"


class InvalidAccountRow(PayloadFreeError, ValueError):
    """An employee row of the accounts store that cannot be billed as it is; the message names the
    field and what it must be, never its value."""


def is_billable(item: dict) -> bool:
    """The row's `billable` flag: absent means billable; anything but a boolean is refused (the
    string "false" is truthy, and billing a row its owner meant to switch off is the worse mistake)."""
    value = item.get("billable", True)
    if not isinstance(value, bool):
        raise InvalidAccountRow("billable must be a boolean (true or false), not a string or number")
    return value


def monthly_amount(item: dict) -> int:
    """The row's `monthly_amount`: a DynamoDB number holding a whole number of minor units. A string
    ("250") or a fraction (12.7) is refused: truncating it would bill an amount nobody set."""
    if "monthly_amount" not in item:
        raise InvalidAccountRow("monthly_amount is missing")
    value = item["monthly_amount"]
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise InvalidAccountRow("monthly_amount must be a number (minor currency units), not a string")
    if isinstance(value, Decimal) and (not value.is_finite() or value != value.to_integral_value()):
        raise InvalidAccountRow("monthly_amount must be a whole number of minor currency units")
    return int(value)


def billable_charges(table, month: str) -> Iterator[Charge]:
    """Every billable employee row of the accounts store, as that month's charge."""
    kwargs: dict = {}
    while True:
        page = call_with_retries(lambda: table.scan(**kwargs))
        for item in page.get("Items", []):
            if not str(item.get(ACCOUNTS_SK, "")).startswith(EMPLOYEE_SK_PREFIX):
                continue
            try:
                if not is_billable(item):
                    continue
                for field in ("tenant", "employee", "currency"):
                    if field not in item:
                        raise InvalidAccountRow(f"{field} is missing")
                charge = Charge(tenant=item["tenant"], employee=item["employee"], month=month,
                                amount=monthly_amount(item), currency=item["currency"])
                # Validate exactly as the consumer will: a charge it would reject must not
                # become a poison message that holds its tenant's group back.
                yield Charge.from_message(charge.to_message())
            except (InvalidAccountRow, InvalidCharge, ValueError, TypeError) as exc:
                # One broken account row must not stop everyone else's billing; it is logged with
                # its keys (bounded) and the reason, never a field's value, so it can be fixed and
                # billed by a re-run.
                logger.error("skipping malformed account row", extra={
                    "tenant": bounded(str(item.get("tenant"))), "sk": bounded(str(item.get(ACCOUNTS_SK))),
                    "error": describe_error(exc)})
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def enqueue(sqs, queue_url: str, charges: Iterable[Charge], sleep=time.sleep) -> dict:
    """Send in batches of 10; entries SQS rejects as its own fault are resent with backoff."""
    sent = failed = 0
    batch: list[Charge] = []

    def flush():
        nonlocal sent, failed
        pending = {str(i): c for i, c in enumerate(batch)}
        for attempt in range(SEND_ATTEMPTS):
            entries = [{"Id": i, "MessageBody": c.to_message(), "MessageGroupId": c.message_group_id,
                        "MessageDeduplicationId": c.deduplication_id} for i, c in pending.items()]
            response = call_with_retries(lambda: sqs.send_message_batch(QueueUrl=queue_url, Entries=entries))
            sent += len(response.get("Successful", []))
            retry = {}
            for failure in response.get("Failed", []):
                charge = pending[failure["Id"]]
                if failure.get("SenderFault"):
                    failed += 1
                    logger.error("charge rejected by SQS", extra={
                        "idempotency_key": charge.idempotency_key, "code": failure.get("Code"),
                        "reason": failure.get("Message")})
                else:
                    retry[failure["Id"]] = charge
            if not retry:
                break
            pending = retry
            sleep(full_jitter_delay(attempt))
        else:
            failed += len(pending)
            for charge in pending.values():
                logger.error("charge not enqueued after retries", extra={"idempotency_key": charge.idempotency_key})
        batch.clear()

    for charge in charges:
        batch.append(charge)
        if len(batch) == SQS_SEND_BATCH_MAX_ENTRIES:
            flush()
    if batch:
        flush()
    return {"sent": sent, "failed": failed}


@logger.inject_lambda_context
def lambda_handler(event, context):
    month = billing_month(event or {})
    table = boto3.resource("dynamodb").Table(config.required(config.ACCOUNTS_TABLE_NAME, set_by="FifoBillingQueue"))
    sqs = boto3.client("sqs")
    queue_url = config.required(config.CHARGE_QUEUE_URL, set_by="FifoBillingQueue")
    with time_budget(context):  # retries end in time to raise DispatchIncomplete, not to be killed
        result = enqueue(sqs, queue_url, billable_charges(table, month))
    logger.info("dispatch finished", extra={"month": month, **result})
    if result["failed"]:
        raise DispatchIncomplete(f"{result['failed']} charges for {month} were not enqueued; "
                                 "the run is retried and already-sent charges are deduplicated")
    return {"month": month, **result}


__all__ = ["lambda_handler", "billing_month", "billable_charges", "enqueue", "InvalidAccountRow", "InvalidCharge"]
