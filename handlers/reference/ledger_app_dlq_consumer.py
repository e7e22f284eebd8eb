"""Reference handler deployed by NonIdempotentStreamConsumer: the account ledger, failures parked in
the Retry-DLQ by the handler itself.

Teams write the same three lines with their own `process_record`."""

from integration_blueprint.handlers.reference.reference_ledger import AccountLedger
from integration_blueprint.handlers.runtime.app_dlq_stream import make_handler

lambda_handler = make_handler(process_record=AccountLedger())
