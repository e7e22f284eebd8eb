"""What a money amount may be, checked at the edge where a payload becomes a value.

Every handler that applies an amount (billing charges, the stream ledgers, invoices) refuses, with
its own named error and a reason that never repeats the payload:
- anything that is not a number (booleans included), and NaN or Infinity, which JSON parsers accept
  ("NaN", "Infinity", or an overflow such as 1e400) but no ledger can add;
- negative amounts (a refund is its own kind of event, never a negative charge);
- amounts above MAX_AMOUNT_MINOR_UNITS.
"""

from decimal import Decimal, InvalidOperation
from typing import Any

# The largest amount, in minor currency units (cents), any handler accepts: 2**53 - 1, the largest
# integer every JSON parser represents exactly (I-JSON, RFC 7493 section 2.2: IEEE 754 doubles), so
# the amount means the same to every producer and consumer. It is ~9e13 in major units, far above
# any real charge or invoice: a larger value is a producer bug (a unit mix-up, a corrupt field),
# and a ledger summing such values would soon leave the 38 digits a DynamoDB number keeps.
MAX_AMOUNT_MINOR_UNITS = 2**53 - 1


class AmountError(ValueError):
    """The value is not an acceptable amount; the message says why (without the value)."""


def as_decimal(value: Any) -> Decimal:
    """`value` (a JSON number or a numeric string) as a finite Decimal, or AmountError."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Decimal)):
        raise AmountError("amount is not a number")
    try:
        number = Decimal(str(value).strip()) if not isinstance(value, Decimal) else value
    except InvalidOperation:
        raise AmountError("amount is not a number") from None
    if not number.is_finite():
        raise AmountError("amount must be a finite number (NaN and Infinity are refused)")
    return number


def check_amount(value: Any, *, minor_units_per_unit: int = 1, positive: bool = False) -> Decimal:
    """`value` as a Decimal if it is a finite number, >= 0 (> 0 when `positive`) and, counted in minor
    units (`value * minor_units_per_unit`), at most MAX_AMOUNT_MINOR_UNITS; else AmountError."""
    number = as_decimal(value)
    if number < 0 or (positive and number == 0):
        raise AmountError("amount must be > 0" if positive else "amount must be >= 0")
    # Compared by division, not multiplication: 1e999999 * 100 would overflow Decimal's context.
    if number > Decimal(MAX_AMOUNT_MINOR_UNITS) / minor_units_per_unit:
        raise AmountError(f"amount exceeds the largest accepted amount ({MAX_AMOUNT_MINOR_UNITS} minor units, "
                          "the largest integer every JSON parser keeps exactly)")
    return number
