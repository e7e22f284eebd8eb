"""IdempotentStreamConsumer: a Kinesis consumer whose records may be retried, because each one's
effect is recorded once in an idempotency store.

Lambda does the isolation: the stream mapping bisects a failing batch, retries a bounded number of
times, and sends what still fails to the Retry-DLQ as an on-failure record (metadata only). The same
function consumes the Retry-DLQ, reads those records back from the stream and replays them; after
max_receive_count replays the Retry-DLQ's redrive parks the record in the Unrecoverable-DLQ. The
handler runtime is handlers/idempotent_stream.py.

Because the Retry-DLQ holds only sequence numbers, every replay must happen while the records are
still in the stream: the component refuses a configuration whose replay window ends after the
stream's retention. For the same reason idempotency keys must outlive the last replay.

Public: `IdempotentStreamConsumer`, `IdempotentStreamConsumerArgs`, `SETTINGS` (its settings table),
`validate` (returns `IdempotentStreamNumbers`), `DEFAULT_HANDLER`, `DEFAULT_MAXIMUM_RETRY_ATTEMPTS`,
`REFERENCE_KEY_JMESPATH`, `TYPE`, `NAME`.
"""


from dataclasses import dataclass
from typing import Optional, cast

import pulumi
import pulumi_aws as aws

import integration_blueprint.components.kinesis_consumer as shared
from integration_blueprint.components.iam import Statement
from integration_blueprint.components.kinesis_consumer import StreamConsumerArgs, StreamConsumerOutputs
from integration_blueprint.components.naming import require_fits
from integration_blueprint.components.platform import PLATFORM_SETTINGS, declared, publish
from integration_blueprint.components.settings import Setting, SettingsTable
from integration_blueprint.components.tables import idempotency_table
from integration_blueprint.components.validation import ComponentArgumentError, is_known
from integration_blueprint.core import aws_limits
from integration_blueprint.handlers.runtime import config as handler_config

__all__ = ["DEFAULT_HANDLER", "DEFAULT_MAXIMUM_RETRY_ATTEMPTS", "IdempotentStreamConsumer",
           "IdempotentStreamConsumerArgs", "IdempotentStreamNumbers", "NAME", "REFERENCE_KEY_JMESPATH", "SETTINGS",
           "TYPE", "validate"]

TYPE = "blueprint:index:IdempotentStreamConsumer"
NAME = "IdempotentStreamConsumer"
DEFAULT_HANDLER = "integration_blueprint.handlers.reference.ledger_idempotent_consumer.lambda_handler"
REFERENCE_KEY_JMESPATH = "eventId"  # the reference ledger's business key

SETTINGS = SettingsTable(NAME, [
    *shared.STREAM_SETTINGS,
    Setting("maximum_retry_attempts", int, 2, minimum=1, maximum=aws_limits.KINESIS_ESM_RETRY_ATTEMPTS_MAX,
            why="the stream mapping's retries of a batch that cannot be split further; bounded, so a poison record "
                "reaches the Retry-DLQ instead of blocking its shard until it expires"),
    Setting("maximum_record_age_seconds", int, 3600, minimum=aws_limits.KINESIS_ESM_RECORD_AGE_MIN_SECONDS,
            maximum=aws_limits.KINESIS_ESM_RECORD_AGE_MAX_SECONDS,
            why="records older than this go to the Retry-DLQ instead of the function; bounded (-1, no limit, "
                "is refused)"),
    Setting("idempotency_key_jmespath", str, None,
            why="the business key in the JSON payload; reference handler: eventId; none: shard + sequence number"),
    Setting("idempotency_ttl_seconds", int, None, minimum=1,
            why="how long a processed record's key is kept; default and minimum: the end of its last replay"),
], inherited=PLATFORM_SETTINGS.arguments())
# Kept for the benchmarks that quote the default.
DEFAULT_MAXIMUM_RETRY_ATTEMPTS: int = SETTINGS.default("maximum_retry_attempts")


class IdempotentStreamConsumerArgs(StreamConsumerArgs, total=False):
    """The arguments of an IdempotentStreamConsumer; each one's type, default, bounds and reason are its
    row in SETTINGS (docs/components/IdempotentStreamConsumer.md)."""

    maximum_retry_attempts: pulumi.Input[int]
    maximum_record_age_seconds: pulumi.Input[int]
    idempotency_key_jmespath: pulumi.Input[str]
    idempotency_ttl_seconds: pulumi.Input[int]


@dataclass(frozen=True)
class IdempotentStreamNumbers:
    """The effective, checked numbers of an IdempotentStreamConsumer."""

    numbers: shared.Numbers
    retries: pulumi.Input[int]
    max_age: pulumi.Input[int]
    ttl: pulumi.Input[int]


