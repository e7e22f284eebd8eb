"""The blueprint program: reads the stack's config and instantiates the patterns the stack enables.

Each pattern has one section in stacks/Pulumi.<stack>.yaml; blueprint/program/stack_config.py checks every
section and value before any resource is declared.
"""

import pulumi

from integration_blueprint.program import stack_config

stack = stack_config.read()

billing = stack.fifo_billing
if billing is not None:
    from integration_blueprint.components.fifo_billing_queue import FifoBillingQueue

    fifo = FifoBillingQueue("billing", billing)
    pulumi.export("billing_queue_url", fifo.queue_url)
    pulumi.export("billing_dlq_url", fifo.dlq_url)

batch = stack.distributed_map
if batch is not None:
    from integration_blueprint.components.distributed_map_batch import DistributedMapBatch

    invoices = DistributedMapBatch("invoices", batch)
    pulumi.export("invoice_batch_state_machine_arn", invoices.state_machine_arn)
    pulumi.export("invoice_batch_input_bucket", invoices.input_bucket_name)
    pulumi.export("invoice_batch_ops_queue_url", invoices.ops_queue_url)
    pulumi.export("invoice_batch_ledger_table", invoices.invoice_ledger_table_name)

orders_stream = stack.idempotent_stream
if orders_stream is not None:
    from integration_blueprint.components.idempotent_stream_consumer import IdempotentStreamConsumer

    orders = IdempotentStreamConsumer("orders", orders_stream)
    pulumi.export("orders_stream_name", orders.stream_name)
    pulumi.export("orders_retry_dlq_url", orders.retry_dlq_url)
    pulumi.export("orders_unrecoverable_dlq_url", orders.unrecoverable_dlq_url)

payments_stream = stack.non_idempotent_stream
if payments_stream is not None:
    from integration_blueprint.components.non_idempotent_stream_consumer import NonIdempotentStreamConsumer

    payments = NonIdempotentStreamConsumer("payments", payments_stream)
    pulumi.export("payments_stream_name", payments.stream_name)
    pulumi.export("payments_retry_dlq_url", payments.retry_dlq_url)
    pulumi.export("payments_unrecoverable_dlq_url", payments.unrecoverable_dlq_url)
