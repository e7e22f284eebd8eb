"""AWS's own defaults and limits (and Powertools' facts), each with the documentation it comes from.

Only facts about the services live here: what AWS allows, what it does when a value is not set, and
the shapes it sends. The project's own choices (how long a DLQ keeps messages, what a component
defaults to) are in `integration_blueprint.conventions` and the components' settings tables.
Components, handlers, the policy pack and the sandbox import from here; it imports nothing, so it
also ships inside every Lambda archive.
"""

# --- Amazon SQS -------------------------------------------------------------------------------
# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html
SQS_VISIBILITY_TIMEOUT_DEFAULT_SECONDS = 30
SQS_VISIBILITY_TIMEOUT_MAX_SECONDS = 43_200
# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html
SQS_RETENTION_DEFAULT_SECONDS = 345_600  # 4 days
SQS_RETENTION_MIN_SECONDS = 60
SQS_RETENTION_MAX_SECONDS = 1_209_600  # 14 days
SQS_DELAY_MAX_SECONDS = 900
# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
# maxReceiveCount may be 1-1000; AWS advises against 1.
SQS_MAX_RECEIVE_COUNT_MAX = 1000
# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/using-messagededuplicationid-property.html
SQS_DEDUPLICATION_ID_MAX_LENGTH = 128
SQS_MESSAGE_GROUP_ID_MAX_LENGTH = 128
SQS_FIFO_DEDUPLICATION_WINDOW_SECONDS = 300
SQS_SEND_BATCH_MAX_ENTRIES = 10
SQS_FIFO_SUFFIX = ".fifo"

# --- AWS Lambda -------------------------------------------------------------------------------
# https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html
LAMBDA_TIMEOUT_DEFAULT_SECONDS = 3
LAMBDA_TIMEOUT_MAX_SECONDS = 900
# https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html#events-sqs-queueconfig
# "set the source queue's visibility timeout to at least six times the function timeout"
SQS_VISIBILITY_TO_FUNCTION_TIMEOUT_FACTOR = 6
# https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html (FIFO: batch <= 10)
SQS_ESM_BATCH_SIZE_DEFAULT = 10
SQS_FIFO_ESM_BATCH_SIZE_MAX = 10
SQS_STANDARD_ESM_BATCH_SIZE_MAX = 10_000
# https://docs.aws.amazon.com/lambda/latest/api/API_ScalingConfig.html
SQS_ESM_MAXIMUM_CONCURRENCY_MIN = 2
SQS_ESM_MAXIMUM_CONCURRENCY_MAX = 1000
# https://docs.aws.amazon.com/lambda/latest/api/API_CreateEventSourceMapping.html (Kinesis)
KINESIS_ESM_BATCH_SIZE_MIN = 1
KINESIS_ESM_BATCH_SIZE_MAX = 10_000
KINESIS_ESM_BATCH_SIZE_DEFAULT = 100
KINESIS_ESM_RETRY_ATTEMPTS_MAX = 10_000
KINESIS_ESM_RETRY_ATTEMPTS_DEFAULT = -1  # -1 = retry until the record expires
KINESIS_ESM_RECORD_AGE_MIN_SECONDS = 60
KINESIS_ESM_RECORD_AGE_MAX_SECONDS = 604_800
KINESIS_ESM_RECORD_AGE_DEFAULT = -1  # -1 = no limit (bounded only by retention)
KINESIS_ESM_PARALLELIZATION_MIN = 1
KINESIS_ESM_PARALLELIZATION_MAX = 10
KINESIS_ESM_BATCHING_WINDOW_MAX_SECONDS = 300
KINESIS_ESM_STARTING_POSITIONS = ("LATEST", "TRIM_HORIZON")
# https://docs.aws.amazon.com/lambda/latest/dg/kinesis-on-failure-destination.html: the record Lambda
# sends for a stream batch holds KinesisBatchInfo (metadata only) under this key.
KINESIS_ON_FAILURE_BATCH_INFO_KEY = "KinesisBatchInfo"

# --- Powertools for AWS Lambda (Python) -------------------------------------------------------
# https://docs.powertools.aws.dev/lambda/python/latest/#lambda-layer
POWERTOOLS_LAYER_ACCOUNT = "017000801446"
POWERTOOLS_LAYER_NAME_FORMAT = "AWSLambdaPowertoolsPythonV3-{runtime}-{architecture}"
# https://docs.powertools.aws.dev/lambda/python/latest/utilities/idempotency/#required-resources
POWERTOOLS_IDEMPOTENCY_KEY_ATTR = "id"
POWERTOOLS_IDEMPOTENCY_TTL_ATTR = "expiration"
POWERTOOLS_IDEMPOTENCY_EXPIRY_DEFAULT_SECONDS = 3600

# --- Amazon Kinesis Data Streams --------------------------------------------------------------
# https://docs.aws.amazon.com/streams/latest/dev/kinesis-extended-retention.html
KINESIS_RETENTION_DEFAULT_HOURS = 24
KINESIS_RETENTION_MIN_HOURS = 24
KINESIS_RETENTION_MAX_HOURS = 8760
# https://docs.aws.amazon.com/kinesis/latest/APIReference/API_GetRecords.html (Limit: 1-10000)
KINESIS_GET_RECORDS_LIMIT_MAX = 10_000
# https://docs.aws.amazon.com/streams/latest/dev/server-side-encryption.html (AWS managed key:
# consumers need no kms: permission; a customer managed key needs kms:Decrypt for readers)
KINESIS_MANAGED_KMS_KEY = "alias/aws/kinesis"
# https://docs.aws.amazon.com/streams/latest/dev/enhanced-consumers.html: shared-throughput readers
# split 2 MB/s and 5 GetRecords/s per shard; the whitepaper moves to enhanced fan-out above 2 consumers.
KINESIS_SHARED_THROUGHPUT_CONSUMERS_MAX = 2

