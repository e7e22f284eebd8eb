"""The pipe's role: read the stream, send to the queue, nothing else."""
import json

import pulumi
import pulumi_aws as aws


def pipe_role(name: str, stream_arn: pulumi.Input[str], queue_arn: pulumi.Input[str]) -> aws.iam.Role:
    role = aws.iam.Role(name, assume_role_policy=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": "pipes.amazonaws.com"}, "Action": "sts:AssumeRole"}],
    }))
    aws.iam.RolePolicy(f"{name}-access", role=role.id, policy=pulumi.Output.json_dumps({
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Resource": stream_arn, "Action": [
                "dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"]},
            {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": queue_arn},
        ],
    }))
    return role
