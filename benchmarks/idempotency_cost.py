"""What exactly-once costs in DynamoDB: the billing consumer's single conditional write, side by
side with (a) Powertools' idempotency utility and (b) a hand-written put-INPROGRESS /
update-COMPLETED store, each charging 1,000 new charges and then 1,000 duplicates against moto,
first in one warm container, then with a cold container per batch of 10 (a cold container has
no tenant cache: it pays a read per tenant it meets).

DynamoDBMeter bills each request the way DynamoDB on-demand does (units below), from the API
parameters (botocore's before-parameter-build event, before serialization):
- writes: 1 write unit per started KB of the item, per item; a failed conditional write still
  bills; BatchWriteItem bills every put and delete; TransactWriteItems bills each item twice;
- reads: 1 read unit per started 4 KB read, half for an eventually consistent read (the
  default); Query and Scan add up the items' sizes, then round; a missing item bills as one
  smallest read; TransactGetItems bills twice.
Item sizes and units: integration_blueprint.drill.cost (the drill's cost per million uses the
same rules), units from aws_limits. A write's units come from the item in the request; an UpdateItem's
or a read's item is looked up in the table, unmetered (AWS bills the stored item's size).

Last line: `fifo_consumer wcu_per_new=X wcu_per_duplicate=Y requests_per_new=A requests_per_duplicate=B`
Target: wcu_per_new <= 1 and requests_per_duplicate <= 1.
"""

import os
from collections import Counter

os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")

import boto3  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402
from moto import mock_aws  # noqa: E402

from integration_blueprint.core import patches  # noqa: E402
from integration_blueprint.core.aws_limits import DYNAMODB_TRANSACTION_FACTOR as TRANSACTION_FACTOR  # noqa: E402
from integration_blueprint.drill.cost import item_size, read_units, write_units  # noqa: E402
from integration_blueprint.handlers.reference import billing_consumer  # noqa: E402
from integration_blueprint.handlers.runtime.billing import Charge  # noqa: E402
from integration_blueprint.sandbox import shortcuts  # noqa: E402
from integration_blueprint.sandbox.lambda_context import LocalLambdaContext  # noqa: E402

CHARGES = 1000
TENANTS = 20
BATCH = 10  # SQS FIFO event source mapping batch size

class DynamoDBMeter:
    """Counts one client's requests and bills its write and read units as DynamoDB does.

    `lookup` answers a stored item by table and key without being metered (a second client):
    an update or a read bills the stored item's size, which the request does not carry."""

    def __init__(self, client, lookup=None):
        self.requests: Counter = Counter()
        self.wcu = 0.0
        self.rcu = 0.0
        self.item_sizes: list[int] = []
        self._lookup = lookup or (lambda table, key: None)
        # before-parameter-build receives the API parameters as the caller gave them
        # (before-call sees only the serialized request).
        client.meta.events.register("before-parameter-build.dynamodb", self._bill)

    def _stored_size(self, table: str, key: dict) -> int:
        item = self._lookup(table, key)
        return item_size(item) if item else 0

    def _write(self, table: str, request: dict, factor: int = 1) -> None:
        if "Item" in request:  # a put
            size = item_size(request["Item"])
        else:  # an update, delete or condition check: the stored item (key only if there is none)
            size = max(self._stored_size(table, request["Key"]), item_size(request["Key"]))
        self.item_sizes.append(size)
        self.wcu += factor * write_units(size)

    def _bill(self, params, model, **_):
        operation = model.name
        self.requests[operation] += 1
        if operation in ("PutItem", "UpdateItem", "DeleteItem"):
            self._write(params["TableName"], params)
        elif operation == "BatchWriteItem":
            for table, requests in params["RequestItems"].items():
                for request in requests:
                    self._write(table, request.get("PutRequest") or request["DeleteRequest"])
        elif operation == "TransactWriteItems":
            for entry in params["TransactItems"]:
                (_, request), = entry.items()
                self._write(request["TableName"], request, TRANSACTION_FACTOR)
        elif operation == "GetItem":
            size = self._stored_size(params["TableName"], params["Key"])
            self.rcu += read_units(size, params.get("ConsistentRead", False))
        elif operation == "BatchGetItem":
            for table, request in params["RequestItems"].items():
                for key in request["Keys"]:
                    self.rcu += read_units(self._stored_size(table, key), request.get("ConsistentRead", False))
        elif operation == "TransactGetItems":
            for entry in params["TransactItems"]:
                get = entry["Get"]
                self.rcu += TRANSACTION_FACTOR * read_units(self._stored_size(get["TableName"], get["Key"]), True)

    def bill_query(self, items: list[dict], consistent: bool = False) -> None:
        """A Query or Scan bills the summed size of the items it read, rounded once."""
        self.rcu += read_units(sum(item_size(item) for item in items), consistent)

    def snapshot(self):
        return sum(self.requests.values()), self.wcu, self.rcu


