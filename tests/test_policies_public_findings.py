"""Two findings of the pack on public programs: a DynamoDB stream mapping whose record age outlives
the stream's 24 h is flagged in a first preview too (the table's stream ARN is unknown then), and the
DLQ retention rule's fix never asks for the maximum a DLQ already has."""

import pulumi_aws as aws
from policy_env import analyse, flagged
from test_policies import function


def test_a_dynamodb_stream_mapping_whose_record_age_outlives_the_stream_is_flagged_in_a_first_preview(policy_analyzer):
    def program():
        table = aws.dynamodb.Table("orders", hash_key="id", attributes=[{"name": "id", "type": "S"}],
                                   billing_mode="PAY_PER_REQUEST", stream_enabled=True,
                                   stream_view_type="NEW_AND_OLD_IMAGES")
        aws.lambda_.EventSourceMapping("orders-changes", event_source_arn=table.stream_arn,
                                       function_name=function("orders-fn", timeout=60).arn,
                                       starting_position="LATEST", maximum_record_age_in_seconds=172_800,
                                       maximum_retry_attempts=-1)

    # the table's stream ARN is unknown until it exists; the source it comes from says 24 h
    found = flagged(analyse(policy_analyzer, program, unknowns=True), "lambda-stream-esm-bounded-retries")
    assert len(found) == 1 and "DynamoDB streams keep records 24 h" in found[0].message


def test_the_dlq_retention_rules_fix_does_not_ask_for_what_a_dlq_at_the_maximum_already_has(policy_analyzer):
    (rule,) = [p for p in policy_analyzer.info.policies if p.name == "sqs-dlq-retention-exceeds-source"]
    assert "lower the source" in rule.remediation_steps
