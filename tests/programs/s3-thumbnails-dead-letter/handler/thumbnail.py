import boto3

s3 = boto3.client("s3")


def handler(event, context):
    for record in event["Records"]:
        bucket, key = record["s3"]["bucket"]["name"], record["s3"]["object"]["key"]
        s3.copy_object(Bucket=bucket, Key=f"thumbnails/{key}", CopySource={"Bucket": bucket, "Key": key})
