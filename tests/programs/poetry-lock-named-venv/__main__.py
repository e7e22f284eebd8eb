"""Payout queues. The folder has a poetry.lock (the team once tried poetry) but Pulumi.yaml names
`virtualenv: venv`, which holds the team's naming package: the program runs there."""
import pulumi
import pulumi_aws as aws
from acme_naming import queue_name

failed = aws.sqs.Queue("failed", name=queue_name("failed"), message_retention_seconds=1209600,
                       sqs_managed_sse_enabled=True)
payouts = aws.sqs.Queue("payouts", name=queue_name("requests"), sqs_managed_sse_enabled=True,
                        redrive_policy=failed.arn.apply(
                            lambda arn: '{"deadLetterTargetArn": "%s", "maxReceiveCount": 5}' % arn))

pulumi.export("queue", payouts.url)
