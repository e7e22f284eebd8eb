"""Each approval step hands over to the next: the component keeps the chain as the nested object its
UI renders (step -> next -> next ...) and exports it. A long chain nests hundreds of levels deep."""
import json

import pulumi
import pulumi_aws as aws


class ApprovalChain(pulumi.ComponentResource):
    chain: pulumi.Output[dict]
    queue_url: pulumi.Output[str]

    def __init__(self, name: str, steps: int, opts: pulumi.ResourceOptions | None = None):
        super().__init__("acme:workflows:ApprovalChain", name, None, opts)
        chain: dict = {"step": steps, "approver": "finance", "next": None}
        for step in range(steps - 1, 0, -1):
            chain = {"step": step, "approver": "team-lead" if step % 2 else "manager", "next": chain}
        dlq = aws.sqs.Queue(f"{name}-dlq", message_retention_seconds=1209600, sqs_managed_sse_enabled=True,
                            opts=pulumi.ResourceOptions(parent=self))
        queue = aws.sqs.Queue(
            f"{name}-requests",
            sqs_managed_sse_enabled=True,
            redrive_policy=dlq.arn.apply(lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 2})),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.chain = pulumi.Output.from_input(chain)
        self.queue_url = queue.url
        self.register_outputs({"chain": chain, "queue_url": queue.url})


approvals = ApprovalChain("purchase-approvals", pulumi.Config().require_int("steps"))
pulumi.export("queue_url", approvals.queue_url)
pulumi.export("chain", approvals.chain)
