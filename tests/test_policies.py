"""The policy pack's rules, each through the real analyzer over gRPC (never by calling a rule).

Every rule has a violating program, a passing program, and a program whose deciding value is
unknown (as in a first `pulumi preview`): an unknown is skipped, reported by the SDK as an advisory
"can't run policy ... during preview" note, never as a violation.
"""

import json

import pulumi
import pulumi_aws as aws
import pytest
from policy_env import SKIPPED, analyse, flagged, replay_lane, resource_names, skipped  # noqa: F401 - the policy tests import them from here too

from integration_blueprint.components.alarms import queue_depth_alarm

ROLE = "arn:aws:iam::123456789012:role/test"
REDRIVE_OK = 5


def later(value, after):
    """`value`, but only known once `after` (an Output) is: unknown in a first preview. The tests
    take `after` from an S3 bucket, a type no rule links to, so only the value is unknown."""
    return after.apply(lambda _: value)


# ---- building blocks of the test programs --------------------------------------------------

def function(resource_name, timeout=None, **kwargs):
    return aws.lambda_.Function(resource_name, role=ROLE, runtime="python3.12", handler="h.handler",
                                code=pulumi.AssetArchive({}), timeout=timeout, **kwargs)


def redrive_to(dlq, count=REDRIVE_OK):
    return dlq.arn.apply(lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": count}))


def dlq(name, **kwargs):
    queue = aws.sqs.Queue(name, message_retention_seconds=1_209_600, **kwargs)
    queue_depth_alarm(f"{name}-depth", queue=queue, parent=None, description="test")
    return queue


def consumed_queue(name="jobs", *, visibility=360, timeout=60, redrive=True, response_types=True,
                   queue_kwargs=None, mapping_kwargs=None):
    """A queue (with an alarmed DLQ) consumed by a function through a mapping, correct by default."""
    extra = dict(queue_kwargs or {})
    if redrive:
        extra["redrive_policy"] = redrive_to(dlq(f"{name}-dlq"))
    queue = aws.sqs.Queue(name, visibility_timeout_seconds=visibility, **extra)
    fn = function(f"{name}-fn", timeout=timeout)
    aws.lambda_.EventSourceMapping(
        f"{name}-mapping", event_source_arn=queue.arn, function_name=fn.name,
        function_response_types=["ReportBatchItemFailures"] if response_types is True else response_types,
        **(mapping_kwargs or {}))
    return queue, fn


def stream_consumer(*, retention=None, on_failure=True, retries=3, stream_arn=None, **mapping_kwargs):
    stream = aws.kinesis.Stream("events", shard_count=1, retention_period=retention,
                                encryption_type="KMS", kms_key_id="alias/aws/kinesis")
    fn = function("events-fn", timeout=60)
    destination = None
    if on_failure:
        retry_queue, _ = consumed_queue("events-retry")
        queue_depth_alarm("events-retry-depth", queue=retry_queue, parent=None, description="test")
        destination = {"on_failure": {"destination_arn": retry_queue.arn}}
    aws.lambda_.EventSourceMapping(
        "events-mapping", event_source_arn=stream_arn if stream_arn is not None else stream.arn,
        function_name=fn.arn, starting_position="LATEST", maximum_retry_attempts=retries,
        destination_config=destination, **mapping_kwargs)
    return stream


# ---- sqs-dlq-max-receive-count --------------------------------------------------------------

MAX_RECEIVE = "sqs-dlq-max-receive-count"


def test_max_receive_count_of_one_is_a_violation(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: aws.sqs.Queue(
        "orders", redrive_policy=redrive_to(dlq("orders-dlq"), count=1))), MAX_RECEIVE)
    assert [v.urn.rsplit("::", 1)[-1] for v in found] == ["orders"]
    assert "maxReceiveCount is 1; set it to at least 4" in found[0].message
    assert found[0].level == "mandatory"


def test_max_receive_count_of_five_passes(policy_analyzer):
    assert not flagged(analyse(policy_analyzer, lambda: aws.sqs.Queue(
        "orders", redrive_policy=redrive_to(dlq("orders-dlq")))), MAX_RECEIVE)


