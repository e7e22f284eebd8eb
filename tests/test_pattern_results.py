"""What crosses from a pattern's worker to the drill is data with the report's own schema, checked
on arrival (drill/pattern_results.py): a forged pickle, an unknown field or a value of the wrong
type is refused, never run or believed. So is what a reference run forked beside the faulted run
hands back to the pattern's process (its outcome)."""

import dataclasses
import json
import os
import pickle
import re

import pytest

from integration_blueprint.drill import pattern_results
from integration_blueprint.drill.hot_key import HotKeyState
from integration_blueprint.drill.outcomes import Outcome, compare
from integration_blueprint.drill.patterns import FifoBillingDriver, IdempotentStreamDriver, NonIdempotentStreamDriver
from integration_blueprint.drill.report import DrillOptions, PatternReport


def test_a_report_crosses_as_json_and_arrives_equal():
    report = PatternReport(sent=20, processed_once=19, duplicate_effects=1, wall_time_s=1.5,
                           injected={"duplicates": 3}, notes=["a note"], failure="",
                           hot_key=HotKeyState(key="acct-1", table="ledger", records=6, share=0.3, items=7, items_bound=7,
                                               lasting_items=1, lasting_items_bound=1, largest_item_bytes=120))
    data = pattern_results.report_message(report)

    assert data.startswith(b'{"report": {')
    assert pattern_results.parse(data) == ("report", report)
    assert pattern_results.parse(pattern_results.report_message(None)) == ("report", None)
    assert pattern_results.parse(pattern_results.progress_message(0.25)) == ("progress", 0.25)


LEFT_OUT = object()


def report_with(**changes) -> bytes:
    """A whole report's message, with `changes` made to its fields (LEFT_OUT: the field left out)."""
    fields = dataclasses.asdict(PatternReport(sent=1))
    fields.update(changes)
    return json.dumps({"report": {k: v for k, v in fields.items() if v is not LEFT_OUT}}).encode()


class Forged:
    def __reduce__(self):
        return (print, ("code run in the drill's process",))


@pytest.mark.parametrize("data, why", [
    (pickle.dumps(Forged()), "not JSON"),
    (pickle.dumps(PatternReport(sent=1)), "not JSON"),
    (report_with(passed=True), "report: unknown fields ['passed']"),
    (report_with(failure=LEFT_OUT), "report: missing ['failure']"),
    (report_with(sent="1"), "report.sent: str, expected int"),
    (report_with(duplicate_effects=True), "report.duplicate_effects: bool, expected int"),
    (report_with(notes="all good"), "report.notes: str, expected list"),
    (report_with(hot_key={"key": "k"}), "report.hot_key: dict is none of"),
    (b'{"report": {}, "progress": 1}', "not one of the worker's messages"),
    (b'{"verdict": "passed"}', "unknown message 'verdict'"),
    (b'[1, 2]', "not one of the worker's messages"),
])
def test_anything_but_the_workers_own_messages_is_refused(data, why, capsys):
    with pytest.raises(pattern_results.MalformedResult, match=re.escape(why)):
        pattern_results.parse(data)
    assert "code run" not in capsys.readouterr().out


class VanishingDriver(NonIdempotentStreamDriver):
    """Its process dies mid-drive (the machine's OOM killer, a kill -9): no report ever comes."""

    def drive(self, step):
        os._exit(3)


class BuggyDriver(FifoBillingDriver):
    def drive(self, step):
        raise RuntimeError("a bug in the drill's driver")


@pytest.mark.slow
def test_a_pattern_whose_process_vanishes_fails_and_one_that_raises_stops_the_drill_with_its_traceback():
    from integration_blueprint.drill.runner import WorkerFailed, run_drill

    options = DrillOptions(records=5)
    report = run_drill(options, drivers={"non_idempotent_stream": VanishingDriver,
                                         "idempotent_stream": IdempotentStreamDriver})
    vanished = report.patterns["non_idempotent_stream"]
    assert not report.passed and report.patterns["idempotent_stream"].passed
    assert vanished.failure == ("non_idempotent_stream: its process ended without a report (killed from outside?); "
                                "see its handler log")

    with pytest.raises(WorkerFailed, match=r"(?s)pattern fifo_billing: its process failed:.*RuntimeError: a bug"):
        run_drill(options, drivers={"fifo_billing": BuggyDriver, "idempotent_stream": IdempotentStreamDriver})


def test_a_reference_runs_outcome_crosses_as_json_and_arrives_equal():
    """The reference run, forked beside the faulted run (drill/reference.py), hands back what it left
    as data: every place, the puts' history, the bookkeeping and the fields compared as their kind."""
    outcome = Outcome()
    outcome.places["table ledger"] = {"account=acct-1": [{"account": "acct-1", "balance": "12", "at": "<time>"}]}
    outcome.places["queue receipts"] = {"": ["receipt evt-1", "receipt evt-1", None]}
    outcome.history[("table ledger", "account=acct-1")].update({'{"balance": "5"}', '{"balance": "12"}'})
    outcome.bookkeeping["table idempotency"] += 2
    outcome.volatile.note("table ledger", "at", "time")

    kind, (arrived, seconds) = pattern_results.parse_reference(pattern_results.outcome_message(outcome, 2.5))

    assert (kind, seconds) == ("outcome", 2.5)
    assert {f.name: getattr(arrived, f.name) for f in dataclasses.fields(Outcome)} == \
        {f.name: getattr(outcome, f.name) for f in dataclasses.fields(Outcome)}
    assert compare(arrived, outcome, lambda text: []).differences == []
    assert pattern_results.parse_reference(pattern_results.unfinished_message("its deadline")) == \
        ("unfinished", "its deadline")


@pytest.mark.parametrize("data, why", [
    (pickle.dumps(Outcome()), "not JSON"),
    (b'{"outcome": {"places": {}}, "seconds": 1}', "outcome: not an object of"),
    (b'{"outcome": {"places": {"t": []}, "history": [], "bookkeeping": {}, "volatile": {}}, "seconds": 1}',
     "outcome.places"),
    (b'{"outcome": {"places": {}, "history": [["p", "k", [1]]], "bookkeeping": {}, "volatile": {}}, "seconds": 1}',
     "outcome.history"),
    (b'{"outcome": {"places": {}, "history": [], "bookkeeping": {}, "volatile": {}}, "seconds": "1"}',
     "reference.seconds"),
    (b'{"outcome": {"places": {}, "history": [], "bookkeeping": {"t": -1}, "volatile": {}}, "seconds": 1}',
     "outcome.bookkeeping"),
    (b'{"report": null}', "not one of the reference run's messages"),
])
def test_anything_but_a_reference_runs_own_messages_is_refused(data, why):
    with pytest.raises(pattern_results.MalformedResult, match=re.escape(why)):
        pattern_results.parse_reference(data)
