"""The blueprint program: reads the stack's config and instantiates the patterns the stack enables.

Each pattern has one section in stacks/Pulumi.<stack>.yaml; blueprint/program/stack_config.py checks every
section and value before any resource is declared. Each enabled pattern's component is declared
under a fixed name, and its outputs are exported under `<export>` for the runbooks and the drill.
"""

import pulumi

from integration_blueprint.components import (
    DistributedMapBatch,
    FifoBillingQueue,
    IdempotentStreamConsumer,
    NonIdempotentStreamConsumer,
)
from integration_blueprint.program import stack_config

stack = stack_config.read()

# (component class, resource name, args or None when disabled, {export: component output})
PATTERNS = [
    (FifoBillingQueue, "billing", stack.fifo_billing,
     {"billing_queue_url": "queue_url", "billing_dlq_url": "dlq_url"}),
    (DistributedMapBatch, "invoices", stack.distributed_map,
     {"invoice_batch_state_machine_arn": "state_machine_arn", "invoice_batch_input_bucket": "input_bucket_name",
      "invoice_batch_ops_queue_url": "ops_queue_url", "invoice_batch_ledger_table": "invoice_ledger_table_name"}),
    (IdempotentStreamConsumer, "orders", stack.idempotent_stream,
     {"orders_stream_name": "stream_name", "orders_retry_dlq_url": "retry_dlq_url",
      "orders_unrecoverable_dlq_url": "unrecoverable_dlq_url"}),
    (NonIdempotentStreamConsumer, "payments", stack.non_idempotent_stream,
     {"payments_stream_name": "stream_name", "payments_retry_dlq_url": "retry_dlq_url",
      "payments_unrecoverable_dlq_url": "unrecoverable_dlq_url"}),
]

for component_class, name, args, exports in PATTERNS:
    if args is not None:
        component = component_class(name, args)
        for export, output in exports.items():
            pulumi.export(export, getattr(component, output))
