"""Reference handler deployed by IdempotentStreamConsumer: the account ledger, each event once.

Teams write the same three lines with their own `process_record`."""

from integration_blueprint.handlers.runtime.idempotent_stream import make_handler
from integration_blueprint.handlers.reference.reference_ledger import AccountLedger

lambda_handler = make_handler(process_record=AccountLedger(guarded=True))
