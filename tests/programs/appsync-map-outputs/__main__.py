"""An AppSync API whose GraphQL endpoint a Lambda is configured with (`uris["GRAPHQL"]`), and a
legacy CloudFormation stack whose queue URL output feeds it (`outputs["QueueUrl"]`)."""
import json

import pulumi
import pulumi_aws as aws

api = aws.appsync.GraphQLApi("orders", authentication_type="AWS_IAM", schema="type Query { ping: String }")
legacy = aws.cloudformation.Stack("legacy-queue", template_body="""
Resources:
  Queue:
    Type: AWS::SQS::Queue
Outputs:
  QueueUrl:
    Value: !Ref Queue
  QueueArn:
    Value: !GetAtt Queue.Arn
""")

endpoint = api.uris["GRAPHQL"]
if not isinstance(endpoint, pulumi.Output):
    raise TypeError("uris is an Output")

role = aws.iam.Role("notifier", assume_role_policy=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}))
notifier = aws.lambda_.Function(
    "notifier",
    role=role.arn,
    runtime="python3.12",
    handler="index.handler",
    code=pulumi.AssetArchive({"index.py": pulumi.StringAsset("def handler(event, context):\n    return None\n")}),
    environment=aws.lambda_.FunctionEnvironmentArgs(variables={
        "GRAPHQL_URL": endpoint,
        "REALTIME_URL": api.uris.apply(lambda uris: uris["REALTIME"]),
        "QUEUE_URL": legacy.outputs.apply(lambda outputs: outputs["QueueUrl"]),
    }),
)
aws.cloudwatch.LogGroup("notifier-logs", name=notifier.name.apply(lambda name: f"/aws/lambda/{name}"),
                        retention_in_days=14)

pulumi.export("graphql", endpoint.apply(lambda url: url.rsplit("/", 1)[0]))
pulumi.export("queue_arn", legacy.outputs["QueueArn"])
