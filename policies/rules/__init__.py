"""The blueprint's CrossGuard rules, one module per AWS service. `POLICIES` is the whole pack."""

from . import alarms, dynamodb, kinesis, lambda_mappings, scheduler, security, sqs, step_functions

POLICIES = [
    *sqs.POLICIES,
    *lambda_mappings.POLICIES,
    *kinesis.POLICIES,
    *dynamodb.POLICIES,
    *step_functions.POLICIES,
    *scheduler.POLICIES,
    *alarms.POLICIES,
    *security.POLICIES,
]
