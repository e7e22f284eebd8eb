"""Platform defaults applied by transforms, as teams auto-tag: a stack transform tags every taggable
AWS resource and turns on SQS-managed encryption; a component's own transform bounds its queues'
retention. The template's `${PROJECT}` name was never replaced (copied from a starter)."""
import pulumi
import pulumi_aws as aws
from platform_defaults import OrderQueues

DEFAULT_TAGS = {"team": "orders", "cost-center": "cc-4410"}
UNTAGGABLE = {"aws:iam/rolePolicyAttachment:RolePolicyAttachment", "aws:lambda/permission:Permission"}


def platform_defaults(args: pulumi.ResourceTransformArgs):
    if not args.type_.startswith("aws:") or args.type_ in UNTAGGABLE:
        return None
    props = {**args.props, "tags": {**DEFAULT_TAGS, **(args.props.get("tags") or {})}}
    if args.type_ == "aws:sqs/queue:Queue":
        props.setdefault("sqsManagedSseEnabled", True)
    return pulumi.ResourceTransformResult(props=props, opts=args.opts)


pulumi.runtime.register_resource_transform(platform_defaults)

queues = OrderQueues("orders")
audit = aws.sns.Topic("order-events")
aws.sns.TopicSubscription("order-events-to-queue", topic=audit.arn, protocol="sqs", endpoint=queues.queue.arn)

pulumi.export("queue_tags", queues.queue.tags)
