"""Who a queue, topic or role policy lets in, judged by what its conditions allow (through the real
analyzer): a public principal is restricted only by a positive condition with a specific value on a
key that names the source, account, organization or network; NotPrincipal is public too; a role
any AWS account may assume is refused like a public queue."""

import json

import pulumi_aws as aws
import pytest
from test_policies import analyse, flagged
from test_policies_second_edition import DENY_PLAIN, PUBLIC, allow, check_rule, document, queue_with_policy

TRUST = "iam-role-trust-policy-no-public-principal"
ACCOUNT = "123456789012"
SEND = "sqs:SendMessage"


@pytest.mark.parametrize("condition", [
    {"ArnLike": {"aws:SourceArn": "*"}},
    {"ArnLike": {"aws:SourceArn": "arn:aws:sns:*:*:*"}},
    {"ArnEquals": {"aws:SourceArn": ["arn:aws:sns:us-east-1:123456789012:t", "*"]}},
    {"IpAddress": {"aws:SourceIp": "0.0.0.0/0"}},
    {"IpAddress": {"aws:SourceIp": "::/0"}},
    {"Null": {"aws:SourceAccount": "true"}},
    {"Null": {"aws:SourceAccount": "false"}},
    {"StringNotEquals": {"aws:SourceAccount": ACCOUNT}},
    {"StringEqualsIfExists": {"aws:SourceAccount": ACCOUNT}},
    {"ForAllValues:StringEquals": {"aws:PrincipalOrgID": "o-abc123"}},
    {"StringLike": {"aws:SourceAccount": "*"}},
    {"StringEquals": {"aws:SourceAccount": 123456789012}},
    {"StringEquals": {"aws:UserAgent": "mine"}},
])
def test_a_public_principal_with_a_condition_that_restricts_nothing_violates(policy_analyzer, condition):
    statement = allow(SEND, Principal="*", Condition=condition)

    found = flagged(analyse(policy_analyzer, lambda: queue_with_policy(document(statement, DENY_PLAIN))), PUBLIC)

    assert len(found) == 1 and "restricts nothing" in found[0].message


@pytest.mark.parametrize("condition", [
    {"ArnEquals": {"aws:SourceArn": "arn:aws:sns:us-east-1:123456789012:news"}},
    {"ArnLike": {"aws:SourceArn": "arn:aws:sns:*:123456789012:*"}},
    {"ArnLike": {"aws:SourceArn": "arn:aws:s3:::my-bucket"}},
    {"StringEquals": {"aws:SourceAccount": ACCOUNT}},
    {"ForAnyValue:StringLike": {"aws:PrincipalOrgPaths": "o-abc123/r-ab12/*"}},
    {"StringEquals": {"aws:PrincipalOrgID": "o-abc123"}},
    {"IpAddress": {"aws:SourceIp": ["203.0.113.0/24", "2001:db8::/32"]}},
    {"StringEquals": {"aws:SourceVpce": "vpce-1a2b3c4d"}},
])
def test_a_public_principal_tied_to_a_specific_source_passes(policy_analyzer, condition):
    statement = allow(SEND, Principal="*", Condition=condition)

    assert not flagged(analyse(policy_analyzer, lambda: queue_with_policy(document(statement, DENY_PLAIN))), PUBLIC)


def test_allow_with_not_principal_is_public(policy_analyzer):
    statement = {"Effect": "Allow", "NotPrincipal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, "Action": SEND,
                 "Resource": "*"}

    found = flagged(analyse(policy_analyzer, lambda: queue_with_policy(document(statement, DENY_PLAIN))), PUBLIC)

    assert len(found) == 1 and "NotPrincipal" in found[0].message


def trust(*statements):
    return lambda: aws.iam.Role("worker", assume_role_policy=document(*statements))


def assume(principal, **extra):
    return {"Effect": "Allow", "Principal": principal, "Action": "sts:AssumeRole", **extra}


def test_a_role_any_aws_account_may_assume_violates(policy_analyzer):
    found = check_rule(policy_analyzer, TRUST, trust(assume({"AWS": "*"})),
                       trust(assume({"Service": "lambda.amazonaws.com"})),
                       lambda m: aws.iam.Role("worker", assume_role_policy=m.arn.apply(
                           lambda _: document(assume("*")))))
    assert "any AWS principal" in found[0].message


@pytest.mark.parametrize("statement, violates", [
    (assume("*"), True),
    (assume({"AWS": ["*", f"arn:aws:iam::{ACCOUNT}:root"]}), True),
    (assume({"AWS": "*"}, Condition={"StringEquals": {"sts:ExternalId": "shared-secret"}}), True),
    ({"Effect": "Allow", "NotPrincipal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}, True),
    (assume({"AWS": "*"}, Condition={"StringEquals": {"aws:PrincipalAccount": ACCOUNT}}), False),
    (assume({"AWS": f"arn:aws:iam::{ACCOUNT}:root"}), False),
    ({"Effect": "Deny", "Principal": "*", "Action": "sts:AssumeRole"}, False),
])
def test_role_trust_policies_are_judged_by_who_they_let_in(policy_analyzer, statement, violates):
    found = flagged(analyse(policy_analyzer, trust(statement)), TRUST)

    assert len(found) == (1 if violates else 0), json.dumps(statement)
