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


def test_records_parked_where_no_poison_was_sent_say_none_was_expected():
    parked = PatternReport(sent=20, processed_once=18, unrecoverable=2, expected_unrecoverable=0)

    result = format_table(_report(fifo_billing=parked)).splitlines()[-1]

    assert result == ("result: FAILED: fifo_billing: 2 records still parked after the redrive "
                      "(expected none: no poison record was sent)")
    assert "lost" not in result and "hot key" not in result and "conflicting" not in result


def test_a_drill_that_passed_says_so_naming_the_poison_and_conflicts_only_where_it_sent_some():
    clean = PatternReport(sent=10, processed_once=9, expected_unrecoverable=1, unrecoverable=1,
                          conflicts_sent=2, conflicts_parked=2)
    teams = PatternReport(sent=10, processed_once=10)  # a team's code: no poison, no conflicts sent

    assert format_table(_report(idempotent_stream=clean, fifo_billing=teams)).splitlines()[-1] == (
        "result: after the redrive every record was processed exactly once and only the poison (1) is still parked, "
        "with every conflicting duplicate (2)")
    alone = format_table(_report(fifo_billing=teams)).splitlines()[-1]
    assert alone == "result: after the redrive every record was processed exactly once and none is still parked"
    assert "poison" not in alone and "conflicting" not in alone


def test_the_handler_logs_are_named_by_their_real_paths():
    report = _report(fifo_billing=PatternReport(sent=1, processed_once=1),
                     distributed_map=PatternReport(sent=1, processed_once=1))
    report.log_dir = "/tmp/blueprint-drill-dev-7-x"

    logs = next(line for line in format_table(report).splitlines() if line.startswith("handler logs: "))

    assert logs == "handler logs: /tmp/blueprint-drill-dev-7-x/fifo_billing.log, /tmp/blueprint-drill-dev-7-x/distributed_map.log"
    assert "<" not in logs
