"""Every AWS limit and every default this blueprint uses, once, each with its source.

Components, handlers' deployment settings, the policy pack and the local sandbox all import from
here; nothing else in the repo writes these numbers down. Handlers must not import Pulumi, and this
module imports nothing, so both sides can use it.
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
# maxReceiveCount may be 1-1000; AWS advises against 1. This project refuses anything <= 3 so a
# transient failure cannot push a healthy message to the DLQ.
SQS_MAX_RECEIVE_COUNT_MAX = 1000
MIN_SAFE_MAX_RECEIVE_COUNT = 4
DEFAULT_MAX_RECEIVE_COUNT = 5
# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/using-messagededuplicationid-property.html
SQS_DEDUPLICATION_ID_MAX_LENGTH = 128
SQS_MESSAGE_GROUP_ID_MAX_LENGTH = 128
SQS_FIFO_DEDUPLICATION_WINDOW_SECONDS = 300
SQS_SEND_BATCH_MAX_ENTRIES = 10
SQS_FIFO_SUFFIX = ".fifo"
# Dead-letter queues keep messages as long as SQS allows, so an investigation never races expiry.
DLQ_RETENTION_SECONDS = SQS_RETENTION_MAX_SECONDS

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
KINESIS_ESM_PARALLELIZATION_MAX = 10
KINESIS_ESM_BATCHING_WINDOW_MAX_SECONDS = 300
# https://docs.aws.amazon.com/lambda/latest/dg/python-handler.html (supported runtimes)
LAMBDA_RUNTIME = "python3.12"
LAMBDA_ARCHITECTURE = "x86_64"
LAMBDA_MEMORY_DEFAULT_MB = 256

# --- Powertools for AWS Lambda (Python) -------------------------------------------------------
# https://docs.powertools.aws.dev/lambda/python/latest/#lambda-layer
POWERTOOLS_LAYER_ACCOUNT = "017000801446"
POWERTOOLS_LAYER_NAME_FORMAT = "AWSLambdaPowertoolsPythonV3-{runtime}-{architecture}"
POWERTOOLS_LAYER_VERSION_DEFAULT = 27
# https://docs.powertools.aws.dev/lambda/python/latest/utilities/idempotency/#required-resources
POWERTOOLS_IDEMPOTENCY_KEY_ATTR = "id"
POWERTOOLS_IDEMPOTENCY_TTL_ATTR = "expiration"
POWERTOOLS_IDEMPOTENCY_EXPIRY_DEFAULT_SECONDS = 3600

# --- Amazon Kinesis Data Streams --------------------------------------------------------------
# https://docs.aws.amazon.com/streams/latest/dev/kinesis-extended-retention.html
KINESIS_RETENTION_DEFAULT_HOURS = 24
KINESIS_RETENTION_MAX_HOURS = 8760

# --- Kinesis stream consumers (issue 3: IdempotentStreamConsumer / NonIdempotentStreamConsumer) ---
# https://docs.aws.amazon.com/streams/latest/dev/kinesis-extended-retention.html
KINESIS_RETENTION_MIN_HOURS = 24
# https://docs.aws.amazon.com/kinesis/latest/APIReference/API_GetRecords.html (Limit: 1-10000)
KINESIS_GET_RECORDS_LIMIT_MAX = 10_000
# https://docs.aws.amazon.com/streams/latest/dev/server-side-encryption.html (AWS managed key:
# consumers need no kms: permission; a customer managed key needs kms:Decrypt for readers)
KINESIS_MANAGED_KMS_KEY = "alias/aws/kinesis"
# https://docs.aws.amazon.com/streams/latest/dev/enhanced-consumers.html: shared-throughput readers
# split 2 MB/s and 5 GetRecords/s per shard; the whitepaper moves to enhanced fan-out above 2 consumers.
KINESIS_SHARED_THROUGHPUT_CONSUMERS_MAX = 2
# https://docs.aws.amazon.com/lambda/latest/api/API_CreateEventSourceMapping.html
KINESIS_ESM_PARALLELIZATION_MIN = 1
KINESIS_ESM_STARTING_POSITIONS = ("LATEST", "TRIM_HORIZON")
# https://docs.aws.amazon.com/lambda/latest/dg/kinesis-on-failure-destination.html: the record Lambda
# sends for a stream batch holds KinesisBatchInfo (metadata only) under this key.
KINESIS_ON_FAILURE_BATCH_INFO_KEY = "KinesisBatchInfo"

# --- Amazon DynamoDB ---------------------------------------------------------------------------
# Billing ledger rows live 90 days, the window the billing article keeps idempotency keys for.
BILLING_LEDGER_TTL_DEFAULT_DAYS = 90

# --- Amazon EventBridge Scheduler --------------------------------------------------------------
# https://docs.aws.amazon.com/scheduler/latest/APIReference/API_RetryPolicy.html
SCHEDULER_RETRY_ATTEMPTS_MAX = 185
SCHEDULER_EVENT_AGE_MIN_SECONDS = 60
SCHEDULER_EVENT_AGE_MAX_SECONDS = 86_400
SCHEDULER_RETRY_ATTEMPTS_DEFAULT = 3
SCHEDULER_EVENT_AGE_DEFAULT_SECONDS = 3600

# --- AWS Step Functions ------------------------------------------------------------------------
# https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html
DISTRIBUTED_MAP_MAX_CONCURRENCY_MAX = 10_000
DISTRIBUTED_MAP_TOLERATED_FAILURE_ERROR = "States.ExceedToleratedFailureThreshold"
# --- Step Functions: Distributed Map batch (issue 4) ---
# https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html
DISTRIBUTED_MAP_TOLERATED_FAILURE_PERCENTAGE_MAX = 100
# https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itembatcher.html
DISTRIBUTED_MAP_ITEM_BATCHER_MAX_INPUT_BYTES = 262_144  # 256 KiB per child batch input
# https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html#error-handling-retrying-after-an-error
# AWS defaults are IntervalSeconds 1, MaxAttempts 3, BackoffRate 2.0, JitterStrategy NONE; this
# blueprint always uses FULL jitter so retries of thousands of children do not arrive in lockstep.
SFN_RETRY_INTERVAL_MIN_SECONDS = 1
SFN_RETRY_INTERVAL_MAX_SECONDS = 99_999_999
SFN_RETRY_MAX_ATTEMPTS_MAX = 99_999_999
SFN_RETRY_BACKOFF_RATE_MIN = 1.0
SFN_RETRY_MAX_DELAY_MIN_SECONDS = 1
SFN_RETRY_MAX_DELAY_MAX_SECONDS = 31_622_400
SFN_RETRY_JITTER_STRATEGIES = ("FULL", "NONE")
SFN_RETRY_INTERVAL_DEFAULT_SECONDS = 2
SFN_RETRY_BACKOFF_RATE_DEFAULT = 2.0
SFN_RETRY_MAX_ATTEMPTS_DEFAULT = 4
SFN_RETRY_MAX_DELAY_DEFAULT_SECONDS = 30
# https://docs.aws.amazon.com/step-functions/latest/dg/bp-lambda-serviceexception.html: Lambda
# service errors, plus Lambda.Unknown, which is how an out-of-memory crash or a function timeout
# arrives. Retrying those is safe only because the item handler is idempotent and crash-safe.
SFN_LAMBDA_TRANSIENT_ERRORS = ("Lambda.ServiceException", "Lambda.AWSLambdaException",
                               "Lambda.SdkClientException", "Lambda.TooManyRequestsException",
                               "Lambda.ClientExecutionTimeoutException", "Lambda.Unknown")
# https://docs.aws.amazon.com/step-functions/latest/dg/sfn-stuck-execution.html: a Task without
# TimeoutSeconds can wait forever; the item task waits the function timeout plus this margin.
SFN_TASK_TIMEOUT_MARGIN_SECONDS = 10
# https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html (vended-logs prefix keeps the
# CloudWatch Logs resource policy small)
SFN_LOG_GROUP_PREFIX = "/aws/vendedlogs/states/"
# https://docs.aws.amazon.com/step-functions/latest/apireference/API_CreateStateMachine.html
SFN_STATE_MACHINE_NAME_MAX_LENGTH = 80
# Invoice idempotency records outlive the Step Functions retries (minutes) and a manual re-run of
# a failed night within a week; after that a re-run of the same file would count again.
INVOICE_IDEMPOTENCY_EXPIRY_DEFAULT_SECONDS = 7 * 24 * 3600
# --- end Distributed Map batch ---

# --- Amazon CloudWatch -------------------------------------------------------------------------
# A DLQ alarm fires on the first message: one poison message is already an incident.
DLQ_DEPTH_ALARM_THRESHOLD = 1
ALARM_PERIOD_SECONDS = 60
# https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/Working-with-log-groups-and-streams.html
LOG_RETENTION_DEFAULT_DAYS = 30
LOG_RETENTION_ALLOWED_DAYS = (
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922,
    3288, 3653,
)
