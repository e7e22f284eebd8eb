"""The policy pack's program: the Pulumi CLI (and `blueprint preview`) runs this file, which serves
the rules over gRPC and prints its port. The rules live in integration_blueprint.policies.rules,
installed with the package (requirements.txt names it)."""

from pulumi_policy import EnforcementLevel, PolicyPack
from pulumi_policy import policy as pulumi_policy_sdk

from integration_blueprint import __version__
from integration_blueprint.policies.rules import POLICIES


class _PackVersionServicer(pulumi_policy_sdk._PolicyAnalyzerServicer):
    """pulumi-policy 1.21.0's PolicyPack gives its gRPC servicer the version "0.0.1" for every
    Python pack (it leaves the real one to the Pulumi CLI, which reads PulumiPolicy.yaml), so
    GetAnalyzerInfo, each diagnostic's policyPackVersion and the SDK's own messages ("... from
    policy pack 'integration-blueprint@v0.0.1' during preview") would name 0.0.1. This servicer is
    given the package's version instead, the one PulumiPolicy.yaml says."""

    def __init__(self, name, _sdk_version, *args, **kwargs):
        super().__init__(name, __version__, *args, **kwargs)


pulumi_policy_sdk._PolicyAnalyzerServicer = _PackVersionServicer  # type: ignore[misc,assignment]

PolicyPack(
    name="integration-blueprint",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=POLICIES,
    description="The integration blueprint's rules for SQS, SNS, Lambda (mappings, asynchronous "
                "invocation, logs), Kinesis, DynamoDB, Step Functions, EventBridge (Scheduler, rules, "
                "Pipes) and IAM.",
)
