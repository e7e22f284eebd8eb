import json

import pulumi_aws as aws

lambda_role = aws.iam.Role("greetings-lambda-role", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Action": "sts:AssumeRole", "Principal": {"Service": "lambda.amazonaws.com"}, "Effect": "Allow"}],
}))
aws.iam.RolePolicyAttachment("greetings-lambda-logs", role=lambda_role,
                             policy_arn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")
