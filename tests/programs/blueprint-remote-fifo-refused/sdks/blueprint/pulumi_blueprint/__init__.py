# coding=utf-8
# Shaped like the SDK `pulumi package add ../plugin` generates under sdks/blueprint (trimmed).
from .fifo_billing_queue import FifoBillingQueue, FifoBillingQueueArgs

__all__ = ["FifoBillingQueue", "FifoBillingQueueArgs"]
