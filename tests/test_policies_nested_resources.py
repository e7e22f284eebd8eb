"""Nothing created unseen: resources a program creates through a CloudFormation template or a Cloud
Control desired state are judged by the same rules as those it declares (through the real pack), and
what the pack cannot read is a check that could not run, never a silent pass."""

import json

import pulumi_aws as aws
from policy_env import analyse, flagged, skipped

ADMIN = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}

YAML_TEMPLATE = """\
AWSTemplateFormatVersion: '2010-09-09'
Parameters:
  Receives:
    Type: Number
    Default: 1
Resources:
  Dlq:
    Type: AWS::SQS::Queue
    Properties:
      MessageRetentionPeriod: 1209600
  Orders:
    Type: AWS::SQS::Queue
    Properties:
      RedrivePolicy:
        deadLetterTargetArn: !GetAtt Dlq.Arn
        maxReceiveCount: !Ref Receives
  Admin:
    Type: AWS::IAM::ManagedPolicy
    Properties:
      PolicyDocument:
        Version: '2012-10-17'
        Statement:
          - Effect: Allow
            Action: '*'
            Resource: '*'
"""


def test_a_templates_admin_policy_and_its_queues_are_judged_with_their_template_line(policy_analyzer):
    def program():
        aws.cloudformation.Stack("legacy", template_body=YAML_TEMPLATE)

    violations = analyse(policy_analyzer, program)
    wildcard = flagged(violations, "iam-no-wildcard-actions")
    assert len(wildcard) == 1 and "Resources.Admin (line 17 of its template) (AWS::IAM::ManagedPolicy)" in \
        wildcard[0].message and wildcard[0].urn.endswith("::legacy")
    receives = flagged(violations, "sqs-dlq-max-receive-count")
    assert len(receives) == 1 and "Resources.Orders" in receives[0].message and "maxReceiveCount is 1" in \
        receives[0].message


def test_the_stacks_parameters_are_the_values_a_rule_reads(policy_analyzer):
    def program():
        aws.cloudformation.Stack("legacy", template_body=YAML_TEMPLATE, parameters={"Receives": "5"})

    assert not flagged(analyse(policy_analyzer, program), "sqs-dlq-max-receive-count")


def test_a_cloud_control_resource_is_judged_as_the_type_it_names(policy_analyzer):
    def program():
        aws.cloudcontrol.Resource("admin", type_name="AWS::IAM::Role", desired_state=json.dumps({
            "AssumeRolePolicyDocument": {"Version": "2012-10-17", "Statement": [
                {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]},
            "Policies": [{"PolicyName": "all", "PolicyDocument": ADMIN}]}))
        aws.cloudcontrol.Resource("bucket", type_name="AWS::EC2::VPC", desired_state=json.dumps({"CidrBlock": "10.0.0.0/16"}))

    violations = analyse(policy_analyzer, program)
    wildcard = flagged(violations, "iam-no-wildcard-actions")
    assert len(wildcard) == 1 and "\nits desired state (AWS::IAM::Role): inlinePolicies[0].policy" in wildcard[0].message
    assert not skipped(violations, "nested-resources-judged")  # a VPC: no rule judges it, nothing went unread


def test_what_the_pack_cannot_read_is_a_check_that_did_not_run(policy_analyzer):
    def program():
        aws.cloudformation.Stack("by-url", template_url="https://example-bucket.s3.amazonaws.com/app.yaml")
        aws.cloudformation.Stack("sam", template_body=json.dumps({
            "Transform": "AWS::Serverless-2016-10-31",
            "Resources": {"Fn": {"Type": "AWS::Serverless::Function", "Properties": {"Handler": "a.b"}}}}))
        aws.cloudformation.Stack("broken", template_body="Resources: [unclosed")
        aws.cloudformation.Stack("plain", template_body=json.dumps({
            "Resources": {"Dlq": {"Type": "AWS::SQS::Queue", "Properties": {"SqsManagedSseEnabled": True}}}}))

    notes = {v.urn.rsplit("::", 1)[-1]: v.message for v in skipped(analyse(policy_analyzer, program),
                                                                   "nested-resources-judged")}
    assert set(notes) == {"by-url", "sam", "broken"}
    assert "given by URL" in notes["by-url"] and "transform" in notes["sam"] and "JSON or YAML" in notes["broken"]

