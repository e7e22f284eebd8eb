"""The drill's AWS refuses what AWS refuses: every call a function makes is authorized against its
role's identity policies and the resource's own policy (core/iam_evaluation.py, decided in the
sandbox's process by sandbox/authorization.py at the one seam), and a refused call is answered as
the service answers it, naming the session, the action, the resource and why."""

import json

import boto3
import pytest
from botocore.exceptions import ClientError
from google.protobuf import struct_pb2

from integration_blueprint.core.iam_evaluation import (
    EXPLICIT_IDENTITY_DENY,
    EXPLICIT_RESOURCE_DENY,
    NO_IDENTITY_ALLOW,
    NO_RESOURCE_ALLOW,
    Policy,
    Principal,
    Request,
    action_matches,
    conditions_hold,
    evaluate,
    resource_matches,
)
from integration_blueprint.preview.engine import RecordedResource
from integration_blueprint.preview.recording import RecordedStack
from integration_blueprint.sandbox.emulator import running_emulator
from integration_blueprint.sandbox.interception import FunctionRun
from integration_blueprint.sandbox.realization import Sandbox

ACCOUNT, REGION = "123456789012", "eu-west-1"
ROLE = Principal(ACCOUNT, "orders-role", "orders-consumer")
TABLE = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/orders"
QUEUE = f"arn:aws:sqs:{REGION}:{ACCOUNT}:orders-retry"


def policy(*statements: dict, name: str = "policy") -> Policy:
    return Policy.compile(name, {"Version": "2012-10-17", "Statement": list(statements)})


def allow(action, resource, **more) -> dict:
    return {"Effect": "Allow", "Action": action, "Resource": resource, **more}


def deny(action, resource, **more) -> dict:
    return {"Effect": "Deny", "Action": action, "Resource": resource, **more}


def decide(action, resource, identity=(), resource_policy=None, context=(), resource_account="", **kw):
    request = Request(ROLE, action, resource, resource_account, tuple(context))
    return evaluate(request, list(identity), resource_policy, **kw)


# ---- the evaluator ----------------------------------------------------------------------------------

def test_a_role_allowed_only_getitem_may_read_but_not_write_and_is_told_why():
    get_only = policy(allow("dynamodb:GetItem", TABLE))

    assert decide("dynamodb:GetItem", TABLE, [get_only]).allowed
    refused = decide("dynamodb:PutItem", TABLE, [get_only])
    assert not refused.allowed and refused.reason == NO_IDENTITY_ALLOW


def test_an_explicit_deny_beats_every_allow_in_identity_and_resource_policies():
    everything = policy(allow("dynamodb:*", "*"), name="admin")
    no_deletes = policy(deny("dynamodb:DeleteItem", TABLE, Sid="NoDeletes"), name="guard")

    refused = decide("dynamodb:DeleteItem", TABLE, [everything, no_deletes])
    assert (refused.allowed, refused.reason, refused.statement) == (
        False, EXPLICIT_IDENTITY_DENY, "guard Statement[0] (NoDeletes)")
    assert decide("dynamodb:PutItem", TABLE, [everything, no_deletes]).allowed
    # The queue's own policy denies the role although its identity policy allows.
    queue_policy = policy({"Effect": "Deny", "Principal": {"AWS": ROLE.role_arn}, "Action": "sqs:SendMessage",
                           "Resource": QUEUE}, name="queue policy")
    refused = decide("sqs:SendMessage", QUEUE, [policy(allow("sqs:*", "*"))], queue_policy)
    assert (refused.allowed, refused.reason) == (False, EXPLICIT_RESOURCE_DENY)


