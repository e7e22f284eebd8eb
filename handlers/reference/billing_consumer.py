"""Monthly billing consumer: applies each charge exactly once, in order per tenant and month.

Exactly-once comes from one conditional write: the ledger row keyed by the charge's idempotency key
(pk tenant, sk `charge#<key>`) *is* the charge and its claim at once. A new charge costs one write;
a duplicate costs one failed conditional write and is a success. No "claimed but not charged"
state can exist, so a crash at any point is safe to redeliver.

Powertools' idempotency utility is not used for the charge itself: it needs an INPROGRESS write
and a COMPLETED update around the work (3 writes per new charge, see
benchmarks/idempotency_cost.py), and its INPROGRESS record can outlive a crashed invocation,
blocking the redelivery until it expires.

The same key with another amount (or employee, month, currency) is a conflicting duplicate
(runtime/conflicts.py): the ledger row the conditional write found (ReturnValuesOnConditionCheckFailure)
is compared with the charge, since there is no Powertools record whose payload validation could;
the message fails with the reason logged, and SQS's redrive parks it in the DLQ.

Batch handling is Powertools' SqsFifoPartialProcessor with skip_group_on_error: a failed record
fails the rest of its message group in this batch (so nothing in that group runs ahead of it),
while other groups go on.
"""

import time
from datetime import datetime, timezone

import boto3
from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from botocore.exceptions import ClientError

from integration_blueprint.core.conventions import BILLING_LEDGER_TTL_DEFAULT_DAYS
from integration_blueprint.handlers.runtime import config
from integration_blueprint.handlers.runtime.billing import (
    ACCOUNTS_PK,
    ACCOUNTS_SK,
    TENANT_SK,
    Charge,
    InvalidCharge,
    UnknownTenant,
)
from integration_blueprint.handlers.runtime.conflicts import ConflictingDuplicate
from integration_blueprint.handlers.runtime.retry import call_with_retries, time_budget

logger = Logger(service=config.service_name("billing-consumer"))

# A tenant that exists stays valid for this long in a warm container: saves one read per charge.
TENANT_CACHE_SECONDS = 300


class Ledger:
    """The billing ledger table and the accounts store the consumer checks tenants against."""

    def __init__(self, ledger_table: str, accounts_table: str, ttl_days: int, client=None):
        self.client = client or boto3.client("dynamodb")
        self.ledger_table = ledger_table
        self.accounts_table = accounts_table
        self.ttl_seconds = ttl_days * 86_400
        self._known_tenants: dict[str, float] = {}

    def require_tenant(self, tenant: str) -> None:
        now = time.monotonic()
        if self._known_tenants.get(tenant, 0) > now:
            return
        item = call_with_retries(lambda: self.client.get_item(
            TableName=self.accounts_table,
            Key={ACCOUNTS_PK: {"S": tenant}, ACCOUNTS_SK: {"S": TENANT_SK}},
            ProjectionExpression="#s", ExpressionAttributeNames={"#s": "status"})).get("Item")
        if not item or item.get("status", {}).get("S") != "active":
            raise UnknownTenant(f"tenant {tenant!r} is not an active tenant in the accounts store")
        self._known_tenants[tenant] = now + TENANT_CACHE_SECONDS

    def charge(self, charge: Charge, message_id: str) -> bool:
        """Write the charge if its key was never charged. True: charged now; False: already was."""
        now = int(time.time())
        try:
            call_with_retries(lambda: self.client.put_item(
                TableName=self.ledger_table,
                Item={
                    "pk": {"S": charge.tenant},
                    "sk": {"S": f"charge#{charge.idempotency_key}"},
                    "employee": {"S": charge.employee},
                    "month": {"S": charge.month},
                    "amount": {"N": str(charge.amount)},
                    "currency": {"S": charge.currency},
                    "message_id": {"S": message_id},
                    "charged_at": {"S": datetime.now(timezone.utc).isoformat()},
                    "ttl": {"N": str(now + self.ttl_seconds)},
                },
                ConditionExpression="attribute_not_exists(sk)",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            ), on_retry=lambda exc, attempt: logger.warning(
                "transient error, retrying", extra={"attempt": attempt, "error": type(exc).__name__}))
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            # The key was charged: a duplicate, unless the row charged says otherwise (the same key
            # with another amount is a conflicting duplicate: neither charged nor skipped).
            conflicting = charge.conflict_with(exc.response.get("Item") or {})
            if conflicting is not None:
                raise conflicting from None
            return False
        return True


_ledger = None


def ledger() -> Ledger:
    global _ledger
    if _ledger is None:
        _ledger = Ledger(config.required(config.LEDGER_TABLE_NAME, set_by="FifoBillingQueue"),
                         config.required(config.ACCOUNTS_TABLE_NAME, set_by="FifoBillingQueue"),
                         config.optional_int(config.LEDGER_TTL_DAYS, BILLING_LEDGER_TTL_DEFAULT_DAYS))
    return _ledger


def apply_charge(record: SQSRecord) -> None:
    context = {"message_id": record.message_id,
               "group_id": record.attributes.message_group_id,
               "receive_count": record.attributes.approximate_receive_count}
    try:
        charge = Charge.from_message(record.body)
    except InvalidCharge as exc:
        # The reason, never the payload: bodies may carry personal data.
        logger.error("malformed charge message", extra={**context, "reason": str(exc)})
        raise
    context["idempotency_key"] = charge.idempotency_key
    try:
        ledger().require_tenant(charge.tenant)
        charged = ledger().charge(charge, record.message_id)
    except UnknownTenant as exc:
        logger.error("charge for unknown tenant", extra={**context, "reason": str(exc)})
        raise
    except ConflictingDuplicate as exc:
        # Semantic: fails at once (no in-handler retry), SQS's redrive parks it in the DLQ.
        logger.error("conflicting duplicate charge", extra={**context, "reason": str(exc)})
        raise
    except Exception as exc:
        logger.error("charge failed", extra={**context, "error": type(exc).__name__})
        raise
    logger.info("charged" if charged else "duplicate charge skipped", extra=context)


def make_processor() -> SqsFifoPartialProcessor:
    processor = SqsFifoPartialProcessor(skip_group_on_error=True)
    # A batch whose every record failed is reported record by record, like any partial failure,
    # instead of raising: the outcome in SQS is the same, and the Errors metric stays for crashes.
    processor.raise_on_entire_batch_failure = False
    return processor


@logger.inject_lambda_context
def lambda_handler(event, context):
    with time_budget(context):  # in-handler retries end in time to report partial failures
        return process_partial_response(event=event, record_handler=apply_charge,
                                        processor=make_processor(), context=context)