def validate(args: IdempotentStreamConsumerArgs) -> IdempotentStreamNumbers:
    numbers = shared.validate_common(SETTINGS, args)
    retries = SETTINGS.value(args, "maximum_retry_attempts")
    max_age = SETTINGS.value(args, "maximum_record_age_seconds")
    horizon = None
    window = numbers.known_replay_window()
    retention_hours = numbers.retention_hours
    if window is not None and is_known(max_age) and is_known(retention_hours):
        # A record may already be max_age old when Lambda hands it to the Retry-DLQ, and is read
        # back from the stream on every replay until the last one ends.
        horizon = max_age + window
        retention = retention_hours * 3600
        if horizon > retention:
            raise ComponentArgumentError(
                f"{NAME}: the replay window does not end inside the stream's retention: maximum_record_age_seconds "
                f"{max_age} + retry_delay_seconds {numbers.delay} + max_receive_count {numbers.receives} x "
                f"retry_visibility_timeout_seconds {numbers.visibility} = {horizon} s, but retention_hours "
                f"{retention_hours} keeps records {retention} s. The last replays would find the records "
                "trimmed. Shorten the window or raise retention_hours to at least "
                f"{-(-horizon // 3600)}.", "retention_hours")
    ttl = SETTINGS.value(args, "idempotency_ttl_seconds")
    if ttl is None:
        ttl = max(aws_limits.POWERTOOLS_IDEMPOTENCY_EXPIRY_DEFAULT_SECONDS, horizon or 0)
    if horizon is not None and is_known(ttl) and ttl < horizon:
        raise ComponentArgumentError(
            f"{NAME}: idempotency_ttl_seconds={ttl} expires keys before the last replay ends ({horizon} s after "
            f"a record's arrival: maximum_record_age_seconds + the replay window); a replayed record could be "
            f"applied twice. Use at least {horizon}.", "idempotency_ttl_seconds")
    return IdempotentStreamNumbers(numbers=numbers, retries=retries, max_age=max_age, ttl=ttl)


class IdempotentStreamConsumer(pulumi.ComponentResource, StreamConsumerOutputs):
    """A Kinesis consumer whose records may be retried because each one's effect is recorded once in an
    idempotency store: the stream mapping bisects and retries a failing batch, then parks it in the
    Retry-DLQ, whose records the same function reads back from the stream and replays; what fails
    every replay lands in the Unrecoverable-DLQ, which alarms."""

    idempotency_table_name: pulumi.Output[str]
    """Name of the idempotency table (processed records' keys)."""

    def __init__(self, name: str, args: IdempotentStreamConsumerArgs = None,  # type: ignore[assignment]  # Pulumi schema inference reads this annotation; Optional[...] breaks it
                 opts: Optional[pulumi.ResourceOptions] = None):
        args = cast(IdempotentStreamConsumerArgs, declared(self, TYPE, name, args, opts, SETTINGS))  # as its rows parse it
        checked = validate(args)
        require_fits(NAME, name, shared.PHYSICAL_NAMES)
        numbers = checked.numbers

        source = shared.stream_source(name, args, numbers, self)
        dlqs = shared.dlq_pair(name, numbers, self, args.get("alarm_actions"),
                        f"{name}: a stream record failed every replay (or expired from the stream) and is parked in "
                        "the Unrecoverable-DLQ; its body holds the shard and sequence numbers. Fix the cause, then "
                        "move it back to the Retry-DLQ while the records are still in the stream.")
        table = idempotency_table(f"{name}-idempotency", parent=self, protect=args.get("protect_data", True))
        ledger = shared.reference_ledger(name, args, self)
        key_path = args.get("idempotency_key_jmespath") or (REFERENCE_KEY_JMESPATH if ledger is not None else None)
        environment: dict[str, pulumi.Input[str]] = {
            handler_config.IDEMPOTENCY_TABLE_NAME: table.name,
            handler_config.IDEMPOTENCY_EXPIRY_SECONDS: pulumi.Output.from_input(checked.ttl).apply(str),
            handler_config.UNRECOVERABLE_DLQ_URL: dlqs.unrecoverable.queue.url,
            # The only stream the handler reads ranges back from (a Retry-DLQ message naming another is parked).
            handler_config.SOURCE_STREAM_ARN: source.stream_arn,
        }
        if key_path is not None:
            environment[handler_config.IDEMPOTENCY_KEY_JMESPATH] = key_path
        function = shared.consumer_function(
            name, args, numbers, self, component=NAME, default_handler=DEFAULT_HANDLER, environment=environment, ledger=ledger,
            statements=[
                *source.read_statements,
                # The mapping's on-failure destination is sent with the function's role.
                *shared.retry_dlq_statements(dlqs),
                # Ranges already trimmed from the stream are parked by the handler.
                Statement(["sqs:SendMessage"], [dlqs.unrecoverable.queue.arn]),
                Statement(["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"],
                          [table.arn]),
            ])
        shared.stream_mapping(
            name, args, source, function, self,
            bisect_batch_on_function_error=True,
            maximum_retry_attempts=checked.retries,
            maximum_record_age_in_seconds=checked.max_age,
            destination_config={"on_failure": {"destination_arn": dlqs.retry.arn}},
        )
        shared.retry_mapping(name, args, function, dlqs.retry, self)
        shared.consumer_alarms(name, args, numbers, function, dlqs.retry, self)

        self.expose_children(dlqs, function)
        self.idempotency_table: aws.dynamodb.Table = table
        publish(self, {**shared.stream_outputs(source, dlqs, function), "idempotency_table_name": table.name,
                       "ledger_table_name": pulumi.Output.from_input(ledger.name if ledger is not None else None)})
