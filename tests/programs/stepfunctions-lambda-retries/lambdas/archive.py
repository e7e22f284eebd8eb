def handler(event, context):
    return {**event, "archive": True}
