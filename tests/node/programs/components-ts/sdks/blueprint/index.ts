// The blueprint component package's TypeScript SDK, as `pulumi package add <blueprint>/plugin`
// generates it (@pulumi/blueprint): written from the plugin's schema by
// tests/node/generate_blueprint_sdk.py. Do not edit by hand.
import * as pulumi from "@pulumi/pulumi";

function remoteInputs(args: object | undefined, outputs: string[]): pulumi.Inputs {
    const inputs: pulumi.Inputs = { ...(args ?? {}) };
    for (const output of outputs) {
        inputs[output] = undefined;  // an output of the component, filled from its state
    }
    return inputs;
}

export namespace inputs {
    /**
     * An extra permission for your own handler: named actions (no wildcards) on resources.
     */
    export interface PolicyStatementArgs {
        /**
         * IAM actions by name, e.g. dynamodb:GetItem (no wildcards).
         */
        actions: pulumi.Input<pulumi.Input<string>[]>;
        /**
         * ARNs of the resources the actions are allowed on.
         */
        resources: pulumi.Input<pulumi.Input<string>[]>;
    }
    /**
     * The functions' log groups expire instead of keeping logs forever.
     */
    export type LogRetentionDays = 1 | 3 | 5 | 7 | 14 | 30 | 60 | 90 | 120 | 150 | 180 | 365 | 400 | 545 | 731 | 1096 | 1827 | 2192 | 2557 | 2922 | 3288 | 3653;
    /**
     * An ON_DEMAND stream scales its own shards.
     */
    export type StreamMode = "ON_DEMAND" | "PROVISIONED";
    /**
     * Where a new mapping starts reading the stream.
     */
    export type StartingPosition = "LATEST" | "TRIM_HORIZON";
    /**
     * How retries spread their waits; without jitter, thousands of children retry in lockstep and stampede the downstream.
     */
    export type RetryJitterStrategy = "FULL";
    /**
     * The Map's child executions: STANDARD (billed per transition) or EXPRESS (per request and duration, at most 5 minutes each: refused where the item timeout and its retries cannot fit).
     */
    export type ChildExecutionType = "STANDARD" | "EXPRESS";
}