def test_numeric_and_date_conditions_compare_as_numbers_and_dates_and_fail_on_what_is_neither():
    context = {"s3:max-keys": "10", "aws:currenttime": "2026-12-07T10:00:00Z"}

    def holds(operator: str, key: str, wanted) -> bool:
        return conditions_hold({operator: {key: wanted}}, context)

    assert holds("NumericLessThan", "s3:max-keys", "11") and not holds("NumericLessThan", "s3:max-keys", "10")
    assert holds("NumericLessThanEquals", "s3:max-keys", "10") and holds("NumericGreaterThanEquals", "s3:max-keys", 10)
    assert not holds("NumericGreaterThan", "s3:max-keys", "9.5e1") and holds("NumericEquals", "s3:max-keys", "10.0")
    assert holds("NumericNotEquals", "s3:max-keys", "9") and not holds("NumericNotEquals", "s3:max-keys", "10")
    assert not holds("NumericLessThan", "s3:max-keys", "many")  # a bound that is no number: never true
    assert holds("DateGreaterThan", "aws:CurrentTime", "2026-01-01T00:00:00Z")
    assert not holds("DateLessThan", "aws:CurrentTime", "2026-01-01T00:00:00Z")
    assert holds("DateEquals", "aws:CurrentTime", "2026-12-07T10:00:00+00:00")
    assert holds("DateNotEquals", "aws:CurrentTime", "2026-12-08T10:00:00Z")
    assert holds("DateLessThanEquals", "aws:CurrentTime", "2026-12-07T10:00:00Z")
    assert not holds("DateGreaterThanEquals", "aws:CurrentTime", "yesterday")


def test_not_action_and_not_resource_invert_what_they_name():
    all_but_iam = policy({"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"})
    assert decide("dynamodb:PutItem", TABLE, [all_but_iam]).allowed
    assert not decide("iam:PutRolePolicy", ROLE.role_arn, [all_but_iam]).allowed

    other = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/payments"
    only_orders = policy(allow("dynamodb:*", "*"),
                         {"Effect": "Deny", "Action": "dynamodb:*", "NotResource": [TABLE, f"{TABLE}/index/*"]})
    assert decide("dynamodb:Query", f"{TABLE}/index/by-account", [only_orders]).allowed
    assert decide("dynamodb:PutItem", other, [only_orders]).reason == EXPLICIT_IDENTITY_DENY


def test_action_names_ignore_case_and_arns_keep_it_and_wildcards_stay_within_their_segment():
    assert action_matches("DynamoDB:put*", "dynamodb:PutItem") and action_matches("SNS:Publish", "sns:publish")
    assert action_matches("sqs:?eceiveMessage", "sqs:ReceiveMessage") and not action_matches("sqs:Send*", "sqs:DeleteMessage")
    assert not resource_matches(f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/Orders", TABLE)
    assert resource_matches("arn:aws:sqs:*:*:orders-*", QUEUE)
    assert not resource_matches("arn:aws:sqs:*:*:orders", QUEUE)
    assert resource_matches("arn:aws:s3:::archive/*", "arn:aws:s3:::archive/2026/11/a.json")
    assert not resource_matches("arn:aws:s3:::archive/*", "arn:aws:s3:::archive")


def test_a_resource_policy_grants_within_the_account_but_naming_the_account_only_delegates_to_iam():
    to_role = policy({"Effect": "Allow", "Principal": {"AWS": ROLE.role_arn}, "Action": "sqs:SendMessage",
                      "Resource": QUEUE})
    assert decide("sqs:SendMessage", QUEUE, [], to_role).allowed
    to_account = policy({"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
                         "Action": "sqs:SendMessage", "Resource": QUEUE})
    assert not decide("sqs:SendMessage", QUEUE, [], to_account).allowed


def test_a_queue_in_another_account_needs_its_own_policy_and_the_roles():
    theirs = "arn:aws:sqs:eu-west-1:210987654321:partner-inbox"
    identity = policy(allow("sqs:SendMessage", theirs))
    refused = decide("sqs:SendMessage", theirs, [identity], resource_account="210987654321")
    assert (refused.allowed, refused.reason) == (False, NO_RESOURCE_ALLOW)
    their_policy = policy({"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
                           "Action": "sqs:SendMessage", "Resource": theirs})
    assert decide("sqs:SendMessage", theirs, [identity], their_policy, resource_account="210987654321").allowed
    assert decide("sqs:SendMessage", theirs, [], their_policy, resource_account="210987654321").reason == NO_IDENTITY_ALLOW


def test_a_kms_key_policy_must_allow_for_identity_policies_to_count():
    key = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    identity = policy(allow("kms:Decrypt", key))
    closed = policy({"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::111122223333:root"}, "Action": "kms:*",
                     "Resource": "*"})
    assert decide("kms:Decrypt", key, [identity], closed, key_policy_required=True).reason == NO_RESOURCE_ALLOW
    delegating = policy({"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, "Action": "kms:*",
                         "Resource": "*"})
    assert decide("kms:Decrypt", key, [identity], delegating, key_policy_required=True).allowed
    assert not decide("kms:Decrypt", key, [], delegating, key_policy_required=True).allowed


