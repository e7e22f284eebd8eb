"""A Kinesis stream with its Retry-DLQ, Unrecoverable-DLQ, idempotency table and ledger in moto, and the
stream consumers' handlers wired to them: what the stream handler tests drive (the `env` fixture in
conftest.py makes one inside mock_aws)."""

import io
import json
import logging
import uuid

import boto3
from aws_lambda_powertools import Logger

from integration_blueprint.handlers.reference.reference_ledger import BUSINESS_KEY_JMESPATH, AccountLedger
from integration_blueprint.handlers.runtime import app_dlq_stream, idempotent_stream
from integration_blueprint.handlers.runtime.idempotent_stream import IdempotentStreamSettings
from integration_blueprint.sandbox.kinesis_esm import KinesisEventSourceMapping, KinesisMappingSettings
from integration_blueprint.sandbox.sqs_esm import SqsEventSourceMapping

REGION = "eu-west-1"
STREAM = "orders"
MAX_RECEIVES = 4


class Env:
    def __init__(self):
        self.kinesis = boto3.client("kinesis")
        self.sqs = boto3.client("sqs")
        self.ddb = boto3.client("dynamodb")
        self.kinesis.create_stream(StreamName=STREAM, ShardCount=1)
        self.stream_arn = self.kinesis.describe_stream_summary(StreamName=STREAM)["StreamDescriptionSummary"]["StreamARN"]
        self.unrecoverable_url = self.sqs.create_queue(QueueName="unrecoverable-dlq")["QueueUrl"]
        unrecoverable_arn = self.arn_of(self.unrecoverable_url)
        self.retry_url = self.sqs.create_queue(QueueName="retry-dlq", Attributes={"RedrivePolicy": json.dumps(
            {"deadLetterTargetArn": unrecoverable_arn, "maxReceiveCount": MAX_RECEIVES})})["QueueUrl"]
        for table, key in (("idempotency", "id"), ("ledger", "account")):
            self.ddb.create_table(TableName=table, BillingMode="PAY_PER_REQUEST",
                                  KeySchema=[{"AttributeName": key, "KeyType": "HASH"}],
                                  AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}])
        self.ledger = AccountLedger("ledger", client=self.ddb)
        self.log = io.StringIO()

    def arn_of(self, url):
        return self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

    def put(self, *payloads, account="acct-1"):
        sequence_numbers = []
        for payload in payloads:
            payload = {"account": account, "amount": 1, **payload}
            sequence_numbers.append(self.kinesis.put_record(StreamName=STREAM, PartitionKey=payload["account"],
                                                            Data=json.dumps(payload).encode())["SequenceNumber"])
        return sequence_numbers

    def logger(self):
        # A name never used before (not id(self), which a later test can reuse): Powertools keeps the
        # first handler given for a logger name.
        return Logger(service=f"stream-test-{uuid.uuid4().hex}", logger_handler=logging.StreamHandler(self.log))

    def idempotent_handler(self, process_record=None, page_limit=10_000):
        settings = IdempotentStreamSettings(idempotency_table="idempotency",
                                            unrecoverable_dlq_url=self.unrecoverable_url,
                                            key_jmespath=BUSINESS_KEY_JMESPATH, get_records_page_limit=page_limit,
                                            stream_arn=self.stream_arn)  # as the component sets it
        return idempotent_stream.make_handler(process_record or self.ledger, settings=settings,
                                              logger=self.logger(), kinesis=self.kinesis, sqs=self.sqs,
                                              dynamodb=self.ddb)

    def app_dlq_handler(self, process_record=None, retry_url=None):
        return app_dlq_stream.make_handler(process_record or self.ledger, retry_dlq_url=retry_url or self.retry_url,
                                           logger=self.logger(), sqs=self.sqs,
                                           stream_arn=self.stream_arn)  # as the component sets it

    def stream_mapping(self, handler, **settings):
        return KinesisEventSourceMapping(kinesis=self.kinesis, sqs=self.sqs, stream_name=STREAM, handler=handler,
                                         region=REGION, settings=KinesisMappingSettings(**settings))

    def retry_mapping(self, handler):
        return SqsEventSourceMapping(sqs=self.sqs, queue_url=self.retry_url, queue_arn=self.arn_of(self.retry_url),
                                     handler=handler, region=REGION)

    def messages(self, url):
        found = []
        while True:
            batch = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=60,
                                             MessageSystemAttributeNames=["All"]).get("Messages", [])
            if not batch:
                return found
            found.extend(batch)

    def balance(self, account="acct-1"):
        return self.ledger.balance(account)

    def kinesis_event(self, *sequence_numbers):
        """The Kinesis event Lambda would send for these records of shard 0."""
        mapping = self.stream_mapping(lambda e, c: None)
        records = []
        iterator = self.kinesis.get_shard_iterator(StreamName=STREAM, ShardId="shardId-000000000000",
                                                   ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        for record in self.kinesis.get_records(ShardIterator=iterator)["Records"]:
            if record["SequenceNumber"] in sequence_numbers:
                records.append(mapping._event_record("shardId-000000000000", record))
        return {"Records": records}

    def on_failure_record(self, first, last, batch_size):
        return json.dumps({"requestContext": {"condition": "RetryAttemptsExhausted"}, "version": "1.0",
                           "KinesisBatchInfo": {"shardId": "shardId-000000000000", "startSequenceNumber": first,
                                                "endSequenceNumber": last, "batchSize": batch_size,
                                                "streamArn": self.stream_arn}})


def fail_once_at(ledger, sequence_number):
    """A transient fault: the record fails the first time it is processed, then succeeds."""
    seen = set()

    def process(record):
        if record.sequence_number == sequence_number and sequence_number not in seen:
            seen.add(sequence_number)
            raise ConnectionError("downstream timed out")
        ledger(record)
    return process


def queue_depth(env, url):
    attributes = env.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(attributes["Attributes"]["ApproximateNumberOfMessages"])