export interface FifoBillingQueueArgs {
    /**
     * The SNS topics every alarm of the component notifies; empty: alarms are recorded but page nobody. Default: not set. Allowed: a list of SNS topic ARNs.
     */
    alarmActions?: pulumi.Input<pulumi.Input<string>[]>;
    /**
     * The functions' log groups expire instead of keeping logs forever. Default: `30`. Allowed: a retention CloudWatch Logs accepts: one of 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653.
     */
    logRetentionDays?: pulumi.Input<inputs.LogRetentionDays>;
    /**
     * The version of the public Powertools for AWS Lambda (Python) layer the functions run with. Default: `27`. Allowed: a whole number of at least 1.
     */
    powertoolsLayerVersion?: pulumi.Input<number>;
    /**
     * Point-in-time recovery and deletion protection on the tables (production data). Default: true. Allowed: true or false.
     */
    protectData?: pulumi.Input<boolean>;
    /**
     * The consumer function's timeout; one charge is a few DynamoDB calls, 30 s leaves room for throttling retries. Default: `30`. Allowed: a whole number from 1 to 900.
     */
    consumerTimeoutSeconds?: pulumi.Input<number>;
    /**
     * The queue's visibility timeout: at least the consumer timeout, so a message never reappears while it is being charged; default 6x the consumer timeout, as AWS advises. Default: not set. Allowed: a whole number from 0 to 43200.
     */
    visibilityTimeoutSeconds?: pulumi.Input<number>;
    /**
     * Messages per consumer invocation; Lambda reads at most 10 per batch from a FIFO queue (1 with reserved_concurrency 1: the coordinator/worker shape). Default: `10`. Allowed: a whole number from 1 to 10.
     */
    batchSize?: pulumi.Input<number>;
    /**
     * Receives before a message moves to the DLQ; 3 or fewer sends messages that hit one transient error to the DLQ. Default: `5`. Allowed: a whole number from 4 to 1000.
     */
    maxReceiveCount?: pulumi.Input<number>;
    /**
     * How long the queue keeps a charge; shorter than the DLQ's 14 days, so the DLQ keeps messages longer. Default: `345600`. Allowed: a whole number from 60 to 1209599.
     */
    messageRetentionSeconds?: pulumi.Input<number>;
    /**
     * The mapping's concurrent invocations; unset: as many as the message groups allow. Default: not set. Allowed: a whole number from 2 to 1000.
     */
    maximumConcurrency?: pulumi.Input<number>;
    /**
     * The consumer's reserved concurrency (1 with batch size 1: the coordinator/worker shape). Default: not set. Allowed: a whole number of at least 1.
     */
    reservedConcurrency?: pulumi.Input<number>;
    /**
     * The consumer function's memory (and so its CPU share). Default: `256`. Allowed: a whole number from 128 to 10240.
     */
    consumerMemoryMb?: pulumi.Input<number>;
    /**
     * Lambda retries an asynchronous invocation at most twice. Default: `2`. Allowed: a whole number from 0 to 2.
     */
    dispatcherRetryAttempts?: pulumi.Input<number>;
    /**
     * How long Lambda keeps retrying a failed invocation before it parks the event. Default: `3600`. Allowed: a whole number from 60 to 21600.
     */
    dispatcherMaxEventAgeSeconds?: pulumi.Input<number>;
    /**
     * The dispatcher function's timeout; enumerating the accounts store and enqueueing a month takes minutes, not seconds. Default: `300`. Allowed: a whole number from 1 to 900.
     */
    dispatcherTimeoutSeconds?: pulumi.Input<number>;
    /**
     * When the dispatcher runs; default 03:00 on the 1st of every month. Default: `cron(0 3 1 * ? *)`. Allowed: a Scheduler expression: cron(min hour dom month dow year), rate(...) or at(...).
     */
    scheduleExpression?: pulumi.Input<string>;
    /**
     * The time zone the cron expression is read in. Default: `UTC`. Allowed: a non-empty string.
     */
    scheduleTimezone?: pulumi.Input<string>;
    /**
     * False keeps the schedule but never fires it (e.g. in dev). Default: true. Allowed: true or false.
     */
    scheduleEnabled?: pulumi.Input<boolean>;
    /**
     * Scheduler's retries of a failed start before the message goes to the schedule's DLQ. Default: `3`. Allowed: a whole number from 0 to 185.
     */
    schedulerRetryAttempts?: pulumi.Input<number>;
    /**
     * How long Scheduler keeps retrying a start. Default: `3600`. Allowed: a whole number from 60 to 86400.
     */
    schedulerMaxEventAgeSeconds?: pulumi.Input<number>;
    /**
     * How long charge rows, and so the duplicate protection, are kept. Default: `90`. Allowed: a whole number of at least 1.
     */
    ledgerTtlDays?: pulumi.Input<number>;
    /**
     * An existing accounts store (pk `tenant`, sk `sk`); unset: the component provisions one. Default: not set. Allowed: a DynamoDB table ARN.
     */
    accountsTableArn?: pulumi.Input<string>;
    /**
     * The name of accounts_table_arn's table. Default: not set. Allowed: a non-empty string.
     */
    accountsTableName?: pulumi.Input<string>;
    /**
     * The age of the oldest charge that alarms; a charge waiting 15 minutes means the consumer is stuck or failing. Default: `900`. Allowed: a whole number of at least 60.
     */
    oldestMessageAlarmSeconds?: pulumi.Input<number>;
    /**
     * Your own consumer code; unset: this package's reference handler. Default: not set. Allowed: a pulumi.Archive of your code (e.g. pulumi.FileArchive('./build')).
     */
    consumerCode?: pulumi.Input<pulumi.asset.Archive>;
    /**
     * The consumer handler in consumer_code (module.function); required with consumer_code. Default: not set. Allowed: module.function in your code.
     */
    consumerHandler?: pulumi.Input<string>;
    /**
     * Your own dispatcher code; unset: this package's reference handler. Default: not set. Allowed: a pulumi.Archive of your code (e.g. pulumi.FileArchive('./build')).
     */
    dispatcherCode?: pulumi.Input<pulumi.asset.Archive>;
    /**
     * The dispatcher handler in dispatcher_code (module.function); required with dispatcher_code. Default: not set. Allowed: module.function in your code.
     */
    dispatcherHandler?: pulumi.Input<string>;
}

/**
 * Monthly billing through an SQS FIFO queue, charged exactly once: a scheduled dispatcher enqueues one charge per employee (group tenant#month, explicit deduplication ids), an idempotent consumer writes each charge once to a ledger, and a FIFO DLQ with an alarm parks what keeps failing.
 */
