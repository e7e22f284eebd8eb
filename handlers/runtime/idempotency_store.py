"""Powertools' DynamoDB idempotency store, with every call retried on transient errors.

Why a subclass: Powertools calls DynamoDB once per step (INPROGRESS put, COMPLETED update, delete
after a failure) and turns any error into IdempotencyPersistenceLayerError at once. A throttled
delete after a failed record leaves its INPROGRESS record behind, and every retry of that record
then fails with IdempotencyAlreadyInProgressError until the record expires. Retrying each call here
(`retry.call_with_retries`: backoff, full jitter, the invocation's time budget) keeps Powertools'
behaviour and only stops transient errors from becoming those failures. Conditional-check failures
are not transient, so Powertools still sees "already exists" exactly as before.
"""

from typing import Any

from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

from integration_blueprint.handlers.runtime.retry import call_with_retries


class RetryingDynamoDBPersistenceLayer(DynamoDBPersistenceLayer):
    def _get_record(self, idempotency_key) -> Any:
        return call_with_retries(lambda: super(RetryingDynamoDBPersistenceLayer, self)._get_record(idempotency_key))

    def _put_record(self, data_record) -> None:
        call_with_retries(lambda: super(RetryingDynamoDBPersistenceLayer, self)._put_record(data_record))

    def _update_record(self, data_record) -> None:
        call_with_retries(lambda: super(RetryingDynamoDBPersistenceLayer, self)._update_record(data_record))

    def _delete_record(self, data_record) -> None:
        call_with_retries(lambda: super(RetryingDynamoDBPersistenceLayer, self)._delete_record(data_record))
