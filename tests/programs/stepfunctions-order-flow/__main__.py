"""Validate -> Enrich. Enrich may run 60 s but its task gives up after 10 s (and retries it while it
still runs); neither function's log group is declared."""
import json

import iam
import pulumi
import pulumi_aws as aws


def function(name: str, timeout: int) -> aws.lambda_.Function:
    return aws.lambda_.Function(
        name,
        role=iam.lambda_role.arn,
        runtime="python3.12",
        handler=f"{name}.handler",
        timeout=timeout,
        code=pulumi.AssetArchive({".": pulumi.FileArchive("./step_functions")}),
    )


validate = function("validate", 5)
enrich = function("enrich", 60)

machine = aws.sfn.StateMachine(
    "order-flow",
    role_arn=iam.sfn_role.arn,
    definition=pulumi.Output.all(validate.arn, enrich.arn).apply(lambda arns: json.dumps({
        "Comment": "Validate an order, then enrich it",
        "StartAt": "Validate",
        "States": {
            "Validate": {"Type": "Task", "Resource": arns[0], "Next": "Enrich"},
            "Enrich": {
                "Type": "Task",
                "Resource": arns[1],
                "TimeoutSeconds": 10,
                "Retry": [{"ErrorEquals": ["States.Timeout"], "MaxAttempts": 2}],
                "End": True,
            },
        },
    })),
)

pulumi.export("state_machine_arn", machine.arn)
pulumi.export("console", pulumi.Output.format(
    "https://{0}.console.aws.amazon.com/states/home#/statemachines/view/{1}", aws.get_region().region, machine.arn))
