"""The benchmarks' meters bill what AWS bills: a wrong meter makes every figure measured with it wrong."""

import importlib.util
import os
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str):
    """A benchmark as a module. Its environment defaults (a quiet Powertools log level, fake
    credentials) are for its own runs: the rest of the session keeps its environment."""
    saved = dict(os.environ)
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return module


@pytest.fixture(scope="module")
def idempotency_cost():
    return load("idempotency_cost")


@pytest.fixture
def table():
    with mock_aws():
        client = boto3.client("dynamodb")
        client.create_table(TableName="t", BillingMode="PAY_PER_REQUEST",
                            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
        yield client


def item(key: str, payload: int = 100) -> dict:
    return {"pk": {"S": key}, "payload": {"S": "x" * payload}}


def test_a_3_item_transaction_and_a_5_item_batch_bill_11_write_units(idempotency_cost, table):
    meter = idempotency_cost.DynamoDBMeter(table)

    table.transact_write_items(TransactItems=[{"Put": {"TableName": "t", "Item": item(f"tx-{i}")}} for i in range(3)])
    table.batch_write_item(RequestItems={"t": [{"PutRequest": {"Item": item(f"batch-{i}")}} for i in range(5)]})

    assert meter.wcu == 3 * 2 + 5  # transactional writes bill twice, every batch item bills
    assert meter.requests == {"TransactWriteItems": 1, "BatchWriteItem": 1}


def test_writes_bill_per_started_kilobyte_and_a_failed_condition_still_bills(idempotency_cost, table):
    meter = idempotency_cost.DynamoDBMeter(table)

    table.put_item(TableName="t", Item=item("big", payload=1500))  # about 1.5 KB: two units
    with pytest.raises(table.exceptions.ConditionalCheckFailedException):
        table.put_item(TableName="t", Item=item("big"), ConditionExpression="attribute_not_exists(pk)")

    assert meter.wcu == 2 + 1


def test_reads_bill_per_started_4_kb_of_the_stored_item_half_when_eventually_consistent(idempotency_cost, table):
    table.put_item(TableName="t", Item=item("small"))
    table.put_item(TableName="t", Item=item("large", payload=5000))  # about 5 KB: two read units
    meter = idempotency_cost.DynamoDBMeter(table, lookup=idempotency_cost.table_lookup(boto3.client("dynamodb")))

    table.get_item(TableName="t", Key={"pk": {"S": "small"}})
    table.get_item(TableName="t", Key={"pk": {"S": "small"}}, ConsistentRead=True)
    table.get_item(TableName="t", Key={"pk": {"S": "large"}}, ConsistentRead=True,
                   ProjectionExpression="pk")  # a projection does not shrink the bill
    table.get_item(TableName="t", Key={"pk": {"S": "missing"}})

    assert meter.rcu == 0.5 + 1 + 2 + 0.5
    assert meter.wcu == 0


def test_item_size_follows_the_developer_guides_rules(idempotency_cost):
    size = idempotency_cost.item_size

    assert size({"pk": {"S": "abc"}}) == 2 + 3
    assert size({"n": {"N": "12345"}}) == 1 + 4  # 5 significant digits: 3 bytes, plus 1
    assert size({"flag": {"BOOL": True}}) == 4 + 1
    assert size({"m": {"M": {"a": {"S": "xy"}}}}) == 1 + 3 + (1 + 1 + 2)
