import json


def handler(event, context):
    for record in event["Records"]:
        order = json.loads(record["Sns"]["Message"])
        print(f"order {order['id']} placed")