export class FifoBillingQueue extends pulumi.ComponentResource {
    public static readonly __pulumiType = "blueprint:index:FifoBillingQueue";
    public readonly queueUrl!: pulumi.Output<string>;
    public readonly queueArn!: pulumi.Output<string>;
    public readonly dlqUrl!: pulumi.Output<string>;
    public readonly dlqArn!: pulumi.Output<string>;
    public readonly consumerFunctionName!: pulumi.Output<string>;
    public readonly consumerFunctionArn!: pulumi.Output<string>;
    public readonly dispatcherFunctionName!: pulumi.Output<string>;
    public readonly dispatcherFunctionArn!: pulumi.Output<string>;
    public readonly scheduleArn!: pulumi.Output<string>;
    public readonly schedulerDlqUrl!: pulumi.Output<string>;
    public readonly dispatcherFailedQueueUrl!: pulumi.Output<string>;
    public readonly ledgerTableName!: pulumi.Output<string>;
    public readonly accountsTableName!: pulumi.Output<string>;

    constructor(name: string, args?: FifoBillingQueueArgs, opts?: pulumi.ComponentResourceOptions) {
        super(FifoBillingQueue.__pulumiType, name, remoteInputs(args, ["queueUrl", "queueArn", "dlqUrl", "dlqArn", "consumerFunctionName", "consumerFunctionArn", "dispatcherFunctionName", "dispatcherFunctionArn", "scheduleArn", "schedulerDlqUrl", "dispatcherFailedQueueUrl", "ledgerTableName", "accountsTableName"]), opts, true);
    }
}

