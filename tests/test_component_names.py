"""Physical names within AWS's limits: each component accepts the longest name whose generated
child names all fit, and refuses one character more, naming the fix."""

import pytest

from integration_blueprint.components import (
    DistributedMapBatch,
    FifoBillingQueue,
    IdempotentStreamConsumer,
    NonIdempotentStreamConsumer,
)
from integration_blueprint.core import aws_limits
from integration_blueprint.preview.recording import ProgramError, record_program
from tests.conftest import REGION_CONFIG

LIMITS = {  # type token -> AWS's limit on its physical name
    "aws:lambda/function:Function": aws_limits.LAMBDA_FUNCTION_NAME_MAX_LENGTH,
    "aws:iam/role:Role": aws_limits.IAM_ROLE_NAME_MAX_LENGTH,
    "aws:sqs/queue:Queue": aws_limits.SQS_QUEUE_NAME_MAX_LENGTH,
    "aws:scheduler/schedule:Schedule": aws_limits.SCHEDULER_SCHEDULE_NAME_MAX_LENGTH,
    "aws:s3/bucket:Bucket": aws_limits.S3_BUCKET_NAME_MAX_LENGTH,
    "aws:sfn/stateMachine:StateMachine": aws_limits.SFN_STATE_MACHINE_NAME_MAX_LENGTH,
    "aws:kinesis/stream:Stream": aws_limits.KINESIS_STREAM_NAME_MAX_LENGTH,
}
COMPONENTS = {  # component -> (args, the longest name that fits: its tightest child name)
    FifoBillingQueue: ({}, 64 - len("-dispatcher-role") - 8),
    DistributedMapBatch: ({"max_concurrency": 5, "schedule_expression": "cron(0 2 * * ? *)"},
                          64 - len("-schedule-role") - 8),
    IdempotentStreamConsumer: ({"enhanced_fan_out": True}, 64 - len("-consumer-role") - 8),
    NonIdempotentStreamConsumer: ({}, 64 - len("-consumer-role") - 8),
}


@pytest.mark.parametrize("component", COMPONENTS, ids=lambda c: c.__name__)
def test_the_longest_accepted_name_generates_only_names_aws_accepts(component):
    args, longest = COMPONENTS[component]
    recorded = record_program(lambda: component("n" * longest, dict(args)), config=REGION_CONFIG)
    checked = 0
    for resource in recorded.resources:
        if resource.type in LIMITS:
            physical = resource.outputs.get("name") or resource.outputs.get("bucket")
            assert physical and len(physical) <= LIMITS[resource.type], (resource.type, physical)
            checked += 1
    assert checked >= 5
    # ...and at least one of them is exactly at its limit: the bound is the tightest one.
    assert any(len(r.outputs.get("name") or "") == LIMITS.get(r.type) for r in recorded.resources)


@pytest.mark.parametrize("component", COMPONENTS, ids=lambda c: c.__name__)
def test_one_character_more_is_refused_naming_the_child_the_limit_and_the_fix(component):
    args, longest = COMPONENTS[component]
    name = "n" * (longest + 1)
    with pytest.raises(ProgramError, match=rf"{component.__name__}: the name '{name}' \({longest + 1} characters\) is "
                                           rf"too long: .* over AWS's limit of 64\. Use a name of at most {longest} "
                                           "characters"):
        record_program(lambda: component(name, dict(args)), config=REGION_CONFIG)


def test_a_default_state_machine_name_over_the_limit_is_refused_not_cut():
    with pytest.raises(ProgramError, match=r"default state machine name .* over AWS's limit of 80; give state_machine_name"):
        record_program(lambda: DistributedMapBatch("n" * 40, {"max_concurrency": 5}), project="p" * 40,
                       config=REGION_CONFIG)
