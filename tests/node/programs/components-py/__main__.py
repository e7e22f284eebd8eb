"""The four components with non-default settings: the twin of ../components-ts/index.ts."""

from integration_blueprint.components import (
    DistributedMapBatch,
    FifoBillingQueue,
    IdempotentStreamConsumer,
    NonIdempotentStreamConsumer,
)

ONCALL = "arn:aws:sns:eu-west-1:123456789012:payments-oncall"

FifoBillingQueue("payroll", {
    "consumer_timeout_seconds": 60,
    "max_receive_count": 6,
    "batch_size": 5,
    "schedule_timezone": "Europe/Paris",
    "alarm_actions": [ONCALL],
    "log_retention_days": 30,
})
IdempotentStreamConsumer("clicks", {
    "stream_mode": "PROVISIONED",
    "shard_count": 2,
    "retention_hours": 48,
    "batch_size": 50,
    "maximum_retry_attempts": 3,
    "memory_mb": 512,
})
NonIdempotentStreamConsumer("payments", {
    "function_timeout_seconds": 120,
    "retention_hours": 72,
    "alarm_actions": [ONCALL],
})
DistributedMapBatch("invoices", {
    "max_concurrency": 20,
    "tolerated_failure_percentage": 5,
    "max_items_per_batch": 10,
    "item_reserved_concurrency": 25,
})