export interface IdempotentStreamConsumerArgs {
    /**
     * The SNS topics every alarm of the component notifies; empty: alarms are recorded but page nobody. Default: not set. Allowed: a list of SNS topic ARNs.
     */
    alarmActions?: pulumi.Input<pulumi.Input<string>[]>;
    /**
     * The functions' log groups expire instead of keeping logs forever. Default: `30`. Allowed: a retention CloudWatch Logs accepts: one of 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653.
     */
    logRetentionDays?: pulumi.Input<inputs.LogRetentionDays>;
    /**
     * The version of the public Powertools for AWS Lambda (Python) layer the functions run with. Default: `27`. Allowed: a whole number of at least 1.
     */
    powertoolsLayerVersion?: pulumi.Input<number>;
    /**
     * Point-in-time recovery and deletion protection on the tables (production data). Default: true. Allowed: true or false.
     */
    protectData?: pulumi.Input<boolean>;
    /**
     * An existing stream to consume; unset: the component creates one. Default: not set. Allowed: a Kinesis stream ARN.
     */
    streamArn?: pulumi.Input<string>;
    /**
     * An ON_DEMAND stream scales its own shards. Default: `ON_DEMAND`. Allowed: ON_DEMAND or PROVISIONED.
     */
    streamMode?: pulumi.Input<inputs.StreamMode>;
    /**
     * Shards of a PROVISIONED stream. Default: not set. Allowed: a whole number of at least 1.
     */
    shardCount?: pulumi.Input<number>;
    /**
     * The stream's retention (state it for an existing stream); every replay re-reads its records from the stream, so it bounds the replay window. Default: `24`. Allowed: a whole number from 24 to 8760.
     */
    retentionHours?: pulumi.Input<number>;
    /**
     * The stream's encryption key: the AWS managed key needs no kms: permission; the consumer role is granted kms:Decrypt on exactly a customer managed key. Default: `alias/aws/kinesis`. Allowed: alias/aws/kinesis or a KMS key ARN.
     */
    kmsKeyId?: pulumi.Input<string>;
    /**
     * Read through an enhanced fan-out consumer (more than two readers). Default: false. Allowed: true or false.
     */
    enhancedFanOut?: pulumi.Input<boolean>;
    /**
     * Records per invocation of the consumer. Default: `100`. Allowed: a whole number from 1 to 10000.
     */
    batchSize?: pulumi.Input<number>;
    /**
     * How long the mapping gathers records before invoking; 0: as soon as records arrive. Default: `0`. Allowed: a whole number from 0 to 300.
     */
    batchingWindowSeconds?: pulumi.Input<number>;
    /**
     * Concurrent batches per shard. Default: `1`. Allowed: a whole number from 1 to 10.
     */
    parallelizationFactor?: pulumi.Input<number>;
    /**
     * Where a new mapping starts reading the stream. Default: `LATEST`. Allowed: LATEST or TRIM_HORIZON.
     */
    startingPosition?: pulumi.Input<inputs.StartingPosition>;
    /**
     * The consumer function's timeout. Default: `60`. Allowed: a whole number from 1 to 900.
     */
    functionTimeoutSeconds?: pulumi.Input<number>;
    /**
     * The consumer function's memory (and so its CPU share). Default: `256`. Allowed: a whole number from 128 to 10240.
     */
    memoryMb?: pulumi.Input<number>;
    /**
     * The Retry-DLQ's delay: the wait before the first replay. Default: `60`. Allowed: a whole number from 0 to 900.
     */
    retryDelaySeconds?: pulumi.Input<number>;
    /**
     * The wait between replays; at least the function timeout, default 6x. Default: not set. Allowed: a whole number from 0 to 43200.
     */
    retryVisibilityTimeoutSeconds?: pulumi.Input<number>;
    /**
     * Replays before a record moves to the Unrecoverable-DLQ; 3 or fewer parks a record that hit one transient error. Default: `5`. Allowed: a whole number from 4 to 1000.
     */
    maxReceiveCount?: pulumi.Input<number>;
    /**
     * Retry-DLQ messages per invocation; at most 10, as the Retry-DLQ mapping has no batching window. Default: `10`. Allowed: a whole number from 1 to 10.
     */
    retryBatchSize?: pulumi.Input<number>;
    /**
     * The Retry-DLQ's retention: shorter than the Unrecoverable-DLQ's 14 days, longer than the replay window; default: the replay window + 1 hour, at least SQS's 4 days. Default: not set. Allowed: a whole number from 60 to 1209599.
     */
    retryRetentionSeconds?: pulumi.Input<number>;
    /**
     * The stream's iterator-age alarm, in milliseconds; default: half the stream retention. Default: not set. Allowed: a whole number of at least 1.
     */
    iteratorAgeAlarmMs?: pulumi.Input<number>;
    /**
     * The Retry-DLQ's oldest-message alarm; default: the replay window (a message older than that is not being replayed). Default: not set. Allowed: a whole number of at least 1.
     */
    retryDlqAgeAlarmSeconds?: pulumi.Input<number>;
    /**
     * Your own function code; unset: this package's reference handler. Default: not set. Allowed: a pulumi.Archive of your code (e.g. pulumi.FileArchive('./build')).
     */
    code?: pulumi.Input<pulumi.asset.Archive>;
    /**
     * The function handler in code (module.function); required with code. Default: not set. Allowed: module.function in your code.
     */
    handler?: pulumi.Input<string>;
    /**
     * Extra environment variables of the consumer function (your handler's own settings). Default: not set. Allowed: an object of string values.
     */
    environment?: pulumi.Input<{[key: string]: pulumi.Input<string>}>;
    /**
     * Extra permissions of your handler: named actions (no wildcards) on resources. Default: not set. Allowed: a list of {actions, resources} objects.
     */
    policyStatements?: pulumi.Input<pulumi.Input<inputs.PolicyStatementArgs>[]>;
    /**
     * The stream mapping's retries of a batch that cannot be split further; bounded, so a poison record reaches the Retry-DLQ instead of blocking its shard until it expires. Default: `2`. Allowed: a whole number from 1 to 10000.
     */
    maximumRetryAttempts?: pulumi.Input<number>;
    /**
     * Records older than this go to the Retry-DLQ instead of the function; bounded (-1, no limit, is refused). Default: `3600`. Allowed: a whole number from 60 to 604800.
     */
    maximumRecordAgeSeconds?: pulumi.Input<number>;
    /**
     * The business key in the JSON payload; reference handler: eventId; none: shard + sequence number. Default: not set. Allowed: a non-empty string.
     */
    idempotencyKeyJmespath?: pulumi.Input<string>;
    /**
     * How long a processed record's key is kept; default and minimum: the end of its last replay. Default: not set. Allowed: a whole number of at least 1.
     */
    idempotencyTtlSeconds?: pulumi.Input<number>;
}

/**
 * A Kinesis consumer whose records may be retried because each one's effect is recorded once in an idempotency store: the stream mapping bisects and retries a failing batch, then parks it in the Retry-DLQ, whose records the same function reads back from the stream and replays; what fails every replay lands in the Unrecoverable-DLQ, which alarms.
 */
