"""Roles for the functions and the state machine. The state machine's policy is the tutorial's:
lambda:InvokeFunction on every resource."""
import json

import pulumi_aws as aws

lambda_role = aws.iam.Role("order-flow-lambda-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Action": "sts:AssumeRole", "Principal": {"Service": "lambda.amazonaws.com"}, "Effect": "Allow"}],
}))
aws.iam.RolePolicyAttachment("order-flow-lambda-logs", role=lambda_role.name,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")

sfn_role = aws.iam.Role("order-flow-sfn-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "states.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
aws.iam.RolePolicy("order-flow-sfn-invoke", role=sfn_role.id, policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": ["lambda:InvokeFunction"], "Resource": "*"}],
}))