# --- Amazon EventBridge Scheduler --------------------------------------------------------------
# https://docs.aws.amazon.com/scheduler/latest/APIReference/API_RetryPolicy.html
SCHEDULER_RETRY_ATTEMPTS_MAX = 185
SCHEDULER_EVENT_AGE_MIN_SECONDS = 60
SCHEDULER_EVENT_AGE_MAX_SECONDS = 86_400

# --- AWS Step Functions ------------------------------------------------------------------------
# https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html
DISTRIBUTED_MAP_MAX_CONCURRENCY_MAX = 10_000
DISTRIBUTED_MAP_TOLERATED_FAILURE_ERROR = "States.ExceedToleratedFailureThreshold"
DISTRIBUTED_MAP_TOLERATED_FAILURE_PERCENTAGE_MAX = 100
# https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itembatcher.html
DISTRIBUTED_MAP_ITEM_BATCHER_MAX_INPUT_BYTES = 262_144  # 256 KiB per child batch input
# https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html#error-handling-retrying-after-an-error
# AWS defaults are IntervalSeconds 1, MaxAttempts 3, BackoffRate 2.0, JitterStrategy NONE.
SFN_RETRY_INTERVAL_MIN_SECONDS = 1
SFN_RETRY_INTERVAL_MAX_SECONDS = 99_999_999
SFN_RETRY_MAX_ATTEMPTS_MAX = 99_999_999
SFN_RETRY_BACKOFF_RATE_MIN = 1.0
SFN_RETRY_MAX_DELAY_MIN_SECONDS = 1
SFN_RETRY_MAX_DELAY_MAX_SECONDS = 31_622_400
SFN_RETRY_JITTER_STRATEGIES = ("FULL", "NONE")
# https://docs.aws.amazon.com/step-functions/latest/dg/bp-lambda-serviceexception.html: Lambda
# service errors, plus Lambda.Unknown, which is how an out-of-memory crash or a function timeout
# arrives.
SFN_LAMBDA_TRANSIENT_ERRORS = ("Lambda.ServiceException", "Lambda.AWSLambdaException",
                               "Lambda.SdkClientException", "Lambda.TooManyRequestsException",
                               "Lambda.ClientExecutionTimeoutException", "Lambda.Unknown")
# https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html (vended-logs prefix keeps the
# CloudWatch Logs resource policy small)
SFN_LOG_GROUP_PREFIX = "/aws/vendedlogs/states/"
# https://docs.aws.amazon.com/step-functions/latest/apireference/API_CreateStateMachine.html
SFN_STATE_MACHINE_NAME_MAX_LENGTH = 80

# --- Amazon CloudWatch Logs --------------------------------------------------------------------
# https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutRetentionPolicy.html
LOG_RETENTION_ALLOWED_DAYS = (
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922,
    3288, 3653,
)

# --- Prices (US East (N. Virginia), us-east-1; public on-demand prices read 2026-11-22) ---------
# Used by the drill's cost per million records (drill/cost.py). Free tiers are not deducted.
# https://aws.amazon.com/lambda/pricing/ (x86, first duration tier)
PRICE_LAMBDA_PER_MILLION_REQUESTS_USD = 0.20
PRICE_LAMBDA_PER_GB_SECOND_USD = 0.0000166667
# https://aws.amazon.com/sqs/pricing/ (first 100 billion requests a month); every 64 KB chunk of
# a request's payload is billed as one request.
PRICE_SQS_STANDARD_PER_MILLION_REQUESTS_USD = 0.40
PRICE_SQS_FIFO_PER_MILLION_REQUESTS_USD = 0.50
SQS_BILLING_CHUNK_BYTES = 65_536
# https://aws.amazon.com/dynamodb/pricing/on-demand/ (on-demand, after the November 2024 cut)
PRICE_DYNAMODB_PER_MILLION_WRITE_UNITS_USD = 0.625
PRICE_DYNAMODB_PER_MILLION_READ_UNITS_USD = 0.125
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/provisioned-capacity-mode.html:
# a write unit per started 1 KB, a read unit per started 4 KB (half for an eventually consistent
# read); https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html:
# transactional reads and writes bill twice.
DYNAMODB_WRITE_UNIT_BYTES = 1024
DYNAMODB_READ_UNIT_BYTES = 4096
DYNAMODB_EVENTUALLY_CONSISTENT_READ_FACTOR = 0.5
DYNAMODB_TRANSACTION_FACTOR = 2
# https://aws.amazon.com/kinesis/data-streams/pricing/ (provisioned mode): a PUT payload unit is
# every started 25 KB of a record.
PRICE_KINESIS_PER_SHARD_HOUR_USD = 0.015
PRICE_KINESIS_PER_MILLION_PUT_PAYLOAD_UNITS_USD = 0.014
KINESIS_PUT_PAYLOAD_UNIT_BYTES = 25_600
# https://aws.amazon.com/step-functions/pricing/ (Standard workflows; every retry is a transition)
PRICE_STEP_FUNCTIONS_PER_THOUSAND_TRANSITIONS_USD = 0.025
HOURS_PER_MONTH = 730  # AWS pricing pages' month
# https://docs.aws.amazon.com/lambda/latest/api/API_CreateFunction.html (MemorySize default)
LAMBDA_MEMORY_DEFAULT_MB = 128