export class IdempotentStreamConsumer extends pulumi.ComponentResource {
    public static readonly __pulumiType = "blueprint:index:IdempotentStreamConsumer";
    public readonly streamArn!: pulumi.Output<string>;
    public readonly streamName!: pulumi.Output<string>;
    public readonly streamConsumerArn!: pulumi.Output<string>;
    public readonly retryDlqUrl!: pulumi.Output<string>;
    public readonly retryDlqArn!: pulumi.Output<string>;
    public readonly unrecoverableDlqUrl!: pulumi.Output<string>;
    public readonly unrecoverableDlqArn!: pulumi.Output<string>;
    public readonly functionName!: pulumi.Output<string>;
    public readonly functionArn!: pulumi.Output<string>;
    public readonly ledgerTableName!: pulumi.Output<string>;
    public readonly idempotencyTableName!: pulumi.Output<string>;

    constructor(name: string, args?: IdempotentStreamConsumerArgs, opts?: pulumi.ComponentResourceOptions) {
        super(IdempotentStreamConsumer.__pulumiType, name, remoteInputs(args, ["streamArn", "streamName", "streamConsumerArn", "retryDlqUrl", "retryDlqArn", "unrecoverableDlqUrl", "unrecoverableDlqArn", "functionName", "functionArn", "ledgerTableName", "idempotencyTableName"]), opts, true);
    }
}

export interface NonIdempotentStreamConsumerArgs {
    /**
     * The SNS topics every alarm of the component notifies; empty: alarms are recorded but page nobody. Default: not set. Allowed: a list of SNS topic ARNs.
     */
    alarmActions?: pulumi.Input<pulumi.Input<string>[]>;
    /**
     * The functions' log groups expire instead of keeping logs forever. Default: `30`. Allowed: a retention CloudWatch Logs accepts: one of 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653.
     */
    logRetentionDays?: pulumi.Input<inputs.LogRetentionDays>;
    /**
     * The version of the public Powertools for AWS Lambda (Python) layer the functions run with. Default: `27`. Allowed: a whole number of at least 1.
     */
    powertoolsLayerVersion?: pulumi.Input<number>;
    /**
     * Point-in-time recovery and deletion protection on the tables (production data). Default: true. Allowed: true or false.
     */
    protectData?: pulumi.Input<boolean>;
    /**
     * An existing stream to consume; unset: the component creates one. Default: not set. Allowed: a Kinesis stream ARN.
     */
    streamArn?: pulumi.Input<string>;
    /**
     * An ON_DEMAND stream scales its own shards. Default: `ON_DEMAND`. Allowed: ON_DEMAND or PROVISIONED.
     */
    streamMode?: pulumi.Input<inputs.StreamMode>;
    /**
     * Shards of a PROVISIONED stream. Default: not set. Allowed: a whole number of at least 1.
     */
    shardCount?: pulumi.Input<number>;
    /**
     * The stream's retention (state it for an existing stream); every replay re-reads its records from the stream, so it bounds the replay window. Default: `24`. Allowed: a whole number from 24 to 8760.
     */
    retentionHours?: pulumi.Input<number>;
    /**
     * The stream's encryption key: the AWS managed key needs no kms: permission; the consumer role is granted kms:Decrypt on exactly a customer managed key. Default: `alias/aws/kinesis`. Allowed: alias/aws/kinesis or a KMS key ARN.
     */
    kmsKeyId?: pulumi.Input<string>;
    /**
     * Read through an enhanced fan-out consumer (more than two readers). Default: false. Allowed: true or false.
     */
    enhancedFanOut?: pulumi.Input<boolean>;
    /**
     * Records per invocation of the consumer. Default: `100`. Allowed: a whole number from 1 to 10000.
     */
    batchSize?: pulumi.Input<number>;
    /**
     * How long the mapping gathers records before invoking; 0: as soon as records arrive. Default: `0`. Allowed: a whole number from 0 to 300.
     */
    batchingWindowSeconds?: pulumi.Input<number>;
    /**
     * Concurrent batches per shard. Default: `1`. Allowed: a whole number from 1 to 10.
     */
    parallelizationFactor?: pulumi.Input<number>;
    /**
     * Where a new mapping starts reading the stream. Default: `LATEST`. Allowed: LATEST or TRIM_HORIZON.
     */
    startingPosition?: pulumi.Input<inputs.StartingPosition>;
    /**
     * The consumer function's timeout. Default: `60`. Allowed: a whole number from 1 to 900.
     */
    functionTimeoutSeconds?: pulumi.Input<number>;
    /**
     * The consumer function's memory (and so its CPU share). Default: `256`. Allowed: a whole number from 128 to 10240.
     */
    memoryMb?: pulumi.Input<number>;
    /**
     * The Retry-DLQ's delay: the wait before the first replay. Default: `60`. Allowed: a whole number from 0 to 900.
     */
    retryDelaySeconds?: pulumi.Input<number>;
    /**
     * The wait between replays; at least the function timeout, default 6x. Default: not set. Allowed: a whole number from 0 to 43200.
     */
    retryVisibilityTimeoutSeconds?: pulumi.Input<number>;
    /**
     * Replays before a record moves to the Unrecoverable-DLQ; 3 or fewer parks a record that hit one transient error. Default: `5`. Allowed: a whole number from 4 to 1000.
     */
    maxReceiveCount?: pulumi.Input<number>;
    /**
     * Retry-DLQ messages per invocation; at most 10, as the Retry-DLQ mapping has no batching window. Default: `10`. Allowed: a whole number from 1 to 10.
     */
    retryBatchSize?: pulumi.Input<number>;
    /**
     * The Retry-DLQ's retention: shorter than the Unrecoverable-DLQ's 14 days, longer than the replay window; default: the replay window + 1 hour, at least SQS's 4 days. Default: not set. Allowed: a whole number from 60 to 1209599.
     */
    retryRetentionSeconds?: pulumi.Input<number>;
    /**
     * The stream's iterator-age alarm, in milliseconds; default: half the stream retention. Default: not set. Allowed: a whole number of at least 1.
     */
    iteratorAgeAlarmMs?: pulumi.Input<number>;
    /**
     * The Retry-DLQ's oldest-message alarm; default: the replay window (a message older than that is not being replayed). Default: not set. Allowed: a whole number of at least 1.
     */
    retryDlqAgeAlarmSeconds?: pulumi.Input<number>;
    /**
     * Your own function code; unset: this package's reference handler. Default: not set. Allowed: a pulumi.Archive of your code (e.g. pulumi.FileArchive('./build')).
     */
    code?: pulumi.Input<pulumi.asset.Archive>;
    /**
     * The function handler in code (module.function); required with code. Default: not set. Allowed: module.function in your code.
     */
    handler?: pulumi.Input<string>;
    /**
     * Extra environment variables of the consumer function (your handler's own settings). Default: not set. Allowed: an object of string values.
     */
    environment?: pulumi.Input<{[key: string]: pulumi.Input<string>}>;
    /**
     * Extra permissions of your handler: named actions (no wildcards) on resources. Default: not set. Allowed: a list of {actions, resources} objects.
     */
    policyStatements?: pulumi.Input<pulumi.Input<inputs.PolicyStatementArgs>[]>;
}

