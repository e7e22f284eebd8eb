"""AWS's own defaults and limits (and Powertools' facts), each with the documentation it comes from.

Only facts about the services live here: what AWS allows, what it does when a value is not set, and
the shapes it sends. The project's own choices (how long a DLQ keeps messages, what a component
defaults to) are in `integration_blueprint.core.conventions` and the components' settings tables.
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
# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html
# MaximumMessageSize: 1,024 bytes up to 1,048,576 (1 MiB, raised from 256 KiB in August 2025);
# a queue created without it keeps the default, 262,144 (256 KiB). A Kinesis record's data may be
# 1 MiB, so even the maximum does not hold every record once base64-encoded in JSON.
SQS_MESSAGE_SIZE_DEFAULT_BYTES = 262_144
SQS_MESSAGE_SIZE_MAX_BYTES = 1_048_576
SQS_FIFO_SUFFIX = ".fifo"

# --- AWS Lambda -------------------------------------------------------------------------------
# https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html
LAMBDA_TIMEOUT_DEFAULT_SECONDS = 3
LAMBDA_TIMEOUT_MAX_SECONDS = 900
# https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html
LAMBDA_MEMORY_MIN_MB = 128
LAMBDA_MEMORY_MAX_MB = 10_240
# https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html ("Function configuration,
# deployment, and execution"): /tmp is the function's ephemeral storage, 512 MB unless its
# `ephemeral_storage` sets 512-10,240 MB; processes and threads together, and file descriptors, are
# 1,024 each per execution environment, whatever the memory size.
LAMBDA_EPHEMERAL_STORAGE_DEFAULT_MB = 512
LAMBDA_EPHEMERAL_STORAGE_MAX_MB = 10_240
LAMBDA_PROCESSES_AND_THREADS_MAX = 1024
LAMBDA_FILE_DESCRIPTORS_MAX = 1024
# https://docs.aws.amazon.com/lambda/latest/dg/troubleshooting-invocation.html: a function that
# goes over its memory size is ended, errorType "Runtime.OutOfMemory".
LAMBDA_OUT_OF_MEMORY_ERROR = "Runtime.OutOfMemory"
# https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtimes.html (supported and deprecated runtimes)
# and https://docs.aws.amazon.com/lambda/latest/dg/runtime-support-policy.html: on its deprecation
# date a runtime gets no more security patches and its functions no technical support; AWS then
# blocks creating functions on it and, later, updating them (dates it has moved more than once, so
# only the deprecation date is kept). ISO dates, the table as AWS published it in late 2025; the
# Amazon Linux 2 runtimes end with Amazon Linux 2 (2026-06-30). A runtime AWS added after it is
# absent here and never reported. Security Hub's Lambda.2 checks the same.
LAMBDA_RUNTIME_DEPRECATION_DATES = {
    "nodejs": "2016-10-31", "nodejs4.3": "2020-03-05", "nodejs4.3-edge": "2020-03-05", "nodejs6.10": "2019-08-12",
    "nodejs8.10": "2020-03-06", "nodejs10.x": "2021-07-30", "nodejs12.x": "2023-03-31", "nodejs14.x": "2023-12-04",
    "nodejs16.x": "2024-06-12", "nodejs18.x": "2025-09-01", "nodejs20.x": "2026-04-30", "nodejs22.x": "2027-04-30",
    "nodejs24.x": "2028-04-30",
    "python2.7": "2021-07-15", "python3.6": "2022-07-18", "python3.7": "2023-12-04", "python3.8": "2024-10-14",
    "python3.9": "2025-12-15", "python3.10": "2026-06-30", "python3.11": "2026-06-30", "python3.12": "2028-10-31",
    "python3.13": "2029-06-30", "python3.14": "2029-06-30",
    "java8": "2024-01-08", "java8.al2": "2026-06-30", "java11": "2026-06-30", "java17": "2026-06-30",
    "java21": "2029-06-30", "java25": "2029-06-30",
    "dotnetcore1.0": "2019-07-27", "dotnetcore2.0": "2019-05-30", "dotnetcore2.1": "2022-01-05",
    "dotnetcore3.1": "2023-04-03", "dotnet5.0": "2022-05-10", "dotnet6": "2024-11-12", "dotnet7": "2024-05-14",
    "dotnet8": "2026-11-10", "dotnet10": "2028-11-14",
    "ruby2.5": "2021-07-30", "ruby2.7": "2023-11-27", "ruby3.2": "2026-03-31", "ruby3.3": "2027-03-31",
    "ruby3.4": "2028-03-31",
    "go1.x": "2024-01-08", "provided": "2024-01-08", "provided.al2": "2026-06-30", "provided.al2023": "2029-06-30",
}
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

# https://docs.aws.amazon.com/lambda/latest/dg/lambda-python.html: the Python runtimes include the
# AWS SDK for Python (boto3) and what it depends on; a handler may import these without shipping them.
LAMBDA_PYTHON_RUNTIME_PACKAGES = frozenset({"boto3", "botocore", "s3transfer", "jmespath", "dateutil", "urllib3",
                                            "six", "awslambdaric"})

# --- Powertools for AWS Lambda (Python) -------------------------------------------------------
# https://docs.powertools.aws.dev/lambda/python/latest/#lambda-layer
POWERTOOLS_LAYER_ACCOUNT = "017000801446"
POWERTOOLS_LAYER_NAME_FORMAT = "AWSLambdaPowertoolsPythonV3-{runtime}-{architecture}"
# What the Powertools layer puts on the path (/opt/python): the library and the packages it bundles.
POWERTOOLS_LAYER_PACKAGES = frozenset({"aws_lambda_powertools", "aws_xray_sdk", "pydantic", "pydantic_core",
                                       "typing_extensions", "annotated_types", "jmespath"})
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

# https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html: for an
# asynchronous invocation (Scheduler, EventBridge, SNS, S3) Lambda retries a function error up to
# twice (0-2, default 2), waiting about one minute before the first retry and two before the second,
# and keeps an event at most MaximumEventAgeInSeconds (60-21600, default 21600) before discarding it
# or sending it to the on-failure destination.
LAMBDA_ASYNC_RETRY_ATTEMPTS_MAX = 2
LAMBDA_ASYNC_RETRY_DELAYS_SECONDS = (60, 120)
LAMBDA_ASYNC_EVENT_AGE_MIN_SECONDS = 60
LAMBDA_ASYNC_EVENT_AGE_MAX_SECONDS = 21_600
# https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html: the on-failure
# record's `requestContext.condition` values.
LAMBDA_ASYNC_CONDITION_RETRIES_EXHAUSTED = "RetriesExhausted"
LAMBDA_ASYNC_CONDITION_EVENT_AGE_EXCEEDED = "EventAgeExceeded"

# --- Amazon EventBridge Scheduler --------------------------------------------------------------
# https://docs.aws.amazon.com/scheduler/latest/APIReference/API_RetryPolicy.html
SCHEDULER_RETRY_ATTEMPTS_MAX = 185
SCHEDULER_EVENT_AGE_MIN_SECONDS = 60
SCHEDULER_EVENT_AGE_MAX_SECONDS = 86_400
# https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html (cron with six fields,
# rate, or a one-time at(...))
SCHEDULER_EXPRESSION_PATTERN = r"(cron\(\S+( \S+){5}\)|rate\(\d+ \w+\)|at\(\S+\))"

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
# The same page: the transient Lambda service errors a Task that invokes Lambda must retry (a 500 or a
# throttle from the Lambda service, not the function's own error), and the wildcards that match them
# in a Retrier's ErrorEquals (States.TaskFailed matches every error but States.Timeout:
# https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html#error-handling-error-representation).
SFN_LAMBDA_SERVICE_ERRORS = ("Lambda.ServiceException", "Lambda.AWSLambdaException",
                             "Lambda.SdkClientException", "Lambda.TooManyRequestsException")
SFN_ERROR_WILDCARDS = ("States.ALL", "States.TaskFailed")
SFN_RETRY_MAX_ATTEMPTS_DEFAULT = 3
# https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html (vended-logs prefix keeps the
# CloudWatch Logs resource policy small)
SFN_LOG_GROUP_PREFIX = "/aws/vendedlogs/states/"
# https://docs.aws.amazon.com/step-functions/latest/dg/choosing-workflow-type.html: an Express workflow
# (a Distributed Map's EXPRESS child included) runs at most five minutes.
SFN_EXPRESS_MAX_DURATION_SECONDS = 300
SFN_EXECUTION_TYPES = ("STANDARD", "EXPRESS")
# https://docs.aws.amazon.com/step-functions/latest/apireference/API_CreateStateMachine.html
SFN_STATE_MACHINE_NAME_MAX_LENGTH = 80

# --- ARNs and names ----------------------------------------------------------------------------
# https://docs.aws.amazon.com/IAM/latest/UserGuide/reference-arns.html (partition, service, region,
# 12-digit account, resource)
ARN_PATTERN = r"arn:aws[a-z-]*:[a-z0-9-]+:[a-z0-9-]*:\d{12}:.+"
# https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html (3-63 characters)
S3_BUCKET_NAME_PATTERN = r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"

# --- Amazon CloudWatch Logs --------------------------------------------------------------------
# https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutRetentionPolicy.html
LOG_RETENTION_ALLOWED_DAYS = (
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922,
    3288, 3653,
)

# --- Amazon DynamoDB Streams -------------------------------------------------------------------
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Streams.html ("stream records
# ... are removed automatically after 24 hours"; not configurable)
DYNAMODB_STREAM_RETENTION_HOURS = 24

# --- Asynchronous Lambda invocation ------------------------------------------------------------
# https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html: Lambda retries
# a function error twice by default (0-2), keeps an event up to 6 hours, then discards it unless
# an on-failure destination or a DLQ is configured. These services invoke asynchronously:
# https://docs.aws.amazon.com/lambda/latest/dg/invocation-async.html
LAMBDA_ASYNC_RETRY_ATTEMPTS_DEFAULT = 2
LAMBDA_ASYNC_EVENT_AGE_MAX_SECONDS = 21_600
LAMBDA_ASYNC_INVOKING_PRINCIPALS = ("events.amazonaws.com", "scheduler.amazonaws.com", "sns.amazonaws.com",
                                    "s3.amazonaws.com")

# --- Resource name lengths ---------------------------------------------------------------------
# The components' generated names are checked against these (components/naming.py), and so are
# explicit names in any program (policy aws-resource-names-within-limits).
# https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html (3-63)
S3_BUCKET_NAME_MAX_LENGTH = 63
# https://docs.aws.amazon.com/kinesis/latest/APIReference/API_RegisterStreamConsumer.html (1-128)
KINESIS_STREAM_CONSUMER_NAME_MAX_LENGTH = 128
# https://docs.aws.amazon.com/lambda/latest/api/API_CreateFunction.html (FunctionName: 1-64)
LAMBDA_FUNCTION_NAME_MAX_LENGTH = 64
# https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html (role name 64,
# policy name 128)
IAM_ROLE_NAME_MAX_LENGTH = 64
IAM_POLICY_NAME_MAX_LENGTH = 128
# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html
# (QueueName: up to 80 characters, alphanumerics, hyphens and underscores; a FIFO name ends .fifo
# and the suffix counts)
SQS_QUEUE_NAME_MAX_LENGTH = 80
# https://docs.aws.amazon.com/sns/latest/api/API_CreateTopic.html (256, FIFO suffix included)
SNS_TOPIC_NAME_MAX_LENGTH = 256
# https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html (Name: 1-64)
SCHEDULER_SCHEDULE_NAME_MAX_LENGTH = 64
# https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutRule.html (Name: 1-64)
EVENTBRIDGE_RULE_NAME_MAX_LENGTH = 64
# https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_CreateLogGroup.html
LOG_GROUP_NAME_MAX_LENGTH = 512
# https://docs.aws.amazon.com/streams/latest/dev/service-sizes-and-limits.html (stream name 128)
KINESIS_STREAM_NAME_MAX_LENGTH = 128
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html
DYNAMODB_TABLE_NAME_MAX_LENGTH = 255
# https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs.html: a function logs to
# /aws/lambda/<function name> unless its logging config names another group.
LAMBDA_LOG_GROUP_PREFIX = "/aws/lambda/"

# --- Step Functions task timeouts --------------------------------------------------------------
# https://docs.aws.amazon.com/step-functions/latest/dg/state-task.html: TimeoutSeconds defaults to
# 99999999 (a Task without it waits a year and more).
SFN_TASK_TIMEOUT_DEFAULT_SECONDS = 99_999_999

# --- EventBridge / SNS dead-letter queues ------------------------------------------------------
# https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html and
# https://docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html: the DLQ of an EventBridge
# target must be a standard queue; an SNS subscription's DLQ has the type of its topic.
EVENTBRIDGE_RETRY_ATTEMPTS_MAX = 185
# https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-retry-policy.html: without a retry
# policy a target is retried for 24 hours and up to 185 times (both are also the defaults of each field).
EVENTBRIDGE_EVENT_AGE_DEFAULT_SECONDS = 86_400

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
# Same page, Distributed Map: each child workflow execution a Map Run starts is billed as one state
# transition of the parent, whatever the child's type; a STANDARD child then bills its own
# transitions, an EXPRESS child its request and duration.
# Same page (Express workflows): per request, and per GB-second of duration, billed in 100 ms
# increments with memory rounded up to 64 MB chunks (first 1,000 GB-hours tier).
PRICE_STEP_FUNCTIONS_EXPRESS_PER_MILLION_REQUESTS_USD = 1.00
PRICE_STEP_FUNCTIONS_EXPRESS_PER_GB_SECOND_USD = 0.00001667
SFN_EXPRESS_BILLING_INCREMENT_MS = 100
SFN_EXPRESS_MEMORY_CHUNK_MB = 64
HOURS_PER_MONTH = 730  # AWS pricing pages' month
# https://docs.aws.amazon.com/lambda/latest/api/API_CreateFunction.html (MemorySize default)
LAMBDA_MEMORY_DEFAULT_MB = 128
