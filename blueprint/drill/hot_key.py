"""The drill's hot key: one key (an account, a tenant) takes a large share of a pattern's records,
and after the drill its state in the pattern's table must stay within a per-key bound.

Spreading records over keys never shows per-key growth: the idempotent stream's ledger once kept
every applied event id in the account's item, fine for one event per account, refused by DynamoDB
from about 11,000 events of one account (tests/test_hot_key.py, benchmarks/hot_key.py). So every
pattern whose handler keeps state per key sends HOT_KEY_SHARE of its records to one key, always,
chosen with the pattern's seeded random generator like everything else, and its verify() measures
that key's items in the emulator's table (HotKeyState). The bounds:

- every item of the key at most ITEM_BYTES_BOUND (DynamoDB's item-size rules, cost.item_size);
- items without the table's TTL attribute (they never go away) at most a fixed number the
  pattern's layout names (the stream ledger's account item: 1; the billing ledger: 0);
- all items at most that number plus one per record of the key (guard items, ledger rows), and
  those expire with the TTL: so the key's items are bounded by its traffic within the TTL, and
  no item grows with it.
A breach fails the pattern, like a lost record. The Distributed Map has no hot key: its rows per
customer are the invoices themselves, kept for good by design, one per invoice.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from integration_blueprint.core import aws_limits as aws
from integration_blueprint.drill.cost import item_size

# The share of a pattern's records that go to its hot key.
HOT_KEY_SHARE = 0.3
# An item of the hot key must cost what any key's item costs: one write unit per write (1 KB),
# whatever that key's traffic. The reference layouts' items are 30-250 bytes; an item that grows
# with its key's events passes this after a few dozen events (12-24 bytes each), costs a unit more
# per started KB on every write, and stops taking writes at DynamoDB's 400 KB item limit.
ITEM_BYTES_BOUND = aws.DYNAMODB_WRITE_UNIT_BYTES


def pick_hot(rng: random.Random, candidates: Sequence[int], records: int) -> set[int]:
    """Which of the candidate record indexes go to the hot key: HOT_KEY_SHARE of `records`."""
    return set(rng.sample(list(candidates), min(len(candidates), round(HOT_KEY_SHARE * records))))


@dataclass
class HotKeyState:
    """The hot key's state in its pattern's table after the drill, against its bounds."""

    key: str
    table: str
    records: int  # the pattern's records that went to this key
    share: float  # of the pattern's records sent
    items: int
    items_bound: int
    lasting_items: int  # items without the table's TTL attribute: they never expire
    lasting_items_bound: int
    largest_item_bytes: int
    item_bytes_bound: int = ITEM_BYTES_BOUND
    breach: str = ""  # what is over its bound; empty when the key's state is within every bound

    def __post_init__(self) -> None:
        if not self.breach:
            self.breach = "; ".join(self._breaches())

    def _breaches(self) -> Iterable[str]:
        if self.largest_item_bytes > self.item_bytes_bound:
            yield (f"an item of {self.largest_item_bytes:,} bytes, over the bound of {self.item_bytes_bound:,} bytes "
                   "(one write unit)")
        if self.lasting_items > self.lasting_items_bound:
            yield (f"{self.lasting_items} items without a TTL, over the bound of {self.lasting_items_bound} "
                   "(they never expire)")
        if self.items > self.items_bound:
            yield (f"{self.items} items, over the bound of {self.items_bound} "
                   f"({self.lasting_items_bound} lasting + one per record)")

    @property
    def within_bound(self) -> bool:
        return not self.breach

    def summary(self) -> str:
        """One line for the text report."""
        figures = (f"hot key {self.key}, {self.records} records ({self.share:.0%}), in {self.table}: items {self.items} "
                   f"(bound {self.items_bound}), items without a TTL {self.lasting_items} (bound {self.lasting_items_bound}), "
                   f"largest item {self.largest_item_bytes} bytes (bound {self.item_bytes_bound})")
        return figures + (f": OVER ITS BOUND: {self.breach}" if self.breach else ": within bound")


def measure(key: str, items: Sequence[dict], *, table: str, ttl_attribute: Optional[str], records: int, sent: int,
            lasting_items_bound: int) -> HotKeyState:
    """The state of `key` from its items (as DynamoDB returns them) in `table`, whose TTL attribute
    is `ttl_attribute` (None: the table has no TTL, so nothing of the key expires)."""
    lasting = sum(1 for item in items if not ttl_attribute or ttl_attribute not in item)
    return HotKeyState(key=key, table=table, records=records, share=round(records / max(sent, 1), 3),
                       items=len(items), items_bound=lasting_items_bound + records, lasting_items=lasting,
                       lasting_items_bound=lasting_items_bound,
                       largest_item_bytes=max((item_size(item) for item in items), default=0))


def ttl_attribute(dynamodb, table: str) -> Optional[str]:
    """The table's TTL attribute as the emulator has it, None when TTL is not enabled."""
    description = dynamodb.describe_time_to_live(TableName=table)["TimeToLiveDescription"]
    return description.get("AttributeName") if description.get("TimeToLiveStatus") == "ENABLED" else None