/**
 * A Kinesis consumer whose records must never be processed twice: no infrastructure retries; the handler parks a failing record in the Retry-DLQ itself and reports success, the same function replays it from there, and what fails every replay (or a crashed batch) lands in the Unrecoverable-DLQ, which alarms.
 */
export class NonIdempotentStreamConsumer extends pulumi.ComponentResource {
    public static readonly __pulumiType = "blueprint:index:NonIdempotentStreamConsumer";
    public readonly streamArn!: pulumi.Output<string>;
    public readonly streamName!: pulumi.Output<string>;
    public readonly streamConsumerArn!: pulumi.Output<string>;
    public readonly retryDlqUrl!: pulumi.Output<string>;
    public readonly retryDlqArn!: pulumi.Output<string>;
    public readonly unrecoverableDlqUrl!: pulumi.Output<string>;
    public readonly unrecoverableDlqArn!: pulumi.Output<string>;
    public readonly functionName!: pulumi.Output<string>;
    public readonly functionArn!: pulumi.Output<string>;
    public readonly ledgerTableName!: pulumi.Output<string>;

    constructor(name: string, args?: NonIdempotentStreamConsumerArgs, opts?: pulumi.ComponentResourceOptions) {
        super(NonIdempotentStreamConsumer.__pulumiType, name, remoteInputs(args, ["streamArn", "streamName", "streamConsumerArn", "retryDlqUrl", "retryDlqArn", "unrecoverableDlqUrl", "unrecoverableDlqArn", "functionName", "functionArn", "ledgerTableName"]), opts, true);
    }
}

