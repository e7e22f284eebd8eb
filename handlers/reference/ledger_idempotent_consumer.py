"""Reference handler deployed by IdempotentStreamConsumer: the account ledger, each event once.

Teams write the same three lines with their own `process_record`."""

from integration_blueprint.handlers.reference.reference_ledger import AccountLedger
from integration_blueprint.handlers.runtime.idempotent_stream import make_handler

lambda_handler = make_handler(process_record=AccountLedger(guarded=True))
