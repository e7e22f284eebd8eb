"""Open components: every function where a team's code runs takes the team's environment and IAM
statements, and every component exposes its children as typed attributes (and the roles of those
functions as outputs), so a team extends a component instead of forking it."""

import json
import typing

import pulumi
import pulumi_aws as aws
import pytest

from integration_blueprint.components import (
    DistributedMapBatch,
    FifoBillingQueue,
    IdempotentStreamConsumer,
    NonIdempotentStreamConsumer,
    PlatformArgs,
)
from integration_blueprint.components.reference import COMPONENTS, EXAMPLES
from integration_blueprint.preview.recording import record_program

REGION = {"aws:region": "eu-west-1"}
TEAM_TABLE = "arn:aws:dynamodb:eu-west-1:123456789012:table/team-orders"
# Each function where a team's code runs: its component, the prefix of its arguments (`<prefix>code`,
# `<prefix>environment`, `<prefix>policy_statements`) and the name suffix of the function it is.
TEAM_FUNCTIONS = [(FifoBillingQueue, "consumer_", "-consumer"), (FifoBillingQueue, "dispatcher_", "-dispatcher"),
                  (IdempotentStreamConsumer, "", "-consumer"), (NonIdempotentStreamConsumer, "", "-consumer"),
                  (DistributedMapBatch, "item_", "-enricher")]


def test_every_function_that_can_run_a_teams_code_is_listed_here():
    code_args = {(component, setting.arg.removesuffix("code")) for component, table in COMPONENTS.items()
                 for setting in table if setting.arg.endswith("code")}
    assert code_args == {(component, prefix) for component, prefix, _ in TEAM_FUNCTIONS}


@pytest.mark.parametrize("component,prefix,suffix", TEAM_FUNCTIONS,
                         ids=[f"{c.__name__}-{p or 'function'}" for c, p, _ in TEAM_FUNCTIONS])
def test_the_teams_environment_and_statements_reach_that_function_and_its_role_only(component, prefix, suffix):
    args = {**EXAMPLES[component], f"{prefix}environment": {"ORDERS_TABLE": "team-orders"},
            f"{prefix}policy_statements": [{"actions": ["dynamodb:GetItem"], "resources": [TEAM_TABLE]}]}

    recorded = record_program(lambda: component("team", args), config=REGION)

    functions = {r.name: r for r in recorded.of_type("aws:lambda/function:Function")}
    policies = {r.name: json.loads(r.inputs["policy"]) for r in recorded.of_type("aws:iam/rolePolicy:RolePolicy")}
    for name, function in functions.items():
        mine = name == f"team{suffix}"
        assert (function.inputs["environment"]["variables"].get("ORDERS_TABLE") == "team-orders") == mine, name
        granted = [s for s in policies[f"{name}-policy"]["Statement"] if TEAM_TABLE in s["Resource"]]
        assert granted == ([{"Effect": "Allow", "Action": ["dynamodb:GetItem"], "Resource": [TEAM_TABLE]}]
                           if mine else []), name


CHILDREN = {
    FifoBillingQueue: {"queue": aws.sqs.Queue, "dlq": aws.sqs.Queue, "consumer_function": aws.lambda_.Function,
                       "consumer_role": aws.iam.Role, "dispatcher_function": aws.lambda_.Function,
                       "dispatcher_role": aws.iam.Role, "ledger_table": aws.dynamodb.Table,
                       "schedule": aws.scheduler.Schedule},
    IdempotentStreamConsumer: {"function": aws.lambda_.Function, "function_role": aws.iam.Role,
                               "retry_dlq": aws.sqs.Queue, "unrecoverable_dlq": aws.sqs.Queue,
                               "idempotency_table": aws.dynamodb.Table},
    NonIdempotentStreamConsumer: {"function": aws.lambda_.Function, "function_role": aws.iam.Role,
                                  "retry_dlq": aws.sqs.Queue, "unrecoverable_dlq": aws.sqs.Queue},
    DistributedMapBatch: {"state_machine": aws.sfn.StateMachine, "ops_queue": aws.sqs.Queue,
                          "item_function": aws.lambda_.Function, "item_role": aws.iam.Role},
}


@pytest.mark.parametrize("component", list(CHILDREN), ids=lambda c: c.__name__)
def test_each_component_exposes_its_children_typed_for_a_team_to_extend(component):
    """A team attaches its own policy to a role the component made, as with AWS Solutions Constructs."""
    built = {}

    def program():
        built["component"] = made = component("team", EXAMPLES[component])
        role = next(getattr(made, name) for name, kind in CHILDREN[component].items() if kind is aws.iam.Role)
        aws.iam.RolePolicy("team-extra", role=role.name, policy=json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": ["dynamodb:GetItem"], "Resource": [TEAM_TABLE]}]}))

    recorded = record_program(program, config=REGION)

    made = built["component"]
    for name, kind in CHILDREN[component].items():
        assert isinstance(getattr(made, name), kind), name
    extra = recorded.named("team-extra")
    role_urns = {r.urn for r in recorded.of_type("aws:iam/role:Role")}
    assert set(extra.property_dependencies["role"]) <= role_urns and extra.property_dependencies["role"]


@pytest.mark.parametrize("component,prefix", [(c, p) for c, p, _ in TEAM_FUNCTIONS],
                         ids=[f"{c.__name__}-{p or 'function'}" for c, p, _ in TEAM_FUNCTIONS])
def test_the_role_of_each_function_that_runs_team_code_is_an_output(component, prefix):
    role = f"{prefix or 'function_'}role"
    outputs = {name for cls in component.__mro__ for name, hint in vars(cls).get("__annotations__", {}).items()
               if typing.get_origin(hint) is pulumi.Output}
    assert {f"{role}_name", f"{role}_arn"} <= outputs


def test_platform_args_are_exported_to_spread_into_every_component():
    platform: PlatformArgs = {"alarm_actions": ["arn:aws:sns:eu-west-1:123456789012:oncall"], "log_retention_days": 30}
    recorded = record_program(lambda: FifoBillingQueue("payroll", {**platform, "batch_size": 5}), config=REGION)
    assert all(r.inputs.get("retentionInDays") == 30 for r in recorded.of_type("aws:cloudwatch/logGroup:LogGroup"))
