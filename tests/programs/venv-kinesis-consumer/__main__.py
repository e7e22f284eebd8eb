"""A Kinesis consumer whose mapping sends failed batches to a queue, but the role (AWS's Kinesis
execution policy only) may not send to it, so AWS would refuse the mapping; and nobody is alarmed
when that queue fills."""
import acme_naming
import pulumi
import pulumi_aws as aws

config = pulumi.Config()
team = config.require("team")
stack = pulumi.get_stack()
tags = acme_naming.tags(team, stack)

clicks = aws.kinesis.Stream("clicks", name=acme_naming.resource_name(team, "clicks", stack), shard_count=2,
                            encryption_type="KMS", kms_key_id="alias/aws/kinesis", tags=tags)
failed_batches = aws.sqs.Queue("clicks-failed-batches", message_retention_seconds=1209600, tags=tags)

role = aws.iam.Role(
    "enricher",
    name=acme_naming.resource_name(team, "clicks-enricher", stack),
    assume_role_policy=aws.iam.get_policy_document(statements=[{
        "actions": ["sts:AssumeRole"],
        "principals": [{"type": "Service", "identifiers": ["lambda.amazonaws.com"]}],
    }]).json,
    managed_policy_arns=["arn:aws:iam::aws:policy/service-role/AWSLambdaKinesisExecutionRole"],
    tags=tags,
)
function_name = acme_naming.resource_name(team, "clicks-enricher", stack)
enricher = aws.lambda_.Function("enricher", name=function_name, role=role.arn, runtime="python3.12",
                                handler="enrich.handler", code=pulumi.FileArchive("./consumer"), tags=tags)
aws.cloudwatch.LogGroup("enricher", name=f"/aws/lambda/{function_name}", retention_in_days=30, tags=tags)

aws.lambda_.EventSourceMapping(
    "clicks-to-enricher",
    event_source_arn=clicks.arn,
    function_name=enricher.name,
    starting_position="LATEST",
    maximum_retry_attempts=2,
    bisect_batch_on_function_error=True,
    destination_config={"on_failure": {"destination_arn": failed_batches.arn}},
)

pulumi.export("stream", clicks.name)
