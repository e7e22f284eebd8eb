"""The policy pack's program: the Pulumi CLI (and `blueprint preview`) runs this file, which serves
the rules over gRPC and prints its port. The rules live in integration_blueprint.policies.rules,
installed with the package (requirements.txt names it)."""

import threading
from collections import OrderedDict

from google.protobuf import json_format
from pulumi_policy import EnforcementLevel, PolicyPack
from pulumi_policy import policy as pulumi_policy_sdk

from integration_blueprint import __version__
from integration_blueprint.policies.rules import POLICIES, _iam

_iam.load_catalogue()


class _ConversionsRemembered:
    """json_format as pulumi_policy.policy sees it (pulumi-policy 1.21.0): its Analyze converts a
    request's properties to a dict once per resource policy, and its AnalyzeStack every resource's
    once per stack policy (18 here), the same messages each time: a third of the pack's time. The
    dicts of the latest messages are remembered, with the messages (so an identity cannot match
    another message); the SDK only reads them (deserialize_properties builds new values)."""

    def __init__(self, size: int):
        self.size = size
        self._seen: OrderedDict = OrderedDict()  # id(message) -> (message, dict)
        self._lock = threading.Lock()  # the gRPC server answers on several threads

    def MessageToDict(self, message, **options):
        if options:
            return json_format.MessageToDict(message, **options)
        with self._lock:
            seen = self._seen.get(id(message))
            if seen is not None and seen[0] is message:
                self._seen.move_to_end(id(message))
                return seen[1]
        converted = json_format.MessageToDict(message)
        with self._lock:
            self._seen[id(message)] = (message, converted)
            while len(self._seen) > self.size:
                self._seen.popitem(last=False)
        return converted

    def __getattr__(self, name):
        return getattr(json_format, name)


# Enough for the largest stacks previewed (the benchmark's 4,000 resources) to be converted once.
REMEMBERED_CONVERSIONS = 10_000

pulumi_policy_sdk.json_format = _ConversionsRemembered(REMEMBERED_CONVERSIONS)


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
