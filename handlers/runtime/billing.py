"""The monthly charge: its message format and the keys that make billing exactly-once.

Shared by the dispatcher (which builds charges) and the consumer (which applies them), so both
sides derive the same idempotency key, message group and deduplication id.
"""

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from typing import Optional

from integration_blueprint.core.aws_limits import SQS_DEDUPLICATION_ID_MAX_LENGTH, SQS_MESSAGE_GROUP_ID_MAX_LENGTH
from integration_blueprint.handlers.runtime.amounts import MAX_AMOUNT_MINOR_UNITS
from integration_blueprint.handlers.runtime.conflicts import ConflictingDuplicate, conflict
from integration_blueprint.handlers.runtime.redaction import PayloadFreeError

MONTH_PATTERN = re.compile(r"\d{4}-(0[1-9]|1[0-2])")
CURRENCY_PATTERN = re.compile(r"[A-Z]{3}")
# SQS accepts alphanumerics and punctuation in deduplication and group ids.
_SQS_ID_PATTERN = re.compile(r"[A-Za-z0-9!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]+")


class InvalidCharge(PayloadFreeError, ValueError):
    """The message is not a valid charge. Retrying cannot fix it: it goes to the DLQ."""


class UnknownTenant(LookupError):
    """The charge names a tenant the accounts store does not know. Goes to the DLQ."""


def _sqs_id(value: str, limit: int) -> str:
    """`value` if SQS accepts it as an id, else its SHA-256 (64 hex chars): same input, same id."""
    if len(value) <= limit and _SQS_ID_PATTERN.fullmatch(value):
        return value
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Charge:
    tenant: str
    employee: str
    month: str  # YYYY-MM
    amount: int  # minor currency units, 0 < amount <= MAX_AMOUNT_MINOR_UNITS
    currency: str

    @property
    def idempotency_key(self) -> str:
        """Deterministic: the same tenant, employee and month always give the same key, so a
        re-run of the dispatcher or a redelivery can be recognised."""
        return f"{self.tenant}:{self.employee}:{self.month}"

    @property
    def message_group_id(self) -> str:
        """Charges of one tenant and month are applied in order; tenants run in parallel."""
        return _sqs_id(f"{self.tenant}#{self.month}", SQS_MESSAGE_GROUP_ID_MAX_LENGTH)

    @property
    def deduplication_id(self) -> str:
        return _sqs_id(self.idempotency_key, SQS_DEDUPLICATION_ID_MAX_LENGTH)

    def conflict_with(self, charged: dict) -> Optional[ConflictingDuplicate]:
        """The conflict between this charge and the ledger row its key already has (a DynamoDB item:
        employee, month, amount, currency), or None when the row is this charge (a duplicate)."""
        differs = [name for name, mine in (("employee", self.employee), ("month", self.month),
                                           ("amount", str(self.amount)), ("currency", self.currency))
                   if name in charged and next(iter(charged[name].values()), None) != mine]
        return conflict(self.idempotency_key, " and ".join(differs)) if differs else None

    def to_message(self) -> str:
        return json.dumps({**asdict(self), "idempotency_key": self.idempotency_key}, sort_keys=True)

    @classmethod
    def from_message(cls, body: str) -> "Charge":
        try:
            data = json.loads(body)
        except (TypeError, ValueError, RecursionError) as exc:  # RecursionError: nested too deep to parse
            raise InvalidCharge(f"body is not JSON ({exc.__class__.__name__})") from None
        if not isinstance(data, dict):
            raise InvalidCharge("body is not a JSON object")
        missing = [f for f in ("tenant", "employee", "month", "amount", "currency") if f not in data]
        if missing:
            raise InvalidCharge(f"missing fields: {', '.join(missing)}")
        for field in ("tenant", "employee"):
            if not isinstance(data[field], str) or not data[field] or len(data[field]) > 256:
                raise InvalidCharge(f"{field} must be a non-empty string of at most 256 characters")
        if not isinstance(data["month"], str) or not MONTH_PATTERN.fullmatch(data["month"]):
            raise InvalidCharge("month must be YYYY-MM")
        amount = data["amount"]
        if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
            raise InvalidCharge("amount must be a positive whole number of minor currency units")
        if amount > MAX_AMOUNT_MINOR_UNITS:
            raise InvalidCharge(f"amount exceeds the largest accepted charge ({MAX_AMOUNT_MINOR_UNITS} minor units, "
                                "see handlers/runtime/amounts.py)")
        if not isinstance(data["currency"], str) or not CURRENCY_PATTERN.fullmatch(data["currency"]):
            raise InvalidCharge("currency must be a 3-letter ISO code")
        charge = cls(tenant=data["tenant"], employee=data["employee"], month=data["month"],
                     amount=amount, currency=data["currency"])
        if "idempotency_key" in data and data["idempotency_key"] != charge.idempotency_key:
            # A key that disagrees with the fields means a producer bug; charging would risk a
            # double charge under a second key.
            raise InvalidCharge("idempotency_key does not match tenant:employee:month")
        return charge


# Accounts store layout (a DynamoDB table, pk `tenant`, sk `sk`), read by both handlers.
ACCOUNTS_PK = "tenant"
ACCOUNTS_SK = "sk"
TENANT_SK = "tenant"  # the tenant's own row
EMPLOYEE_SK_PREFIX = "employee#"
