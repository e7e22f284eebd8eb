import json
import pathlib

TEMPLATE = pathlib.Path(__file__).with_name("invoice.html")


def handler(event, context):
    for record in event["Records"]:
        invoice = json.loads(record["body"])
        print(TEMPLATE.read_text().replace("{{number}}", invoice["number"]))
