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
        actions: pulumi.Input<pulumi.Input<string>[]>;
        resources: pulumi.Input<pulumi.Input<string>[]>;
    }
}

export interface FifoBillingQueueArgs {
    alarmActions?: pulumi.Input<pulumi.Input<string>[]>;
    logRetentionDays?: pulumi.Input<number>;
    powertoolsLayerVersion?: pulumi.Input<number>;
    protectData?: pulumi.Input<boolean>;
    /**
     * Consumer function timeout (default 30 s).
     */
    consumerTimeoutSeconds?: pulumi.Input<number>;
    /**
     * Queue visibility timeout; default 6x the consumer timeout, never less than the timeout.
     */
    visibilityTimeoutSeconds?: pulumi.Input<number>;
    /**
     * Records per consumer invocation, 1-10 (FIFO limit); 1 for the coordinator/worker shape.
     */
    batchSize?: pulumi.Input<number>;
    /**
     * Receives before a message moves to the DLQ; default 5, must be > 3.
     */
    maxReceiveCount?: pulumi.Input<number>;
    /**
     * Source queue retention (default 4 days); the DLQ keeps 14 days.
     */
    messageRetentionSeconds?: pulumi.Input<number>;
    /**
     * Event source mapping maximum concurrency (2-1000); unset: as many as the groups allow.
     */
    maximumConcurrency?: pulumi.Input<number>;
    /**
     * Reserved concurrency of the consumer function.
     */
    reservedConcurrency?: pulumi.Input<number>;
    consumerMemoryMb?: pulumi.Input<number>;
    dispatcherTimeoutSeconds?: pulumi.Input<number>;
    /**
     * EventBridge Scheduler expression, default monthly on the 1st at 03:00.
     */
    scheduleExpression?: pulumi.Input<string>;
    scheduleTimezone?: pulumi.Input<string>;
    scheduleEnabled?: pulumi.Input<boolean>;
    schedulerRetryAttempts?: pulumi.Input<number>;
    schedulerMaxEventAgeSeconds?: pulumi.Input<number>;
    /**
     * How long charge rows (and so the duplicate protection) are kept; default 90 days.
     */
    ledgerTtlDays?: pulumi.Input<number>;
    /**
     * An existing accounts store (pk `tenant`, sk `sk`); unset: the component provisions one.
     */
    accountsTableName?: pulumi.Input<string>;
    accountsTableArn?: pulumi.Input<string>;
    /**
     * Your own consumer code; default: this package's handlers.
     */
    consumerCode?: pulumi.Input<pulumi.asset.Archive>;
    consumerHandler?: pulumi.Input<string>;
    dispatcherCode?: pulumi.Input<pulumi.asset.Archive>;
    dispatcherHandler?: pulumi.Input<string>;
    /**
     * Lambda's own retries of a failed dispatch, 0-2 (default 2).
     */
    dispatcherRetryAttempts?: pulumi.Input<number>;
    /**
     * How long Lambda keeps retrying a dispatch, 60-21600 s (default 3600).
     */
    dispatcherMaxEventAgeSeconds?: pulumi.Input<number>;
    oldestMessageAlarmSeconds?: pulumi.Input<number>;
}

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
    alarmActions?: pulumi.Input<pulumi.Input<string>[]>;
    logRetentionDays?: pulumi.Input<number>;
    powertoolsLayerVersion?: pulumi.Input<number>;
    protectData?: pulumi.Input<boolean>;
    streamArn?: pulumi.Input<string>;
    streamMode?: pulumi.Input<string>;
    shardCount?: pulumi.Input<number>;
    retentionHours?: pulumi.Input<number>;
    kmsKeyId?: pulumi.Input<string>;
    enhancedFanOut?: pulumi.Input<boolean>;
    batchSize?: pulumi.Input<number>;
    batchingWindowSeconds?: pulumi.Input<number>;
    parallelizationFactor?: pulumi.Input<number>;
    startingPosition?: pulumi.Input<string>;
    functionTimeoutSeconds?: pulumi.Input<number>;
    memoryMb?: pulumi.Input<number>;
    retryDelaySeconds?: pulumi.Input<number>;
    retryVisibilityTimeoutSeconds?: pulumi.Input<number>;
    maxReceiveCount?: pulumi.Input<number>;
    retryBatchSize?: pulumi.Input<number>;
    retryRetentionSeconds?: pulumi.Input<number>;
    iteratorAgeAlarmMs?: pulumi.Input<number>;
    retryDlqAgeAlarmSeconds?: pulumi.Input<number>;
    code?: pulumi.Input<pulumi.asset.Archive>;
    handler?: pulumi.Input<string>;
    environment?: pulumi.Input<{[key: string]: pulumi.Input<string>}>;
    policyStatements?: pulumi.Input<pulumi.Input<inputs.PolicyStatementArgs>[]>;
    /**
     * Stream mapping retries of a batch that cannot be split further, 1-10000 (default 2).
     */
    maximumRetryAttempts?: pulumi.Input<number>;
    /**
     * Records older than this go to the Retry-DLQ instead of the function, 60-604800 (default 3600).
     */
    maximumRecordAgeSeconds?: pulumi.Input<number>;
    /**
     * JMESPath of the business key in the JSON payload; default (reference handler): `eventId`.
     *     Without one, records are keyed by shard + sequence number.
     */
    idempotencyKeyJmespath?: pulumi.Input<string>;
    /**
     * How long a processed record's key is kept; default and minimum: the end of its last replay.
     */
    idempotencyTtlSeconds?: pulumi.Input<number>;
}

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
    alarmActions?: pulumi.Input<pulumi.Input<string>[]>;
    logRetentionDays?: pulumi.Input<number>;
    powertoolsLayerVersion?: pulumi.Input<number>;
    protectData?: pulumi.Input<boolean>;
    streamArn?: pulumi.Input<string>;
    streamMode?: pulumi.Input<string>;
    shardCount?: pulumi.Input<number>;
    retentionHours?: pulumi.Input<number>;
    kmsKeyId?: pulumi.Input<string>;
    enhancedFanOut?: pulumi.Input<boolean>;
    batchSize?: pulumi.Input<number>;
    batchingWindowSeconds?: pulumi.Input<number>;
    parallelizationFactor?: pulumi.Input<number>;
    startingPosition?: pulumi.Input<string>;
    functionTimeoutSeconds?: pulumi.Input<number>;
    memoryMb?: pulumi.Input<number>;
    retryDelaySeconds?: pulumi.Input<number>;
    retryVisibilityTimeoutSeconds?: pulumi.Input<number>;
    maxReceiveCount?: pulumi.Input<number>;
    retryBatchSize?: pulumi.Input<number>;
    retryRetentionSeconds?: pulumi.Input<number>;
    iteratorAgeAlarmMs?: pulumi.Input<number>;
    retryDlqAgeAlarmSeconds?: pulumi.Input<number>;
    code?: pulumi.Input<pulumi.asset.Archive>;
    handler?: pulumi.Input<string>;
    environment?: pulumi.Input<{[key: string]: pulumi.Input<string>}>;
    policyStatements?: pulumi.Input<pulumi.Input<inputs.PolicyStatementArgs>[]>;
}

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
    alarmActions?: pulumi.Input<pulumi.Input<string>[]>;
    logRetentionDays?: pulumi.Input<number>;
    powertoolsLayerVersion?: pulumi.Input<number>;
    protectData?: pulumi.Input<boolean>;
    /**
     * Required. Children running at once (1-10000): what the downstream (DynamoDB, an API, the
     *     item function's reserved concurrency) can take. Never the unbounded default.
     */
    maxConcurrency?: pulumi.Input<number>;
    /**
     * Share of items that may fail before the run fails (0-100, default 0).
     */
    toleratedFailurePercentage?: pulumi.Input<number>;
    /**
     * Number of items that may fail before the run fails (alternative or addition to the %).
     */
    toleratedFailureCount?: pulumi.Input<number>;
    retryIntervalSeconds?: pulumi.Input<number>;
    retryBackoffRate?: pulumi.Input<number>;
    retryMaxAttempts?: pulumi.Input<number>;
    retryMaxDelaySeconds?: pulumi.Input<number>;
    /**
     * Only FULL is accepted: retries without jitter stampede the downstream.
     */
    retryJitterStrategy?: pulumi.Input<string>;
    /**
     * Column names when the CSV has no header row; unset: the first row holds them.
     */
    csvHeaders?: pulumi.Input<pulumi.Input<string>[]>;
    /**
     * Turns on the ItemBatcher: rows per child invocation. Unset: one row per child.
     */
    maxItemsPerBatch?: pulumi.Input<number>;
    /**
     * An existing input bucket; unset: the component creates one (versioned, encrypted, private).
     */
    inputBucketName?: pulumi.Input<string>;
    /**
     * Prefix the state machine may read input CSVs from (default `incoming/`).
     */
    inputPrefix?: pulumi.Input<string>;
    /**
     * Write per-item results (failed items included) to S3 under result_prefix (default true).
     */
    writeResults?: pulumi.Input<boolean>;
    resultPrefix?: pulumi.Input<string>;
    itemTimeoutSeconds?: pulumi.Input<number>;
    itemMemoryMb?: pulumi.Input<number>;
    /**
     * Reserved concurrency of the item function; must be >= max_concurrency.
     */
    itemReservedConcurrency?: pulumi.Input<number>;
    /**
     * Your own item code; default: this package's handlers.
     */
    itemCode?: pulumi.Input<pulumi.asset.Archive>;
    itemHandler?: pulumi.Input<string>;
    /**
     * How long a processed invoice is remembered (default 7 days).
     */
    idempotencyExpirySeconds?: pulumi.Input<number>;
    /**
     * Fixed state machine name; default `<project>-<stack>-<resource name>`.
     */
    stateMachineName?: pulumi.Input<string>;
    /**
     * EventBridge Scheduler expression; unset: no schedule (runs are started by hand or by you).
     */
    scheduleExpression?: pulumi.Input<string>;
    scheduleTimezone?: pulumi.Input<string>;
    scheduleEnabled?: pulumi.Input<boolean>;
    /**
     * The CSV key a scheduled run reads (must be under input_prefix).
     */
    scheduleInputKey?: pulumi.Input<string>;
    schedulerRetryAttempts?: pulumi.Input<number>;
    schedulerMaxEventAgeSeconds?: pulumi.Input<number>;
}

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
