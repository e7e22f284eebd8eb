import json
import os

import boto3

TABLE = boto3.resource("dynamodb").Table(os.environ["TABLE_NAME"])


def handler(event, context):
    item_id = (event.get("pathParameters") or {}).get("id")
    found = TABLE.get_item(Key={"id": item_id}).get("Item")
    return {"statusCode": 200 if found else 404, "body": json.dumps(found or {})}
