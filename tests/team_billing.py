"""A team's billing program for the drill's end-to-end tests, built from values: FifoBillingQueue
instances running the team's own consumer (charges.handler) over a ledger table of the team's own,
and the part of that consumer which adds each charge to its tenant's balance."""


def billing_program(*names: str, code: str = "./code", actions: tuple[str, ...] = ("dynamodb:UpdateItem",)) -> str:
    """The program's source: one FifoBillingQueue per name, its consumer's code from `code` (formatted
    with the instance's `name`), allowed `actions` on the instance's ledger."""
    return f'''
import pulumi
import pulumi_aws as aws
from integration_blueprint.components import FifoBillingQueue

for name in {names!r}:
    # The team's own ledger: a component running a team's code creates only what the code is given.
    ledger = aws.dynamodb.Table(f"{{name}}-ledger", billing_mode="PAY_PER_REQUEST", hash_key="pk", range_key="sk",
                                attributes=[{{"name": "pk", "type": "S"}}, {{"name": "sk", "type": "S"}}])
    FifoBillingQueue(name, {{
        "consumer_timeout_seconds": 60, "batch_size": 10, "schedule_expression": "cron(0 3 1 * ? *)",
        "consumer_code": pulumi.FileArchive(f"{code}"), "consumer_handler": "charges.handler",
        "consumer_environment": {{"LEDGER_TABLE_NAME": ledger.name}},
        "consumer_policy_statements": [{{"actions": {list(actions)!r}, "resources": [ledger.arn]}}],
    }})
'''


# The end of a consumer's handler: each charge added to its tenant's balance (so a redelivery is a
# duplicate effect), no record reported failed. The module imports json and os and makes `ddb`.
ADD_TO_BALANCE = '''    for record in event["Records"]:
        charge = json.loads(record["body"])
        ddb.update_item(TableName=os.environ["LEDGER_TABLE_NAME"],
                        Key={"pk": {"S": charge["tenant"]}, "sk": {"S": "balance"}},
                        UpdateExpression="ADD balance :amount",
                        ExpressionAttributeValues={":amount": {"N": str(charge["amount"])}})
    return {"batchItemFailures": []}
'''
