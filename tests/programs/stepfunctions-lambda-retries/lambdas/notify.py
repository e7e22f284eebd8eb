def handler(event, context):
    return {**event, "notify": True}
