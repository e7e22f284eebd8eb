"""One drill driver per pattern: what records to send, how to drive them, and how to check the
final state against the expected state. Drivers find their resources in the sandbox by the
reference handlers the stack deploys, so a stack that disables a pattern simply skips it.

DRIVERS maps each pattern's name to its driver, longest-running first (the runner starts them in
this order)."""

from integration_blueprint.drill.patterns.base import PatternDriver
from integration_blueprint.drill.patterns.distributed_map import DistributedMapDriver
from integration_blueprint.drill.patterns.fifo_billing import FifoBillingDriver
from integration_blueprint.drill.patterns.stream_ledger import IdempotentStreamDriver, NonIdempotentStreamDriver

DRIVERS: dict[str, type[PatternDriver]] = {
    DistributedMapDriver.name: DistributedMapDriver,
    IdempotentStreamDriver.name: IdempotentStreamDriver,
    FifoBillingDriver.name: FifoBillingDriver,
    NonIdempotentStreamDriver.name: NonIdempotentStreamDriver,
}

__all__ = ["DRIVERS", "PatternDriver", "DistributedMapDriver", "FifoBillingDriver", "IdempotentStreamDriver",
           "NonIdempotentStreamDriver"]