export interface DistributedMapBatchArgs {
    /**
     * The SNS topics every alarm of the component notifies; empty: alarms are recorded but page nobody. Default: not set. Allowed: a list of SNS topic ARNs.
     */
    alarmActions?: pulumi.Input<pulumi.Input<string>[]>;
    /**
     * The functions' log groups expire instead of keeping logs forever. Default: `30`. Allowed: a retention CloudWatch Logs accepts: one of 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653.
     */
    logRetentionDays?: pulumi.Input<inputs.LogRetentionDays>;
    /**
     * The version of the public Powertools for AWS Lambda (Python) layer the functions run with. Default: `27`. Allowed: a whole number of at least 1.
     */
    powertoolsLayerVersion?: pulumi.Input<number>;
    /**
     * Point-in-time recovery and deletion protection on the tables (production data). Default: true. Allowed: true or false.
     */
    protectData?: pulumi.Input<boolean>;
    /**
     * Children running at once: set it from what the downstream (DynamoDB, an API, the item function's reserved concurrency) can take; AWS's default, 0, means up to 10,000 at once. Required. Allowed: a whole number from 1 to 10000.
     */
    maxConcurrency: pulumi.Input<number>;
    /**
     * Share of items that may fail before the run fails; default 0 unless a count is given. Default: not set. Allowed: a number from 0 to 100.
     */
    toleratedFailurePercentage?: pulumi.Input<number>;
    /**
     * Number of items that may fail before the run fails. Default: not set. Allowed: a whole number of at least 0.
     */
    toleratedFailureCount?: pulumi.Input<number>;
    /**
     * The wait before an item's first retry of a transient error. Default: `2`. Allowed: a whole number from 1 to 99999999.
     */
    retryIntervalSeconds?: pulumi.Input<number>;
    /**
     * Each retry waits this many times longer. Default: `2.0`. Allowed: a number of at least 1.
     */
    retryBackoffRate?: pulumi.Input<number>;
    /**
     * Attempts of an item after a transient error; 0 (no retries) is refused: transient Lambda errors would fail items. Default: `4`. Allowed: a whole number from 1 to 99999999.
     */
    retryMaxAttempts?: pulumi.Input<number>;
    /**
     * The longest wait between retries; at least the retry interval. Default: `30`. Allowed: a whole number from 1 to 31622400.
     */
    retryMaxDelaySeconds?: pulumi.Input<number>;
    /**
     * How retries spread their waits; without jitter, thousands of children retry in lockstep and stampede the downstream. Default: `FULL`. Allowed: one of FULL.
     */
    retryJitterStrategy?: pulumi.Input<inputs.RetryJitterStrategy>;
    /**
     * Column names when the CSV has no header row; unset or empty: the first row holds them. Default: not set. Allowed: a list of column names.
     */
    csvHeaders?: pulumi.Input<pulumi.Input<string>[]>;
    /**
     * Rows per child (ItemBatcher); unset: 100 with the reference item handler (a tenth of the one-row-per-child cost), one row per child with item_code (your handler must read {"Items": [...]} to be given batches). A failed child counts all its rows toward the tolerated failures. Default: not set. Allowed: a whole number of at least 1.
     */
    maxItemsPerBatch?: pulumi.Input<number>;
    /**
     * The Map's child executions: STANDARD (billed per transition) or EXPRESS (per request and duration, at most 5 minutes each: refused where the item timeout and its retries cannot fit). Default: `STANDARD`. Allowed: one of STANDARD, EXPRESS.
     */
    childExecutionType?: pulumi.Input<inputs.ChildExecutionType>;
    /**
     * An existing input bucket; unset: the component creates one. Default: not set. Allowed: an S3 bucket name.
     */
    inputBucketName?: pulumi.Input<string>;
    /**
     * The state machine may read input CSVs only under it. Default: `incoming/`. Allowed: a non-empty S3 key prefix without a leading '/', e.g. 'incoming/'.
     */
    inputPrefix?: pulumi.Input<string>;
    /**
     * Per-item results (failed items included) go to S3. Default: true. Allowed: true or false.
     */
    writeResults?: pulumi.Input<boolean>;
    /**
     * Where the per-item results are written (with write_results). Default: `results/`. Allowed: a non-empty S3 key prefix without a leading '/', e.g. 'incoming/'.
     */
    resultPrefix?: pulumi.Input<string>;
    /**
     * The item function's timeout; the task's own timeout adds a margin to it. Default: `30`. Allowed: a whole number from 1 to 900.
     */
    itemTimeoutSeconds?: pulumi.Input<number>;
    /**
     * The item function's memory (and so its CPU share). Default: `256`. Allowed: a whole number from 128 to 10240.
     */
    itemMemoryMb?: pulumi.Input<number>;
    /**
     * The item function's reserved concurrency; at least max_concurrency. Default: not set. Allowed: a whole number of at least 1.
     */
    itemReservedConcurrency?: pulumi.Input<number>;
    /**
     * How long a processed invoice is remembered. Default: `604800`. Allowed: a whole number of at least 60.
     */
    idempotencyExpirySeconds?: pulumi.Input<number>;
    /**
     * The state machine's fixed name; default: <project>-<stack>-<resource name>. Default: not set. Allowed: 1-80 letters, digits, '-' or '_'.
     */
    stateMachineName?: pulumi.Input<string>;
    /**
     * When runs start; unset: no schedule (runs are started by hand or by your own trigger). Default: not set. Allowed: a Scheduler expression: cron(min hour dom month dow year), rate(...) or at(...).
     */
    scheduleExpression?: pulumi.Input<string>;
    /**
     * The time zone the cron expression is read in. Default: `UTC`. Allowed: a non-empty string.
     */
    scheduleTimezone?: pulumi.Input<string>;
    /**
     * False keeps the schedule but never fires it (e.g. in dev). Default: true. Allowed: true or false.
     */
    scheduleEnabled?: pulumi.Input<boolean>;
    /**
     * Scheduler's retries of a failed start before the message goes to the schedule's DLQ. Default: `3`. Allowed: a whole number from 0 to 185.
     */
    schedulerRetryAttempts?: pulumi.Input<number>;
    /**
     * How long Scheduler keeps retrying a start. Default: `3600`. Allowed: a whole number from 60 to 86400.
     */
    schedulerMaxEventAgeSeconds?: pulumi.Input<number>;
    /**
     * The CSV a scheduled run reads (under input_prefix). Default: `incoming/invoices.csv`. Allowed: a non-empty string.
     */
    scheduleInputKey?: pulumi.Input<string>;
    /**
     * Your own item code; unset: this package's reference handler. Default: not set. Allowed: a pulumi.Archive of your code (e.g. pulumi.FileArchive('./build')).
     */
    itemCode?: pulumi.Input<pulumi.asset.Archive>;
    /**
     * The item handler in item_code (module.function); required with item_code. Default: not set. Allowed: module.function in your code.
     */
    itemHandler?: pulumi.Input<string>;
}

