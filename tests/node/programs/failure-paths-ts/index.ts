// Invoices: a nightly schedule starts a generator function; a rule sends invoice events to a queue; a
// state machine emails each invoice. Every failure path has a destination, and each mistake is where
// its writer may not write (commented), as programs written from the provider's examples often are.
import * as pulumi from "@pulumi/pulumi";
import * as aws from "@pulumi/aws";

function alarmed(name: string, queue: aws.sqs.Queue) {
    new aws.cloudwatch.MetricAlarm(`${name}-depth`, {
        namespace: "AWS/SQS", metricName: "ApproximateNumberOfMessagesVisible",
        dimensions: { QueueName: queue.name }, statistic: "Maximum", period: 60, evaluationPeriods: 1,
        threshold: 1, comparisonOperator: "GreaterThanOrEqualToThreshold",
    });
    return queue;
}

const failed = alarmed("invoice-failures", new aws.sqs.Queue("invoice-failures", { messageRetentionSeconds: 1209600 }));
const scheduleDlq = alarmed("schedule-dlq", new aws.sqs.Queue("schedule-dlq", { messageRetentionSeconds: 1209600 }));

const fnRole = new aws.iam.Role("generator-role", {
    assumeRolePolicy: aws.iam.assumeRolePolicyForPrincipal({ Service: "lambda.amazonaws.com" }),
});
// Mistakes: AWSLambdaExecute grants logs:* (a whole service) and S3 objects, not sqs:SendMessage on the
// on-failure queue.
new aws.iam.RolePolicyAttachment("generator-execute", {
    role: fnRole.name,
    policyArn: "arn:aws:iam::aws:policy/AWSLambdaExecute",
});
const logs = new aws.cloudwatch.LogGroup("generator-logs", { name: "/invoices/generator", retentionInDays: 30 });
const generator = new aws.lambda.Function("generator", {
    role: fnRole.arn,
    runtime: "nodejs20.x",
    handler: "index.handler",
    timeout: 120,
    code: new pulumi.asset.AssetArchive({ "index.js": new pulumi.asset.StringAsset("exports.handler = async () => ({});") }),
    loggingConfig: { logFormat: "JSON", logGroup: logs.name },
});
new aws.lambda.FunctionEventInvokeConfig("generator-async", {
    functionName: generator.name,
    maximumRetryAttempts: 0,
    destinationConfig: { onFailure: { destination: failed.arn } },
});

const schedulerRole = new aws.iam.Role("scheduler-role", {
    assumeRolePolicy: aws.iam.assumeRolePolicyForPrincipal({ Service: "scheduler.amazonaws.com" }),
});
// Mistake: the schedule's role may invoke the function but not send to the schedule's DLQ.
new aws.iam.RolePolicy("scheduler-invoke", {
    role: schedulerRole.id,
    policy: { Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "lambda:InvokeFunction", Resource: generator.arn }] },
});
new aws.scheduler.Schedule("nightly-invoices", {
    scheduleExpression: "cron(0 1 * * ? *)",
    flexibleTimeWindow: { mode: "OFF" },
    target: {
        arn: generator.arn,
        roleArn: schedulerRole.arn,
        retryPolicy: { maximumRetryAttempts: 2, maximumEventAgeInSeconds: 3600 },
        deadLetterConfig: { arn: scheduleDlq.arn },
    },
});

// Mistake: the rule target's DLQ has no queue policy for events.amazonaws.com.
const issued = new aws.cloudwatch.EventRule("invoice-issued", {
    eventPattern: JSON.stringify({ source: ["billing.invoices"], "detail-type": ["InvoiceIssued"] }),
});
const ledger = new aws.sqs.Queue("ledger", { messageRetentionSeconds: 345600 });
new aws.sqs.QueuePolicy("ledger-from-events", {
    queueUrl: ledger.id,
    policy: {
        Version: "2012-10-17",
        Statement: [{
            Effect: "Allow", Principal: { Service: "events.amazonaws.com" }, Action: "sqs:SendMessage",
            Resource: ledger.arn, Condition: { ArnEquals: { "aws:SourceArn": issued.arn } },
        }],
    },
});
const ledgerDlq = alarmed("ledger-dlq", new aws.sqs.Queue("ledger-dlq", { messageRetentionSeconds: 1209600 }));
new aws.cloudwatch.EventTarget("invoice-issued-ledger", {
    rule: issued.name,
    arn: ledger.arn,
    retryPolicy: { maximumRetryAttempts: 5, maximumEventAgeInSeconds: 3600 },
    deadLetterConfig: { arn: ledgerDlq.arn },
});

// Mistake: the task retries Lambda's service errors but not throttles.
new aws.sfn.StateMachine("email-invoices", {
    roleArn: "arn:aws:iam::123456789012:role/email-invoices",
    definition: pulumi.jsonStringify({
        StartAt: "Email",
        States: {
            Email: {
                Type: "Task",
                Resource: "arn:aws:states:::lambda:invoke",
                Parameters: { FunctionName: generator.arn, "Payload.$": "$" },
                TimeoutSeconds: 180,
                Retry: [{ ErrorEquals: ["Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException"],
                          IntervalSeconds: 2, MaxAttempts: 6, BackoffRate: 2 }],
                End: true,
            },
        },
    }),
});
