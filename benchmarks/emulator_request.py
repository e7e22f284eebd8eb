"""What one AWS call costs in the sandbox's emulator: the CPU of a DynamoDB GetItem through boto3
and moto in-process, with every shortcut applied, best of seven batches of 500.

This machine's speed drifts between quiet runs; this figure is the calibration docs/performance.md gives the
other figures with. Last line: `emulator_request getitem_ms=X`.
"""

import time

import boto3

from integration_blueprint.sandbox.emulator import running_emulator

BATCHES, CALLS = 7, 500


def main():
    with running_emulator("us-east-1"):
        ddb = boto3.client("dynamodb")
        ddb.create_table(TableName="calibration", BillingMode="PAY_PER_REQUEST",
                         KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                         AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}])
        ddb.put_item(TableName="calibration", Item={"id": {"S": "a"}, "v": {"N": "1"}})
        best = float("inf")
        for _ in range(BATCHES):
            started = time.process_time()
            for _ in range(CALLS):
                ddb.get_item(TableName="calibration", Key={"id": {"S": "a"}})
            best = min(best, (time.process_time() - started) / CALLS * 1000)
    print(f"emulator_request getitem_ms={best:.2f}")


if __name__ == "__main__":
    main()