/**
 * A batch over an S3 CSV, one idempotent Lambda call per row: a Step Functions Distributed Map with bounded concurrency, retries with full jitter and a tolerated failure threshold; a run that exceeds it notifies the ops queue. Start a run with the input {"inputKey": "<input prefix>x.csv"}.
 */
export class DistributedMapBatch extends pulumi.ComponentResource {
    public static readonly __pulumiType = "blueprint:index:DistributedMapBatch";
    public readonly stateMachineArn!: pulumi.Output<string>;
    public readonly stateMachineName!: pulumi.Output<string>;
    public readonly inputBucketName!: pulumi.Output<string>;
    public readonly opsQueueUrl!: pulumi.Output<string>;
    public readonly opsQueueArn!: pulumi.Output<string>;
    public readonly opsDlqUrl!: pulumi.Output<string>;
    public readonly itemFunctionName!: pulumi.Output<string>;
    public readonly itemFunctionArn!: pulumi.Output<string>;
    public readonly idempotencyTableName!: pulumi.Output<string>;
    public readonly invoiceLedgerTableName!: pulumi.Output<string>;
    public readonly logGroupName!: pulumi.Output<string>;
    public readonly scheduleArn!: pulumi.Output<string>;

    constructor(name: string, args?: DistributedMapBatchArgs, opts?: pulumi.ComponentResourceOptions) {
        super(DistributedMapBatch.__pulumiType, name, remoteInputs(args, ["stateMachineArn", "stateMachineName", "inputBucketName", "opsQueueUrl", "opsQueueArn", "opsDlqUrl", "itemFunctionName", "itemFunctionArn", "idempotencyTableName", "invoiceLedgerTableName", "logGroupName", "scheduleArn"]), opts, true);
    }
}
