"""A hot key: one account taking every event. The idempotent stream's guarded reference ledger keeps
per-key state bounded (an account item of a fixed size, one small guard item per event, with a TTL)
and still applies each event exactly once. Its earlier layout kept every applied event id in the
account item, which grew by ~12 bytes per event (24 KB after 2,000 events: 23 write units per
write) until DynamoDB's 400 KB item limit refused every write (benchmarks/hot_key.py: 10,000 events)."""

import json
import time

import boto3
import pytest
from moto import mock_aws

from integration_blueprint.core import patches
from integration_blueprint.drill.cost import item_size
from integration_blueprint.drill.hot_key import measure
from integration_blueprint.handlers.reference.reference_ledger import (
    GUARD_PREFIX,
    GUARD_TTL_SECONDS,
    AccountLedger,
)
from integration_blueprint.handlers.runtime.stream_records import StreamRecord
from integration_blueprint.sandbox import shortcuts

# Enough for the old layout to be far past a bound (24 KB); the benchmark runs 10,000 (~45 s of moto).
EVENTS = 2_000
# A guard item: its 72-character key, the key attribute's name and a TTL number; the account item:
# its key, balance and count. Both well under one write unit (1 KB).
ITEM_BOUND_BYTES = 128


def event(i: int, account: str = "acct-hot") -> StreamRecord:
    return StreamRecord(stream_arn="arn:aws:kinesis:eu-west-1:123456789012:stream/orders",
                        shard_id="shardId-000000000000", sequence_number=str(10**20 + i), partition_key=account,
                        data=json.dumps({"eventId": f"evt-{i:08d}", "account": account, "amount": 1}).encode())


@pytest.fixture
def ledger():
    # moto's transactions copy whole tables without the emulator's speed changes
    with patches.applied(shortcuts.NAMES), mock_aws():
        client = boto3.client("dynamodb", region_name="eu-west-1")
        client.create_table(TableName="ledger", BillingMode="PAY_PER_REQUEST",
                            KeySchema=[{"AttributeName": "account", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "account", "AttributeType": "S"}])
        yield AccountLedger("ledger", client=client, guarded=True)


def items(ledger):
    return [item for page in ledger.client.get_paginator("scan").paginate(TableName="ledger") for item in page["Items"]]


@pytest.mark.slow  # 2,000 events through moto: the end-to-end tier
def test_every_item_of_a_hot_account_stays_under_the_bound_and_each_event_applies_once(ledger):
    for i in range(EVENTS):
        ledger(event(i))
    for i in range(0, EVENTS, 100):  # replays (a bisected batch, a redrive) change nothing
        ledger(event(i))

    stored = items(ledger)
    assert ledger.balance("acct-hot") == (EVENTS, EVENTS)
    assert max(item_size(item) for item in stored) <= ITEM_BOUND_BYTES
    guards = [item for item in stored if item["account"]["S"].startswith(GUARD_PREFIX)]
    assert len(guards) == EVENTS and len(stored) == EVENTS + 1  # one guard per event, one account item


def test_guards_expire_after_the_longest_time_a_record_can_come_back(ledger):
    ledger(event(1))

    guard = next(item for item in items(ledger) if item["account"]["S"].startswith(GUARD_PREFIX))
    assert abs(int(guard["expiration"]["N"]) - (time.time() + GUARD_TTL_SECONDS)) < 60
    assert ledger.guard_exists("acct-hot", "evt-00000001")


def test_the_same_event_id_of_two_accounts_is_two_events(ledger):
    ledger(event(1, "acct-a"))
    ledger(event(1, "acct-b"))

    assert ledger.balance("acct-a") == ledger.balance("acct-b") == (1, 1)


ACCOUNT_ITEM = {"account": {"S": "acct-hot"}, "balance": {"N": "12"}, "applied": {"N": "2"}}
GUARD_ITEM = {"account": {"S": GUARD_PREFIX + "0" * 64}, "expiration": {"N": "1800000000"}}


def hot_account(items, records=2, ttl_attribute="expiration"):
    return measure("acct-hot", items, table="ledger", ttl_attribute=ttl_attribute, records=records, sent=10,
                   lasting_items_bound=1)


def test_the_drills_per_key_bound_holds_for_a_lasting_item_and_an_expiring_item_per_record():
    state = hot_account([ACCOUNT_ITEM, GUARD_ITEM, GUARD_ITEM])

    assert state.within_bound and state.breach == ""
    assert (state.items, state.items_bound, state.lasting_items, state.share) == (3, 3, 1, 0.2)
    assert state.largest_item_bytes == item_size(GUARD_ITEM) <= ITEM_BOUND_BYTES


def test_the_drills_per_key_bound_is_breached_by_items_that_never_expire_or_more_than_one_per_record():
    never_expires = hot_account([ACCOUNT_ITEM, {"account": {"S": "acct-hot#evt-1"}}])
    table_without_ttl = hot_account([ACCOUNT_ITEM, GUARD_ITEM], ttl_attribute=None)
    two_per_record = hot_account([ACCOUNT_ITEM, GUARD_ITEM, GUARD_ITEM, GUARD_ITEM, GUARD_ITEM, GUARD_ITEM])

    assert never_expires.breach == table_without_ttl.breach == (
        "2 items without a TTL, over the bound of 1 (they never expire)")
    assert two_per_record.breach == "6 items, over the bound of 3 (1 lasting + one per record)"
    assert not (never_expires.within_bound or table_without_ttl.within_bound or two_per_record.within_bound)
