"""Orders service on Fargate. Nothing here is a Lambda/SQS integration: the pack must stay quiet."""
import pulumi
from infra import network, service

pulumi.export("vpc_id", network.vpc.id)
pulumi.export("url", service.alb.dns_name.apply(lambda dns: f"http://{dns}"))
pulumi.export("private_subnet_ids", network.private_subnet_ids)
