"""What running a team's function in an execution environment of its own costs per invocation
(sandbox/execution_environment.py), against the same handler called in the drill's process.

The handler makes one DynamoDB PutItem per invocation (a team's typical write). Prints
`isolation_cost invocations=N inprocess_ms=A isolated_ms=B overhead_ms=B-A cold_start_ms=C` where
the first two are the median, over 5 interleaved rounds of N, of the mean wall time per warm
invocation (the call answered by the emulator both ways), and cold_start_ms the first invocation
of a fresh environment (its process started, the SDK and the handler imported); then
`isolation_start starts=S contained_ms=X uncontained_ms=Y sandbox_ms=X-Y`: the median of S
interleaved cold starts (start, init, one invocation, end) inside the sandbox
(integration_blueprint.containment, bubblewrap) and as a plain process (--no-isolation).
"""

import importlib.util
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from integration_blueprint.sandbox.emulator import running_emulator
from integration_blueprint.sandbox.execution_environment import (
    POWERTOOLS_PACKAGES,
    RUNTIME_PACKAGES,
    Environments,
    FunctionCalls,
    FunctionSpec,
    lay_out,
)
from integration_blueprint.sandbox.interception import FunctionRun, Journal, install_request_hooks

INVOCATIONS = int(sys.argv[1]) if len(sys.argv) > 1 else 100  # per round
ROUNDS = 5
STARTS = int(sys.argv[2]) if len(sys.argv) > 2 else 10  # cold starts per way

HANDLER = '''
import boto3

ddb = boto3.client("dynamodb")


def handler(event, context):
    ddb.put_item(TableName="ledger", Item={"pk": {"S": event["id"]}})
    return event["id"]
'''


def main() -> None:
    staging = Path(tempfile.mkdtemp(prefix="blueprint-sandbox-bench-"))
    try:
        (staging / "code").mkdir()
        (staging / "code" / "bench_app.py").write_text(HANDLER)
        with running_emulator("eu-west-1") as emulator:
            emulator.client("dynamodb").create_table(
                TableName="ledger", BillingMode="PAY_PER_REQUEST", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
            install_request_hooks(None, emulator.on_stop)
            journal = Journal()
            spec = importlib.util.spec_from_file_location("bench_app", staging / "code" / "bench_app.py")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            def make_environments(contained: bool = True) -> Environments:
                return Environments(
                    FunctionSpec(name="bench", arn="arn:aws:lambda:eu-west-1:123456789012:function:bench",
                                 handler="bench_app.handler", code_root=staging / "code", archive="bench",
                                 layers=[lay_out(staging / "powertools", POWERTOOLS_PACKAGES)], environment={},
                                 timeout=30, memory_mb=256, staging=staging, time_scale=0.002, contained=contained),
                    "eu-west-1", lay_out(staging / "runtime", RUNTIME_PACKAGES), answer=FunctionCalls("eu-west-1").answer,
                    on_incident=print)

            environments = make_environments()
            started = time.perf_counter()
            with FunctionRun("bench", {"id": "cold"}, journal):
                environments.invoke({"id": "cold"}, None)
            cold = time.perf_counter() - started
            # Interleaved rounds, so a busy moment of a shared machine falls on both ways alike.
            rounds: dict = {"inprocess": [], "isolated": []}
            for round_ in range(ROUNDS):
                rounds["inprocess"].append(measure(lambda event: module.handler(event, None), journal, f"in{round_}"))
                rounds["isolated"].append(measure(lambda event: environments.invoke(event, None), journal, f"iso{round_}"))
            environments.close()
            inprocess, isolated = statistics.median(rounds["inprocess"]), statistics.median(rounds["isolated"])
            contained, uncontained = cold_starts(make_environments, journal)
        print(f"isolation_cost invocations={INVOCATIONS} inprocess_ms={inprocess * 1000:.2f} "
              f"isolated_ms={isolated * 1000:.2f} overhead_ms={(isolated - inprocess) * 1000:.2f} "
              f"cold_start_ms={cold * 1000:.0f}")
        print(f"isolation_start starts={STARTS} contained_ms={contained * 1000:.0f} uncontained_ms={uncontained * 1000:.0f} "
              f"sandbox_ms={(contained - uncontained) * 1000:.0f}")
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def measure(invoke, journal: Journal, label: str) -> float:
    """Mean wall seconds per invocation, each a journaled FunctionRun as the sandbox runs it."""
    started = time.perf_counter()
    for i in range(INVOCATIONS):
        event = {"id": f"{label}-{i}"}
        with FunctionRun("bench", event, journal):
            invoke(event)
    return (time.perf_counter() - started) / INVOCATIONS


def cold_starts(make_environments, journal: Journal) -> tuple[float, float]:
    """Median seconds of a cold start contained and uncontained, interleaved STARTS times."""
    times: dict = {True: [], False: []}
    for start in range(STARTS):
        for contained in (True, False):
            environments = make_environments(contained)
            event = {"id": f"cold-{contained}-{start}"}
            started = time.perf_counter()
            with FunctionRun("bench", event, journal):
                environments.invoke(event, None)
            environments.close()
            times[contained].append(time.perf_counter() - started)
    return statistics.median(times[True]), statistics.median(times[False])


if __name__ == "__main__":
    main()
