"""A hot key: 10,000 events of one account through the idempotent stream's guarded reference ledger
(handlers/reference/reference_ledger.py), against moto, billed the way DynamoDB on-demand bills
(idempotency_cost.DynamoDBMeter: an update bills the stored item's size, a transaction each item twice).

Prints what the ledger keeps for that account (its items and their bytes, per DynamoDB's item size
rules) and the write units per event, at the start, the end and on average. Per-key state must stay
bounded whatever the traffic shape: an item that grows with every event costs more units per write
and, at DynamoDB's 400 KB item limit, stops taking writes.

Last line: `hot_key events=N items=I bytes=B largest_item_bytes=L wcu_per_event_first=F wcu_per_event_last=T wcu_per_event_mean=M`
"""

import os
import sys

os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")

import boto3  # noqa: E402
from idempotency_cost import DynamoDBMeter, create_table, table_lookup  # noqa: E402
from moto import mock_aws  # noqa: E402

from integration_blueprint.core import patches  # noqa: E402
from integration_blueprint.drill.cost import item_size  # noqa: E402
from integration_blueprint.handlers.reference.reference_ledger import AccountLedger  # noqa: E402
from integration_blueprint.handlers.runtime.stream_records import StreamRecord  # noqa: E402
from integration_blueprint.sandbox import shortcuts  # noqa: E402

EVENTS = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
WINDOW = 100  # events averaged for the first and last figures


def main() -> None:
    # moto's transactions copy whole tables without the emulator's speed changes (quadratic here)
    with patches.applied(shortcuts.NAMES), mock_aws():
        client, reader = boto3.client("dynamodb"), boto3.client("dynamodb")
        create_table(client, "ledger", "account")
        meter = DynamoDBMeter(client, lookup=table_lookup(reader))
        ledger = AccountLedger("ledger", client=client, guarded=True)
        units = []
        for i in range(EVENTS):
            before = meter.wcu
            ledger(StreamRecord(stream_arn="arn:aws:kinesis:eu-west-1:123456789012:stream/orders",
                                shard_id="shardId-000000000000", sequence_number=str(10**20 + i),
                                partition_key="acct-hot",
                                data=f'{{"eventId": "evt-{i:08d}", "account": "acct-hot", "amount": 1}}'.encode()))
            units.append(meter.wcu - before)
        balance, applied = ledger.balance("acct-hot")
        assert (balance, applied) == (EVENTS, EVENTS), (balance, applied)
        items = [item for page in reader.get_paginator("scan").paginate(TableName="ledger") for item in page["Items"]]
        sizes = [item_size(item) for item in items]
        first = sum(units[:WINDOW]) / min(WINDOW, EVENTS)
        last = sum(units[-WINDOW:]) / min(WINDOW, EVENTS)
        print(f"{len(items)} items for the account after {EVENTS} events: {sum(sizes)} bytes, the largest "
              f"{max(sizes)} bytes; write units per event {first:.1f} (first {WINDOW}), {last:.1f} (last {WINDOW})")
        print(f"hot_key events={EVENTS} items={len(items)} bytes={sum(sizes)} largest_item_bytes={max(sizes)} "
              f"wcu_per_event_first={first:.1f} wcu_per_event_last={last:.1f} "
              f"wcu_per_event_mean={sum(units) / EVENTS:.1f}")


if __name__ == "__main__":
    main()
