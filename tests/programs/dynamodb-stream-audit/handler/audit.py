def handler(event, context):
    for record in event["Records"]:
        print(record["eventName"], record["dynamodb"]["Keys"])
