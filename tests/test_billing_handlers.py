"""The FIFO billing handlers against moto: exactly-once charges under duplicates, re-runs, poison
messages and transient errors, in order per tenant and month."""


import json

import boto3
import pytest
from botocore.awsrequest import AWSResponse

from integration_blueprint.handlers.reference import billing_consumer, billing_dispatcher
from integration_blueprint.handlers.runtime.billing import Charge
from integration_blueprint.sandbox.lambda_context import LocalLambdaContext
from tests.billing_env import MONTH, TENANTS, balances, charge_body, dispatch, ledger_rows, queue_depth, sqs_record


def test_billing_run_charges_every_billable_employee_exactly_once_across_reruns_and_redeliveries(billing_env):
    expected = {tenant: sum(emps.values()) for tenant, emps in TENANTS.items()}

    first = dispatch()
    second = dispatch()  # Scheduler fired twice: FIFO deduplication drops every resend
    assert first == {"month": MONTH, "sent": 5, "failed": 0}
    assert second["sent"] == 5 and queue_depth(billing_env.sqs, billing_env.queue_url) == 5

    billing_env.consumer.drain()
    assert balances(billing_env.ddb) == expected
    assert len(ledger_rows(billing_env.ddb)) == 5

    # A re-run after the 5-minute dedup window (here: after the messages were consumed) enqueues
    # again; the ledger's conditional write refuses every second charge.
    dispatch()
    assert queue_depth(billing_env.sqs, billing_env.queue_url) == 5
    billing_env.consumer.drain()
    assert balances(billing_env.ddb) == expected
    assert len(ledger_rows(billing_env.ddb)) == 5
    assert queue_depth(billing_env.sqs, billing_env.dlq_url) == 0
    keys = sorted(row["sk"]["S"] for row in ledger_rows(billing_env.ddb))
    assert keys[0] == "charge#acme:alice:2026-10"


def test_duplicate_delivery_in_one_batch_charges_once(billing_env):
    body = charge_body("acme", "alice", 1200)
    event = {"Records": [sqs_record("m1", body, "acme#2026-10"), sqs_record("m2", body, "acme#2026-10")]}
    response = billing_consumer.lambda_handler(event, LocalLambdaContext("consumer"))
    assert response == {"batchItemFailures": []}
    assert balances(billing_env.ddb) == {"acme": 1200}
    assert [row["message_id"]["S"] for row in ledger_rows(billing_env.ddb)] == ["m1"]


def test_a_charge_key_already_charged_with_another_amount_is_parked_naming_the_conflict_not_skipped(billing_env, caplog):
    billing_env.sqs.send_message(QueueUrl=billing_env.queue_url, MessageBody=charge_body("acme", "alice", 1200),
                         MessageGroupId="acme#2026-10", MessageDeduplicationId="first")
    billing_env.sqs.send_message(QueueUrl=billing_env.queue_url, MessageBody=charge_body("acme", "alice", 1300),  # a producer bug
                         MessageGroupId="acme#2026-10", MessageDeduplicationId="changed")
    billing_env.sqs.send_message(QueueUrl=billing_env.queue_url,  # a true duplicate
                                 MessageBody=charge_body("acme", "alice", 1200),
                                 MessageGroupId="acme#2026-10", MessageDeduplicationId="again")

    billing_env.consumer.drain()

    assert balances(billing_env.ddb) == {"acme": 1200}  # charged once, with the first amount
    parked = billing_env.sqs.receive_message(QueueUrl=billing_env.dlq_url, MaxNumberOfMessages=10)["Messages"]
    # The conflict and what its group held behind it (FIFO order), for a person to decide.
    assert [json.loads(m["Body"])["amount"] for m in parked] == [1300, 1200]
    [reason] = {r.reason for r in caplog.records if r.getMessage() == "conflicting duplicate charge"}
    assert reason == ("conflicting duplicate: idempotency key acme:alice:2026-10 was already applied with a different "
                      "amount; neither applied nor skipped: parked for a person to decide")
    assert "duplicate charge skipped" not in caplog.text


