def handler(event, context):
    for record in event["Records"]:
        print(record["Sns"]["Message"])
