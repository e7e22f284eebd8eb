"""DynamoDB tables for idempotency records and ledgers: on-demand, encrypted, TTL always on.

Public: `idempotency_table`.
"""

from typing import Optional

import pulumi
import pulumi_aws as aws

from integration_blueprint.core import aws_limits

__all__ = ["idempotency_table"]


def idempotency_table(name: str, *, parent: pulumi.Resource,
                      hash_key: str = aws_limits.POWERTOOLS_IDEMPOTENCY_KEY_ATTR,
                      range_key: Optional[str] = None,
                      ttl_attribute: str = aws_limits.POWERTOOLS_IDEMPOTENCY_TTL_ATTR,
                      protect: pulumi.Input[bool] = True) -> aws.dynamodb.Table:
    """`protect` turns on point-in-time recovery and deletion protection (production data).

    Defaults match the Powertools idempotency schema (pk `id`, TTL `expiration`)."""
    attributes = [aws.dynamodb.TableAttributeArgs(name=hash_key, type="S")]
    if range_key:
        attributes.append(aws.dynamodb.TableAttributeArgs(name=range_key, type="S"))
    return aws.dynamodb.Table(
        name,
        billing_mode="PAY_PER_REQUEST",
        hash_key=hash_key,
        range_key=range_key,
        attributes=attributes,
        ttl=aws.dynamodb.TableTtlArgs(attribute_name=ttl_attribute, enabled=True),
        point_in_time_recovery=aws.dynamodb.TablePointInTimeRecoveryArgs(enabled=protect),
        deletion_protection_enabled=protect,
        server_side_encryption=aws.dynamodb.TableServerSideEncryptionArgs(enabled=True),
        opts=pulumi.ResourceOptions(parent=parent),
    )
