"""The blueprint program: reads the stack's config and instantiates the patterns the stack enables.

Each pattern has one section in stacks/Pulumi.<stack>.yaml; blueprint/stack_config.py checks every
value before any resource is declared.
"""

import pulumi

from blueprint import stack_config

platform = stack_config.platform_settings()

billing = stack_config.fifo_billing_args(platform)
if billing is not None:
    from components.fifo_billing_queue import FifoBillingQueue

    fifo = FifoBillingQueue("billing", billing)
    pulumi.export("billing_queue_url", fifo.queue_url)
    pulumi.export("billing_dlq_url", fifo.dlq_url)

batch = stack_config.distributed_map_args(platform)
if batch is not None:
    from components.distributed_map_batch import DistributedMapBatch

    invoices = DistributedMapBatch("invoices", batch)
    pulumi.export("invoice_batch_state_machine_arn", invoices.state_machine_arn)
    pulumi.export("invoice_batch_input_bucket", invoices.input_bucket_name)
    pulumi.export("invoice_batch_ops_queue_url", invoices.ops_queue_url)