def test_conditions_are_evaluated_on_what_the_request_carries_and_a_missing_key_as_aws_evaluates_it():
    tls = (("aws:SecureTransport", "true"),)
    tls_only = policy({"Effect": "Deny", "Principal": "*", "Action": "sqs:*", "Resource": QUEUE,
                       "Condition": {"Bool": {"aws:SecureTransport": "false"}}})
    identity = policy(allow("sqs:SendMessage", QUEUE))
    assert decide("sqs:SendMessage", QUEUE, [identity], tls_only, context=tls).allowed
    assert not decide("sqs:SendMessage", QUEUE, [identity], tls_only, context=(("aws:SecureTransport", "false"),)).allowed

    # aws:SourceArn is set when a service acts for a resource; a function's own call does not carry it.
    for_the_topic = policy(allow("sqs:SendMessage", QUEUE,
                                 Condition={"ArnEquals": {"aws:SourceArn": f"arn:aws:sns:{REGION}:{ACCOUNT}:orders"}}))
    refused = decide("sqs:SendMessage", QUEUE, [for_the_topic], context=tls)
    assert not refused.allowed and refused.absent_keys == ("aws:SourceArn",)
    not_from = policy(deny("sqs:SendMessage", QUEUE, Condition={"StringNotEquals": {"aws:SourceAccount": ACCOUNT}}),
                      allow("sqs:SendMessage", QUEUE))
    assert not decide("sqs:SendMessage", QUEUE, [not_from]).allowed  # a negated operator holds on a missing key
    for operator, allowed in (("StringEquals", False), ("StringEqualsIfExists", True)):  # ...IfExists: true if missing
        only_from = policy(allow("sqs:SendMessage", QUEUE, Condition={operator: {"aws:SourceAccount": "210987654321"}}))
        assert decide("sqs:SendMessage", QUEUE, [only_from]).allowed is allowed

    own_keys = policy(allow("dynamodb:PutItem", TABLE, Condition={
        "ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["${aws:PrincipalAccount}-*"]}}))
    mine = (("aws:PrincipalAccount", ACCOUNT), ("dynamodb:LeadingKeys", [f"{ACCOUNT}-order-1"]))
    assert decide("dynamodb:PutItem", TABLE, [own_keys], context=mine).allowed
    theirs = (("aws:PrincipalAccount", ACCOUNT), ("dynamodb:LeadingKeys", ["999-order-1"]))
    assert not decide("dynamodb:PutItem", TABLE, [own_keys], context=theirs).allowed


# ---- through the sandbox's seam ----------------------------------------------------------------------

def resource(type_token: str, name: str, inputs: dict, outputs: dict) -> RecordedResource:
    return RecordedResource(urn=f"urn:pulumi:dev::iam::{type_token}::{name}", type=type_token, name=name, custom=True,
                            parent="", inputs=inputs, raw_inputs=struct_pb2.Struct(), dependencies=[],
                            property_dependencies={}, id=outputs.get("name", name), outputs=outputs)


def stack(role_statements: list, bucket_policy: dict) -> RecordedStack:
    queue_url = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/orders-retry"
    role_arn = f"arn:aws:iam::{ACCOUNT}:role/orders-role"
    trust = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]})
    return RecordedStack("iam", "dev", None, {"aws:region": REGION}, False, [
        resource("aws:dynamodb/table:Table", "orders", {"hashKey": "pk", "attributes": [{"name": "pk", "type": "S"}]},
                 {"name": "orders", "arn": TABLE}),
        resource("aws:sqs/queue:Queue", "orders-retry", {}, {"name": "orders-retry", "arn": QUEUE, "url": queue_url}),
        resource("aws:s3/bucketV2:BucketV2", "archive", {}, {"bucket": "archive", "arn": "arn:aws:s3:::archive"}),
        resource("aws:s3/bucketPolicy:BucketPolicy", "archive-policy",
                 {"bucket": "archive", "policy": json.dumps(bucket_policy)}, {}),
        resource("aws:iam/role:Role", "orders-role", {"assumeRolePolicy": trust},
                 {"name": "orders-role", "arn": role_arn, "id": "orders-role"}),
        resource("aws:iam/rolePolicy:RolePolicy", "orders-policy",
                 {"role": "orders-role", "policy": json.dumps({"Version": "2012-10-17", "Statement": role_statements})},
                 {"name": "orders-policy"}),
        resource("aws:lambda/function:Function", "orders-consumer",
                 {"handler": "integration_blueprint.handlers.reference.ledger.handler", "role": role_arn},
                 {"name": "orders-consumer", "arn": f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:orders-consumer"}),
    ])


TLS_ONLY = {"Version": "2012-10-17", "Statement": [
    {"Sid": "TlsOnly", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
     "Resource": ["arn:aws:s3:::archive", "arn:aws:s3:::archive/*"], "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
    {"Sid": "NoDeletes", "Effect": "Deny", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:role/orders-role"},
     "Action": "s3:DeleteObject", "Resource": "arn:aws:s3:::archive/*"}]}


def error_of(call) -> dict:
    with pytest.raises(ClientError) as refused:
        call()
    return refused.value.response


def test_a_functions_calls_are_refused_as_aws_refuses_them_and_the_emulator_never_sees_them():
    statements = [{"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": TABLE},
                  {"Effect": "Allow", "Action": ["s3:PutObject", "s3:DeleteObject"], "Resource": "arn:aws:s3:::archive/*"},
                  {"Effect": "Allow", "Action": "iam:PutRolePolicy", "Resource": f"arn:aws:iam::{ACCOUNT}:role/orders-role"}]
    with running_emulator(REGION) as emulator:
        sandbox = Sandbox(stack(statements, TLS_ONLY), emulator).realize()
        ddb, sqs, s3, iam = (boto3.client(s, region_name=REGION) for s in ("dynamodb", "sqs", "s3", "iam"))
        queue_url = sandbox.queues[QUEUE].url
        # The sandbox's own calls (realizing, the drill's checks) are not a function's: never refused.
        s3.put_object(Bucket="archive", Key="seed.csv", Body=b"id\n1\n")  # the TLS-only bucket (moto's own check fixed)
        with FunctionRun("orders-consumer", {}, sandbox.journal):
            ddb.get_item(TableName="orders", Key={"pk": {"S": "o-1"}})
            put = error_of(lambda: ddb.put_item(TableName="orders", Item={"pk": {"S": "o-1"}}))
            # A handler re-pointing its own lanes at init: a queue of its own, then the redrive.
            create = error_of(lambda: sqs.create_queue(QueueName="elsewhere"))
            redrive = error_of(lambda: sqs.set_queue_attributes(QueueUrl=queue_url, Attributes={"RedrivePolicy": "{}"}))
            s3.put_object(Bucket="archive", Key="o-1.json", Body=b"{}")  # over TLS: the bucket's Deny does not apply
            delete = error_of(lambda: s3.delete_object(Bucket="archive", Key="o-1.json"))

        session = f"arn:aws:sts::{ACCOUNT}:assumed-role/orders-role/orders-consumer"
        assert put["Error"] == {"Code": "AccessDeniedException", "Message": (
            f"User: {session} is not authorized to perform: dynamodb:PutItem on resource: {TABLE} because no "
            "identity-based policy allows the dynamodb:PutItem action")}
        assert put["ResponseMetadata"]["HTTPStatusCode"] == 400
        assert create["Error"]["Code"] == "AccessDenied" and (
            f"sqs:createqueue on resource: arn:aws:sqs:{REGION}:{ACCOUNT}:elsewhere" in create["Error"]["Message"])
        assert "sqs:setqueueattributes" in redrive["Error"]["Message"]
        assert delete["Error"]["Code"] == "AccessDenied" and delete["ResponseMetadata"]["HTTPStatusCode"] == 403
        assert delete["Error"]["Message"].endswith('on resource: "arn:aws:s3:::archive/o-1.json" because explicit deny '
                                                   "in a resource-based policy")
        # Nothing refused happened: no item, no queue, the redrive as realized; the journal holds only what succeeded.
        assert "Item" not in ddb.get_item(TableName="orders", Key={"pk": {"S": "o-1"}})
        assert [u.split("/")[-1] for u in sqs.list_queues()["QueueUrls"]] == ["orders-retry"]
        assert "RedrivePolicy" not in sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])["Attributes"]
        assert [c.operation for _, c in sandbox.journal.calls()] == ["GetItem", "PutObject"]

        usage = sandbox.authorizer.usage()["orders-consumer"]
        assert usage["used"] == ["dynamodb:GetItem", "s3:PutObject"]
        refused = {d["action"]: d for d in usage["denied"]}
        assert set(refused) == {"dynamodb:PutItem", "sqs:CreateQueue", "sqs:SetQueueAttributes", "s3:DeleteObject"}
        assert refused["dynamodb:PutItem"]["statement_to_add"] == {"Effect": "Allow", "Action": "dynamodb:PutItem",
                                                                   "Resource": TABLE}
        assert refused["s3:DeleteObject"]["fix"] == ("narrow or remove the deny at resource policy of arn:aws:s3:::archive "
                                                     "Statement[1] (NoDeletes)")
        assert usage["unused_grants"] == [f"iam:PutRolePolicy on arn:aws:iam::{ACCOUNT}:role/orders-role"]


def test_decisions_are_cached_per_request_and_a_policy_the_function_changes_is_read_again():
    statements = [{"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": TABLE},
                  {"Effect": "Allow", "Action": "iam:PutRolePolicy", "Resource": f"arn:aws:iam::{ACCOUNT}:role/orders-role"}]
    with running_emulator(REGION) as emulator:
        sandbox = Sandbox(stack(statements, TLS_ONLY), emulator).realize()
        ddb, iam = boto3.client("dynamodb", region_name=REGION), boto3.client("iam")
        authorizer = sandbox.authorizer
        with FunctionRun("orders-consumer", {}, sandbox.journal):
            for _ in range(20):
                ddb.get_item(TableName="orders", Key={"pk": {"S": "o-1"}})
            assert (authorizer.decisions_made, authorizer.cache_hits) == (1, 19)
            error_of(lambda: ddb.put_item(TableName="orders", Item={"pk": {"S": "o-1"}}))
            # The role may change its own policy (AWS would let it): what it grants itself counts at once.
            iam.put_role_policy(RoleName="orders-role", PolicyName="self-granted", PolicyDocument=json.dumps(
                {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "dynamodb:PutItem", "Resource": TABLE}]}))
            ddb.put_item(TableName="orders", Item={"pk": {"S": "o-1"}})


