"""What exactly-once costs in DynamoDB: the billing consumer's single conditional write, side by
side with (a) Powertools' idempotency utility and (b) a hand-written put-INPROGRESS /
update-COMPLETED store, each charging 1,000 new charges and then 1,000 duplicates against moto.

Requests are counted at the botocore layer. Write units follow DynamoDB's pricing rules for items
under 1 KB: 1 WCU per PutItem/UpdateItem/DeleteItem (a failed conditional write still costs its
unit), 2 per item of a TransactWriteItems; reads cost no write units.

Last line: `fifo_consumer wcu_per_new=X wcu_per_duplicate=Y requests_per_new=A requests_per_duplicate=B`
Target: wcu_per_new <= 1 and requests_per_duplicate <= 1.
"""

import os
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")

import boto3  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402
from moto import mock_aws  # noqa: E402

from handlers import billing_consumer  # noqa: E402
from integration_blueprint.handlers.runtime.billing import Charge  # noqa: E402
from integration_blueprint.sandbox.lambda_context import LocalLambdaContext  # noqa: E402

CHARGES = 1000
TENANTS = 20
WRITE_OPERATIONS = {"PutItem", "UpdateItem", "DeleteItem"}


class DynamoDBMeter:
    """Counts requests and write units of one client."""

    def __init__(self, client):
        self.requests = Counter()
        self.wcu = 0
        client.meta.events.register("before-call.dynamodb.*", self._count)

    def _count(self, model, params, **_):
        self.requests[model.name] += 1
        if model.name in WRITE_OPERATIONS:
            self.wcu += 1
        elif model.name == "TransactWriteItems":
            self.wcu += 2 * len(params.get("TransactItems", []))

    def snapshot(self):
        return sum(self.requests.values()), self.wcu


def create_table(ddb, name, pk, sk=None):
    keys = [{"AttributeName": pk, "KeyType": "HASH"}] + ([{"AttributeName": sk, "KeyType": "RANGE"}] if sk else [])
    attrs = [{"AttributeName": k["AttributeName"], "AttributeType": "S"} for k in keys]
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST", KeySchema=keys, AttributeDefinitions=attrs)


def charges():
    return [Charge(tenant=f"tenant-{i % TENANTS}", employee=f"employee-{i}", month="2026-10", amount=100 + i,
                   currency="EUR") for i in range(CHARGES)]


def sqs_events(items, prefix):
    records = [{"messageId": f"{prefix}-{i}", "receiptHandle": "r", "body": c.to_message(),
                "attributes": {"ApproximateReceiveCount": "1", "MessageGroupId": c.message_group_id},
                "messageAttributes": {}, "eventSource": "aws:sqs", "awsRegion": "eu-west-1",
                "eventSourceARN": "arn:aws:sqs:eu-west-1:123456789012:charges.fifo"} for i, c in enumerate(items)]
    return [{"Records": records[i:i + 10]} for i in range(0, len(records), 10)]


def measure(run_batch):
    """(per-new, per-duplicate) of (requests, wcu) for a function that processes one event."""
    items = charges()
    results = []
    for prefix in ("new", "dup"):
        before = run_batch.meter.snapshot()
        for event in sqs_events(items, prefix):
            response = run_batch(event)
            assert not response["batchItemFailures"], response
        after = run_batch.meter.snapshot()
        results.append(((after[0] - before[0]) / CHARGES, (after[1] - before[1]) / CHARGES))
    return results


def ours(client):
    billing_consumer._ledger = billing_consumer.Ledger("ledger", "accounts", 90, client=client)

    def run(event):
        return billing_consumer.lambda_handler(event, LocalLambdaContext("consumer"))
    return run


def powertools(client):
    from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
    from aws_lambda_powertools.utilities.idempotency import (
        DynamoDBPersistenceLayer,
        IdempotencyConfig,
        idempotent_function,
    )

    persistence = DynamoDBPersistenceLayer(table_name="idempotency", boto3_client=client)
    config = IdempotencyConfig(event_key_jmespath="idempotency_key", expires_after_seconds=90 * 86400,
                               use_local_cache=False)

    @idempotent_function(data_keyword_argument="charge", config=config, persistence_store=persistence)
    def apply(charge: dict):
        client.put_item(TableName="ledger", Item={"pk": {"S": charge["tenant"]},
                                                  "sk": {"S": f"charge#{charge['idempotency_key']}"},
                                                  "amount": {"N": str(charge["amount"])}})
        return {"charged": True}

    import json

    def run(event):
        context = LocalLambdaContext("consumer")
        config.register_lambda_context(context)
        return process_partial_response(event, lambda record: apply(charge=json.loads(record.body)),
                                        BatchProcessor(EventType.SQS), context)
    return run


def inprogress_store(client):
    """put INPROGRESS (conditional) -> charge -> update COMPLETED, the classic two-phase store."""
    import json

    def apply(record):
        charge = json.loads(record["body"])
        key = charge["idempotency_key"]
        try:
            client.put_item(TableName="idempotency", Item={"id": {"S": key}, "status": {"S": "INPROGRESS"}},
                            ConditionExpression="attribute_not_exists(id)",
                            ReturnValuesOnConditionCheckFailure="ALL_OLD")
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return  # already done (a real store would also check for a stale INPROGRESS)
            raise
        client.put_item(TableName="ledger", Item={"pk": {"S": charge["tenant"]}, "sk": {"S": f"charge#{key}"},
                                                  "amount": {"N": str(charge["amount"])}})
        client.update_item(TableName="idempotency", Key={"id": {"S": key}},
                           UpdateExpression="SET #s = :c", ExpressionAttributeNames={"#s": "status"},
                           ExpressionAttributeValues={":c": {"S": "COMPLETED"}})

    def run(event):
        for record in event["Records"]:
            apply(record)
        return {"batchItemFailures": []}
    return run


def main():
    rows = []
    for label, factory in (("conditional ledger write (ours)", ours),
                           ("Powertools idempotency utility", powertools),
                           ("put-INPROGRESS/update-COMPLETED", inprogress_store)):
        with mock_aws():
            client = boto3.client("dynamodb")
            create_table(client, "accounts", "tenant", "sk")
            create_table(client, "ledger", "pk", "sk")
            create_table(client, "idempotency", "id")
            for t in range(TENANTS):
                client.put_item(TableName="accounts", Item={"tenant": {"S": f"tenant-{t}"}, "sk": {"S": "tenant"},
                                                            "status": {"S": "active"}})
            meter = DynamoDBMeter(client)
            run = factory(client)
            run.meter = meter
            (req_new, wcu_new), (req_dup, wcu_dup) = measure(run)
            charged = client.scan(TableName="ledger", Select="COUNT")["Count"]
            assert charged == CHARGES, f"{label}: {charged} ledger rows for {CHARGES} charges"
            rows.append((label, wcu_new, wcu_dup, req_new, req_dup))

    print(f"{CHARGES} new charges, then the same {CHARGES} delivered again (1 KB items)")
    print(f"{'store':34} {'wcu/new':>8} {'wcu/dup':>8} {'req/new':>8} {'req/dup':>8}")
    for label, wcu_new, wcu_dup, req_new, req_dup in rows:
        print(f"{label:34} {wcu_new:8.3f} {wcu_dup:8.3f} {req_new:8.3f} {req_dup:8.3f}")
    _, wcu_new, wcu_dup, req_new, req_dup = rows[0]
    print(f"fifo_consumer wcu_per_new={wcu_new:g} wcu_per_duplicate={wcu_dup:g} "
          f"requests_per_new={req_new:g} requests_per_duplicate={req_dup:g}")


if __name__ == "__main__":
    main()
