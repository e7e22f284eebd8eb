import json


def handler(event, context):
    failures = []
    for record in event["Records"]:
        try:
            for s3_event in json.loads(record["body"]).get("Records", []):
                print(s3_event["s3"]["object"]["key"])
        except Exception:
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}
