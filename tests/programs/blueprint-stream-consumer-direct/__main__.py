"""The stream is the team's own (KMS-encrypted, 48 h); the blueprint component reads it by ARN, a
provider-computed output, with its settings from a structured config value."""
import pulumi
import pulumi_aws as aws

from integration_blueprint.components import IdempotentStreamConsumer

config = pulumi.Config()
retention_hours = config.get_int("streamRetentionHours") or 24
consumer = config.require_object("consumer")

payments = aws.kinesis.Stream(
    "payments",
    retention_period=retention_hours,
    stream_mode_details={"stream_mode": "ON_DEMAND"},
    encryption_type="KMS",
    kms_key_id="alias/aws/kinesis",
)

ledger = IdempotentStreamConsumer("ledger", {
    "stream_arn": payments.arn,
    "retention_hours": retention_hours,
    "batch_size": consumer["batchSize"],
    "maximum_retry_attempts": consumer["maximumRetryAttempts"],
    "idempotency_key_jmespath": "paymentId",
})

pulumi.export("stream", payments.name)
pulumi.export("stream_arn", payments.arn)
