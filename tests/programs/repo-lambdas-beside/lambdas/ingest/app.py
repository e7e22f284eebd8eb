def handler(event, context):
    return {"records": len(event.get("Records", []))}
