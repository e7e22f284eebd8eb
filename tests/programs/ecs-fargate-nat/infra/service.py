"""ECS cluster, task definition and service behind an application load balancer."""
import json

import pulumi
import pulumi_aws as aws

from infra import network

config = pulumi.Config()
port = config.get_int("containerPort")
desired = config.get_int("desiredCount")
image = config.require("image")

cluster = aws.ecs.Cluster("orders", settings=[{"name": "containerInsights", "value": "enabled"}])

alb_sg = aws.ec2.SecurityGroup(
    "orders-alb", vpc_id=network.vpc.id,
    ingress=[{"protocol": "tcp", "from_port": 80, "to_port": 80, "cidr_blocks": ["0.0.0.0/0"]}],
    egress=[{"protocol": "-1", "from_port": 0, "to_port": 0, "cidr_blocks": ["0.0.0.0/0"]}])
task_sg = aws.ec2.SecurityGroup(
    "orders-task", vpc_id=network.vpc.id,
    ingress=[{"protocol": "tcp", "from_port": port, "to_port": port, "security_groups": [alb_sg.id]}],
    egress=[{"protocol": "-1", "from_port": 0, "to_port": 0, "cidr_blocks": ["0.0.0.0/0"]}])

alb = aws.lb.LoadBalancer("orders", load_balancer_type="application", security_groups=[alb_sg.id],
                          subnets=network.public_subnet_ids)
target_group = aws.lb.TargetGroup("orders", port=port, protocol="HTTP", target_type="ip",
                                  vpc_id=network.vpc.id, health_check={"path": "/healthz"})
listener = aws.lb.Listener("orders-http", load_balancer_arn=alb.arn, port=80,
                           default_actions=[{"type": "forward", "target_group_arn": target_group.arn}])

execution_role = aws.iam.Role("orders-task-exec", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "ecs-tasks.amazonaws.com"},
                   "Action": "sts:AssumeRole"}]}))
aws.iam.RolePolicyAttachment(
    "orders-task-exec", role=execution_role.name,
    policy_arn="arn:aws:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy")

logs = aws.cloudwatch.LogGroup("orders-containers", retention_in_days=30)
region = aws.get_region()

task = aws.ecs.TaskDefinition(
    "orders",
    family="orders",
    cpu="256",
    memory="512",
    network_mode="awsvpc",
    requires_compatibilities=["FARGATE"],
    execution_role_arn=execution_role.arn,
    container_definitions=logs.name.apply(lambda group: json.dumps([{
        "name": "orders",
        "image": image,
        "essential": True,
        "portMappings": [{"containerPort": port, "protocol": "tcp"}],
        "logConfiguration": {"logDriver": "awslogs", "options": {
            "awslogs-group": group, "awslogs-region": region.region, "awslogs-stream-prefix": "orders"}},
    }])),
)

service = aws.ecs.Service(
    "orders",
    cluster=cluster.arn,
    task_definition=task.arn,
    desired_count=desired,
    launch_type="FARGATE",
    network_configuration={"subnets": network.private_subnet_ids, "security_groups": [task_sg.id],
                           "assign_public_ip": False},
    load_balancers=[{"target_group_arn": target_group.arn, "container_name": "orders", "container_port": port}],
    opts=pulumi.ResourceOptions(depends_on=[listener]),
)
