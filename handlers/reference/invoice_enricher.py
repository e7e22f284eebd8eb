"""Item handler of the Distributed Map batch: enrich one invoice row and record it in its customer's
invoice ledger, once per invoice however often Step Functions delivers the row.

Input: one CSV row as the Map's ItemReader produces it (every value a string), e.g.
    {"invoice_id": "INV-1", "customer_id": "C-7", "region": "eu", "billing_date": "2026-11-01",
     "amount": "12.50"}
or, with an ItemBatcher, {"Items": [row, ...], "BatchInput": {...}}: each row is processed on its own
(handlers/runtime/map_batch.py): rows that fail are reported by their index in the batch, the others
are recorded once and not run again.

Idempotency: Powertools' idempotency utility on DynamoDB, keyed on the immutable business key
`invoice_id|region|billing_date` (never on a timestamp or the execution id, which differ between a
re-run and the original). A retried or duplicated row returns the stored result instead of adding
to the total again; a row with the same key but a different customer or amount is refused
(IdempotencyValidationError) rather than silently ignored. Records expire after
IDEMPOTENCY_EXPIRY_SECONDS (DynamoDB TTL).

Crash safety: Powertools writes INPROGRESS before the work and COMPLETED after it, so a function
that dies in between leaves an INPROGRESS record that expires with the invocation, and the retry
runs the work again. The work therefore guards itself: the effect is one conditional write of the
invoice's ledger row (pk customer_id, sk the idempotency key), so it happens at most once per key
even across that window. A customer's total is the sum of its rows (one Query). Powertools still
answers retries and duplicates from its stored result without writing again.

Failures: a row that cannot be an invoice raises InvalidInvoiceError (the reason names the field,
never the row's values). The item task does not retry it, so it fails that child and counts toward
the Map's tolerated failures. Amounts are checked at the edge (handlers/runtime/amounts.py): a
finite number >= 0, at most 2 decimals, at most MAX_AMOUNT_MINOR_UNITS cents.

Transient errors (throttling, 5xx) of the ledger write and of the idempotency store are retried in
the handler (backoff, full jitter, within the invocation's time budget). One that outlives those
retries fails the item as TransientServiceError (retry.TRANSIENT_ERROR_NAME): the Map task's Retry
must list that name (and IdempotencyAlreadyInProgressError, raised while an earlier attempt of the
same row still holds its INPROGRESS record) for Step Functions to retry the item later.

Environment (set by the DistributedMapBatch component, names in handlers.runtime.config):
IDEMPOTENCY_TABLE_NAME, INVOICE_LEDGER_TABLE_NAME, IDEMPOTENCY_EXPIRY_SECONDS (optional).
"""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any, Callable, Optional

import boto3
from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function

from integration_blueprint.core.conventions import INVOICE_IDEMPOTENCY_EXPIRY_DEFAULT_SECONDS
from integration_blueprint.handlers.runtime import config
from integration_blueprint.handlers.runtime.amounts import AmountError, check_amount
from integration_blueprint.handlers.runtime.idempotency_store import RetryingDynamoDBPersistenceLayer
from integration_blueprint.handlers.runtime.map_batch import process_batch
from integration_blueprint.handlers.runtime.redaction import PayloadFreeError, bounded
from integration_blueprint.handlers.runtime.retry import (
    call_with_retries,
    raise_transient,
    time_budget,
)

REQUIRED_FIELDS = ("invoice_id", "customer_id", "region", "billing_date", "amount")
KEY_SEPARATOR = "|"
# The invoice ledger: pk customer_id, sk the invoice's idempotency key.
LEDGER_PK = "customer_id"
LEDGER_SK = "invoice_key"
# The longest invoice_id, customer_id and region accepted, in UTF-8 bytes: the ledger's sort key
# (invoice_id|region|date) then stays under DynamoDB's 1,024-byte sort key limit and customer_id
# under its 2,048-byte partition key limit, so a long id is this handler's named error, not a
# ValidationException from DynamoDB.
FIELD_MAX_BYTES = 256


class InvalidInvoiceError(PayloadFreeError, ValueError):
    """The row is not a valid invoice. Retrying cannot fix it: the item fails and counts toward
    the run's tolerated failures."""


SET_BY = "DistributedMapBatch"
logger = Logger(service=config.service_name("invoice-enricher"))


@dataclass
class _Runtime:
    """What the handler needs from its environment, built on the first invocation (a cold start)."""

    idempotency_config: IdempotencyConfig
    record_invoice: Callable[..., dict]


_runtime: Optional[_Runtime] = None


def runtime() -> _Runtime:
    global _runtime
    if _runtime is None:
        idempotency_config = IdempotencyConfig(
            event_key_jmespath="idempotency_key",
            # Same key, different money: a data error upstream, not a duplicate. Refuse it loudly.
            payload_validation_jmespath="[customer_id, amount_cents]",
            raise_on_no_idempotency_key=True,
            expires_after_seconds=config.optional_int(config.IDEMPOTENCY_EXPIRY_SECONDS,
                                                      INVOICE_IDEMPOTENCY_EXPIRY_DEFAULT_SECONDS),
        )
        persistence = RetryingDynamoDBPersistenceLayer(
            table_name=config.required(config.IDEMPOTENCY_TABLE_NAME, set_by=SET_BY),
            # A client of the default session (Powertools would make its own session otherwise), so
            # the store's calls are configured, and fault-injected in the drill, like the ledger's.
            boto3_client=boto3.client("dynamodb"))
        ledger = InvoiceLedger(config.required(config.INVOICE_LEDGER_TABLE_NAME, set_by=SET_BY), boto3.client("dynamodb"))
        record = idempotent_function(data_keyword_argument="invoice", config=idempotency_config,
                                     persistence_store=persistence)(ledger.record)
        _runtime = _Runtime(idempotency_config=idempotency_config, record_invoice=record)
    return _runtime


