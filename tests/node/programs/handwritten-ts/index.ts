// Orders: a queue with its DLQ, a consumer function, a stream, a table; the mistakes are on purpose
// (each commented), and ../handwritten-py declares the same resources in Python.
import * as pulumi from "@pulumi/pulumi";
import * as aws from "@pulumi/aws";

const config = new pulumi.Config();
const retentionDays = config.requireNumber("retentionDays");

const dlq = new aws.sqs.Queue("orders-dlq", { messageRetentionSeconds: 1209600 });
// Mistake: the DLQ has no depth alarm.
const queue = new aws.sqs.Queue("orders", {
    visibilityTimeoutSeconds: 180,
    redrivePolicy: pulumi.jsonStringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 5 }),
});

const role = new aws.iam.Role("consumer-role", {
    assumeRolePolicy: aws.iam.assumeRolePolicyForPrincipal({ Service: "lambda.amazonaws.com" }),
});
new aws.iam.RolePolicyAttachment("consumer-logs", {
    role: role,
    policyArn: aws.iam.ManagedPolicy.AWSLambdaBasicExecutionRole,
});
// Mistake: a wildcard action.
new aws.iam.RolePolicy("consumer-access", {
    role: role.id,
    policy: {
        Version: "2012-10-17",
        Statement: [
            { Effect: "Allow", Action: ["sqs:*"], Resource: queue.arn },
            { Effect: "Allow", Action: ["dynamodb:PutItem"], Resource: "*" },
        ],
    },
});

const consumer = new aws.lambda.Function("consumer", {
    role: role.arn,
    runtime: aws.lambda.Runtime.Python3d12,
    handler: "app.handler",
    timeout: 30,
    code: new pulumi.asset.AssetArchive({ "app.py": new pulumi.asset.StringAsset("def handler(event, context):\n    return {}\n") }),
});
new aws.cloudwatch.LogGroup("consumer-logs", {
    name: pulumi.interpolate`/aws/lambda/${consumer.name}`,
    retentionInDays: retentionDays,
});
new aws.lambda.EventSourceMapping("consumer-orders", {
    eventSourceArn: queue.arn,
    functionName: consumer.name,
    batchSize: 10,
    functionResponseTypes: ["ReportBatchItemFailures"],
});

// Mistake: a second function whose log group nobody declares.
new aws.lambda.Function("auditor", {
    role: role.arn,
    runtime: aws.lambda.Runtime.Python3d12,
    handler: "app.handler",
    code: new pulumi.asset.AssetArchive({ "app.py": new pulumi.asset.StringAsset("def handler(event, context):\n    return {}\n") }),
});

// Mistake: the stream is not encrypted at rest.
new aws.kinesis.Stream("clicks", { shardCount: 1, retentionPeriod: 24 });

new aws.dynamodb.Table("ledger", {
    billingMode: "PAY_PER_REQUEST",
    hashKey: "pk",
    attributes: [{ name: "pk", type: "S" }],
    pointInTimeRecovery: { enabled: true },
    serverSideEncryption: { enabled: true },
});

export const queueUrl = queue.url;
export const consumerArn = consumer.arn;
