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