def test_max_receive_count_on_a_separate_redrive_policy_resource(policy_analyzer):
    def program():
        queue = aws.sqs.Queue("orders")
        aws.sqs.RedrivePolicy("orders-redrive", queue_url=queue.url,
                              redrive_policy=redrive_to(dlq("orders-dlq"), count=2))
    found = flagged(analyse(policy_analyzer, program), MAX_RECEIVE)
    assert [v.urn.rsplit("::", 1)[-1] for v in found] == ["orders-redrive"]


def test_max_receive_count_minimum_is_configurable(policy_analyzer):
    program = lambda: aws.sqs.Queue("orders", redrive_policy=redrive_to(dlq("orders-dlq"), count=5))
    assert flagged(analyse(policy_analyzer, program, config={MAX_RECEIVE: {"minimum": 6}}), MAX_RECEIVE)


def test_a_redrive_policy_that_is_not_json_is_a_violation_that_says_so(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: aws.sqs.Queue(
        "orders", redrive_policy="maxReceiveCount=5")), MAX_RECEIVE)
    assert len(found) == 1 and "redrivePolicy is not valid JSON" in found[0].message


def test_max_receive_count_unknown_in_preview_is_skipped(policy_analyzer):
    result = analyse(policy_analyzer, lambda: aws.sqs.Queue(
        "orders", redrive_policy=redrive_to(dlq("orders-dlq"), count=1)), unknowns=True)
    assert not flagged(result, MAX_RECEIVE)
    assert skipped(result, MAX_RECEIVE)[0].level == "advisory"


# ---- visibility timeout vs function timeout --------------------------------------------------

COVERS = "sqs-visibility-timeout-covers-function-timeout"
SIX_TIMES = "sqs-visibility-timeout-six-times-function-timeout"


def test_default_visibility_does_not_cover_a_60_second_function(policy_analyzer):
    result = analyse(policy_analyzer, lambda: consumed_queue(visibility=None, timeout=60))
    found = flagged(result, COVERS)
    assert len(found) == 1 and "visibilityTimeoutSeconds 30" in found[0].message
    assert "at least 60" in found[0].message and found[0].level == "mandatory"


def test_default_function_timeout_is_covered_by_default_visibility(policy_analyzer):
    assert not flagged(analyse(policy_analyzer, lambda: consumed_queue(visibility=None, timeout=None)), COVERS)


def test_visibility_rules_link_through_dependencies_when_arns_are_unknown(policy_analyzer):
    # In a first preview the queue's ARN and the function's name are unknown: the mapping's
    # property dependencies still say which queue feeds which function.
    result = analyse(policy_analyzer, lambda: consumed_queue(visibility=30, timeout=60), unknowns=True)
    assert len(flagged(result, COVERS)) == 1


def test_function_named_by_arn_is_linked_by_value(policy_analyzer):
    def program():
        queue = aws.sqs.Queue("jobs", visibility_timeout_seconds=30,
                              redrive_policy=redrive_to(dlq("jobs-dlq")))
        function("worker", timeout=60, name="worker")
        aws.lambda_.EventSourceMapping("jobs-mapping", event_source_arn=queue.arn,
                                       function_name="arn:aws:lambda:us-east-1:123456789012:function:worker:live",
                                       function_response_types=["ReportBatchItemFailures"])
    assert len(flagged(analyse(policy_analyzer, program), COVERS)) == 1


def test_a_visibility_timeout_that_is_not_a_number_is_a_violation_that_says_so(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: consumed_queue(visibility="thirty")), COVERS)
    assert len(found) == 1 and "visibilityTimeoutSeconds must be a number, got 'thirty'" in found[0].message


def test_unknown_visibility_timeout_is_skipped(policy_analyzer):
    def program():
        marker = aws.s3.Bucket("marker")
        consumed_queue(visibility=later(30, marker.arn), timeout=60)
    result = analyse(policy_analyzer, program, unknowns=True)
    assert not flagged(result, COVERS) and skipped(result, COVERS)


def test_six_times_is_advisory_and_counts_the_batching_window(policy_analyzer):
    result = analyse(policy_analyzer, lambda: consumed_queue(
        visibility=360, timeout=60, mapping_kwargs={"maximum_batching_window_in_seconds": 5}))
    found = flagged(result, SIX_TIMES)
    assert len(found) == 1 and found[0].level == "advisory" and "at least 365" in found[0].message
    assert not flagged(result, COVERS)


def test_six_times_passes_at_six_times(policy_analyzer):
    assert not flagged(analyse(policy_analyzer, lambda: consumed_queue(visibility=360, timeout=60)), SIX_TIMES)


