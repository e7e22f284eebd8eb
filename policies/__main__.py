"""The policy pack's program: the Pulumi CLI (and `blueprint preview`) runs this file, which serves
the rules over gRPC and prints its port. The rules live in integration_blueprint.policies.rules,
installed with the package (requirements.txt names it)."""

import sys

from pulumi_policy import EnforcementLevel, PolicyPack

from integration_blueprint.core import patches
from integration_blueprint.core.conventions import DEEPEST_JUDGED_NESTING
from integration_blueprint.policies import sdk_patches
from integration_blueprint.policies.rules import POLICIES, _iam

_iam.load_catalogue()

# pulumi-policy reads every value recursively (json_format.MessageToDict, then deserialize_properties:
# five frames per level of nesting, measured), and Python's default limit of 1,000 frames stops it
# near 190 levels: a legal program's deep component outputs crashed the pack.
PACK_FRAMES_PER_LEVEL = 6
sys.setrecursionlimit(max(sys.getrecursionlimit(), DEEPEST_JUDGED_NESTING * PACK_FRAMES_PER_LEVEL + 2_000))

with patches.applied(sdk_patches.NAMES):  # checked against the installed pulumi-policy (sdk_patches.py)
    PolicyPack(
        name="integration-blueprint",
        enforcement_level=EnforcementLevel.MANDATORY,
        policies=POLICIES,
        description="The integration blueprint's rules for SQS, SNS, Lambda (mappings, asynchronous "
                    "invocation, logs), Kinesis, DynamoDB, Step Functions, EventBridge (Scheduler, rules, "
                    "Pipes) and IAM.",
    )
