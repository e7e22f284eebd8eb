import json


def handler(event, context):
    order = json.loads(event.get("body") or "{}")
    return {"statusCode": 202, "body": json.dumps({"accepted": order.get("id")})}
