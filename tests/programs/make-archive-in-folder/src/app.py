def handler(event, context):
    return {"built": True}
