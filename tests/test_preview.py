"""`blueprint preview`: a program's resources through the real policy pack, offline.

Most tests reuse the session's started policy pack (`policy_analyzer`); the CLI tests start their
own, as a user's run does.
"""

import json
from pathlib import Path

import pytest

from integration_blueprint.cli import main
from integration_blueprint.preview import policy_config
from integration_blueprint.preview.analyzer import PolicyAnalyzer
from integration_blueprint.preview.run import REPO_ROOT, render_text, run_preview, stack_policy_config

FIXTURES = Path(__file__).parent / "fixtures"
EVERY_VIOLATION = FIXTURES / "every_violation"
ALL_RULES = {
    "sqs-dlq-max-receive-count", "sqs-visibility-timeout-covers-function-timeout",
    "sqs-visibility-timeout-six-times-function-timeout", "sqs-dlq-retention-exceeds-source",
    "sqs-dlq-type-matches-source", "sqs-event-source-has-dlq", "lambda-sqs-esm-reports-batch-item-failures",
    "lambda-stream-esm-has-on-failure-destination", "lambda-stream-esm-bounded-retries",
    "kinesis-replay-window-within-retention", "dynamodb-idempotency-table-ttl", "sfn-distributed-map-bounded",
    "scheduler-target-has-retry-and-dlq", "dlq-has-depth-alarm", "sqs-queue-encrypted-at-rest",
    "kinesis-stream-encrypted-at-rest", "dynamodb-table-encrypted-with-kms", "iam-no-wildcard-actions",
    # second edition (issue 12)
    "lambda-async-invoke-has-on-failure-destination", "eventbridge-target-has-dlq-and-retry-policy",
    "sns-subscription-has-redrive-policy", "pipe-source-has-dlq-and-bounded-retries",
    "lambda-sqs-esm-concurrency-within-reserved", "queue-topic-policy-denies-insecure-transport",
    "queue-topic-policy-no-public-principal", "iam-no-write-actions-on-all-resources", "lambda-esm-role-can-use-source",
    "sfn-task-timeout-covers-lambda-timeout", "lambda-log-group-has-retention", "aws-resource-names-within-limits",
}


def test_the_pack_has_the_specified_rules_levels_and_threshold_settings(policy_analyzer):
    policies = {p.name: p for p in policy_analyzer.info.policies}
    assert set(policies) == ALL_RULES
    advisory = {name for name, p in policies.items() if p.enforcementLevel == 0}  # proto ADVISORY
    assert advisory == {"sqs-visibility-timeout-six-times-function-timeout", "dynamodb-table-encrypted-with-kms",
                        "queue-topic-policy-denies-insecure-transport"}
    settings = {name: set(p.configSchema.properties) for name, p in policies.items() if p.configSchema.properties}
    assert settings == {"sqs-dlq-max-receive-count": {"minimum"},
                        "sqs-visibility-timeout-six-times-function-timeout": {"multiplier"},
                        "dynamodb-idempotency-table-ttl": {"environmentKeyPattern"}}


def test_the_hand_written_program_trips_every_rule_exactly_once(policy_analyzer):
    result = run_preview(EVERY_VIOLATION, stack="test", analyzer=policy_analyzer)
    tripped = sorted(v.policy for v in result.violations)
    assert tripped == sorted(ALL_RULES)
    assert result.exit_code == 1


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_the_blueprint_stacks_pass_the_mandatory_rules(policy_analyzer, stack):
    result = run_preview(REPO_ROOT, stack=stack, analyzer=policy_analyzer)
    assert result.policy_config == REPO_ROOT / "stacks" / f"policy.{stack}.json"
    assert [v for v in result.violations if v.level == "mandatory"] == []
    assert result.exit_code == 0


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_the_blueprint_stacks_pass_in_a_first_preview_too(policy_analyzer, stack):
    result = run_preview(REPO_ROOT, stack=stack, unknowns=True, analyzer=policy_analyzer)
    assert [v for v in result.violations if v.level == "mandatory"] == []


def test_dev_policy_config_makes_a_missing_dlq_alarm_advisory_where_prod_makes_it_mandatory(policy_analyzer):
    levels = {}
    for stack in ("dev", "prod"):
        result = run_preview(EVERY_VIOLATION, stack="test", analyzer=policy_analyzer,
                             policy_config_path=REPO_ROOT / "stacks" / f"policy.{stack}.json")
        levels[stack] = {v.level for v in result.violations if v.policy == "dlq-has-depth-alarm"}
    assert levels == {"dev": {"advisory"}, "prod": {"mandatory"}}


