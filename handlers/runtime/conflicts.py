"""Conflicting duplicates: a record whose idempotency key was seen before with a different payload.

It is not a duplicate (applying nothing would drop what it asks for) and not a new record (applying
it would apply the same key twice): a producer bug or a tampered message that a person must look
at. Every pattern's runtime refuses it, neither applied nor skipped, and parks it with a reason
naming the conflict (`ConflictingDuplicate`):

- idempotent stream (idempotent_stream.py): Powertools' own payload validation
  (`payload_validation_jmespath` over the record's payload fingerprint); its
  IdempotencyValidationError becomes a ConflictingDuplicate and the record is parked in the
  Unrecoverable-DLQ with the reason at once (retrying cannot change the answer);
- FIFO billing (billing.py, `Charge.conflict_with`): the charge's ledger row is its claim (no
  Powertools record, see handlers/reference/billing_consumer.py), so the row the conditional write
  found is compared with the charge; the message fails and SQS's redrive parks it;
- Distributed Map items: Powertools' payload validation (handlers/reference/invoice_enricher.py),
  the item fails and counts among the Map's failed items;
- non-idempotent stream (app_dlq_stream.py): none, by definition: the pattern keeps no idempotency
  key, so a record with an event id seen before is another record (its own sequence number).

Reasons name the key and the fields that differ, never their values (redaction.py).
"""

from __future__ import annotations

import hashlib

from integration_blueprint.handlers.runtime.redaction import PayloadFreeError, bounded

# How Powertools' idempotency claim carries the payload it validates (payload_validation_jmespath).
PAYLOAD_FINGERPRINT_FIELD = "payload_sha256"


class ConflictingDuplicate(PayloadFreeError):
    """The same idempotency key as a record already applied, with a different payload."""


def fingerprint(data: bytes) -> str:
    """What a payload is compared by: its SHA-256 (the claim never holds the payload itself)."""
    return hashlib.sha256(data).hexdigest()


def conflict(key: str, differs: str) -> ConflictingDuplicate:
    """The error for a record whose key `key` was applied with a payload that differs in `differs`."""
    return ConflictingDuplicate(f"conflicting duplicate: idempotency key {bounded(key)} was already applied with a "
                                f"different {differs}; neither applied nor skipped: parked for a person to decide")
