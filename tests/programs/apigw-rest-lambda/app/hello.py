import json


def handler(event, context):
    return {"statusCode": 200, "body": json.dumps({"path": event.get("path"), "message": "hello"})}
