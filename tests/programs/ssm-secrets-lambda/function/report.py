import os

import boto3


def handler(event, context):
    password = boto3.client("ssm").get_parameter(Name=os.environ["DB_PASSWORD_PARAM"], WithDecryption=True)
    return {"connected": bool(password["Parameter"]["Value"]), "features": os.environ["FEATURES"]}
