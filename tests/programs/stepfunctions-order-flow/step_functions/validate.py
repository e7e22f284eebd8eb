def handler(event, context):
    if "orderId" not in event:
        raise ValueError("orderId missing")
    return {**event, "valid": True}
