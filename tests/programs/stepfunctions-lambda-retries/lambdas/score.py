def handler(event, context):
    return {**event, "score": True}
