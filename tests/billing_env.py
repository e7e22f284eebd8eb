"""The FIFO billing pattern in moto: accounts and ledger tables, the charges queue and its FIFO DLQ,
the reference consumer behind a local SQS event source mapping (the `billing_env` fixture in
conftest.py makes one), and the helpers its tests read the outcome with."""

import json
from contextlib import contextmanager

import boto3
from moto import mock_aws

from integration_blueprint.handlers.reference import billing_consumer, billing_dispatcher
from integration_blueprint.handlers.runtime.billing import Charge
from integration_blueprint.sandbox.lambda_context import LocalLambdaContext
from integration_blueprint.sandbox.sqs_esm import SqsEventSourceMapping

MONTH = "2026-10"
TENANTS = {"acme": {"alice": 1200, "bob": 800, "carol": 500}, "globex": {"dave": 3000, "erin": 700}}


def ledger_rows(ddb):
    return ddb.scan(TableName="ledger")["Items"]


def balances(ddb):
    totals = {}
    for row in ledger_rows(ddb):
        totals[row["pk"]["S"]] = totals.get(row["pk"]["S"], 0) + int(row["amount"]["N"])
    return totals


def queue_depth(sqs, url):
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages",
                                                                   "ApproximateNumberOfMessagesNotVisible"])
    return sum(int(v) for v in attrs["Attributes"].values())


def dispatch(event=None):
    return billing_dispatcher.lambda_handler(event or {"month": MONTH}, LocalLambdaContext("dispatcher"))


def sqs_record(message_id, body, group, receive_count=1):
    return {"messageId": message_id, "receiptHandle": f"rh-{message_id}", "body": body,
            "attributes": {"ApproximateReceiveCount": str(receive_count), "MessageGroupId": group,
                           "MessageDeduplicationId": message_id, "SequenceNumber": "1"},
            "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs",
            "eventSourceARN": "arn:aws:sqs:eu-west-1:123456789012:charges.fifo", "awsRegion": "eu-west-1"}


def charge_body(tenant, employee, amount=100):
    return Charge(tenant=tenant, employee=employee, month=MONTH, amount=amount, currency="EUR").to_message()


@contextmanager
def billing_environment(monkeypatch):
    with mock_aws():
        ddb = boto3.client("dynamodb")
        for table, pk, sk in (("accounts", "tenant", "sk"), ("ledger", "pk", "sk")):
            ddb.create_table(TableName=table, BillingMode="PAY_PER_REQUEST",
                             KeySchema=[{"AttributeName": pk, "KeyType": "HASH"},
                                        {"AttributeName": sk, "KeyType": "RANGE"}],
                             AttributeDefinitions=[{"AttributeName": pk, "AttributeType": "S"},
                                                   {"AttributeName": sk, "AttributeType": "S"}])
        accounts = boto3.resource("dynamodb").Table("accounts")
        for tenant, employees in TENANTS.items():
            accounts.put_item(Item={"tenant": tenant, "sk": "tenant", "status": "active"})
            for employee, amount in employees.items():
                accounts.put_item(Item={"tenant": tenant, "sk": f"employee#{employee}", "employee": employee,
                                        "monthly_amount": amount, "currency": "EUR", "billable": True})
        accounts.put_item(Item={"tenant": "acme", "sk": "employee#zed", "employee": "zed",
                                "monthly_amount": 999, "currency": "EUR", "billable": False})
        sqs = boto3.client("sqs")
        dlq_url = sqs.create_queue(QueueName="charges-dlq.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        queue_url = sqs.create_queue(QueueName="charges.fifo", Attributes={
            "FifoQueue": "true", "ContentBasedDeduplication": "false", "VisibilityTimeout": "180",
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 5})})["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        monkeypatch.setenv("ACCOUNTS_TABLE_NAME", "accounts")
        monkeypatch.setenv("LEDGER_TABLE_NAME", "ledger")
        monkeypatch.setenv("CHARGE_QUEUE_URL", queue_url)
        monkeypatch.setattr(billing_consumer, "_ledger", None)
        consumer = SqsEventSourceMapping(sqs=sqs, queue_url=queue_url, queue_arn=queue_arn,
                                         handler=billing_consumer.lambda_handler, batch_size=10)
        yield type("Env", (), {"sqs": sqs, "ddb": ddb, "queue_url": queue_url, "dlq_url": dlq_url,
                               "consumer": consumer})
