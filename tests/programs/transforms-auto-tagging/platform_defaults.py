import json

import pulumi
import pulumi_aws as aws


def fourteen_days(args: pulumi.ResourceTransformArgs):
    if args.type_ == "aws:sqs/queue:Queue":
        return pulumi.ResourceTransformResult(props={**args.props, "messageRetentionSeconds": 1209600},
                                              opts=args.opts)
    return None


class OrderQueues(pulumi.ComponentResource):
    def __init__(self, name: str, opts: pulumi.ResourceOptions = None):
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(transforms=[fourteen_days]))
        super().__init__("acme:orders:OrderQueues", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.dead_letters = aws.sqs.Queue(f"{name}-dlq", opts=child)
        self.queue = aws.sqs.Queue(
            f"{name}-queue",
            visibility_timeout_seconds=180,
            redrive_policy=self.dead_letters.arn.apply(
                lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 5})),
            opts=child)
        self.register_outputs({"queue": self.queue.arn})
