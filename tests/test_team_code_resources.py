"""A component running the team's own code creates only what that code is given: the reference
handlers' tables, their variables and their grants stay with the reference handlers, and a function
named for the reference handler's job is named for the team's; a stack deployed under the former
name keeps its resources (aliases)."""


import pulumi
import pulumi_aws as aws

from integration_blueprint.components import DistributedMapBatch, FifoBillingQueue
from integration_blueprint.preview.recording import record_program
from tests.conftest import REGION_CONFIG, policy_statements

TABLE = "aws:dynamodb/table:Table"
FUNCTION = "aws:lambda/function:Function"
REFERENCE_VARIABLES = {"LEDGER_TABLE_NAME", "ACCOUNTS_TABLE_NAME", "LEDGER_TTL_DAYS", "INVOICE_LEDGER_TABLE_NAME"}


def code(module: str) -> pulumi.AssetArchive:
    return pulumi.AssetArchive({f"{module}.py": pulumi.StringAsset("def handler(event, context):\n    return {}\n")})


def variables(function) -> dict:
    return (function.inputs.get("environment") or {}).get("variables", {})


def granted(recorded, role_policy_name: str) -> dict[str, set[str]]:
    """Every resource the role's policy names, with the actions allowed on it."""
    found: dict[str, set[str]] = {}
    for statement in policy_statements(recorded.named(role_policy_name)):
        for resource in statement["Resource"]:
            found.setdefault(resource, set()).update(statement["Action"])
    return found


def test_a_billing_queue_with_the_teams_consumer_keeps_its_tables_to_the_reference_dispatcher():
    def program():
        charges = aws.dynamodb.Table("charges", billing_mode="PAY_PER_REQUEST", hash_key="pk",
                                     attributes=[{"name": "pk", "type": "S"}])
        FifoBillingQueue("payments", {
            "consumer_code": code("consumer"), "consumer_handler": "consumer.handler",
            "consumer_environment": {"CHARGES_TABLE": charges.name},
            "consumer_policy_statements": [{"actions": ["dynamodb:PutItem"], "resources": [charges.arn]}]})

    recorded = record_program(program, config=REGION_CONFIG)

    # No ledger (the reference consumer's); the accounts store stays for the reference dispatcher.
    tables = {t.name for t in recorded.of_type(TABLE)}
    assert tables == {"charges", "payments-accounts"}
    accounts = recorded.named("payments-accounts").outputs["arn"]
    consumer = recorded.named("payments-consumer")
    assert consumer.inputs["handler"] == "consumer.handler"
    assert variables(consumer) == {"CHARGES_TABLE": recorded.named("charges").outputs["name"],
                                   "POWERTOOLS_SERVICE_NAME": "payments-consumer"}
    consumer_grants = granted(recorded, "payments-consumer-policy")
    assert accounts not in consumer_grants
    assert consumer_grants[recorded.named("charges").outputs["arn"]] == {"dynamodb:PutItem"}
    assert not any(action.startswith("dynamodb:") for resource, actions in consumer_grants.items()
                   if resource != recorded.named("charges").outputs["arn"] for action in actions)
    # The reference dispatcher still enumerates the accounts store it is given.
    assert variables(recorded.named("payments-dispatcher"))["ACCOUNTS_TABLE_NAME"] == \
        recorded.named("payments-accounts").outputs["name"]
    assert granted(recorded, "payments-dispatcher-policy")[accounts] == {"dynamodb:Scan"}
    outputs = recorded.named("payments").outputs
    assert "ledger_table_name" not in outputs  # unset: no ledger
    assert outputs["accounts_table_name"] == recorded.named("payments-accounts").outputs["name"]


def test_a_billing_queue_running_only_the_teams_code_creates_no_table_and_names_none():
    recorded = record_program(lambda: FifoBillingQueue("payments", {
        "consumer_code": code("consumer"), "consumer_handler": "consumer.handler",
        "dispatcher_code": code("dispatcher"), "dispatcher_handler": "dispatcher.handler"}), config=REGION_CONFIG)

    assert recorded.of_type(TABLE) == []
    for function in recorded.of_type(FUNCTION):
        assert not REFERENCE_VARIABLES & set(variables(function)), function.name
    for policy in ("payments-consumer-policy", "payments-dispatcher-policy"):
        assert not any(a.startswith("dynamodb:") for actions in granted(recorded, policy).values() for a in actions)