def test_six_times_multiplier_is_configurable(policy_analyzer):
    result = analyse(policy_analyzer, lambda: consumed_queue(visibility=200, timeout=60),
                     config={SIX_TIMES: {"multiplier": 3}})
    assert not flagged(result, SIX_TIMES)


def test_six_times_with_unknown_timeout_is_skipped(policy_analyzer):
    def program():
        marker = aws.s3.Bucket("marker")
        consumed_queue(visibility=120, timeout=later(60, marker.arn))
    result = analyse(policy_analyzer, program, unknowns=True)
    assert not flagged(result, SIX_TIMES) and skipped(result, SIX_TIMES)


# ---- DLQ retention and type --------------------------------------------------------------

RETENTION = "sqs-dlq-retention-exceeds-source"
TYPE = "sqs-dlq-type-matches-source"


def test_two_queues_at_default_retention_violate(policy_analyzer):
    def program():
        target = aws.sqs.Queue("orders-dlq")
        aws.sqs.Queue("orders", redrive_policy=redrive_to(target))
    found = flagged(analyse(policy_analyzer, program), RETENTION)
    assert [v.urn.rsplit("::", 1)[-1] for v in found] == ["orders-dlq"]
    assert "345600" in found[0].message and "1209600" in found[0].message


def test_dlq_keeping_14_days_passes(policy_analyzer):
    assert not flagged(analyse(policy_analyzer, lambda: aws.sqs.Queue(
        "orders", redrive_policy=redrive_to(dlq("orders-dlq")))), RETENTION)


def test_unknown_dlq_retention_is_skipped(policy_analyzer):
    def program():
        marker = aws.s3.Bucket("marker")
        target = aws.sqs.Queue("orders-dlq", message_retention_seconds=later(60, marker.arn))
        aws.sqs.Queue("orders", redrive_policy=redrive_to(target))
    result = analyse(policy_analyzer, program, unknowns=True)
    assert not flagged(result, RETENTION) and skipped(result, RETENTION)


def test_fifo_source_with_standard_dlq_violates(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: aws.sqs.Queue(
        "orders", fifo_queue=True, redrive_policy=redrive_to(dlq("orders-dlq")))), TYPE)
    assert len(found) == 1 and "make the DLQ FIFO" in found[0].message


def test_fifo_source_with_fifo_dlq_passes(policy_analyzer):
    assert not flagged(analyse(policy_analyzer, lambda: aws.sqs.Queue(
        "orders", fifo_queue=True, redrive_policy=redrive_to(dlq("orders-dlq", fifo_queue=True)))), TYPE)


def test_unknown_dlq_type_is_skipped(policy_analyzer):
    def program():
        marker = aws.s3.Bucket("marker")
        aws.sqs.Queue("orders", fifo_queue=True,
                      redrive_policy=redrive_to(dlq("orders-dlq", fifo_queue=later(False, marker.arn))))
    result = analyse(policy_analyzer, program, unknowns=True)
    assert not flagged(result, TYPE) and skipped(result, TYPE)


# ---- sqs-event-source-has-dlq ------------------------------------------------------------

HAS_DLQ = "sqs-event-source-has-dlq"


def test_consumed_queue_without_redrive_violates(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: consumed_queue(redrive=False)), HAS_DLQ)
    assert [v.urn.rsplit("::", 1)[-1] for v in found] == ["jobs"]


def test_a_separate_redrive_policy_resource_counts(policy_analyzer):
    def program():
        queue, _ = consumed_queue(redrive=False)
        aws.sqs.RedrivePolicy("jobs-redrive", queue_url=queue.url, redrive_policy=redrive_to(dlq("jobs-dlq")))
    assert not flagged(analyse(policy_analyzer, program), HAS_DLQ)


def test_redrive_policy_resource_of_unknown_queue_is_skipped(policy_analyzer):
    def program():
        queue, fn = consumed_queue(redrive=False)
        aws.sqs.RedrivePolicy("jobs-redrive", queue_url=later("https://sqs/x/jobs", fn.arn),
                              redrive_policy=redrive_to(dlq("jobs-dlq")))
    result = analyse(policy_analyzer, program, unknowns=True)
    assert not flagged(result, HAS_DLQ) and skipped(result, HAS_DLQ)


