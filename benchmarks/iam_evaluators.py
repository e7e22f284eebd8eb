"""Which IAM evaluator the drill authorizes its functions' calls with: what each gets right on the
cases of issue 46 (a GetItem-only role writing, a handler re-pointing its redrive, explicit deny,
NotAction/NotResource, wildcards and case, resource policies, another account, a KMS key policy,
conditions the drill can know), and what a call costs.

- moto: its IAM access control as moto applies it (`moto.iam.access_control`: the identity policies
  of the assumed role against the resource moto names: an SQS queue's ARN, an S3 bucket's or
  object's, `*` for every other service; no resource policies but S3's partial bucket check), and
  the cost per call of a real DynamoDB GetItem with access control on against off (moto then also
  checks each request's SigV4 signature);
- iam-simulate: `@cloud-copilot/iam-simulate` on npm, run by Node.js (`make iam-simulate` installs
  it into benchmarks/iam_simulate), per call after a warm-up, and the start of its process;
- ours: core/iam_evaluation.py, per decision uncached and cached, and the cost the sandbox's seam
  adds to a function's GetItem (sandbox/authorization.py, cached per request), against none.

Last line: `iam_evaluators cases=N moto_right=A iam_simulate_right=B ours_right=C moto_us=... ...`.

Run: make iam-simulate; .venv/bin/python benchmarks/iam_evaluators.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

ACCOUNT, OTHER, REGION = "123456789012", "210987654321", "eu-west-1"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/orders-role"
SESSION = f"arn:aws:sts::{ACCOUNT}:assumed-role/orders-role/orders-consumer"
TABLE = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/orders"
QUEUE = f"arn:aws:sqs:{REGION}:{ACCOUNT}:orders-retry"
BUCKET = "arn:aws:s3:::archive"
KEY = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
TLS = [["aws:SecureTransport", "true"]]
HERE = Path(__file__).resolve().parent


def document(*statements: dict) -> dict:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def allow(action, resource, **more) -> dict:
    return {"Effect": "Allow", "Action": action, "Resource": resource, **more}


# (name, identity policies, resource policy, action, resource, resource account, context, AWS's answer)
CASES = [
    ("GetItem-only role reads its table", [document(allow("dynamodb:GetItem", TABLE))], None,
     "dynamodb:GetItem", TABLE, "", [], True),
    ("GetItem-only role writes (PutItem)", [document(allow("dynamodb:GetItem", TABLE))], None,
     "dynamodb:PutItem", TABLE, "", [], False),
    ("handler creates a queue at init", [document(allow(["sqs:SendMessage", "sqs:ReceiveMessage"], QUEUE))], None,
     "sqs:CreateQueue", f"arn:aws:sqs:{REGION}:{ACCOUNT}:somewhere-else", "", [], False),
    ("handler re-points its own redrive", [document(allow(["sqs:SendMessage", "sqs:ReceiveMessage"], QUEUE))], None,
     "sqs:SetQueueAttributes", QUEUE, "", [], False),
    ("explicit deny beats an allow", [document(allow("dynamodb:*", "*"),
                                               {"Effect": "Deny", "Action": "dynamodb:DeleteItem", "Resource": TABLE})],
     None, "dynamodb:DeleteItem", TABLE, "", [], False),
    ("NotAction allows what it does not name", [document({"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"})],
     None, "dynamodb:PutItem", TABLE, "", [], True),
    ("NotAction does not allow what it names", [document({"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"})],
     None, "iam:PutRolePolicy", ROLE, "", [], False),
    ("NotResource deny outside the table", [document(allow("dynamodb:*", "*"), {
        "Effect": "Deny", "Action": "dynamodb:*", "NotResource": TABLE})],
     None, "dynamodb:PutItem", f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/payments", "", [], False),
    ("action names ignore case", [document(allow("DynamoDB:put*", TABLE))], None,
     "dynamodb:PutItem", TABLE, "", [], True),
    ("ARNs keep case", [document(allow("dynamodb:PutItem", f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/Orders"))], None,
     "dynamodb:PutItem", TABLE, "", [], False),
    ("queue policy denies the role", [document(allow("sqs:*", "*"))],
     document({"Effect": "Deny", "Principal": {"AWS": ROLE}, "Action": "sqs:SendMessage", "Resource": QUEUE}),
     "sqs:SendMessage", QUEUE, "", TLS, False),
    ("queue policy grants the role (same account)", [],
     document({"Effect": "Allow", "Principal": {"AWS": ROLE}, "Action": "sqs:SendMessage", "Resource": QUEUE}),
     "sqs:SendMessage", QUEUE, "", TLS, True),
    ("TLS-only bucket, request over TLS", [document(allow("s3:PutObject", f"{BUCKET}/*"))],
     document({"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": [BUCKET, f"{BUCKET}/*"],
               "Condition": {"Bool": {"aws:SecureTransport": "false"}}}),
     "s3:PutObject", f"{BUCKET}/o-1.json", "", TLS, True),
    ("queue in another account, no queue policy", [document(allow("sqs:SendMessage", f"arn:aws:sqs:{REGION}:{OTHER}:inbox"))],
     None, "sqs:SendMessage", f"arn:aws:sqs:{REGION}:{OTHER}:inbox", OTHER, TLS, False),
    ("queue in another account, both allow", [document(allow("sqs:SendMessage", f"arn:aws:sqs:{REGION}:{OTHER}:inbox"))],
     document({"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, "Action": "sqs:SendMessage",
               "Resource": f"arn:aws:sqs:{REGION}:{OTHER}:inbox"}),
     "sqs:SendMessage", f"arn:aws:sqs:{REGION}:{OTHER}:inbox", OTHER, TLS, True),
    ("allow only for a topic's deliveries (aws:SourceArn absent)",
     [document(allow("sqs:SendMessage", QUEUE, Condition={"ArnEquals": {"aws:SourceArn": f"arn:aws:sns:{REGION}:{ACCOUNT}:t"}}))],
     None, "sqs:SendMessage", QUEUE, "", TLS, False),
    ("KMS key policy that does not delegate", [document(allow("kms:Decrypt", KEY))],
     document({"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{OTHER}:root"}, "Action": "kms:*", "Resource": "*"}),
     "kms:Decrypt", KEY, "", [], False),
]


def right(decisions: list[bool]) -> int:
    return sum(1 for decided, case in zip(decisions, CASES) if decided == case[-1])


# ---- moto ---------------------------------------------------------------------------------------

def moto_resource(action: str, resource: str) -> str:
    """The resource moto's access control checks: its SQS responses name the queue, its S3 responses
    the bucket or object, every other service `*` (moto.core.responses.call_action)."""
    return resource if action.startswith(("sqs:", "s3:")) else "*"


def moto_decisions() -> tuple[list[bool], float]:
    from moto.iam.access_control import IAMPolicy, PermissionResult

    def decide(case) -> bool:
        _, identity, resource_policy, action, resource, _, _, _ = case
        permitted = False
        for policy in identity:
            result = IAMPolicy(json.dumps(policy)).is_action_permitted(action, moto_resource(action, resource))
            if result == PermissionResult.DENIED:
                return False
            permitted = permitted or result == PermissionResult.PERMITTED
        if resource_policy is not None and action.startswith("s3:"):  # moto's partial bucket check
            if IAMPolicy(json.dumps(resource_policy)).is_action_permitted(action, resource) == PermissionResult.DENIED:
                return False
        return permitted

    decisions = [decide(case) for case in CASES]
    return decisions, _per_call_us(lambda: [decide(case) for case in CASES], len(CASES))


def moto_call_cost_us(calls: int = 300) -> tuple[float, float]:
    """A DynamoDB GetItem through moto (in-process), with its access control off, and on (the assumed
    role's credentials, a signed request checked by moto)."""
    import boto3
    from moto import mock_aws
    from moto.core import set_initial_no_auth_action_count

    def run(authorized: bool) -> float:
        @set_initial_no_auth_action_count(4 if authorized else 10 ** 9)
        def body() -> float:
            iam = boto3.client("iam", region_name=REGION)
            ddb_admin = boto3.client("dynamodb", region_name=REGION)
            ddb_admin.create_table(TableName="orders", BillingMode="PAY_PER_REQUEST",
                                   KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                                   AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
            iam.create_role(RoleName="orders-role", AssumeRolePolicyDocument="{}")
            iam.put_role_policy(RoleName="orders-role", PolicyName="p", PolicyDocument=json.dumps(
                document(allow(["dynamodb:GetItem"], "*"))))
            credentials = boto3.client("sts", region_name=REGION).assume_role(
                RoleArn=ROLE, RoleSessionName="orders-consumer")["Credentials"]
            ddb = boto3.client("dynamodb", region_name=REGION, aws_access_key_id=credentials["AccessKeyId"],
                               aws_secret_access_key=credentials["SecretAccessKey"],
                               aws_session_token=credentials["SessionToken"])
            ddb.get_item(TableName="orders", Key={"pk": {"S": "o"}})
            started = time.perf_counter()
            for _ in range(calls):
                ddb.get_item(TableName="orders", Key={"pk": {"S": "o"}})
            return (time.perf_counter() - started) / calls * 1e6

        with mock_aws():
            return body()

    return run(False), run(True)


# ---- iam-simulate ---------------------------------------------------------------------------------

def iam_simulate_decisions(rounds: int = 50) -> tuple[list[bool], float, float]:
    folder = HERE / "iam_simulate"
    if not (folder / "node_modules" / "@cloud-copilot" / "iam-simulate").is_dir() or not shutil.which("node"):
        raise SystemExit("iam-simulate is not installed: run `make iam-simulate` (npm ci in benchmarks/iam_simulate)")
    cases = [{"principal": SESSION, "account": ACCOUNT, "identity": identity, "resource_policy": resource_policy,
              "action": action, "resource": resource, "resource_account": account, "context": context}
             for _, identity, resource_policy, action, resource, account, context, _ in CASES]
    started = time.perf_counter()
    answer = subprocess.run(["node", "decide.mjs"], cwd=folder, input=json.dumps({"cases": cases, "rounds": rounds}),
                            capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    found = json.loads(answer.stdout.strip().splitlines()[-1])
    for (name, *_), decision in zip(CASES, found["decisions"]):
        if decision.startswith("error"):
            print(f"  iam-simulate refused case {name!r}: {decision[:160]}")
    return [d == "Allowed" for d in found["decisions"]], found["per_call_us"], wall


# ---- ours -----------------------------------------------------------------------------------------

def our_decisions() -> tuple[list[bool], float, float]:
    from integration_blueprint.core.iam_evaluation import Policy, Principal, Request, evaluate

    principal = Principal(ACCOUNT, "orders-role", "orders-consumer")
    compiled = [([Policy.compile(f"identity {i}", p) for i, p in enumerate(identity)],
                 Policy.compile("resource", resource_policy) if resource_policy else None,
                 Request(principal, action, resource, account, tuple(tuple(kv) for kv in context)))
                for _, identity, resource_policy, action, resource, account, context, _ in CASES]

    def decide(entry) -> bool:
        identity, resource_policy, request = entry
        return evaluate(request, identity, resource_policy, key_policy_required=request.action.startswith("kms:")).allowed

    decisions = [decide(entry) for entry in compiled]
    uncached = _per_call_us(lambda: [decide(entry) for entry in compiled], len(compiled))
    cache = {i: d for i, d in enumerate(decisions)}
    cached = _per_call_us(lambda: [cache[i] for i in range(len(compiled))], len(compiled))
    return decisions, uncached, cached


def seam_cost_us(calls: int = 300) -> tuple[float, float, float]:
    """A function's GetItem through the sandbox's seam: without the authorizer and with it (cached per
    request), and the authorizer's own check of one call (what it adds, measured alone: the two
    GetItems differ by less than their noise on a loaded machine)."""
    import sys

    import boto3

    from integration_blueprint.sandbox import interception
    from integration_blueprint.sandbox.emulator import running_emulator
    from integration_blueprint.sandbox.interception import FunctionRun
    from integration_blueprint.sandbox.realization import Sandbox
    sys.path.insert(0, str(HERE.parent / "tests"))
    from test_drill_iam import stack  # the quick tier's hand-made stack: a role, its policy, a table

    with running_emulator(REGION) as emulator:
        sandbox = Sandbox(stack([{"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": TABLE}], {}), emulator).realize()
        ddb = boto3.client("dynamodb", region_name=REGION)

        def timed() -> float:
            with FunctionRun("orders-consumer", {}, None):
                ddb.get_item(TableName="orders", Key={"pk": {"S": "o"}})
                started = time.perf_counter()
                for _ in range(calls):
                    ddb.get_item(TableName="orders", Key={"pk": {"S": "o"}})
                return (time.perf_counter() - started) / calls * 1e6

        authorized = timed()
        interception._ACTIVE["authorizer"] = None
        plain = timed()
        interception._ACTIVE["authorizer"] = sandbox.authorizer
        params = {"TableName": "orders", "Key": {"pk": {"S": "o"}}}
        check = _per_call_us(lambda: sandbox.authorizer.check("orders-consumer", "dynamodb", "GetItem", params, REGION),
                             1, rounds=20_000)
    return plain, authorized, check


def _per_call_us(run, per_run: int, rounds: int = 200) -> float:
    run()
    started = time.perf_counter()
    for _ in range(rounds):
        run()
    return (time.perf_counter() - started) / (rounds * per_run) * 1e6


def main() -> None:
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "sandbox")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "sandbox")
    moto, moto_us = moto_decisions()
    simulate, simulate_us, simulate_wall = iam_simulate_decisions()
    ours, ours_us, ours_cached_us = our_decisions()
    moto_off_us, moto_on_us = moto_call_cost_us()
    seam_off_us, seam_on_us, check_us = seam_cost_us()
    print(f"{'case':58} AWS    moto   iam-simulate ours")
    for (name, *_, expected), m, s, o in zip(CASES, moto, simulate, ours):
        print(f"{name:58} {str(expected):6} {str(m):6} {str(s):12} {o}")
    print(f"per decision: moto {moto_us:.1f} us (policies parsed per request), iam-simulate {simulate_us:.1f} us "
          f"(+ {simulate_wall:.2f} s for its process), ours {ours_us:.1f} us uncached, {ours_cached_us:.2f} us cached")
    print(f"per GetItem through moto: {moto_off_us:.0f} us without access control, {moto_on_us:.0f} us with it; "
          f"through the sandbox's seam: {seam_off_us:.0f} us without the authorizer, {seam_on_us:.0f} us with it; "
          f"the authorizer's check of a call: {check_us:.1f} us")
    print(f"iam_evaluators cases={len(CASES)} moto_right={right(moto)} iam_simulate_right={right(simulate)} "
          f"ours_right={right(ours)} moto_us={moto_us:.1f} iam_simulate_us={simulate_us:.1f} "
          f"iam_simulate_process_s={simulate_wall:.2f} ours_us={ours_us:.1f} ours_cached_us={ours_cached_us:.2f} "
          f"moto_getitem_off_us={moto_off_us:.0f} moto_getitem_on_us={moto_on_us:.0f} "
          f"seam_getitem_off_us={seam_off_us:.0f} seam_getitem_on_us={seam_on_us:.0f} authorizer_check_us={check_us:.1f}")


if __name__ == "__main__":
    main()