# ---- the drill, end to end ---------------------------------------------------------------------------

@pytest.mark.slow
def test_the_drill_fails_a_consumer_whose_role_does_not_grant_what_its_code_does_naming_the_statement_to_add():
    from pathlib import Path

    from integration_blueprint.drill.report import DrillOptions, dumps, format_table
    from integration_blueprint.drill.runner import run_drill

    report = run_drill(DrillOptions(stack="drill", program_dir=Path(__file__).parent / "fixtures" / "iam_program",
                                    records=20, seed=3), workers=1)
    text, data = format_table(report), json.loads(dumps(report))

    get_only = report.patterns["idempotent_stream:get-only"]
    assert not get_only.passed and get_only.access_denied >= 20  # every record's write refused
    [(function, usage)] = get_only.permissions.items()
    [refusal] = usage["denied"]
    ledger = refusal["resource"]
    assert refusal["action"] == "dynamodb:PutItem"
    assert ledger.startswith("arn:aws:dynamodb:eu-west-1:") and ":table/ledger" in ledger
    assert refusal["statement_to_add"] == {"Effect": "Allow", "Action": "dynamodb:PutItem", "Resource": ledger}
    assert refusal["message"].startswith("User: arn:aws:sts::") and f"/{function} is not authorized to perform: " \
        f"dynamodb:PutItem on resource: {ledger} because no identity-based policy allows" in refusal["message"]
    assert f'{function}: AccessDenied ' in text and '{"Effect": "Allow", "Action": "dynamodb:PutItem"' in text
    assert "refused by IAM (AccessDenied: dynamodb:PutItem)" in text
    assert f"dynamodb:GetItem on {ledger}" in usage["unused_grants"]  # its only grant of its own, never used

    # Re-pointing its own redrive at init is refused; its records it handled as it should, and still it fails.
    reroute = report.patterns["idempotent_stream:reroute"]
    refused = {d["action"] for u in reroute.permissions.values() for d in u["denied"]}
    assert refused == {"sqs:CreateQueue", "sqs:SetQueueAttributes"}
    assert reroute.processed_once == reroute.sent and not reroute.lost and not reroute.passed
    assert data["patterns"]["idempotent_stream:reroute"]["access_denied"] == reroute.access_denied > 0
