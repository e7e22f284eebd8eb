"""What the components generate passes the field's own validators, across dev, staging and prod and
the setting combinations the other tests use:

- every Step Functions definition the DistributedMapBatch can produce through asl-validator (npm,
  the Amazon States Language validator the AWS community uses; `make validators` installs the
  pinned version, `make test` does it first);
- every IAM policy the components create (role policies, trust policies, queue and bucket
  policies) through parliament (Duo Labs' IAM linter), with no finding but the false alarms
  explained in FALSE_ALARMS.
"""

import json
import re
import subprocess

import parliament
import pytest

from integration_blueprint.components import DistributedMapBatch
from integration_blueprint.components.distributed_map_definition import MapSettings, RetrySettings, build_definition
from integration_blueprint.preview.recording import RecordedStack, record_program
from tests.conftest import REGION_CONFIG, REPO

ASL_VALIDATOR = REPO / "tools" / "validators" / "node_modules" / ".bin" / "asl-validator"
STACKS = ["dev", "staging", "prod"]
POLICY_INPUTS = ("policy", "assumeRolePolicy")

FUNCTION_ARN = "arn:aws:lambda:eu-west-1:123456789012:function:invoices-enricher"
OPS_QUEUE_URL = "https://sqs.eu-west-1.amazonaws.com/123456789012/invoices-ops"
# The MapSettings the definition tests use, each on its own (tests/test_distributed_map.py).
MAP_SETTINGS = {
    "defaults": MapSettings(max_concurrency=5),
    "csv headers given": MapSettings(max_concurrency=5, csv_headers=["invoice_id", "customer_id", "amount"]),
    "item batcher": MapSettings(max_concurrency=5, max_items_per_batch=50),
    "tolerated count only": MapSettings(max_concurrency=5, tolerated_failure_percentage=None, tolerated_failure_count=3),
    "count and percentage": MapSettings(max_concurrency=5, tolerated_failure_percentage=25, tolerated_failure_count=3),
    "fractional percentage": MapSettings(max_concurrency=5, tolerated_failure_percentage=2.5),
    "custom retries": MapSettings(max_concurrency=100, retry=RetrySettings(interval_seconds=5, backoff_rate=1.5,
                                                                           max_attempts=6, max_delay_seconds=60)),
}

# asl-validator 4.0.0's schema wants ToleratedFailurePercentage to be an integer; AWS types it as a
# float (the Step Functions API's DescribeMapRun/UpdateMapRun toleratedFailurePercentage: Float),
# and the component allows a decimal percentage. Its schema then also rejects the JSONPath variant
# of the Map state as a whole, which reports as the QueryLanguage error (we set no QueryLanguage).
ASL_FALSE_ALARMS = {
    "SCHEMA_VALIDATION_FAILED: /States/ProcessInvoices/ToleratedFailurePercentage is invalid. must be integer",
    "SCHEMA_VALIDATION_FAILED: /States/ProcessInvoices/QueryLanguage is invalid. must be equal to one of the "
    "allowed values",
}

# parliament reads every document as an identity policy; these findings are not faults of ours.
FALSE_ALARMS = {
    # A role's trust policy names a Principal and, by design, no Resource (the role itself is the resource).
    ("assumeRolePolicy", "MALFORMED", "Statement contains neither Resource nor NotResource"),
    # states:DescribeExecution/StopExecution take a standard execution ARN *or* an express one (AWS's
    # Service Authorization Reference marks both required as alternatives); parliament demands the
    # express format as well. The resource, arn:aws:states:...:execution:<machine>:*, is the standard one.
    ("policy", "RESOURCE_MISMATCH", "states:DescribeExecution"),
    # The offline recording invents an enhanced fan-out consumer's ARN without the stream's name
    # (stream/consumer/<name>:1); AWS's, which the role names in a deployment, is
    # stream/<stream>/consumer/<name>:<timestamp> and matches parliament's format.
    ("policy", "RESOURCE_MISMATCH", "kinesis:DescribeStreamConsumer"),
}


@pytest.fixture(scope="module")
def stacks(recordings) -> dict[str, RecordedStack]:
    return {stack: recordings(REPO, stack) for stack in STACKS}


