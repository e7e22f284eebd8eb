import os
import socket


def handler(event, context):
    socket.create_connection((os.environ["TARGET_HOST"], 5432), timeout=3).close()
    return {"ok": True}
