"""The awsx "Fargate service behind a load balancer" shape. Every component here is remote: none of
their resources are checked offline, and the report must say so. The session secret is read as a
secret and handed to the container."""
import pulumi
import pulumi_aws as aws
import pulumi_awsx as awsx

config = pulumi.Config()
cpu = config.get_int("cpu")
memory = config.get_int("memory")
session_secret = config.require_secret("sessionSecret")

repository = awsx.ecr.Repository("storefront", awsx.ecr.RepositoryArgs(force_delete=True))
image = awsx.ecr.Image("storefront", awsx.ecr.ImageArgs(
    repository_url=repository.url, context="./app", platform="linux/amd64"))

cluster = aws.ecs.Cluster("storefront")
lb = awsx.lb.ApplicationLoadBalancer("storefront")

service = awsx.ecs.FargateService("storefront", awsx.ecs.FargateServiceArgs(
    cluster=cluster.arn,
    assign_public_ip=True,
    task_definition_args={
        "container": {
            "name": "web",
            "image": image.image_uri,
            "cpu": cpu,
            "memory": memory,
            "essential": True,
            "environment": [{"name": "SESSION_SECRET", "value": session_secret}],
            "portMappings": [{"containerPort": 80, "targetGroup": lb.default_target_group}],
        },
    },
))

pulumi.export("url", pulumi.Output.concat("http://", lb.load_balancer.dns_name))
