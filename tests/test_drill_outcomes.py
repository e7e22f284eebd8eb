"""The drill judges outcomes: after the faulted run, the final state of everything the code wrote
must equal a reference run's (the same records, each delivered once in the lane's order, no
faults), and crashes fall after each of an invocation's writes in turn (drill/outcomes.py)."""

import random
import re
from collections import Counter
from pathlib import Path

import pytest

from integration_blueprint.drill.invoker import Invoker
from integration_blueprint.drill.outcomes import Outcome, Volatile, compare, masked, normalized, varying
from integration_blueprint.drill.report import DrillOptions, format_table
from integration_blueprint.drill.runner import run_drill
from integration_blueprint.sandbox.errors import InjectedCrash
from integration_blueprint.sandbox.faults import FaultInjector

PROGRAM = Path(__file__).parent / "fixtures" / "outcome_program"
NOT_IDEMPOTENT = ("read-modify-write", "list-rewrite", "object-rewrite", "receipt-per-record", "marker-first",
                  "powertools-read-modify-write")
IDEMPOTENT = ("marker-and-effect-in-one-transaction", "object-per-record", "fifo-receipt-deduplicated")


@pytest.mark.slow
def test_consumers_not_idempotent_under_redelivery_or_a_crash_between_writes_fail_by_outcome_whatever_their_writes():
    report = run_drill(DrillOptions(stack="drill", program_dir=PROGRAM, records=20, seed=5, duplicates=0.2,
                                    crashes=2, transient=0.05), workers=1)
    by_instance = {pattern.component: pattern for pattern in report.patterns.values()}
    assert set(by_instance) == set(NOT_IDEMPOTENT) | set(IDEMPOTENT)

    for name in NOT_IDEMPOTENT:
        pattern = by_instance[name]
        assert not pattern.passed and pattern.outcome_differences > 0, (name, pattern.notes)
        differs = next(note for note in pattern.notes if note.startswith("final state differs from the reference run"))
        assert "records evt-" in differs, differs  # the records are named
    # A crash between the marker and the booking loses the booking: absent where the reference has it.
    assert "absent here" in " ".join(by_instance["marker-first"].notes)
    # A total read and written back: the value here against the reference's, and who wrote it twice.
    rmw = next(n for n in by_instance["read-modify-write"].notes if n.startswith("final state differs"))
    assert "here," in rmw and "in the reference run" in rmw and "deliveries)" in rmw
    # Receipts to a standard queue: counted against the reference run's.
    receipts = next(n for n in by_instance["receipt-per-record"].notes if n.startswith("final state differs"))
    assert "queue receipts" in receipts and "20 in the reference run" in receipts

    for name in IDEMPOTENT:
        pattern = by_instance[name]
        assert pattern.passed and pattern.outcome_differences == 0, (name, pattern.notes)
        assert pattern.injected["crashes"] > 0 and pattern.injected["duplicates"] > 0, name
        # Every boundary up to the fourth write was crashed at once at least.
        boundaries = next(note for note in pattern.notes if "crashes fell after write 1" in note)
        assert all(f"write {n} (" in boundaries for n in (1, 2, 3, 4)), boundaries
    # What differs by nature is named, not dropped: the archive's timestamps.
    assert "body (time)" in " ".join(by_instance["object-per-record"].notes)
    assert "FAIL" in format_table(report) and not report.passed


def outcome(place: str, key: str, *values) -> Outcome:
    found = Outcome()
    found.places[place] = {key: list(values)}
    return found


def test_a_value_an_earlier_record_also_wrote_is_an_order_dependency_not_a_difference():
    here = outcome("table t", "pk=acct-1", {"last": "evt-1"})
    reference = outcome("table t", "pk=acct-1", {"last": "evt-2"})
    reference.history[("table t", "pk=acct-1")] = {'{"last": "evt-1"}', '{"last": "evt-2"}'}

    comparison = compare(here, reference, lambda text: sorted(set(re.findall(r"evt-\d", text))))

    assert not comparison.differences and len(comparison.order_dependent) == 1
    assert "depend on delivery order" in comparison.notes()[0]
    assert comparison.order_dependent[0].records == ["evt-1", "evt-2"]

    # A value no record's put left there (a doubled total) is a difference.
    doubled = compare(outcome("table t", "pk=acct-1", {"total": "20"}), outcome("table t", "pk=acct-1", {"total": "10"}),
                      lambda text: [])
    assert len(doubled.differences) == 1 and "total 20 here, 10 in the reference run" in doubled.differences[0].describe()


