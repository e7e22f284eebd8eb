import * as pulumi from "@pulumi/pulumi";
import * as aws from "@pulumi/aws";

// `npm run build` bundles src/handler.ts with esbuild into dist/index.js; CI runs it before the preview.
const role = new aws.iam.Role("thumbnailer-role", {
    assumeRolePolicy: aws.iam.assumeRolePolicyForPrincipal({ Service: "lambda.amazonaws.com" }),
});
new aws.iam.RolePolicyAttachment("thumbnailer-logs", {
    role: role.name,
    policyArn: aws.iam.ManagedPolicy.AWSLambdaBasicExecutionRole,
});

const thumbnailer = new aws.lambda.Function("thumbnailer", {
    role: role.arn,
    runtime: aws.lambda.Runtime.NodeJS20dX,
    handler: "index.handler",
    code: new pulumi.asset.AssetArchive({
        ".": new pulumi.asset.FileArchive("./dist"),
    }),
});

export const functionName = thumbnailer.name;
