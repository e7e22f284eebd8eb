import json
import os


def handler(event, context):
    sizes = json.loads(os.environ["SIZES"])
    for record in event["Records"]:
        print(f"resize s3://{record['s3']['bucket']['name']}/{record['s3']['object']['key']} to {sizes}")
