"""NonIdempotentStreamConsumer: a Kinesis consumer whose records must never be processed twice.

No infrastructure retries: the stream mapping has bisect off, MaximumRetryAttempts=0 and
ReportBatchItemFailures. The handler (handlers/app_dlq_stream.py) catches a failing record, inserts
the full record into the Retry-DLQ itself and reports success, so the shard advances after one
invocation per batch. The same function consumes the Retry-DLQ; after max_receive_count replays
its redrive parks the record in the Unrecoverable-DLQ.

With no retries, a crashed invocation (timeout, out of memory) or a record whose Retry-DLQ insert
failed would be dropped. The stream mapping therefore has an on-failure destination too: the
Unrecoverable-DLQ, not the Retry-DLQ. Lambda's on-failure record is metadata only and the crashed
batch may be partly applied, so replaying it automatically could apply records twice; it alarms at
once and a person replays what was not applied, while the records are still in the stream.

Public: `NonIdempotentStreamConsumer`, `NonIdempotentStreamConsumerArgs`, `SETTINGS` (its settings
table), `validate` (returns the shared `Numbers`), `DEFAULT_HANDLER`, `TYPE`, `NAME`.
"""


from typing import Optional, cast

import pulumi

import integration_blueprint.components.kinesis_consumer as shared
from integration_blueprint.components.iam import Statement
from integration_blueprint.components.kinesis_consumer import StreamConsumerArgs, StreamConsumerOutputs
from integration_blueprint.components.naming import require_fits
from integration_blueprint.components.platform import PLATFORM_SETTINGS, declared, publish
from integration_blueprint.components.settings import SettingsTable
from integration_blueprint.handlers.runtime import config as handler_config

__all__ = ["DEFAULT_HANDLER", "NAME", "NonIdempotentStreamConsumer", "NonIdempotentStreamConsumerArgs", "SETTINGS",
           "TYPE", "validate"]

TYPE = "blueprint:index:NonIdempotentStreamConsumer"
NAME = "NonIdempotentStreamConsumer"
DEFAULT_HANDLER = "integration_blueprint.handlers.reference.ledger_app_dlq_consumer.lambda_handler"


class NonIdempotentStreamConsumerArgs(StreamConsumerArgs, total=False):
    """The arguments of a NonIdempotentStreamConsumer: the ones both stream consumers take (retries and
    bisect are fixed off for this pattern); each one's type, default, bounds and reason are its row
    in SETTINGS (docs/components/NonIdempotentStreamConsumer.md)."""


SETTINGS = SettingsTable(NAME, shared.STREAM_SETTINGS, inherited=PLATFORM_SETTINGS.arguments())


def validate(args: NonIdempotentStreamConsumerArgs) -> shared.Numbers:
    return shared.validate_common(SETTINGS, args)


class NonIdempotentStreamConsumer(pulumi.ComponentResource, StreamConsumerOutputs):
    """A Kinesis consumer whose records must never be processed twice: no infrastructure retries; the
    handler parks a failing record in the Retry-DLQ itself and reports success, the same function
    replays it from there, and what fails every replay (or a crashed batch) lands in the
    Unrecoverable-DLQ, which alarms."""

    def __init__(self, name: str, args: NonIdempotentStreamConsumerArgs = None,  # type: ignore[assignment]  # Pulumi schema inference reads this annotation; Optional[...] breaks it
                 opts: Optional[pulumi.ResourceOptions] = None):
        args = cast(NonIdempotentStreamConsumerArgs, declared(self, TYPE, name, args, opts, SETTINGS))  # as its rows parse it
        numbers = validate(args)
        require_fits(NAME, name, shared.PHYSICAL_NAMES)

        source = shared.stream_source(name, args, numbers, self)
        dlqs = shared.dlq_pair(name, numbers, self, args.get("alarm_actions"),
                        f"{name}: a stream record failed every replay, or an invocation crashed and Lambda parked "
                        "its batch range (metadata only, possibly partly applied). Fix the cause; move full "
                        "records back to the Retry-DLQ; replay a crashed range by hand, skipping what was applied, "
                        "before the records expire from the stream.")
        ledger = shared.reference_ledger(name, args, self)
        function = shared.consumer_function(
            name, args, numbers, self, component=NAME, default_handler=DEFAULT_HANDLER, ledger=ledger,
            # SOURCE_STREAM_ARN: the only stream a by-reference Retry-DLQ record is read back from.
            environment={handler_config.RETRY_DLQ_URL: dlqs.retry.url, handler_config.SOURCE_STREAM_ARN: source.stream_arn},
            statements=[
                *source.read_statements,
                *shared.retry_dlq_statements(dlqs),  # the handler inserts failed records
                Statement(["sqs:SendMessage"], [dlqs.unrecoverable.queue.arn]),  # on-failure destination
            ])
        shared.stream_mapping(
            name, args, source, function, self,
            bisect_batch_on_function_error=False,
            maximum_retry_attempts=0,
            function_response_types=["ReportBatchItemFailures"],
            destination_config={"on_failure": {"destination_arn": dlqs.unrecoverable.queue.arn}},
        )
        shared.retry_mapping(name, args, function, dlqs.retry, self)
        shared.consumer_alarms(name, args, numbers, function, dlqs.retry, self)

        self.expose_children(dlqs, function)
        publish(self, {**shared.stream_outputs(source, dlqs, function),
                       "ledger_table_name": pulumi.Output.from_input(ledger.name if ledger is not None else None)})