def test_times_generated_ids_ttls_are_compared_as_their_kind_and_named():
    volatile = Volatile()
    item = {"pk": "order#evt-1", "at": "2026-11-28T18:02:11.5Z", "request": "3b7c1f0e-8d52-4a31-9a57-0c0b6c2f9e11",
            "epoch": 1795999200, "amount": 4250, "ttl": 1799999999, "billing_date": "2026-11-01"}

    assert normalized(item, "table t", "", volatile, ttl="ttl") == {
        "pk": "order#evt-1", "at": "<time>", "request": "<generated id>", "epoch": "<time>", "amount": "4250",
        "ttl": "<ttl>", "billing_date": "2026-11-01"}
    assert volatile.describe() == "table t: at (time), epoch (time), request (generated id), ttl (TTL)"


class _Handler:
    """A handler making `writes` PutItem calls per invocation, each through the fault injector."""

    def __init__(self, faults: FaultInjector, writes: int):
        self.faults, self.writes = faults, writes

    def __call__(self, event, context):
        for _ in range(self.writes):
            self.faults.after_call("GetItem", {}, {})  # reads do not count toward a crash
            self.faults.after_call("PutItem", {}, {})


def test_crashes_fall_after_each_write_in_turn_until_every_boundary_was_hit():
    faults = FaultInjector(seed=1, write_operations=frozenset({"PutItem"}))
    invoker = Invoker(function=_Handler(faults, 3), faults=faults, rng=random.Random(1),
                      duplicate_rate=0.0, crash_plan={2}, crash_boundaries=True, seed="s")
    outcomes = Counter()
    for _ in range(12):
        try:
            invoker({"Records": []})
            outcomes["ok"] += 1
        except InjectedCrash:
            outcomes["crashed"] += 1

    assert dict(invoker.boundaries) == {1: 1, 2: 1, 3: 1}  # one planned crash, two more to hit every boundary
    assert invoker.boundary_operations == {1: "PutItem", 2: "PutItem", 3: "PutItem"}
    assert outcomes == {"crashed": 3, "ok": 9}
    assert invoker.boundary_note().startswith("the function: crashes fell after write 1 (PutItem) 1x, write 2 (PutItem) 1x")


def test_what_differs_between_two_clean_reference_runs_is_evidence_it_varies_by_nature_and_is_named():
    # A field the code fills with a random number (not time-like, not a uuid): it differs between two
    # clean runs, so it is not judged; the doubled total still is.
    here = outcome("table t", "pk=acct-1", {"total": "20", "nonce": "8812"})
    first = outcome("table t", "pk=acct-1", {"total": "10", "nonce": "1234"})
    second = outcome("table t", "pk=acct-1", {"total": "10", "nonce": "5678"})

    varies = varying(first, second)
    comparison = compare(masked(here, varies), masked(first, varies), lambda text: [])

    assert varies == {"table t": {"nonce"}}
    assert [d.describe() for d in comparison.differences] == ["table t pk=acct-1: total 20 here, 10 in the reference run"]
    assert comparison.volatile == "table t: nonce (differs between two clean reference runs)"
    # Keys that differ between clean runs (a random id per record): the values compared whatever their key.
    keyed = varying(outcome("table t", "pk=1", {"v": "a"}), outcome("table t", "pk=2", {"v": "a"}))
    same = compare(masked(outcome("table t", "pk=3", {"v": "a"}), keyed),
                   masked(outcome("table t", "pk=1", {"v": "a"}), keyed), lambda text: [])
    assert not same.differences
