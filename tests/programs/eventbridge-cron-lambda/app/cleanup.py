import os


def handler(event, context):
    print(f"cleaning {os.environ['BUCKET']} (rule {event.get('resources')})")
    return {"deleted": 0}
