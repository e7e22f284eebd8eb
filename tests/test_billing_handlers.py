"""The FIFO billing handlers against moto: exactly-once charges under duplicates, re-runs, poison
messages and transient errors, in order per tenant and month."""

import json

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from moto import mock_aws

from integration_blueprint.handlers.reference import billing_consumer, billing_dispatcher
from integration_blueprint.handlers.runtime.billing import Charge
from integration_blueprint.sandbox.lambda_context import LocalLambdaContext
from integration_blueprint.sandbox.sqs_esm import SqsEventSourceMapping

MONTH = "2026-10"
TENANTS = {"acme": {"alice": 1200, "bob": 800, "carol": 500}, "globex": {"dave": 3000, "erin": 700}}


@pytest.fixture
def aws(monkeypatch):
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


def test_billing_run_charges_every_billable_employee_exactly_once_across_reruns_and_redeliveries(aws):
    expected = {tenant: sum(emps.values()) for tenant, emps in TENANTS.items()}

    first = dispatch()
    second = dispatch()  # Scheduler fired twice: FIFO deduplication drops every resend
    assert first == {"month": MONTH, "sent": 5, "failed": 0}
    assert second["sent"] == 5 and queue_depth(aws.sqs, aws.queue_url) == 5

    aws.consumer.drain()
    assert balances(aws.ddb) == expected
    assert len(ledger_rows(aws.ddb)) == 5

    # A re-run after the 5-minute dedup window (here: after the messages were consumed) enqueues
    # again; the ledger's conditional write refuses every second charge.
    dispatch()
    assert queue_depth(aws.sqs, aws.queue_url) == 5
    aws.consumer.drain()
    assert balances(aws.ddb) == expected
    assert len(ledger_rows(aws.ddb)) == 5
    assert queue_depth(aws.sqs, aws.dlq_url) == 0
    keys = sorted(row["sk"]["S"] for row in ledger_rows(aws.ddb))
    assert keys[0] == "charge#acme:alice:2026-10"


def test_duplicate_delivery_in_one_batch_charges_once(aws):
    body = charge_body("acme", "alice", 1200)
    event = {"Records": [sqs_record("m1", body, "acme#2026-10"), sqs_record("m2", body, "acme#2026-10")]}
    response = billing_consumer.lambda_handler(event, LocalLambdaContext("consumer"))
    assert response == {"batchItemFailures": []}
    assert balances(aws.ddb) == {"acme": 1200}
    assert [row["message_id"]["S"] for row in ledger_rows(aws.ddb)] == ["m1"]


def test_a_charge_key_already_charged_with_another_amount_is_parked_naming_the_conflict_not_skipped(aws, caplog):
    aws.sqs.send_message(QueueUrl=aws.queue_url, MessageBody=charge_body("acme", "alice", 1200),
                         MessageGroupId="acme#2026-10", MessageDeduplicationId="first")
    aws.sqs.send_message(QueueUrl=aws.queue_url, MessageBody=charge_body("acme", "alice", 1300),  # a producer bug
                         MessageGroupId="acme#2026-10", MessageDeduplicationId="changed")
    aws.sqs.send_message(QueueUrl=aws.queue_url, MessageBody=charge_body("acme", "alice", 1200),  # a true duplicate
                         MessageGroupId="acme#2026-10", MessageDeduplicationId="again")

    aws.consumer.drain()

    assert balances(aws.ddb) == {"acme": 1200}  # charged once, with the first amount
    parked = aws.sqs.receive_message(QueueUrl=aws.dlq_url, MaxNumberOfMessages=10)["Messages"]
    # The conflict and what its group held behind it (FIFO order), for a person to decide.
    assert [json.loads(m["Body"])["amount"] for m in parked] == [1300, 1200]
    [reason] = {r.reason for r in caplog.records if r.getMessage() == "conflicting duplicate charge"}
    assert reason == ("conflicting duplicate: idempotency key acme:alice:2026-10 was already applied with a different "
                      "amount; neither applied nor skipped: parked for a person to decide")
    assert "duplicate charge skipped" not in caplog.text


def test_failed_record_holds_back_the_rest_of_its_group_while_other_groups_go_on(aws):
    event = {"Records": [
        sqs_record("a1", charge_body("acme", "alice"), "acme#2026-10"),
        sqs_record("a2", charge_body("initech", "bill"), "initech#2026-10"),  # unknown tenant
        sqs_record("a3", charge_body("initech", "ted"), "initech#2026-10"),
        sqs_record("b1", charge_body("globex", "dave"), "globex#2026-10"),
    ]}
    response = billing_consumer.lambda_handler(event, LocalLambdaContext("consumer"))
    assert response == {"batchItemFailures": [{"itemIdentifier": "a2"}, {"itemIdentifier": "a3"}]}
    assert balances(aws.ddb) == {"acme": 100, "globex": 100}


