def handler(event, context):
    if not event.get("orderId"):
        raise ValueError("an order needs its orderId")
    return event