# ---- Lambda event source mappings --------------------------------------------------------

BATCH_FAILURES = "lambda-sqs-esm-reports-batch-item-failures"
ON_FAILURE = "lambda-stream-esm-has-on-failure-destination"
BOUNDED = "lambda-stream-esm-bounded-retries"


def test_sqs_mapping_without_report_batch_item_failures_violates(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: consumed_queue(response_types=None)), BATCH_FAILURES)
    assert [v.urn.rsplit("::", 1)[-1] for v in found] == ["jobs-mapping"]


def test_sqs_mapping_with_report_batch_item_failures_passes(policy_analyzer):
    assert not flagged(analyse(policy_analyzer, lambda: consumed_queue()), BATCH_FAILURES)


def test_unknown_response_types_are_skipped(policy_analyzer):
    def program():
        marker = aws.s3.Bucket("marker")
        consumed_queue(response_types=later([], marker.arn))
    result = analyse(policy_analyzer, program, unknowns=True)
    assert not flagged(result, BATCH_FAILURES) and skipped(result, BATCH_FAILURES)


def test_stream_mapping_without_on_failure_destination_violates(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: stream_consumer(on_failure=False)), ON_FAILURE)
    assert [v.urn.rsplit("::", 1)[-1] for v in found] == ["events-mapping"]


def test_stream_mapping_with_on_failure_queue_passes(policy_analyzer):
    assert not flagged(analyse(policy_analyzer, lambda: stream_consumer()), ON_FAILURE)


def test_on_failure_destination_being_set_is_enough_when_its_arn_is_unknown(policy_analyzer):
    result = analyse(policy_analyzer, lambda: stream_consumer(), unknowns=True)
    assert not flagged(result, ON_FAILURE) and not skipped(result, ON_FAILURE)


def test_stream_mapping_of_unknown_source_is_skipped(policy_analyzer):
    def program():
        marker = aws.s3.Bucket("marker")
        stream_consumer(on_failure=False, stream_arn=later("arn:aws:kinesis:us-east-1:1:stream/x", marker.arn))
    result = analyse(policy_analyzer, program, unknowns=True)
    assert not flagged(result, ON_FAILURE) and skipped(result, ON_FAILURE)


def test_stream_mapping_at_default_retries_violates(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: stream_consumer(retries=None)), BOUNDED)
    assert len(found) == 1 and "both -1, the defaults" in found[0].message


def test_stream_mapping_bounded_by_record_age_passes(policy_analyzer):
    assert not flagged(analyse(policy_analyzer, lambda: stream_consumer(
        retries=None, maximum_record_age_in_seconds=3600)), BOUNDED)


def test_stream_mapping_with_unknown_bounds_is_skipped(policy_analyzer):
    def program():
        marker = aws.s3.Bucket("marker")
        stream_consumer(retries=later(-1, marker.arn))
    result = analyse(policy_analyzer, program, unknowns=True)
    assert not flagged(result, BOUNDED) and skipped(result, BOUNDED)


# ---- kinesis-replay-window-within-retention ----------------------------------------------

REPLAY = "kinesis-replay-window-within-retention"


def replayed_stream(*, retention=None, visibility=360, count=REDRIVE_OK):
    """A Kinesis mapping whose on-failure queue is consumed again (to replay from the stream)."""
    stream = aws.kinesis.Stream("events", shard_count=1, retention_period=retention,
                                encryption_type="KMS", kms_key_id="alias/aws/kinesis")
    retry_dlq = dlq("events-retry-dlq")
    retry = aws.sqs.Queue("events-retry", visibility_timeout_seconds=visibility,
                          redrive_policy=redrive_to(retry_dlq, count=count))
    queue_depth_alarm("events-retry-depth", queue=retry, parent=None, description="test")
    fn = function("events-fn", timeout=60)
    replay_lane(stream, retry, fn)


def test_replay_window_beyond_default_retention_violates(policy_analyzer):
    # 30 receives x 3600 s visibility = 30 hours > the stream's default 24 hours
    found = flagged(analyse(policy_analyzer, lambda: replayed_stream(visibility=3600, count=30)), REPLAY)
    assert [v.urn.rsplit("::", 1)[-1] for v in found] == ["events-mapping"]
    assert "108000" in found[0].message and "86400" in found[0].message