def test_poison_message_reaches_the_dlq_after_max_receive_count_with_its_group_held_behind_it(aws, caplog):
    """FIFO order means nothing in the poisoned group may run ahead of it. Lambda hands out the
    group's later messages in the same batch, so they are received (and counted) with the poison
    and move to the DLQ with it, in order: a redrive after the fix replays the group in order.
    Other groups are charged at once."""
    aws.sqs.send_message(QueueUrl=aws.queue_url, MessageBody='{"tenant": "acme", "amount": "lots"}',
                         MessageGroupId="acme#2026-10", MessageDeduplicationId="poison")
    aws.sqs.send_message(QueueUrl=aws.queue_url, MessageBody=charge_body("acme", "alice", 1200),
                         MessageGroupId="acme#2026-10", MessageDeduplicationId="acme:alice:2026-10")
    aws.sqs.send_message(QueueUrl=aws.queue_url, MessageBody=charge_body("globex", "dave", 3000),
                         MessageGroupId="globex#2026-10", MessageDeduplicationId="globex:dave:2026-10")

    aws.consumer.drain()

    assert balances(aws.ddb) == {"globex": 3000}
    parked = aws.sqs.receive_message(QueueUrl=aws.dlq_url, MaxNumberOfMessages=10,
                                     MessageSystemAttributeNames=["All"])["Messages"]
    assert [m["Body"] for m in parked] == ['{"tenant": "acme", "amount": "lots"}', charge_body("acme", "alice", 1200)]
    assert parked[0]["Attributes"]["ApproximateReceiveCount"] == "6"  # 5 failed receives + this look
    assert aws.consumer.stats.handler_errors == 0
    assert aws.consumer.stats.invocations == 5  # globex was charged in the first batch, beside the poison

    errors = [r for r in caplog.records if r.getMessage() == "malformed charge message"]
    assert len(errors) == 5
    assert errors[0].reason == "missing fields: employee, month, currency"
    assert errors[0].group_id == "acme#2026-10" and errors[0].receive_count == "1"
    assert errors[0].message_id == parked[0]["MessageId"]
    assert all("lots" not in str(vars(r)) for r in caplog.records)  # the payload is never logged

    # After the fix, a redrive (here: moving the messages back) charges the held-back charge once.
    for message in parked:
        aws.sqs.send_message(QueueUrl=aws.queue_url, MessageBody=message["Body"],
                             MessageGroupId=message["Attributes"]["MessageGroupId"],
                             MessageDeduplicationId=message["Attributes"]["MessageDeduplicationId"] + "-redrive")
        aws.sqs.delete_message(QueueUrl=aws.dlq_url, ReceiptHandle=message["ReceiptHandle"])
    aws.consumer.drain()
    assert balances(aws.ddb) == {"globex": 3000}  # the poison still blocks acme's group...
    assert queue_depth(aws.sqs, aws.dlq_url) == 2  # ...and both are parked again, nothing lost


def test_transient_errors_are_retried_in_the_handler_and_the_charge_succeeds_once(aws, monkeypatch):
    client = boto3.client("dynamodb")
    throttles = {"left": 2}

    def throttle_put_item(**_):
        if throttles["left"]:
            throttles["left"] -= 1
            response = AWSResponse("https://dynamodb", 400, {}, None)
            return response, {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"},
                              "ResponseMetadata": {"HTTPStatusCode": 400}}
        return None

    client.meta.events.register("before-call.dynamodb.PutItem", throttle_put_item)
    monkeypatch.setattr(billing_consumer, "_ledger", billing_consumer.Ledger("ledger", "accounts", 90, client=client))
    monkeypatch.setattr("integration_blueprint.handlers.runtime.retry.time.sleep", lambda _: None)

    event = {"Records": [sqs_record("m1", charge_body("acme", "alice", 1200), "acme#2026-10")]}
    assert billing_consumer.lambda_handler(event, LocalLambdaContext("consumer")) == {"batchItemFailures": []}
    assert throttles["left"] == 0
    assert balances(aws.ddb) == {"acme": 1200}


def test_semantic_errors_fail_at_once_without_in_handler_retries(aws, monkeypatch):
    calls = []
    monkeypatch.setattr("integration_blueprint.handlers.runtime.retry.time.sleep", lambda s: calls.append(s))
    event = {"Records": [sqs_record("m1", charge_body("initech", "bill"), "initech#2026-10")]}
    response = billing_consumer.lambda_handler(event, LocalLambdaContext("consumer"))
    assert response == {"batchItemFailures": [{"itemIdentifier": "m1"}]}
    assert calls == []


def test_dispatcher_bills_the_month_before_the_scheduled_time_and_hashes_overlong_keys():
    assert billing_dispatcher.billing_month({"scheduled_time": "2026-11-01T03:00:00Z"}) == "2026-10"
    assert billing_dispatcher.billing_month({"scheduled_time": "2027-01-01T03:00:00+09:00"}) == "2026-12"
    assert billing_dispatcher.billing_month({"month": "2026-05"}) == "2026-05"
    with pytest.raises(ValueError, match="not YYYY-MM"):
        billing_dispatcher.billing_month({"month": "May"})
    long = Charge(tenant="t" * 100, employee="e" * 100, month=MONTH, amount=1, currency="EUR")
    assert len(long.deduplication_id) == 64 and long.deduplication_id == long.deduplication_id
    assert Charge(tenant="a", employee="b", month=MONTH, amount=1, currency="EUR").deduplication_id == "a:b:2026-10"
