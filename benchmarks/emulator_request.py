"""What AWS calls cost in the sandbox's emulator, through boto3 and moto in-process with every
shortcut applied (sandbox/shortcuts.py), in CPU, each figure the best of its batches:

- getitem_ms: one DynamoDB GetItem (best of seven batches of 500). This machine's speed drifts
  between quiet runs; this figure is the calibration docs/performance.md gives the other figures with.
- mix_ms: the calls of one record as the drill's patterns make them (best of nine batches of 120):
  Powertools' idempotency claim (a conditional PutItem), a guarded ADD to a ledger (a
  TransactWriteItems of one update), Powertools' completion (an UpdateItem of three SETs), a FIFO
  SendMessage, and every fifth record a ReceiveMessage of up to ten and their DeleteMessageBatch.
  Steadier than a drill's figure (no processes, no threads, no faults), so a change to the call path
  too small for a drill's noise shows here: run it with and without the change, interleaved, e.g.
  `BLUEPRINT_PATCHES_WITHOUT=<shortcut> python benchmarks/emulator_request.py`.

Last line: `emulator_request getitem_ms=X mix_ms=Y`.
"""

import json
import time

import boto3

from integration_blueprint.sandbox.emulator import running_emulator

GETITEM_BATCHES, GETITEM_CALLS = 7, 500
MIX_BATCHES, MIX_RECORDS = 9, 120

# Powertools' DynamoDBPersistenceLayer (aws_lambda_powertools 3.x): its claim's condition and names.
CLAIM_CONDITION = ("attribute_not_exists(#id) OR #expiry < :now OR (#status = :inprogress AND "
                   "attribute_exists(#in_progress_expiry) AND #in_progress_expiry < :now_in_millis)")
CLAIM_NAMES = {"#id": "id", "#expiry": "expiration", "#status": "status", "#in_progress_expiry": "in_progress_expiration"}
COMPLETION = "SET #response_data = :response_data, #expiry = :expiry, #status = :status"
COMPLETION_NAMES = {"#response_data": "data", "#expiry": "expiration", "#status": "status"}


def main():
    with running_emulator("us-east-1"):
        ddb, sqs = boto3.client("dynamodb"), boto3.client("sqs")
        for table in ("calibration", "idempotency", "ledger"):
            ddb.create_table(TableName=table, BillingMode="PAY_PER_REQUEST",
                             KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                             AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}])
        ddb.put_item(TableName="calibration", Item={"id": {"S": "a"}, "v": {"N": "1"}})
        queue = sqs.create_queue(QueueName="charges.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]

        def get_item():
            ddb.get_item(TableName="calibration", Key={"id": {"S": "a"}})

        records = iter(range(10**9))

        def record():
            number = next(records)
            key, now = f"record-{number}", str(int(time.time()))
            ddb.put_item(TableName="idempotency", Item={"id": {"S": key}, "expiration": {"N": now},
                                                        "status": {"S": "INPROGRESS"}},
                         ConditionExpression=CLAIM_CONDITION, ExpressionAttributeNames=CLAIM_NAMES,
                         ExpressionAttributeValues={":now": {"N": now}, ":now_in_millis": {"N": now + "000"},
                                                    ":inprogress": {"S": "INPROGRESS"}})
            ddb.transact_write_items(TransactItems=[{"Update": {
                "TableName": "ledger", "Key": {"id": {"S": f"account-{number % 7}"}},
                "UpdateExpression": "ADD balance :amount SET #updated = :now",
                "ExpressionAttributeNames": {"#updated": "updated"},
                "ExpressionAttributeValues": {":amount": {"N": "5"}, ":now": {"S": now}}}}])
            ddb.update_item(TableName="idempotency", Key={"id": {"S": key}}, UpdateExpression=COMPLETION,
                            ExpressionAttributeNames=COMPLETION_NAMES,
                            ExpressionAttributeValues={":response_data": {"S": json.dumps({"done": key})},
                                                       ":expiry": {"N": now}, ":status": {"S": "COMPLETED"}})
            sqs.send_message(QueueUrl=queue, MessageBody=key, MessageGroupId=f"tenant-{number % 5}",
                             MessageDeduplicationId=key)
            if number % 5 == 4:
                received = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages", [])
                if received:
                    sqs.delete_message_batch(QueueUrl=queue, Entries=[
                        {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(received)])

        getitem_ms = best_ms(get_item, GETITEM_BATCHES, GETITEM_CALLS)
        for _ in range(MIX_RECORDS // 2):  # every expression and queue path met once before timing
            record()
        mix_ms = best_ms(record, MIX_BATCHES, MIX_RECORDS)
    print(f"emulator_request getitem_ms={getitem_ms:.2f} mix_ms={mix_ms:.2f}")


def best_ms(call, batches: int, calls: int) -> float:
    """The least CPU per call over `batches` batches of `calls` calls, in milliseconds."""
    best = float("inf")
    for _ in range(batches):
        started = time.process_time()
        for _ in range(calls):
            call()
        best = min(best, (time.process_time() - started) / calls * 1000)
    return best


if __name__ == "__main__":
    main()
