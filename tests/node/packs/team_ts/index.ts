import { PolicyPack, ResourceValidationPolicy } from "@pulumi/policy";

// The retention AWS gives a queue that sets none (SQS CreateQueue, MessageRetentionPeriod).
const SQS_DEFAULT_RETENTION_SECONDS = 345600;

interface RetentionConfig {
    minimumSeconds: number;
}

const retention: ResourceValidationPolicy = {
    name: "queue-retention-at-least",
    description: "A queue keeps its messages at least `minimumSeconds` (set messageRetentionSeconds).",
    enforcementLevel: "mandatory",
    configSchema: {
        properties: {
            minimumSeconds: { type: "integer", minimum: 60, maximum: 1209600, default: 86400 },
        },
    },
    validateResource: (args, reportViolation) => {
        if (args.type !== "aws:sqs/queue:Queue") {
            return;
        }
        const { minimumSeconds } = args.getConfig<RetentionConfig>();
        const kept: number = args.props.messageRetentionSeconds ?? SQS_DEFAULT_RETENTION_SECONDS;
        if (kept < minimumSeconds) {
            reportViolation(`keeps messages ${kept} s, under the team's minimum of ${minimumSeconds} s`);
        }
    },
};

const owner: ResourceValidationPolicy = {
    name: "queue-tagged-with-owner",
    description: "A queue names its owning team in its `owner` tag, so the on-call knows whom to page.",
    enforcementLevel: "advisory",
    validateResource: (args, reportViolation) => {
        if (args.type === "aws:sqs/queue:Queue" && !(args.props.tags && args.props.tags.owner)) {
            reportViolation("has no `owner` tag");
        }
    },
};

new PolicyPack("team-queue-rules", {
    policies: [retention, owner],
});