def test_replay_window_inside_extended_retention_passes(policy_analyzer):
    assert not flagged(analyse(policy_analyzer, lambda: replayed_stream(
        retention=48, visibility=3600, count=30)), REPLAY)


def test_replay_window_with_unknown_retention_is_skipped(policy_analyzer):
    def program():
        marker = aws.s3.Bucket("marker")
        replayed_stream(retention=later(24, marker.arn), visibility=3600, count=30)
    result = analyse(policy_analyzer, program, unknowns=True)
    assert not flagged(result, REPLAY) and skipped(result, REPLAY)


# ---- dynamodb-idempotency-table-ttl ------------------------------------------------------

TTL = "dynamodb-idempotency-table-ttl"


def idempotent_function(ttl):
    table = aws.dynamodb.Table("idempotency", hash_key="id", attributes=[{"name": "id", "type": "S"}],
                               billing_mode="PAY_PER_REQUEST", ttl=ttl, server_side_encryption={"enabled": True})
    function("worker", environment={"variables": {"IDEMPOTENCY_TABLE": table.name}})


def test_idempotency_table_without_ttl_violates(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: idempotent_function(ttl=None)), TTL)
    assert [v.urn.rsplit("::", 1)[-1] for v in found] == ["idempotency"]


def test_a_permanent_ledger_a_function_names_ledger_table_is_not_an_idempotency_store(policy_analyzer):
    """A ledger of business facts is kept (often for years, by law): its variable's name is no sign it should
    expire; an idempotency store beside it still is judged."""
    def program():
        ledger = aws.dynamodb.Table("payments-ledger", hash_key="account", range_key="entry",
                                    attributes=[{"name": "account", "type": "S"}, {"name": "entry", "type": "S"}],
                                    billing_mode="PAY_PER_REQUEST", point_in_time_recovery={"enabled": True})
        store = aws.dynamodb.Table("payments-idempotency", hash_key="id", attributes=[{"name": "id", "type": "S"}],
                                   billing_mode="PAY_PER_REQUEST")
        function("worker", environment={"variables": {"LEDGER_TABLE": ledger.name, "IDEMPOTENCY_TABLE": store.name}})

    found = flagged(analyse(policy_analyzer, program), TTL)
    assert [v.urn.rsplit("::", 1)[-1] for v in found] == ["payments-idempotency"]


def test_idempotency_table_with_ttl_passes(policy_analyzer):
    assert not flagged(analyse(policy_analyzer, lambda: idempotent_function(
        ttl={"attribute_name": "expiration", "enabled": True})), TTL)


def two_tables(accounts_ttl):
    # Names given by the program and known only after apply (an auto-name would be known in a first
    # preview too: the provider makes it in Check).
    marker = aws.s3.Bucket("marker")

    def table(name, ttl):
        return aws.dynamodb.Table(name, name=later(f"{name}-table", marker.arn), hash_key="id",
                                  attributes=[{"name": "id", "type": "S"}], ttl=ttl)
    ledger = table("ledger", {"attribute_name": "ttl", "enabled": True})
    accounts = table("accounts", {"attribute_name": "ttl", "enabled": True} if accounts_ttl else None)
    function("worker", environment={"variables": {"IDEMPOTENCY_TABLE": ledger.name, "ACCOUNTS_TABLE": accounts.name}})


def test_store_among_several_unknown_tables_passes_when_every_candidate_has_ttl(policy_analyzer):
    result = analyse(policy_analyzer, lambda: two_tables(accounts_ttl=True), unknowns=True)
    assert not flagged(result, TTL) and not skipped(result, TTL)


def test_store_among_several_unknown_tables_is_skipped_when_a_candidate_lacks_ttl(policy_analyzer):
    result = analyse(policy_analyzer, lambda: two_tables(accounts_ttl=False), unknowns=True)
    assert not flagged(result, TTL) and skipped(result, TTL)
    assert not flagged(analyse(policy_analyzer, lambda: two_tables(accounts_ttl=False)), TTL)  # known: ledger is fine


def test_idempotency_table_with_unknown_ttl_is_skipped(policy_analyzer):
    def program():
        marker = aws.s3.Bucket("marker")
        idempotent_function(ttl={"attribute_name": "expiration", "enabled": later(False, marker.arn)})
    result = analyse(policy_analyzer, program, unknowns=True)
    assert not flagged(result, TTL) and skipped(result, TTL)


