"""The project's own choices that several parts share: components deploy them, handlers assume them,
the policy pack enforces them. Each says why. AWS's facts are in `integration_blueprint.core.aws_limits`;
a setting a user can change is declared in its component's settings table, not here.

It imports only aws_limits, so it also ships inside every Lambda archive.
"""

from integration_blueprint.core.aws_limits import SQS_RETENTION_MAX_SECONDS

# --- Dead-letter queues --------------------------------------------------------------------------
# AWS advises against maxReceiveCount 1; this project refuses anything <= 3 so a transient failure
# cannot push a healthy message to the DLQ.
MIN_SAFE_MAX_RECEIVE_COUNT = 4
DEFAULT_MAX_RECEIVE_COUNT = 5
# Dead-letter queues keep messages as long as SQS allows, so an investigation never races expiry.
DLQ_RETENTION_SECONDS = SQS_RETENTION_MAX_SECONDS

# --- Lambda functions ----------------------------------------------------------------------------
# https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtimes.html (a supported Python runtime)
LAMBDA_RUNTIME = "python3.12"
LAMBDA_ARCHITECTURE = "x86_64"
LAMBDA_MEMORY_DEFAULT_MB = 256
# The Powertools layer version the handlers were tested with (the layer's ARN ends with it).
POWERTOOLS_LAYER_VERSION_DEFAULT = 27
# Log groups the components own keep 30 days unless the stack says otherwise (Lambda's own group
# would never expire).
LOG_RETENTION_DEFAULT_DAYS = 30

# --- Idempotency records -------------------------------------------------------------------------
# Billing ledger rows live 90 days, the window the billing article keeps idempotency keys for.
BILLING_LEDGER_TTL_DEFAULT_DAYS = 90
# Invoice idempotency records outlive the Step Functions retries (minutes) and a manual re-run of
# a failed night within a week; after that a re-run of the same file would count again.
INVOICE_IDEMPOTENCY_EXPIRY_DEFAULT_SECONDS = 7 * 24 * 3600

# --- Scheduler --------------------------------------------------------------------------------
# AWS defaults to 185 attempts over 24 hours; a monthly run that cannot start within an hour and
# three attempts pages someone instead.
SCHEDULER_RETRY_ATTEMPTS_DEFAULT = 3
SCHEDULER_EVENT_AGE_DEFAULT_SECONDS = 3600

# --- Asynchronous invocation (Lambda's own retries of a scheduled start) ----------------------
# Both retries AWS allows (the functions invoked asynchronously only enqueue idempotently), within
# the hour the schedule itself retries for; then the event goes to an on-failure queue that pages.
ASYNC_RETRY_ATTEMPTS_DEFAULT = 2
ASYNC_EVENT_AGE_DEFAULT_SECONDS = 3600

# --- Step Functions task retries ---------------------------------------------------------------
# Always FULL jitter (AWS's default is NONE) so retries of thousands of children do not arrive in
# lockstep; bounded attempts and delay so a run ends.
SFN_RETRY_INTERVAL_DEFAULT_SECONDS = 2
SFN_RETRY_BACKOFF_RATE_DEFAULT = 2.0
SFN_RETRY_MAX_ATTEMPTS_DEFAULT = 4
SFN_RETRY_MAX_DELAY_DEFAULT_SECONDS = 30
# https://docs.aws.amazon.com/step-functions/latest/dg/sfn-stuck-execution.html: a Task without
# TimeoutSeconds can wait forever; the item task waits the function timeout plus this margin.
SFN_TASK_TIMEOUT_MARGIN_SECONDS = 10
# Invoices per Distributed Map child when the reference item handler runs (a team's own item handler
# gets batches only when it asks, max_items_per_batch: its code must read {"Items": [...]}). Chosen
# by measurement (benchmarks/map_cost.py, docs/cost.md): a Map Run bills a
# transition per child started plus the child's own, so the Step Functions share falls as 1/N
# (drill meter, default mix: x50 $3.80, x100 $3.10, x125 $2.99, x200 $2.66 per million invoices,
# DynamoDB's three writes per invoice $1.86 of each). The other side: a failed child counts all N
# items toward the tolerated failures, so the smaller N, the finer the threshold. 125 is under $3.00 and one failed
# batch still fits a 10% threshold (the dev stack's) in a file of 1,250 invoices; a batch (about 8 KB)
# stays far under ItemBatcher's 256 KiB and takes about 3 s of a 30 s function timeout.
MAP_ITEMS_PER_BATCH_DEFAULT = 125

# --- Alarms ------------------------------------------------------------------------------------
# A DLQ alarm fires on the first message: one poison message is already an incident.
DLQ_DEPTH_ALARM_THRESHOLD = 1
ALARM_PERIOD_SECONDS = 60

# --- The gate ------------------------------------------------------------------------------------
# The stack file's section that lists findings accepted with a reason (read by `blueprint preview`,
# preview/suppressions.py); the blueprint program's stack reader leaves it alone.
SUPPRESSIONS_SECTION = "suppressions"

# --- Values the gate and the policy pack read ---------------------------------------------------
# How deep a resource's property value (its inputs or a component's outputs) may nest and still be
# read and judged: the gate's engine and the policy pack each raise Python's recursion limit to read
# this deep (pulumi-policy and protobuf's json_format read values recursively). The Pulumi engine
# itself reads about 5,000 levels: protobuf-go's recursion limit is 10,000 messages (encoding/protowire
# DefaultRecursionLimit), two per level of a Struct (a Value and the Struct or ListValue it holds).
# Deeper than this the gate names the limit and the resource instead of judging.
DEEPEST_JUDGED_NESTING = 1_000

# --- The drill -----------------------------------------------------------------------------------
# A drill stops early when the first EARLY_STOP_RECORDS distinct records it sent all failed with one
# and the same error (type and line of the team's code), over at least EARLY_STOP_INVOCATIONS
# invocations, and none succeeded (drill/team_errors.py). The faults a drill injects fail a delivery
# with a few percent probability (2% transient per AWS call by default, a few crashes, which do not
# count), so 20 records all failing the same way by chance is beyond belief (0.05^20 ~ 1e-26), and the
# code's own error is told after a few seconds instead of 15,000 retries. Three invocations: one
# failed batch (100 stream records, 10 FIFO messages) is one event; its retries or bisection confirm it.
EARLY_STOP_RECORDS = 20
EARLY_STOP_INVOCATIONS = 3
