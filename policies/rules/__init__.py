"""The blueprint's CrossGuard rules, one module per AWS service. `POLICIES` is the whole pack."""

from . import (
    alarms,
    async_invoke,
    delivery,
    dynamodb,
    eventbridge,
    failure_destinations,
    kinesis,
    lambda_mappings,
    logs,
    names,
    resource_policies,
    scheduler,
    security,
    sns,
    sqs,
    step_functions,
)

POLICIES = [
    *sqs.POLICIES,
    *lambda_mappings.POLICIES,
    *async_invoke.POLICIES,
    *kinesis.POLICIES,
    *dynamodb.POLICIES,
    *step_functions.POLICIES,
    *scheduler.POLICIES,
    *eventbridge.POLICIES,
    *sns.POLICIES,
    *alarms.POLICIES,
    *logs.POLICIES,
    *security.POLICIES,
    *resource_policies.POLICIES,
    *delivery.POLICIES,
    *failure_destinations.POLICIES,
    *names.POLICIES,
]
