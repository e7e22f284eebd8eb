"""The four integration patterns as Pulumi ComponentResources (type tokens `blueprint:index:<Class>`):

    FifoBillingQueue              FIFO queue + FIFO DLQ, scheduled dispatcher, idempotent consumer
    IdempotentStreamConsumer      Kinesis consumer with bisect, Retry-DLQ re-read, Unrecoverable-DLQ
    NonIdempotentStreamConsumer   Kinesis consumer that parks failed records itself, no retries
    DistributedMapBatch           Step Functions Distributed Map over an S3 CSV, ops queue

Each takes one TypedDict of args (`<Class>Args`) and declares its settings once, in its module's
`SETTINGS` table (default, bounds, why), which its `validate()` and the blueprint program's
stack-config reader both use. The building blocks they share live one module each:

    settings      Setting / SettingsTable: one row per setting, and the rows schedules share
    validation    ComponentArgumentError and the checks that raise it
    naming        physical names within AWS's limits (Pulumi's auto-name suffix counted)
    platform      what every component takes from `blueprint:platform`, and publish()
    iam           named-action statements, policy documents, service roles (trust with source conditions)
    function      Lambda packaging: code archive, Powertools layer, log group, least-privilege role
    queues        TLS-only encrypted queues, DLQ with depth alarm, queue + DLQ, SQS consumer mapping
    schedules     EventBridge Scheduler start with retry policy, DLQ and a source-scoped role
    tables        DynamoDB idempotency and ledger tables
    alarms        the CloudWatch alarms, each saying what to do when it fires
    kinesis_consumer            what the two stream consumers share
    distributed_map_definition  the Distributed Map's ASL document, built as data

Public: the four components and their Args, `PlatformArgs` (what every component's Args extend: type
a shared `platform: PlatformArgs = {...}` and spread it, `{**platform, "batch_size": 5}`, and mypy
checks both) and `PolicyStatementArgs` (one item of a `*policy_statements` argument).

Each component also exposes its children as typed attributes (`billing.consumer_role`,
`billing.queue`, `batch.item_function`, `stream.function_role`, ...) for a team to extend, and the
roles of the functions where a team's code runs as outputs (`consumer_role_name`, ...), which other
languages get through the plugin.
"""

from integration_blueprint.components.distributed_map_batch import DistributedMapBatch, DistributedMapBatchArgs
from integration_blueprint.components.fifo_billing_queue import FifoBillingQueue, FifoBillingQueueArgs
from integration_blueprint.components.function import PolicyStatementArgs
from integration_blueprint.components.idempotent_stream_consumer import (
    IdempotentStreamConsumer,
    IdempotentStreamConsumerArgs,
)
from integration_blueprint.components.non_idempotent_stream_consumer import (
    NonIdempotentStreamConsumer,
    NonIdempotentStreamConsumerArgs,
)
from integration_blueprint.components.platform import PlatformArgs

__all__ = ["DistributedMapBatch", "DistributedMapBatchArgs", "FifoBillingQueue", "FifoBillingQueueArgs",
           "IdempotentStreamConsumer", "IdempotentStreamConsumerArgs", "NonIdempotentStreamConsumer",
           "NonIdempotentStreamConsumerArgs", "PlatformArgs", "PolicyStatementArgs"]
