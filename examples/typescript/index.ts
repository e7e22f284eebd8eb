// A team's program: monthly billing from the blueprint's FifoBillingQueue, and a notifications queue
// of its own. `blueprint preview --program . --stack dev` checks it offline with the policy pack.
import * as pulumi from "@pulumi/pulumi";
import * as aws from "@pulumi/aws";
// The component package's SDK, an npm package: `blueprint sdk --language typescript --out sdks/blueprint`
// writes it (no Pulumi CLI needed) and package.json installs it from there (see README).
import * as blueprint from "@pulumi/blueprint";

const config = new pulumi.Config();
const oncall = config.require("oncallTopicArn");

const billing = new blueprint.FifoBillingQueue("payroll", {
    consumerTimeoutSeconds: 60,
    maxReceiveCount: 5,
    alarmActions: [oncall],
});

const notificationsDlq = new aws.sqs.Queue("notifications-dlq", { messageRetentionSeconds: 1209600 });
new aws.cloudwatch.MetricAlarm("notifications-dlq-depth", {
    namespace: "AWS/SQS",
    metricName: "ApproximateNumberOfMessagesVisible",
    dimensions: { QueueName: notificationsDlq.name },
    statistic: "Maximum",
    period: 60,
    evaluationPeriods: 1,
    threshold: 1,
    comparisonOperator: "GreaterThanOrEqualToThreshold",
    alarmActions: [oncall],
});
const notifications = new aws.sqs.Queue("notifications", {
    visibilityTimeoutSeconds: 180,
    redrivePolicy: pulumi.jsonStringify({ deadLetterTargetArn: notificationsDlq.arn, maxReceiveCount: 5 }),
});

export const billingQueueUrl = billing.queueUrl;
export const notificationsQueueUrl = notifications.url;