def test_a_stack_without_its_own_policy_config_runs_with_the_pack_defaults(policy_analyzer):
    assert stack_policy_config(EVERY_VIOLATION, "test") is None
    result = run_preview(EVERY_VIOLATION, stack="test", analyzer=policy_analyzer)
    assert result.policy_config is None
    six_times = [v for v in result.violations if v.policy == "sqs-visibility-timeout-six-times-function-timeout"]
    assert [v.level for v in six_times] == ["advisory"]


def test_schema_defaults_are_applied_before_configure(policy_analyzer):
    resolved = policy_analyzer.configure({})
    assert resolved["sqs-dlq-max-receive-count"].properties == {"minimum": 4}
    assert resolved["sqs-visibility-timeout-six-times-function-timeout"].properties == {"multiplier": 6}
    assert resolved["sqs-visibility-timeout-covers-function-timeout"].enforcement_level == "mandatory"


@pytest.mark.parametrize("document, complaint", [
    ({"sqs-dlq-max-recieve-count": "advisory"}, "no policy named sqs-dlq-max-recieve-count"),
    ({"sqs-dlq-max-receive-count": {"minimum": 0}}, "sqs-dlq-max-receive-count.minimum: 0 is less than the minimum of 1"),
    ({"all": "strict"}, "enforcement level 'strict' is not one of"),
    ({"sqs-dlq-type-matches-source": {"strict": True}}, "takes no settings"),
])
def test_a_wrong_policy_config_is_refused_with_what_to_fix(policy_analyzer, document, complaint):
    with pytest.raises(policy_config.PolicyConfigError, match=complaint):
        policy_analyzer.configure(document)


def test_text_output_shows_the_resource_tree_and_violations_by_level(policy_analyzer):
    text = render_text(run_preview(EVERY_VIOLATION, stack="test", analyzer=policy_analyzer))
    assert "    + aws:sqs/queue:Queue  orders\n" in text
    mandatory, advisory = text.index("Mandatory policy violations (27):"), text.index("Advisory policy violations (3):")
    assert mandatory < advisory
    assert "  [sqs-event-source-has-dlq] orders (aws:sqs/queue:Queue)" in text[mandatory:advisory]
    assert "Give the queue a redrivePolicy" in text
    assert text.rstrip().endswith("27 mandatory and 3 advisory violations: the stack may not be deployed.")


# ---- the command line ------------------------------------------------------------------

def test_cli_json_output_and_exit_1_on_mandatory_violations(capsys):
    code = main(["preview", "--program", str(EVERY_VIOLATION), "--stack", "ci", "--json"])
    output = json.loads(capsys.readouterr().out)
    assert code == 1
    assert set(output) == {"stack", "program", "resources", "violations", "summary"}
    assert output["stack"] == "ci" and output["program"] == str(EVERY_VIOLATION)
    queue = next(r for r in output["resources"] if r["name"] == "orders")
    assert set(queue) == {"urn", "type", "name", "parent", "inputs"} and queue["type"] == "aws:sqs/queue:Queue"
    assert {v["policy"] for v in output["violations"]} == ALL_RULES
    assert all(set(v) == {"policy", "level", "urn", "message"} and v["level"] in ("advisory", "mandatory")
               for v in output["violations"])
    assert output["summary"]["mandatory"] == 27 and output["summary"]["advisory"] == 3


def test_cli_exit_0_for_a_clean_stack_with_unknowns(capsys):
    code = main(["preview", "--stack", "prod", "--unknowns", "--json"])
    output = json.loads(capsys.readouterr().out)
    assert code == 0 and output["summary"]["mandatory"] == 0


@pytest.mark.parametrize("args, complaint", [
    (["--program", str(FIXTURES / "broken_program")], "KeyError: 'visibilty' (at "),
    (["--program", str(FIXTURES)], "has no Pulumi.yaml"),
    (["--policy-config", str(FIXTURES / "missing.json")], "does not exist"),
    (["--policy-pack", str(FIXTURES)], "is not a policy pack"),
])
def test_cli_exit_2_with_a_clean_error(capsys, args, complaint):
    code = main(["preview", *args])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and complaint in err and "Traceback" not in err


def test_a_pack_that_cannot_start_is_reported_with_its_stderr(tmp_path):
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (tmp_path / "__main__.py").write_text("raise SystemExit('the pack is broken')\n")
    with pytest.raises(Exception, match="did not start(.|\n)*the pack is broken"):
        PolicyAnalyzer(tmp_path)
