"""How many Lambda invocations it takes to isolate poison records, per Kinesis consumer pattern.

For batch sizes 10, 100, 1000 and 1, 2, 5 poison records per batch (evenly spaced), the real
reference handlers run behind blueprint/kinesis_esm.py, which replays Lambda's documented stream
semantics against a moto stream:
- bisect (IdempotentStreamConsumer): BisectBatchOnFunctionError on, MaximumRetryAttempts at the
  component default; a failed batch is split in two until the poison record is alone, retried, then
  sent to the Retry-DLQ (metadata only). Counted until every poison record is in the Retry-DLQ.
- app-DLQ (NonIdempotentStreamConsumer): no bisect, no retries, ReportBatchItemFailures; the
  handler inserts each poison record into the Retry-DLQ itself.
Retry-DLQ replays are the same for both patterns and are not counted here.

The whitepaper's estimate: about log2(batch) extra invocations per poison record for bisect (it
counts the failing half at each level, e.g. 7 for one poison record in 100), one invocation per
batch for the app-DLQ pattern. Each run also checks the reference side effect: every healthy
record applied exactly once.

    .venv/bin/python benchmarks/poison_isolation.py
"""

from __future__ import annotations

import json
import logging
import math
import os
import time

for key, value in {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "eu-west-1",
                   "POWERTOOLS_SERVICE_NAME": "poison-isolation"}.items():
    os.environ[key] = value  # moto only: nothing leaves the machine
for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
    os.environ.pop(key, None)

import boto3  # noqa: E402
from aws_lambda_powertools import Logger  # noqa: E402
from moto import mock_aws  # noqa: E402

from integration_blueprint.components.idempotent_stream_consumer import DEFAULT_MAXIMUM_RETRY_ATTEMPTS  # noqa: E402
from integration_blueprint.handlers.reference.reference_ledger import BUSINESS_KEY_JMESPATH, AccountLedger  # noqa: E402
from integration_blueprint.handlers.runtime import app_dlq_stream, idempotent_stream  # noqa: E402
from integration_blueprint.handlers.runtime.idempotent_stream import IdempotentStreamSettings  # noqa: E402
from integration_blueprint.sandbox.kinesis_esm import KinesisEventSourceMapping, KinesisMappingSettings  # noqa: E402

BATCH_SIZES = (10, 100, 1000)
POISON_COUNTS = (1, 2, 5)
REGION = "eu-west-1"


def quiet_logger() -> Logger:
    return Logger(service="poison-isolation", level="CRITICAL", logger_handler=logging.NullHandler())


def poison_positions(batch: int, poison: int) -> set[int]:
    return {int((i + 0.5) * batch / poison) for i in range(poison)}


def setup(batch: int, poison: int):
    kinesis, sqs, ddb = boto3.client("kinesis"), boto3.client("sqs"), boto3.client("dynamodb")
    kinesis.create_stream(StreamName="bench", ShardCount=1)
    retry_url = sqs.create_queue(QueueName="retry-dlq")["QueueUrl"]
    unrecoverable_url = sqs.create_queue(QueueName="unrecoverable-dlq")["QueueUrl"]
    for table, key in (("idempotency", "id"), ("ledger", "account")):
        ddb.create_table(TableName=table, BillingMode="PAY_PER_REQUEST",
                         KeySchema=[{"AttributeName": key, "KeyType": "HASH"}],
                         AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}])
    poisoned = poison_positions(batch, poison)
    entries = [{"PartitionKey": "acct-1", "Data": json.dumps(
        {"eventId": f"e-{i}", "account": "acct-1", "amount": 1, "poison": i in poisoned}).encode()}
        for i in range(batch)]
    for start in range(0, batch, 500):
        kinesis.put_records(StreamName="bench", Records=entries[start:start + 500])
    ledger = AccountLedger("ledger", client=ddb)
    return kinesis, sqs, ddb, retry_url, unrecoverable_url, ledger


