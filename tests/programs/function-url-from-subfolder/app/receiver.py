import json


def handler(event, context):
    body = json.loads(event.get("body") or "{}")
    return {"statusCode": 202, "body": json.dumps({"received": body.get("id")})}
