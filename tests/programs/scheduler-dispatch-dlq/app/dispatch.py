import json
import os

import boto3

sqs = boto3.client("sqs")


def handler(event, context):
    for tenant in event.get("tenants", []):
        sqs.send_message(QueueUrl=os.environ["WORK_QUEUE_URL"], MessageBody=json.dumps({"tenant": tenant}))
    return {"dispatched": len(event.get("tenants", []))}
