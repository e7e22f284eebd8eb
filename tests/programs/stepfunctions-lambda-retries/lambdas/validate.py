def handler(event, context):
    return {**event, "validate": True}
