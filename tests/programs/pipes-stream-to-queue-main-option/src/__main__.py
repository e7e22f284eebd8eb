"""Inventory changes piped from the table's stream to a queue, by an EventBridge pipe with AWS's
defaults: no dead-letter config and unbounded retries on the stream source."""
import pulumi
import pulumi_aws as aws
from pipe_role import pipe_role

inventory = aws.dynamodb.Table(
    "inventory",
    attributes=[{"name": "sku", "type": "S"}],
    hash_key="sku",
    billing_mode="PAY_PER_REQUEST",
    stream_enabled=True,
    stream_view_type="NEW_AND_OLD_IMAGES",
    server_side_encryption={"enabled": True},
)
changes = aws.sqs.Queue("inventory-changes", message_retention_seconds=1209600)

role = pipe_role("inventory-pipe", inventory.stream_arn, changes.arn)

aws.pipes.Pipe(
    "inventory-to-queue",
    role_arn=role.arn,
    source=inventory.stream_arn,
    target=changes.arn,
    source_parameters={"dynamodb_stream_parameters": {"starting_position": "LATEST", "batch_size": 10}},
)

pulumi.export("queue_url", changes.url)
