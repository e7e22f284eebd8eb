"""The four integration patterns as Pulumi ComponentResources (type tokens `blueprint:index:<Class>`):

    FifoBillingQueue              FIFO queue + FIFO DLQ, scheduled dispatcher, idempotent consumer
    IdempotentStreamConsumer      Kinesis consumer with bisect, Retry-DLQ re-read, Unrecoverable-DLQ
    NonIdempotentStreamConsumer   Kinesis consumer that parks failed records itself, no retries
    DistributedMapBatch           Step Functions Distributed Map over an S3 CSV, ops queue

Each takes one TypedDict of args (`<Class>Args`). The building blocks they share live one module
each: `function` (Lambda packaging + least-privilege role), `queues` (queue + alarmed DLQ),
`tables`, `alarms`, `schedules`, `platform` (settings every component shares), `validation`.
"""

from integration_blueprint.components.distributed_map_batch import DistributedMapBatch, DistributedMapBatchArgs
from integration_blueprint.components.fifo_billing_queue import FifoBillingQueue, FifoBillingQueueArgs
from integration_blueprint.components.idempotent_stream_consumer import (
                                                                         IdempotentStreamConsumer,
                                                                         IdempotentStreamConsumerArgs,
)
from integration_blueprint.components.non_idempotent_stream_consumer import (
                                                                         NonIdempotentStreamConsumer,
                                                                         NonIdempotentStreamConsumerArgs,
)

__all__ = ["FifoBillingQueue", "FifoBillingQueueArgs", "IdempotentStreamConsumer", "IdempotentStreamConsumerArgs",
           "NonIdempotentStreamConsumer", "NonIdempotentStreamConsumerArgs", "DistributedMapBatch",
           "DistributedMapBatchArgs"]