def depth(sqs, url) -> int:
    return int(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
               ["Attributes"]["ApproximateNumberOfMessages"])


def run_bisect(batch: int, poison: int) -> tuple[int, int, bool]:
    with mock_aws():
        kinesis, sqs, ddb, retry_url, unrecoverable_url, ledger = setup(batch, poison)
        handler = idempotent_stream.make_handler(
            ledger, logger=quiet_logger(), kinesis=kinesis, sqs=sqs, dynamodb=ddb,
            settings=IdempotentStreamSettings(idempotency_table="idempotency", unrecoverable_dlq_url=unrecoverable_url,
                                              key_jmespath=BUSINESS_KEY_JMESPATH))
        mapping = KinesisEventSourceMapping(
            kinesis=kinesis, sqs=sqs, stream_name="bench", handler=handler, region=REGION,
            settings=KinesisMappingSettings(batch_size=batch, bisect_batch_on_function_error=True,
                                            maximum_retry_attempts=DEFAULT_MAXIMUM_RETRY_ATTEMPTS,
                                            on_failure_queue_url=retry_url))
        stats = mapping.drain()
        correct = ledger.balance("acct-1") == (batch - poison, batch - poison) and depth(sqs, retry_url) == poison
        return stats.invocations, stats.function_errors, correct


def run_app_dlq(batch: int, poison: int) -> tuple[int, bool]:
    with mock_aws():
        kinesis, sqs, ddb, retry_url, unrecoverable_url, ledger = setup(batch, poison)
        handler = app_dlq_stream.make_handler(ledger, retry_dlq_url=retry_url, logger=quiet_logger(), sqs=sqs)
        mapping = KinesisEventSourceMapping(
            kinesis=kinesis, sqs=sqs, stream_name="bench", handler=handler, region=REGION,
            settings=KinesisMappingSettings(batch_size=batch, maximum_retry_attempts=0,
                                            report_batch_item_failures=True, on_failure_queue_url=unrecoverable_url))
        stats = mapping.drain()
        correct = (ledger.balance("acct-1") == (batch - poison, batch - poison) and depth(sqs, retry_url) == poison
                   and depth(sqs, unrecoverable_url) == 0)
        return stats.invocations, correct


def main() -> None:
    started = time.monotonic()
    print(f"Invocations to isolate poison records (bisect: MaximumRetryAttempts={DEFAULT_MAXIMUM_RETRY_ATTEMPTS}, "
          "the IdempotentStreamConsumer default; app-DLQ: no retries, no bisect)")
    header = (f"{'batch':>6} {'poison':>6} | {'bisect':>7} {'extra':>6} {'failed':>6} {'paper ~k*log2':>13} | "
              f"{'app-dlq':>7} {'extra':>6} {'paper':>5} | effects once")
    print(header)
    print("-" * len(header))
    results = {}
    for batch in BATCH_SIZES:
        for poison in POISON_COUNTS:
            bisect, failed, bisect_ok = run_bisect(batch, poison)
            app_dlq, app_ok = run_app_dlq(batch, poison)
            results[(batch, poison)] = (bisect, app_dlq)
            estimate = poison * math.ceil(math.log2(batch))
            print(f"{batch:>6} {poison:>6} | {bisect:>7} {bisect - 1:>6} {failed:>6} {estimate:>13} | "
                  f"{app_dlq:>7} {app_dlq - 1:>6} {1:>5} | {'yes' if bisect_ok and app_ok else 'NO'}")
    print(f"(extra = invocations beyond the first; failed = invocations that raised. Bisect invokes both halves "
          f"at every level and retries the isolated record {DEFAULT_MAXIMUM_RETRY_ATTEMPTS} times; the paper "
          f"counts the failing half only. {time.monotonic() - started:.1f} s)")
    bisect, app_dlq = results[(100, 1)]
    print(f"poison_isolation bisect_100x1={bisect} app_dlq_100x1={app_dlq}")


if __name__ == "__main__":
    main()