def test_failed_record_holds_back_the_rest_of_its_group_while_other_groups_go_on(billing_env):
    event = {"Records": [
        sqs_record("a1", charge_body("acme", "alice"), "acme#2026-10"),
        sqs_record("a2", charge_body("initech", "bill"), "initech#2026-10"),  # unknown tenant
        sqs_record("a3", charge_body("initech", "ted"), "initech#2026-10"),
        sqs_record("b1", charge_body("globex", "dave"), "globex#2026-10"),
    ]}
    response = billing_consumer.lambda_handler(event, LocalLambdaContext("consumer"))
    assert response == {"batchItemFailures": [{"itemIdentifier": "a2"}, {"itemIdentifier": "a3"}]}
    assert balances(billing_env.ddb) == {"acme": 100, "globex": 100}


def test_poison_message_reaches_the_dlq_after_max_receive_count_with_its_group_held_behind_it(billing_env, caplog):
    """FIFO order means nothing in the poisoned group may run ahead of it. Lambda hands out the
    group's later messages in the same batch, so they are received (and counted) with the poison
    and move to the DLQ with it, in order: a redrive after the fix replays the group in order.
    Other groups are charged at once."""
    billing_env.sqs.send_message(QueueUrl=billing_env.queue_url, MessageBody='{"tenant": "acme", "amount": "lots"}',
                         MessageGroupId="acme#2026-10", MessageDeduplicationId="poison")
    billing_env.sqs.send_message(QueueUrl=billing_env.queue_url, MessageBody=charge_body("acme", "alice", 1200),
                         MessageGroupId="acme#2026-10", MessageDeduplicationId="acme:alice:2026-10")
    billing_env.sqs.send_message(QueueUrl=billing_env.queue_url, MessageBody=charge_body("globex", "dave", 3000),
                         MessageGroupId="globex#2026-10", MessageDeduplicationId="globex:dave:2026-10")

    billing_env.consumer.drain()

    assert balances(billing_env.ddb) == {"globex": 3000}
    parked = billing_env.sqs.receive_message(QueueUrl=billing_env.dlq_url, MaxNumberOfMessages=10,
                                     MessageSystemAttributeNames=["All"])["Messages"]
    assert [m["Body"] for m in parked] == ['{"tenant": "acme", "amount": "lots"}', charge_body("acme", "alice", 1200)]
    assert parked[0]["Attributes"]["ApproximateReceiveCount"] == "6"  # 5 failed receives + this look
    assert billing_env.consumer.stats.handler_errors == 0
    assert billing_env.consumer.stats.invocations == 5  # globex was charged in the first batch, beside the poison

    errors = [r for r in caplog.records if r.getMessage() == "malformed charge message"]
    assert len(errors) == 5
    assert errors[0].reason == "missing fields: employee, month, currency"
    assert errors[0].group_id == "acme#2026-10" and errors[0].receive_count == "1"
    assert errors[0].message_id == parked[0]["MessageId"]
    assert all("lots" not in str(vars(r)) for r in caplog.records)  # the payload is never logged

    # After the fix, a redrive (here: moving the messages back) charges the held-back charge once.
    for message in parked:
        billing_env.sqs.send_message(QueueUrl=billing_env.queue_url, MessageBody=message["Body"],
                             MessageGroupId=message["Attributes"]["MessageGroupId"],
                             MessageDeduplicationId=message["Attributes"]["MessageDeduplicationId"] + "-redrive")
        billing_env.sqs.delete_message(QueueUrl=billing_env.dlq_url, ReceiptHandle=message["ReceiptHandle"])
    billing_env.consumer.drain()
    assert balances(billing_env.ddb) == {"globex": 3000}  # the poison still blocks acme's group...
    assert queue_depth(billing_env.sqs, billing_env.dlq_url) == 2  # ...and both are parked again, nothing lost


def test_transient_errors_are_retried_in_the_handler_and_the_charge_succeeds_once(billing_env, monkeypatch):
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
    assert balances(billing_env.ddb) == {"acme": 1200}


def test_semantic_errors_fail_at_once_without_in_handler_retries(billing_env, monkeypatch):
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