def table_lookup(client):
    """A stored item by table and key, read with `client` (not the metered one)."""
    def lookup(table: str, key: dict):
        return client.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
    return lookup


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
    return [{"Records": records[i:i + BATCH]} for i in range(0, len(records), BATCH)]


def measure(run_batch):
    """Per new charge, then per duplicate: (requests, write units, read units)."""
    items = charges()
    results = []
    for prefix in ("new", "dup"):
        before = run_batch.meter.snapshot()
        for event in sqs_events(items, prefix):
            response = run_batch(event)
            assert not response["batchItemFailures"], response
        after = run_batch.meter.snapshot()
        results.append(tuple((a - b) / CHARGES for a, b in zip(after, before)))
    return results


def ours(client, cold=False):
    def run(event):
        if cold or billing_consumer._ledger is None:  # a new container: no tenant cache
            billing_consumer._ledger = billing_consumer.Ledger("ledger", "accounts", 90, client=client)
        return billing_consumer.lambda_handler(event, LocalLambdaContext("consumer"))
    billing_consumer._ledger = None
    return run


def powertools(client, cold=False):  # no cache to lose: use_local_cache=False
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


def inprogress_store(client, cold=False):  # no cache to lose
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
    # moto without its repeated work (same answers: tests/test_emulator_shortcuts.py)
    with patches.applied(shortcuts.NAMES):
        measure_all()


def measure_all():
    rows = []
    sizes: list[int] = []
    # Only ours keeps a cache in its container; the other two cost the same cold.
    for container, label, factory in (("warm", "conditional ledger write (ours)", ours),
                                      ("warm", "Powertools idempotency utility", powertools),
                                      ("warm", "put-INPROGRESS/update-COMPLETED", inprogress_store),
                                      ("cold", "conditional ledger write (ours)", ours)):
        with mock_aws():
            client = boto3.client("dynamodb")
            create_table(client, "accounts", "tenant", "sk")
            create_table(client, "ledger", "pk", "sk")
            create_table(client, "idempotency", "id")
            for t in range(TENANTS):
                client.put_item(TableName="accounts", Item={"tenant": {"S": f"tenant-{t}"},
                                                            "sk": {"S": "tenant"}, "status": {"S": "active"}})
            meter = DynamoDBMeter(client, lookup=table_lookup(boto3.client("dynamodb")))
            run = factory(client, cold=container == "cold")
            run.meter = meter
            new, dup = measure(run)
            charged = client.scan(TableName="ledger", Select="COUNT")["Count"]
            assert charged == CHARGES, f"{label}: {charged} ledger rows for {CHARGES} charges"
            sizes += meter.item_sizes
            rows.append((f"{label} [{container}]", new, dup))

    print(f"{CHARGES} new charges, then the same {CHARGES} delivered again, in batches of {BATCH}; "
          f"items written: {min(sizes)}-{max(sizes)} bytes ({write_units(max(sizes))} write unit each); "
          "warm: one container throughout, cold: a new container per batch")
    print(f"{'store':42} {'wcu/new':>8} {'wcu/dup':>8} {'rcu/new':>8} {'rcu/dup':>8} {'req/new':>8} {'req/dup':>8}")
    for label, (req_new, wcu_new, rcu_new), (req_dup, wcu_dup, rcu_dup) in rows:
        print(f"{label:42} {wcu_new:8.3f} {wcu_dup:8.3f} {rcu_new:8.3f} {rcu_dup:8.3f} {req_new:8.3f} {req_dup:8.3f}")
    _, (req_new, wcu_new, _), (req_dup, wcu_dup, _) = rows[0]
    print(f"fifo_consumer wcu_per_new={wcu_new:g} wcu_per_duplicate={wcu_dup:g} "
          f"requests_per_new={req_new:g} requests_per_duplicate={req_dup:g}")


if __name__ == "__main__":
    main()
