"""The policy pack's program: the Pulumi CLI (and `blueprint preview`) runs this file, which serves
the rules over gRPC and prints its port. The rules live in policies/rules/."""

import sys
from pathlib import Path

# The CLI runs this file by path; the rules import as `policies.rules` from the repo root.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

from policies.rules import POLICIES  # noqa: E402

PolicyPack(
    name="integration-blueprint",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=POLICIES,
    description="The integration blueprint's rules for SQS, Lambda mappings, Kinesis, DynamoDB, "
                "Step Functions, Scheduler and IAM.",
)