def test_an_accounts_store_the_team_gives_is_given_to_the_teams_consumer_too():
    arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/hr-accounts"
    recorded = record_program(lambda: FifoBillingQueue("payroll", {
        "accounts_table_name": "hr-accounts", "accounts_table_arn": arn,
        "consumer_code": code("consumer"), "consumer_handler": "consumer.handler"}), config=REGION_CONFIG)

    assert recorded.of_type(TABLE) == []  # neither the ledger nor an accounts store of its own
    consumer = recorded.named("payroll-consumer")
    assert variables(consumer)["ACCOUNTS_TABLE_NAME"] == "hr-accounts"
    assert "LEDGER_TABLE_NAME" not in variables(consumer)
    assert granted(recorded, "payroll-consumer-policy")[arn] == {"dynamodb:GetItem"}
    assert granted(recorded, "payroll-dispatcher-policy")[arn] == {"dynamodb:Scan"}


# A team's program (a folder of its own: the engine serves the stack transform) whose transform
# prints every alias a resource is registered with.
MAP_PROGRAM = """
import pulumi
from integration_blueprint.components import DistributedMapBatch


def print_aliases(args):
    for alias in args.opts.aliases or []:
        if isinstance(getattr(alias, "name", None), str):
            print(f"alias {args.name} <- {alias.name}")
    return None


pulumi.runtime.register_resource_transform(print_aliases)
DistributedMapBatch("orders", {
    "max_concurrency": 5,
    "item_code": pulumi.AssetArchive({"items.py": pulumi.StringAsset("def handler(event, context):\\n    return {}\\n")}),
    "item_handler": "items.handler",
})
"""


def test_a_map_with_the_teams_item_code_has_no_invoice_ledger_and_an_item_function_aliased_to_its_former_name(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: orders\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (tmp_path / "__main__.py").write_text(MAP_PROGRAM)

    recorded = record_program(tmp_path, stack="dev")

    assert {t.name for t in recorded.of_type(TABLE)} == {"orders-idempotency"}  # Powertools' table: any item handler's
    [function] = recorded.of_type(FUNCTION)
    assert function.name == "orders-item" and function.inputs["handler"] == "items.handler"
    assert set(variables(function)) == {"IDEMPOTENCY_TABLE_NAME", "IDEMPOTENCY_EXPIRY_SECONDS", "POWERTOOLS_SERVICE_NAME"}
    assert variables(function)["POWERTOOLS_SERVICE_NAME"] == "orders-item"
    assert set(granted(recorded, "orders-item-policy")) == {recorded.named("orders-idempotency").outputs["arn"],
                                                            recorded.named("orders-item-logs").outputs["arn"] + ":*"}
    machine = recorded.of_type("aws:sfn/stateMachine:StateMachine")[0]
    assert function.outputs["arn"] in machine.inputs["definition"]
    # A stack deployed when it was `orders-enricher` keeps its function, role, policy and log group.
    aliases = sorted(line for line in recorded.stdout.splitlines() if line.startswith("alias orders-item"))
    assert aliases == ["alias orders-item <- orders-enricher", "alias orders-item-logs <- orders-enricher-logs",
                       "alias orders-item-policy <- orders-enricher-policy",
                       "alias orders-item-role <- orders-enricher-role"]


def test_the_reference_item_handler_keeps_its_ledger_and_name():
    recorded = record_program(lambda: DistributedMapBatch("orders", {"max_concurrency": 5}), config=REGION_CONFIG)

    ledger = recorded.named("orders-invoice-ledger")
    function = recorded.named("orders-enricher")
    assert variables(function)["INVOICE_LEDGER_TABLE_NAME"] == ledger.outputs["name"]
    assert granted(recorded, "orders-enricher-policy")[ledger.outputs["arn"]] == {"dynamodb:PutItem"}
    assert variables(function)["POWERTOOLS_SERVICE_NAME"] == "orders-enricher"
