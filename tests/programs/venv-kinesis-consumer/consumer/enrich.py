import base64


def handler(event, context):
    for record in event["Records"]:
        print(base64.b64decode(record["kinesis"]["data"]))
