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
"""


from typing import Optional

import pulumi
import pulumi_aws as aws

from integration_blueprint.components.function import Statement
from integration_blueprint.components.kinesis_consumer import (
    SQS_CONSUME_ACTIONS,
    STREAM_SETTINGS,
    Numbers,
    StreamConsumerArgs,
    consumer_alarms,
    consumer_function,
    dlq_pair,
    reference_ledger,
    retry_mapping,
    stream_mapping_settings,
    stream_source,
    validate_common,
)
from integration_blueprint.components.settings import SettingsTable
from integration_blueprint.handlers.runtime import config as handler_config

TYPE = "blueprint:index:NonIdempotentStreamConsumer"
NAME = "NonIdempotentStreamConsumer"
DEFAULT_HANDLER = "integration_blueprint.handlers.reference.ledger_app_dlq_consumer.lambda_handler"


class NonIdempotentStreamConsumerArgs(StreamConsumerArgs, total=False):
    """The shared stream consumer settings; retries and bisect are fixed off for this pattern."""


SETTINGS = SettingsTable(NAME, STREAM_SETTINGS)


def validate(args: NonIdempotentStreamConsumerArgs) -> Numbers:
    return validate_common(SETTINGS, args)


class NonIdempotentStreamConsumer(pulumi.ComponentResource):
    stream_arn: pulumi.Output[str]
    stream_name: pulumi.Output[str]
    stream_consumer_arn: pulumi.Output[Optional[str]]
    retry_dlq_url: pulumi.Output[str]
    retry_dlq_arn: pulumi.Output[str]
    unrecoverable_dlq_url: pulumi.Output[str]
    unrecoverable_dlq_arn: pulumi.Output[str]
    function_name: pulumi.Output[str]
    function_arn: pulumi.Output[str]
    ledger_table_name: pulumi.Output[Optional[str]]

    def __init__(self, name: str, args: NonIdempotentStreamConsumerArgs = None,  # type: ignore[assignment]  # Pulumi schema inference reads this annotation; Optional[...] breaks it
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(TYPE, name, None, opts)
        args = dict(args or {})
        numbers = validate(args)
        child = pulumi.ResourceOptions(parent=self)

        source = stream_source(name, args, numbers, self)
        dlqs = dlq_pair(name, numbers, self, args.get("alarm_actions"),
                        f"{name}: a stream record failed every replay, or an invocation crashed and Lambda parked "
                        "its batch range (metadata only, possibly partly applied). Fix the cause; move full "
                        "records back to the Retry-DLQ; replay a crashed range by hand, skipping what was applied, "
                        "before the records expire from the stream.")
        ledger = reference_ledger(name, args, self)
        function = consumer_function(
            name, args, numbers, self, default_handler=DEFAULT_HANDLER, ledger=ledger,
            environment={handler_config.RETRY_DLQ_URL: dlqs.retry.url},
            statements=[
                *source.read_statements,
                Statement(SQS_CONSUME_ACTIONS, [dlqs.retry.arn]),
                Statement(["sqs:SendMessage"], [dlqs.retry.arn]),  # the handler inserts failed records
                Statement(["sqs:SendMessage"], [dlqs.unrecoverable.queue.arn]),  # on-failure destination
            ])
        aws.lambda_.EventSourceMapping(
            f"{name}-stream-mapping",
            event_source_arn=source.mapping_source_arn,
            function_name=function.function.arn,
            **stream_mapping_settings(args),
            bisect_batch_on_function_error=False,
            maximum_retry_attempts=0,
            function_response_types=["ReportBatchItemFailures"],
            destination_config={"on_failure": {"destination_arn": dlqs.unrecoverable.queue.arn}},
            opts=child,
        )
        retry_mapping(name, args, function, dlqs.retry, self)
        consumer_alarms(name, args, numbers, function, dlqs.retry, self)

        self.stream_arn = source.stream_arn
        self.stream_name = source.stream_name
        self.stream_consumer_arn = pulumi.Output.from_input(source.consumer_arn)
        self.retry_dlq_url = dlqs.retry.url
        self.retry_dlq_arn = dlqs.retry.arn
        self.unrecoverable_dlq_url = dlqs.unrecoverable.queue.url
        self.unrecoverable_dlq_arn = dlqs.unrecoverable.queue.arn
        self.function_name = function.function.name
        self.function_arn = function.function.arn
        self.ledger_table_name = pulumi.Output.from_input(ledger.name if ledger is not None else None)
        self.register_outputs({
            "stream_arn": self.stream_arn, "stream_name": self.stream_name,
            "stream_consumer_arn": self.stream_consumer_arn,
            "retry_dlq_url": self.retry_dlq_url, "retry_dlq_arn": self.retry_dlq_arn,
            "unrecoverable_dlq_url": self.unrecoverable_dlq_url, "unrecoverable_dlq_arn": self.unrecoverable_dlq_arn,
            "function_name": self.function_name, "function_arn": self.function_arn,
            "ledger_table_name": self.ledger_table_name,
        })
