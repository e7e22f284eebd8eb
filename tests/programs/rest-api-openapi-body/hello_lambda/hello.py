def handler(event, context):
    return {"statusCode": 200, "body": f"hello {event.get('path')}"}
