// The four components with non-default settings, used as a TypeScript team uses them: through the
// component package's SDK (@pulumi/blueprint: `blueprint sdk --language typescript` writes it, as `pulumi package add`
// generates there). Twin of ../components-py.
import * as blueprint from "@pulumi/blueprint";

const oncall = "arn:aws:sns:eu-west-1:123456789012:payments-oncall";

const payroll = new blueprint.FifoBillingQueue("payroll", {
    consumerTimeoutSeconds: 60,
    maxReceiveCount: 6,
    batchSize: 5,
    scheduleTimezone: "Europe/Paris",
    alarmActions: [oncall],
    logRetentionDays: 30,
});
new blueprint.IdempotentStreamConsumer("clicks", {
    streamMode: "PROVISIONED",
    shardCount: 2,
    retentionHours: 48,
    batchSize: 50,
    maximumRetryAttempts: 3,
    memoryMb: 512,
});
new blueprint.NonIdempotentStreamConsumer("payments", {
    functionTimeoutSeconds: 120,
    retentionHours: 72,
    alarmActions: [oncall],
});
const invoices = new blueprint.DistributedMapBatch("invoices", {
    maxConcurrency: 20,
    toleratedFailurePercentage: 5,
    maxItemsPerBatch: 10,
    itemReservedConcurrency: 25,
});

export const payrollQueueUrl = payroll.queueUrl;
export const invoicesStateMachineArn = invoices.stateMachineArn;
