"""The drill report's last line says what happened: only the categories that did, pattern by pattern."""

from integration_blueprint.drill.report import DrillReport, PatternReport, format_table


def _report(**patterns: PatternReport) -> DrillReport:
    return DrillReport(stack="dev", seed=7, compression={"time": "1/500"}, patterns=patterns)


def test_a_drill_that_lost_records_names_the_loss_and_nothing_else():
    lossy = PatternReport(sent=100, processed_once=97, lost=3, expected_unrecoverable=1, unrecoverable=1)
    clean = PatternReport(sent=100, processed_once=99, expected_unrecoverable=1, unrecoverable=1)

    result = format_table(_report(fifo_billing=lossy, distributed_map=clean)).splitlines()[-1]

    assert result == "result: FAILED: fifo_billing: 3 records lost"


def test_each_failing_pattern_names_its_own_categories_and_a_skipped_component_is_named():
    twice = PatternReport(sent=50, duplicate_effects=2, unrecoverable=4, expected_unrecoverable=1)
    stuck = PatternReport(sent=50, failure="its deadline (120 s) passed")
    report = _report(idempotent_stream=twice, distributed_map=stuck)
    report.not_drilled = {"billing-eu": "its consumer is a container image"}

    result = format_table(report).splitlines()[-1]

    assert result == ("result: FAILED: idempotent_stream: 2 duplicate effects, 4 records still parked after the "
                      "redrive (expected 1: the poison); distributed_map: did not finish; billing-eu: not drilled")
    assert "lost" not in result and "hot key" not in result and "conflicting" not in result


def test_a_drill_that_passed_says_so():
    clean = PatternReport(sent=10, processed_once=9, expected_unrecoverable=1, unrecoverable=1)
    assert format_table(_report(idempotent_stream=clean)).splitlines()[-1].startswith(
        "result: after the redrive every record was processed exactly once")
