"""The blueprint component used from Python, as its README shows, with settings from a structured
config object; next to it a refunds queue written by hand with a one-receive redrive (the classic
mistake: a single throttled receive parks the message)."""
import json

import pulumi
import pulumi_aws as aws

from integration_blueprint.components import FifoBillingQueue

config = pulumi.Config()
consumer = config.require_object("consumer")
alarm_topic = config.require("alarmTopicArn")

billing = FifoBillingQueue("payroll", {
    "consumer_timeout_seconds": consumer["timeoutSeconds"],
    "batch_size": consumer["batchSize"],
    "max_receive_count": consumer["maxReceiveCount"],
    "schedule_expression": "cron(0 3 1 * ? *)",
    "schedule_timezone": "Europe/Berlin",
    "alarm_actions": [alarm_topic],
})

refunds_dlq = aws.sqs.Queue("refunds-dlq", message_retention_seconds=1209600)
refunds = aws.sqs.Queue(
    "refunds",
    redrive_policy=refunds_dlq.arn.apply(
        lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1})),
)

pulumi.export("charges_queue", billing.queue_url)
pulumi.export("refunds_queue", refunds.url)