def idempotency_key(invoice_id: str, region: str, billing_date: str) -> str:
    return KEY_SEPARATOR.join((invoice_id, region, billing_date))


def parse_invoice(row: dict) -> dict:
    """The validated invoice (plain JSON types) with its idempotency key, or InvalidInvoiceError.

    The key is built from canonical values: the date as YYYY-MM-DD whichever ISO 8601 form the row
    used (`20261101` and `2026-W44-7` are 2026-11-01), text without surrounding spaces; the amount
    is compared in cents (`12.5` and `12.50` are one amount)."""
    if not isinstance(row, dict):
        raise InvalidInvoiceError(f"an invoice row must be an object, got {type(row).__name__}")
    values = {}
    for f in REQUIRED_FIELDS:
        value = row.get(f)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (str, int, float))):
            raise InvalidInvoiceError(f"{f} must be text (a CSV value), got {type(value).__name__}")
        try:
            values[f] = "" if value is None else str(value).strip()
        except ValueError:  # an integer of more than 4,300 digits, which Python refuses to write out
            raise InvalidInvoiceError(f"{f} is not a value an invoice can hold") from None
    missing = [f for f, v in values.items() if not v]
    if missing:
        # The names of the missing fields, never the row: its values may be personal data.
        raise InvalidInvoiceError(f"invoice row is missing {', '.join(missing)}")
    for f in ("invoice_id", "customer_id", "region"):
        if len(values[f].encode("utf-8", "surrogatepass")) > FIELD_MAX_BYTES:
            raise InvalidInvoiceError(f"{f} is longer than {FIELD_MAX_BYTES} bytes (the ledger's keys are built from it)")
    for f in ("invoice_id", "region", "billing_date"):
        if KEY_SEPARATOR in values[f]:
            raise InvalidInvoiceError(f"{f} must not contain {KEY_SEPARATOR!r} (key separator)")
    try:
        billing_date = date.fromisoformat(values["billing_date"]).isoformat()
    except ValueError:
        raise InvalidInvoiceError("billing_date is not a YYYY-MM-DD date (or another ISO 8601 date form)") from None
    try:
        # Bounded before any arithmetic: quantizing 1e400 would raise decimal.InvalidOperation.
        amount = check_amount(values["amount"], minor_units_per_unit=100)
    except AmountError as exc:
        raise InvalidInvoiceError(f"amount must be >= 0 with at most 2 decimals ({exc})") from None
    if amount != amount.quantize(Decimal("0.01")):
        raise InvalidInvoiceError("amount must be >= 0 with at most 2 decimals")
    return {
        "idempotency_key": idempotency_key(values["invoice_id"], values["region"], billing_date),
        "invoice_id": values["invoice_id"],
        "customer_id": values["customer_id"],
        "region": values["region"],
        "billing_date": billing_date,
        "amount_cents": int(amount * 100),
    }


@dataclass
class InvoiceLedger:
    table: str
    dynamodb: Any

    def record(self, invoice: dict) -> dict:
        """The side effect, done once per key: the invoice's row in its customer's ledger."""
        try:
            call_with_retries(lambda: self.dynamodb.put_item(
                TableName=self.table,
                Item={LEDGER_PK: {"S": invoice["customer_id"]}, LEDGER_SK: {"S": invoice["idempotency_key"]},
                      "invoice_id": {"S": invoice["invoice_id"]}, "region": {"S": invoice["region"]},
                      "billing_date": {"S": invoice["billing_date"]},
                      "amount_cents": {"N": str(invoice["amount_cents"])}},
                ConditionExpression="attribute_not_exists(#sk)",
                ExpressionAttributeNames={"#sk": LEDGER_SK},
            ))
        except self.dynamodb.exceptions.ConditionalCheckFailedException:
            # A crashed earlier attempt already recorded it; recording it again would double it.
            logger.info("invoice already in the ledger", extra={"customer_id": invoice["customer_id"]})
            return {**invoice, "status": "enriched"}
        logger.info("invoice recorded", extra={"customer_id": invoice["customer_id"]})
        return {**invoice, "status": "enriched"}


def process_row(row: dict) -> dict:
    try:
        invoice = parse_invoice(row)
    except InvalidInvoiceError as exc:
        invoice_id = row.get("invoice_id") if isinstance(row, dict) else None
        logger.warning("invalid invoice row", extra={
            "error": str(exc), "invoice_id": bounded(invoice_id) if isinstance(invoice_id, str) else None})
        raise
    logger.append_keys(idempotency_key=invoice["idempotency_key"])
    try:
        return runtime().record_invoice(invoice=invoice)
    except Exception as exc:
        raise_transient(exc, f"recording invoice {invoice['idempotency_key']}")
        raise
    finally:
        logger.remove_keys(["idempotency_key"])


def lambda_handler(event, context):
    if context is not None:
        # Lets Powertools expire an INPROGRESS record when this invocation times out.
        runtime().idempotency_config.register_lambda_context(context)
    with time_budget(context):  # retries end in time to fail the item with a retryable error name
        if isinstance(event, dict) and "Items" in event:
            # ItemBatcher: every row is tried; one that fails neither fails nor repeats the others
            # (handlers/runtime/map_batch.py says how the failed rows are reported).
            return {"results": process_batch(event["Items"], process_row)}
        return process_row(event)
