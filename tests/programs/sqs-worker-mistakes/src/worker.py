import json


def handler(event, context):
    for record in event["Records"]:
        job = json.loads(record["body"])
        print(f"resizing {job['key']}")