def definitions(stacks) -> dict[str, str]:
    """Every definition: each stack's state machine, a component without results, and the builder's combinations."""
    found = {f"{stack} stack": sm.inputs["definition"] for stack in STACKS
             for sm in stacks[stack].of_type("aws:sfn/stateMachine:StateMachine")}
    no_results = record_program(lambda: DistributedMapBatch("invoices", {"max_concurrency": 5, "write_results": False}),
                                config=REGION_CONFIG)
    found["component without results"] = no_results.of_type("aws:sfn/stateMachine:StateMachine")[0].inputs["definition"]
    for name, settings in MAP_SETTINGS.items():
        for results in (None, "results/"):
            definition = build_definition(function_arn=FUNCTION_ARN, input_bucket="invoices-input",
                                          ops_queue_url=OPS_QUEUE_URL, settings=settings, result_prefix=results)
            found[f"builder, {name}, results {results}"] = json.dumps(definition)
    return found


def asl_validate(tmp_path, documents: dict[str, str]) -> dict[str, list[str]]:
    """asl-validator's errors for each document, by name (no errors: valid)."""
    if not ASL_VALIDATOR.exists():
        pytest.fail(f"{ASL_VALIDATOR.relative_to(REPO)} is missing: run `make validators` (make test runs it first)")
    paths, names = [], {}
    for index, (name, text) in enumerate(documents.items()):
        path = tmp_path / f"definition-{index}.json"
        path.write_text(text)
        paths += ["--json-path", str(path)]
        names[str(path)] = name
    checked = subprocess.run([str(ASL_VALIDATOR), *paths], capture_output=True, text=True, timeout=120)
    errors: dict[str, list[str]] = {}
    current = None
    for line in (checked.stdout + checked.stderr).splitlines():
        verdict = re.search(r'State machine definition "(.+)" is (valid|invalid)', line)
        if verdict:
            current = names[verdict.group(1)]
            errors[current] = []
        elif line.strip() and current is not None:
            errors[current].append(line.strip())
    assert set(errors) == set(documents), checked.stdout + checked.stderr
    assert (checked.returncode == 0) == (not any(errors.values()))
    return errors


@pytest.mark.slow
def test_every_distributed_map_definition_is_valid_amazon_states_language(tmp_path, stacks):
    documents = definitions(stacks)
    assert len(documents) >= 3 + 1 + 2 * len(MAP_SETTINGS)
    errors = asl_validate(tmp_path, documents)
    unexplained = {name: [e for e in found if e not in ASL_FALSE_ALARMS] for name, found in errors.items()}
    assert {name: found for name, found in unexplained.items() if found} == {}
    flagged = {name for name, found in errors.items() if found}
    assert flagged == {name for name in documents if "fractional percentage" in name}


@pytest.mark.slow
def test_the_validator_refuses_a_broken_definition(tmp_path, stacks):
    definition = json.loads(next(iter(definitions(stacks).values())))
    definition["States"]["RunFailed"]["Type"] = "Fale"
    errors = asl_validate(tmp_path, {"broken": json.dumps(definition)})
    assert any("/States/RunFailed/Type is invalid" in error for error in errors["broken"])


def policies(stacks) -> list[tuple[str, str, str]]:
    """(where, input, document) for every policy document the blueprint's components create in each stack."""
    return [(f"{stack}: {resource.name}", key, resource.inputs[key]) for stack in STACKS
            for resource in stacks[stack].resources for key in POLICY_INPUTS
            if isinstance(resource.inputs.get(key), str) and '"Statement"' in resource.inputs[key]]


def findings(key: str, document: str) -> list[tuple[str, str, str]]:
    """parliament's findings on `document` that are not explained false alarms: (input, issue, detail)."""
    found = []
    for finding in parliament.analyze_policy_string(document).findings:
        detail = json.dumps(finding.detail) if not isinstance(finding.detail, str) else finding.detail
        if not any(key == k and finding.issue == issue and words in detail for k, issue, words in FALSE_ALARMS):
            found.append((key, finding.issue, detail))
    return found


def test_every_iam_policy_the_components_create_passes_parliament(stacks):
    documents = policies(stacks)
    kinds = {key for _, key, _ in documents}
    assert kinds == set(POLICY_INPUTS) and len(documents) >= 3 * 20
    flagged = {where: found for where, key, document in documents if (found := findings(key, document))}
    assert flagged == {}


def test_parliament_flags_a_wildcard_and_an_unknown_action():
    document = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": ["sqs:SendMesage", "s3:*"], "Resource": ["*"]}]})
    assert {issue for _, issue, _ in findings("policy", document)} >= {"UNKNOWN_ACTION"}
