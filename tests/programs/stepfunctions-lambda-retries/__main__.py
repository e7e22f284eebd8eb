"""A claims workflow: validate the claim, then in parallel score it (by the function's ARN, the older
task form) and notify the customer, then archive each attachment in an inline Map. Validate retries
the transient Lambda errors as AWS's best practice shows, plus throttles; the scoring step copies that
snippet without Lambda.TooManyRequestsException; the archive step inside the Map has no Retry."""
import json

import pulumi
import pulumi_aws as aws

lambda_role = aws.iam.Role("claims-lambda-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicyAttachment("claims-lambda-basic", role=lambda_role.name,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")

functions = {}
for step in ("validate", "score", "notify", "archive"):
    functions[step] = aws.lambda_.Function(
        step,
        role=lambda_role.arn,
        runtime="python3.12",
        handler=f"{step}.handler",
        timeout=30,
        code=pulumi.FileArchive("./lambdas"),
        logging_config={"log_format": "JSON", "log_group": f"/claims/{step}"},
    )
    aws.cloudwatch.LogGroup(f"{step}-logs", name=f"/claims/{step}", retention_in_days=30)

TRANSIENT = ["Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException"]

sfn_role = aws.iam.Role("claims-sfn-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "states.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicy("claims-sfn-invoke", role=sfn_role.id, policy=pulumi.Output.json_dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "lambda:InvokeFunction",
                   "Resource": [fn.arn for fn in functions.values()]}],
}))

definition = pulumi.Output.json_dumps({
    "Comment": "Claims workflow",
    "StartAt": "Validate",
    "States": {
        "Validate": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": functions["validate"].arn, "Payload.$": "$"},
            "OutputPath": "$.Payload",
            "TimeoutSeconds": 60,
            "Retry": [{"ErrorEquals": [*TRANSIENT, "Lambda.TooManyRequestsException"],
                       "IntervalSeconds": 2, "MaxAttempts": 6, "BackoffRate": 2}],
            "Next": "ScoreAndNotify",
        },
        "ScoreAndNotify": {
            "Type": "Parallel",
            "Next": "ArchiveAttachments",
            "Branches": [
                {"StartAt": "Score", "States": {"Score": {
                    "Type": "Task",
                    "Resource": functions["score"].arn,
                    "TimeoutSeconds": 60,
                    "Retry": [{"ErrorEquals": TRANSIENT, "IntervalSeconds": 2, "MaxAttempts": 6, "BackoffRate": 2}],
                    "End": True}}},
                {"StartAt": "Notify", "States": {"Notify": {
                    "Type": "Task",
                    "Resource": "arn:aws:states:::lambda:invoke",
                    "Parameters": {"FunctionName": functions["notify"].arn, "Payload.$": "$"},
                    "TimeoutSeconds": 60,
                    "Retry": [{"ErrorEquals": ["States.TaskFailed"], "MaxAttempts": 3}],
                    "End": True}}},
            ],
        },
        "ArchiveAttachments": {
            "Type": "Map",
            "ItemsPath": "$[0].attachments",
            "MaxConcurrency": 5,
            "ItemProcessor": {
                "ProcessorConfig": {"Mode": "INLINE"},
                "StartAt": "Archive",
                "States": {"Archive": {
                    "Type": "Task",
                    "Resource": "arn:aws:states:::lambda:invoke",
                    "Parameters": {"FunctionName": functions["archive"].arn, "Payload.$": "$"},
                    "TimeoutSeconds": 60,
                    "End": True}},
            },
            "End": True,
        },
    },
})

machine = aws.sfn.StateMachine("claims", role_arn=sfn_role.arn, definition=definition)
pulumi.export("state_machine_arn", machine.arn)