# ---- sfn-distributed-map-bounded ---------------------------------------------------------

SFN = "sfn-distributed-map-bounded"


def distributed_map(bounded=True):
    task = {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": True}
    state = {"Type": "Map", "End": True,
             "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                               "StartAt": "Item", "States": {"Item": task}}}
    if bounded:
        task["Retry"] = [{"ErrorEquals": ["States.TaskFailed"], "IntervalSeconds": 2, "BackoffRate": 2,
                          "MaxAttempts": 3, "MaxDelaySeconds": 20, "JitterStrategy": "FULL"}]
        state.update(MaxConcurrency=5, ToleratedFailurePercentage=10,
                     Catch=[{"ErrorEquals": ["States.ExceedToleratedFailureThreshold"], "Next": "Alert"}])
        state.pop("End")
    return {"StartAt": "Map", "States": {"Map": state, "Alert": {"Type": "Succeed"}}}


def state_machine(definition):
    aws.sfn.StateMachine("batch", role_arn=ROLE, definition=definition)


def test_unbounded_distributed_map_violates_naming_each_missing_setting(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: state_machine(json.dumps(distributed_map(False)))), SFN)
    assert len(found) == 1
    for missing in ("MaxConcurrency", "ToleratedFailurePercentage", "States.ExceedToleratedFailureThreshold",
                    "JitterStrategy FULL"):
        assert missing in found[0].message


def test_bounded_distributed_map_passes(policy_analyzer):
    assert not flagged(analyse(policy_analyzer, lambda: state_machine(json.dumps(distributed_map()))), SFN)


def test_unknown_definition_is_skipped(policy_analyzer):
    def program():
        marker = aws.s3.Bucket("marker")
        state_machine(later(json.dumps(distributed_map(False)), marker.arn))
    result = analyse(policy_analyzer, program, unknowns=True)
    assert not flagged(result, SFN) and skipped(result, SFN)


# ---- scheduler-target-has-retry-and-dlq --------------------------------------------------

SCHEDULER = "scheduler-target-has-retry-and-dlq"


def schedule(target_extra=None, target=None):
    fn = function("dispatcher")
    aws.scheduler.Schedule("nightly", schedule_expression="cron(0 3 * * ? *)",
                           flexible_time_window={"mode": "OFF"},
                           target=target or {"arn": fn.arn, "role_arn": ROLE, **(target_extra or {})})


def test_schedule_without_retry_or_dlq_violates(policy_analyzer):
    found = flagged(analyse(policy_analyzer, lambda: schedule()), SCHEDULER)
    assert len(found) == 1 and "retryPolicy" in found[0].message and "deadLetterConfig" in found[0].message


def test_schedule_with_retry_and_dlq_passes(policy_analyzer):
    def program():
        schedule({"retry_policy": {"maximum_retry_attempts": 3, "maximum_event_age_in_seconds": 3600},
                  "dead_letter_config": {"arn": dlq("nightly-dlq").arn}})
    result = analyse(policy_analyzer, program, unknowns=True)  # the DLQ's ARN is unknown: set is enough
    assert not flagged(result, SCHEDULER) and not skipped(result, SCHEDULER)


def test_schedule_with_unknown_target_is_skipped(policy_analyzer):
    def program():
        marker = aws.s3.Bucket("marker")
        schedule(target=later({"arn": "arn:aws:lambda:us-east-1:1:function:x", "roleArn": ROLE}, marker.arn))
    result = analyse(policy_analyzer, program, unknowns=True)
    assert not flagged(result, SCHEDULER) and skipped(result, SCHEDULER)


# ---- dlq-has-depth-alarm -----------------------------------------------------------------

ALARM = "dlq-has-depth-alarm"


def test_dlq_without_alarm_violates(policy_analyzer):
    def program():
        target = aws.sqs.Queue("orders-dlq", message_retention_seconds=1_209_600)
        aws.sqs.Queue("orders", redrive_policy=redrive_to(target))
    found = flagged(analyse(policy_analyzer, program), ALARM)
    assert [v.urn.rsplit("::", 1)[-1] for v in found] == ["orders-dlq"]


def test_dlq_with_depth_alarm_passes_even_when_its_name_is_unknown(policy_analyzer):
    result = analyse(policy_analyzer, lambda: aws.sqs.Queue(
        "orders", redrive_policy=redrive_to(dlq("orders-dlq"))), unknowns=True)
    assert not flagged(result, ALARM)


def test_a_retry_stage_a_function_consumes_needs_no_depth_alarm_but_its_own_dlq_does(policy_analyzer):
    """The Kinesis Retry-DLQ shape: the stream's on-failure destination, consumed by the function,
    redriving to an Unrecoverable-DLQ. Messages in the retry stage are replayed automatically;
    the Unrecoverable-DLQ is where a person must be called."""
    def program():
        unrecoverable = aws.sqs.Queue("events-unrecoverable", message_retention_seconds=1_209_600)
        retry = aws.sqs.Queue("events-retry", visibility_timeout_seconds=360, redrive_policy=redrive_to(unrecoverable))
        fn = function("events-fn", timeout=60)
        aws.lambda_.EventSourceMapping("events-retry-mapping", event_source_arn=retry.arn, function_name=fn.name,
                                       function_response_types=["ReportBatchItemFailures"])
        stream = aws.kinesis.Stream("events", shard_count=1)
        aws.lambda_.EventSourceMapping("events-mapping", event_source_arn=stream.arn, function_name=fn.arn,
                                       starting_position="LATEST", maximum_retry_attempts=3,
                                       destination_config={"on_failure": {"destination_arn": retry.arn}})
    found = flagged(analyse(policy_analyzer, program), ALARM)
    assert [v.urn.rsplit("::", 1)[-1] for v in found] == ["events-unrecoverable"]


def test_alarm_at_ten_messages_does_not_count(policy_analyzer):
    def program():
        target = aws.sqs.Queue("orders-dlq", message_retention_seconds=1_209_600)
        queue_depth_alarm("orders-dlq-depth", queue=target, parent=None, description="late", threshold=10)
        aws.sqs.Queue("orders", redrive_policy=redrive_to(target))
    assert flagged(analyse(policy_analyzer, program), ALARM)


def test_alarm_with_unknown_threshold_is_skipped(policy_analyzer):
    def program():
        marker = aws.s3.Bucket("marker")
        target = aws.sqs.Queue("orders-dlq", message_retention_seconds=1_209_600)
        queue_depth_alarm("orders-dlq-depth", queue=target, parent=None, description="?",
                          threshold=later(1, marker.arn))
        aws.sqs.Queue("orders", redrive_policy=redrive_to(target))
    result = analyse(policy_analyzer, program, unknowns=True)
    assert not flagged(result, ALARM) and skipped(result, ALARM)


# ---- security -------------------------------------------------------------------------

SQS_SSE = "sqs-queue-encrypted-at-rest"
KINESIS_SSE = "kinesis-stream-encrypted-at-rest"
DYNAMODB_KMS = "dynamodb-table-encrypted-with-kms"
IAM = "iam-no-wildcard-actions"


@pytest.mark.parametrize("policy, violating, passing, unknown", [
    (SQS_SSE,
     lambda: aws.sqs.Queue("plain", sqs_managed_sse_enabled=False),
     lambda: aws.sqs.Queue("default-sse"),  # absent: SQS encrypts new queues with SSE-SQS
     lambda m: aws.sqs.Queue("plain", sqs_managed_sse_enabled=later(False, m.arn))),
    (KINESIS_SSE,
     lambda: aws.kinesis.Stream("events", shard_count=1),  # encryptionType defaults to NONE
     lambda: aws.kinesis.Stream("events", shard_count=1, encryption_type="KMS", kms_key_id="alias/aws/kinesis"),
     lambda m: aws.kinesis.Stream("events", shard_count=1, encryption_type=later("NONE", m.arn))),
    (DYNAMODB_KMS,
     lambda: aws.dynamodb.Table("t", hash_key="id", attributes=[{"name": "id", "type": "S"}]),
     lambda: aws.dynamodb.Table("t", hash_key="id", attributes=[{"name": "id", "type": "S"}],
                                server_side_encryption={"enabled": True}),
     lambda m: aws.dynamodb.Table("t", hash_key="id", attributes=[{"name": "id", "type": "S"}],
                                  server_side_encryption={"enabled": later(False, m.arn)})),
    (IAM,
     lambda: aws.iam.RolePolicy("p", role="r", policy=json.dumps({"Version": "2012-10-17", "Statement": [
         {"Effect": "Allow", "Action": ["sqs:*"], "Resource": "*"}]})),
     lambda: aws.iam.RolePolicy("p", role="r", policy=json.dumps({"Version": "2012-10-17", "Statement": [
         {"Effect": "Allow", "Action": ["sqs:SendMessage"], "Resource": "*"},
         {"Effect": "Deny", "Action": "*", "Resource": "arn:aws:s3:::secret"}]})),
     lambda m: aws.iam.RolePolicy("p", role="r", policy=later("{}", m.arn))),
])
def test_security_rule(policy_analyzer, policy, violating, passing, unknown):
    found = flagged(analyse(policy_analyzer, violating), policy)
    assert len(found) == 1
    assert not flagged(analyse(policy_analyzer, passing), policy)
    result = analyse(policy_analyzer, lambda: unknown(aws.s3.Bucket("marker")), unknowns=True)
    assert not flagged(result, policy) and skipped(result, policy)


def test_wildcard_in_a_role_inline_policy_violates(policy_analyzer):
    program = lambda: aws.iam.Role("r", assume_role_policy="{}", inline_policies=[{
        "name": "all", "policy": json.dumps({"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]})}])
    found = flagged(analyse(policy_analyzer, program), IAM)
    assert len(found) == 1 and "inlinePolicies[0].policy" in found[0].message


# ---- Lambda runtimes -----------------------------------------------------------------------------

RUNTIME = "lambda-function-runtime-supported"


def runtime_program():
    """Functions on runtimes past, near and beyond their deprecation, one AWS added after the table
    and a container image function (no runtime)."""
    legacy = dict(role=ROLE, handler="h.handler", code=pulumi.AssetArchive({}))
    aws.lambda_.Function("python39", runtime="python3.9", **legacy)
    aws.lambda_.Function("node16", runtime=aws.lambda_.Runtime.NODE_JS16D_X, **legacy)
    aws.lambda_.Function("go", runtime="go1.x", **legacy)
    function("python312")
    aws.lambda_.Function("python399", runtime="python3.99", **legacy)
    aws.lambda_.Function("image", role=ROLE, package_type="Image", image_uri="123456789012.dkr.ecr.eu-west-1"
                         ".amazonaws.com/app:1")


def test_a_function_on_a_deprecated_runtime_is_advised_onto_the_newest_of_its_language(policy_analyzer):
    found = {v.urn.rsplit("::", 1)[-1]: v for v in flagged(analyse(
        policy_analyzer, runtime_program, config={RUNTIME: {"asOf": "2026-12-07"}}), RUNTIME)}
    # python3.12 is supported until 2028; a runtime the table does not know, and an image, are not judged.
    assert sorted(found) == ["go", "node16", "python39"]
    assert all(v.level == "advisory" for v in found.values())
    assert "runs python3.9, which Lambda deprecated on 2025-12-15" in found["python39"].message
    assert "no security patches" in found["python39"].message
    assert "Move the function to python3.14" in found["python39"].message
    assert "Move the function to nodejs24.x" in found["node16"].message
    assert "Move the function to provided.al2023" in found["go"].message  # Go runs on the OS-only runtime now


def test_the_runtime_rule_judges_on_the_day_of_the_preview_or_warns_ahead_as_of_a_later_one(policy_analyzer):
    # By default, today: python3.9's date (2025-12-15) has passed whatever day this runs.
    assert "python39" in resource_names(flagged(analyse(policy_analyzer, runtime_program), RUNTIME))
    # Before its date, a runtime passes; as of a day after it, it is reported ahead of time.
    before = resource_names(flagged(analyse(policy_analyzer, runtime_program,
                                            config={RUNTIME: {"asOf": "2025-12-14"}}), RUNTIME))
    ahead = resource_names(flagged(analyse(policy_analyzer, runtime_program,
                                           config={RUNTIME: {"asOf": "2028-11-01"}}), RUNTIME))
    assert before == ["go", "node16"]
    assert ahead == ["go", "node16", "python312", "python39"]


def test_a_runtime_unknown_in_preview_is_skipped(policy_analyzer):
    result = analyse(policy_analyzer, lambda: aws.lambda_.Function(
        "fn", role=ROLE, handler="h.handler", code=pulumi.AssetArchive({}),
        runtime=later("python3.9", aws.s3.Bucket("b").id)), unknowns=True)
    assert not flagged(result, RUNTIME) and skipped(result, RUNTIME)
