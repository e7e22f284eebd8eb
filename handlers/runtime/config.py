"""How handlers read their configuration: environment variables, named once here.

The components set these variables on the functions they deploy (they import the names from this
module), so a name cannot drift between the side that sets it and the side that reads it. Handlers
read them on their first invocation, not at import, through `required` and `optional_int`, so a
function deployed without one fails with a message that names the variable and who sets it.
"""

import os
from typing import Optional

# The stream consumers (IdempotentStreamConsumer, NonIdempotentStreamConsumer).
IDEMPOTENCY_TABLE_NAME = "IDEMPOTENCY_TABLE_NAME"
IDEMPOTENCY_KEY_JMESPATH = "IDEMPOTENCY_KEY_JMESPATH"
IDEMPOTENCY_EXPIRY_SECONDS = "IDEMPOTENCY_EXPIRY_SECONDS"
UNRECOVERABLE_DLQ_URL = "UNRECOVERABLE_DLQ_URL"
RETRY_DLQ_URL = "RETRY_DLQ_URL"
LEDGER_TABLE_NAME = "LEDGER_TABLE_NAME"
# The ARN of the stream the consumer's mapping reads: a Retry-DLQ message naming any other stream is
# refused, never read (without it, only streams the container has received records from are read).
SOURCE_STREAM_ARN = "SOURCE_STREAM_ARN"
# The FIFO billing queue (FifoBillingQueue): dispatcher and consumer.
ACCOUNTS_TABLE_NAME = "ACCOUNTS_TABLE_NAME"
CHARGE_QUEUE_URL = "CHARGE_QUEUE_URL"
LEDGER_TTL_DAYS = "LEDGER_TTL_DAYS"
# The Distributed Map batch (DistributedMapBatch): the item handler.
INVOICE_LEDGER_TABLE_NAME = "INVOICE_LEDGER_TABLE_NAME"
# Powertools' own variable: the service name in every log line.
POWERTOOLS_SERVICE_NAME = "POWERTOOLS_SERVICE_NAME"


class MissingConfiguration(RuntimeError):
    """A variable the handler needs is not set, or not of the right kind."""


def required(name: str, *, set_by: str) -> str:
    """The variable's value; `set_by` names the component that sets it, for the error message."""
    value = os.environ.get(name)
    if not value:
        raise MissingConfiguration(f"environment variable {name} is not set; the {set_by} component sets it, "
                                   "set it yourself when you deploy this handler another way")
    return value


def optional(name: str) -> Optional[str]:
    return os.environ.get(name) or None


def optional_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise MissingConfiguration(f"environment variable {name}={value!r} is not a whole number") from None


def service_name(default: str) -> str:
    return os.environ.get(POWERTOOLS_SERVICE_NAME) or default


__all__ = ["required", "optional", "optional_int", "service_name", "MissingConfiguration",
           "IDEMPOTENCY_TABLE_NAME", "IDEMPOTENCY_KEY_JMESPATH", "IDEMPOTENCY_EXPIRY_SECONDS", "UNRECOVERABLE_DLQ_URL",
           "RETRY_DLQ_URL", "LEDGER_TABLE_NAME", "SOURCE_STREAM_ARN",
           "ACCOUNTS_TABLE_NAME", "CHARGE_QUEUE_URL", "LEDGER_TTL_DAYS",
           "INVOICE_LEDGER_TABLE_NAME", "POWERTOOLS_SERVICE_NAME"]
