"""`blueprint preview`: a program's resources through the real policy pack, offline.

Most tests reuse the session's started policy pack (`policy_analyzer`); the CLI tests start their
own, as a user's run does.
"""

import importlib.util
import json
import re
from pathlib import Path

import jsonschema
import pytest

from integration_blueprint import __version__
from integration_blueprint.cli import main
from integration_blueprint.preview import policy_config
from integration_blueprint.preview.analyzer import PolicyAnalyzer
from integration_blueprint.preview.pulumi_protos import analyzer_pb2
from integration_blueprint.preview.reports.markdown import render_markdown
from integration_blueprint.preview.reports.sarif import to_sarif
from integration_blueprint.preview.reports.text import render_text
from integration_blueprint.preview.run import REPO_ROOT, run_preview, stack_policy_config

# The commands below print and exit from the shared recording of their program (conftest).
pytestmark = pytest.mark.usefixtures("cli_reuses_recordings")

FIXTURES = Path(__file__).parent / "fixtures"
EVERY_VIOLATION = FIXTURES / "every_violation"
METADATA_PACK = FIXTURES / "metadata_pack"  # one rule with remediation, url, severity and tags; one without
SARIF_SCHEMA = FIXTURES / "schemas" / "sarif-schema-2.1.0.json"
FINDING_FIELDS = {"policy", "level", "urn", "type", "name", "message", "remediation", "url", "severity", "tags",
                  "policyPack", "policyPackVersion", "file", "line"}
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
    "queue-topic-policy-no-public-principal", "iam-role-trust-policy-no-public-principal",
    "iam-no-write-actions-on-all-resources", "lambda-esm-role-can-use-source",
    "sfn-task-timeout-covers-lambda-timeout", "lambda-log-group-has-retention", "aws-resource-names-within-limits",
    # the paths where messages vanish (issue 23)
    "sns-subscription-endpoint-allows-topic", "eventbridge-target-allows-delivery", "s3-notification-target-allows-bucket",
    # failure destinations their writer can write, Lambda tasks that retry Lambda's transient errors (issue 40)
    "failure-destination-writable", "sfn-lambda-task-retries-service-errors",
    # functions on a runtime AWS supports
    "lambda-function-runtime-supported",
}
# Rules that report no violation of their own: they say what the pack could not look into, as checks
# that did not run (the resources a CloudFormation template or Cloud Control state creates).
NOTE_RULES = {"nested-resources-judged"}
# The gate's own checks (gate_rules.py: they need the program's files), reported beside the pack's.
GATE_RULES = {"lambda-handler-in-archive"}


def test_the_pack_has_the_specified_rules_levels_and_threshold_settings(policy_analyzer):
    policies = {p.name: p for p in policy_analyzer.info.policies}
    assert set(policies) == ALL_RULES | NOTE_RULES
    advisory = {name for name, p in policies.items() if p.enforcementLevel == 0}  # proto ADVISORY
    assert advisory == {"sqs-visibility-timeout-six-times-function-timeout", "dynamodb-table-encrypted-with-kms",
                        "queue-topic-policy-denies-insecure-transport", "lambda-function-runtime-supported", *NOTE_RULES}
    # Every rule takes the suppressions `blueprint policy config` writes (test_one_verdict.py).
    assert all("suppressions" in p.configSchema.properties for p in policies.values())
    settings = {name: set(p.configSchema.properties) - {"suppressions"} for name, p in policies.items()}
    settings = {name: names for name, names in settings.items() if names}
    assert settings == {"sqs-dlq-max-receive-count": {"minimum"},
                        "sqs-visibility-timeout-six-times-function-timeout": {"multiplier"},
                        "dynamodb-idempotency-table-ttl": {"environmentKeyPattern"},
                        "lambda-function-runtime-supported": {"asOf"}}


def test_the_hand_written_program_trips_every_rule_exactly_once(preview):
    result = preview(EVERY_VIOLATION, "test")
    tripped = sorted(v.policy for v in result.violations)
    assert tripped == sorted(ALL_RULES | GATE_RULES)
    assert result.exit_code == 1


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_the_blueprint_stacks_pass_the_mandatory_rules(preview, stack):
    result = preview(REPO_ROOT, stack=stack)
    assert result.policy_config == REPO_ROOT / "stacks" / f"policy.{stack}.json"
    assert [v for v in result.violations if v.level == "mandatory"] == []
    assert result.exit_code == 0


@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_the_blueprint_stacks_pass_in_a_first_preview_too(preview, stack):
    result = preview(REPO_ROOT, stack=stack, unknowns=True)
    assert [v for v in result.violations if v.level == "mandatory"] == []


def test_dev_policy_config_makes_a_missing_dlq_alarm_advisory_where_prod_makes_it_mandatory(preview):
    levels = {}
    for stack in ("dev", "prod"):
        result = preview(EVERY_VIOLATION, stack="test",
                             policy_config_path=REPO_ROOT / "stacks" / f"policy.{stack}.json")
        levels[stack] = {v.level for v in result.violations if v.policy == "dlq-has-depth-alarm"}
    assert levels == {"dev": {"advisory"}, "prod": {"mandatory"}}


def test_a_stack_without_its_own_policy_config_runs_with_the_pack_defaults(preview):
    assert stack_policy_config(EVERY_VIOLATION, "test") is None
    result = preview(EVERY_VIOLATION, "test")
    assert result.policy_config is None
    six_times = [v for v in result.violations if v.policy == "sqs-visibility-timeout-six-times-function-timeout"]
    assert [v.level for v in six_times] == ["advisory"]


def test_schema_defaults_are_applied_before_configure(policy_analyzer):
    resolved = policy_analyzer.configure({})
    assert resolved["sqs-dlq-max-receive-count"].properties == {"minimum": 4}
    assert resolved["sqs-visibility-timeout-six-times-function-timeout"].properties == {"multiplier": 6}
    assert resolved["sqs-visibility-timeout-covers-function-timeout"].enforcement_level == "mandatory"


def test_settings_left_at_the_blueprint_packs_defaults_are_not_checked_again_because_they_fit(policy_analyzer):
    policies, pack = list(policy_analyzer.info.policies), policy_analyzer.info.name
    assert policy_analyzer.own_pack
    # What the skipped check would say, made: every default of the pack passes its schema.
    checked = policy_config.resolve(policies, {"all": "mandatory"}, pack=pack)
    assert policy_config.resolve(policies, {"all": "mandatory"}, pack=pack, defaults_fit=True) == checked
    # A setting that differs from its default as JSON is checked, even where Python calls them equal.
    schema = analyzer_pb2.PolicyConfigSchema()
    schema.properties.update({"retries": {"type": "integer", "default": 1}})
    counted = [analyzer_pb2.PolicyInfo(name="counted", configSchema=schema)]
    assert policy_config.resolve(counted, {}, defaults_fit=True)["counted"].properties == {"retries": 1}
    with pytest.raises(policy_config.PolicyConfigError, match="counted.retries: True is not of type 'integer'"):
        policy_config.resolve(counted, {"counted": {"retries": True}}, defaults_fit=True)


@pytest.mark.parametrize("document, complaint", [
    ({"sqs-dlq-max-recieve-count": "advisory"}, "no policy named sqs-dlq-max-recieve-count"),
    ({"sqs-dlq-max-receive-count": {"minimum": 0}}, "sqs-dlq-max-receive-count.minimum: 0 is less than the minimum of 1"),
    ({"all": "strict"}, "enforcement level 'strict' is not one of"),
    ({"sqs-dlq-type-matches-source": {"strict": True}}, "takes no settings"),
    ({"sqs-dlq-max-receive-count": {"minimun": 6}},
     "policy sqs-dlq-max-receive-count has no setting 'minimun'; did you mean 'minimum'\\? its settings are: minimum"),
    ({"sqs-dlq-max-receive-count": {"minimum": "six"}}, "sqs-dlq-max-receive-count.minimum: 'six' is not of type 'integer'"),
    ({"sqs-visibility-timeout-six-times-function-timeout": {"enforcementLevel": "advisory", "multipler": 8}},
     "has no setting 'multipler'; did you mean 'multiplier'"),
])
def test_a_wrong_policy_config_is_refused_with_what_to_fix(policy_analyzer, document, complaint):
    with pytest.raises(policy_config.PolicyConfigError, match=complaint):
        policy_analyzer.configure(document)


def test_text_output_shows_the_resource_tree_and_violations_by_level(preview):
    text = render_text(preview(EVERY_VIOLATION, "test"))
    assert "    + aws:sqs/queue:Queue  orders\n" in text
    mandatory, advisory = text.index("Mandatory policy violations (34):"), text.index("Advisory policy violations (4):")
    assert mandatory < advisory
    assert "  [sqs-event-source-has-dlq] orders (aws:sqs/queue:Queue) at __main__.py:" in text[mandatory:advisory]
    assert "Give the queue a redrivePolicy" in text
    assert text.rstrip().endswith("34 mandatory and 4 advisory violations: the stack may not be deployed.")


# ---- the command line ------------------------------------------------------------------

@pytest.mark.parametrize("flag", [["--json"], ["--format", "json"]])
def test_cli_json_output_and_exit_1_on_mandatory_violations(capsys, flag):
    code = main(["preview", "--program", str(EVERY_VIOLATION), "--stack", "ci", *flag])
    output = json.loads(capsys.readouterr().out)
    assert code == 1
    assert set(output) == {"stack", "program", "resources", "violations", "skippedChecks", "summary", "notExpanded",
                           "secretPlaceholders", "unresolvedEnvironments", "notes", "error", "inventedLookups",
                           "programOutput", "suppressed", "suppressions", "unreadStackReferences", "incomplete",
                           "contained", "policyPacks"}
    assert output["notExpanded"] == [] and output["secretPlaceholders"] == [] and output["error"] is None
    assert output["suppressed"] == [] and output["suppressions"] == [] and output["unreadStackReferences"] == []
    assert output["stack"] == "ci" and output["program"] == str(EVERY_VIOLATION)
    queue = next(r for r in output["resources"] if r["name"] == "orders")
    assert set(queue) == {"urn", "type", "name", "parent", "inputs"} and queue["type"] == "aws:sqs/queue:Queue"
    assert {v["policy"] for v in output["violations"]} == ALL_RULES | GATE_RULES
    assert all(set(v) == FINDING_FIELDS and v["level"] in ("advisory", "mandatory") for v in output["violations"])
    assert output["summary"]["mandatory"] == 34 and output["summary"]["advisory"] == 4


def test_json_violations_name_their_resource_and_are_sorted(capsys):
    main(["preview", "--program", str(EVERY_VIOLATION), "--stack", "ci", "--format", "json"])
    output = json.loads(capsys.readouterr().out)
    violations = output["violations"]
    order = [({"mandatory": 0, "advisory": 1}[v["level"]], v["policy"], v["urn"], v["message"]) for v in violations]
    assert order == sorted(order)
    assert [r["urn"] for r in output["resources"]] == sorted(r["urn"] for r in output["resources"])
    receive = next(v for v in violations if v["policy"] == "sqs-dlq-max-receive-count")
    assert (receive["type"], receive["name"]) == ("aws:sqs/queue:Queue", "payments")
    assert receive["remediation"]  # the rule's remediation steps, or its description until it has them


def test_cli_exit_0_for_a_clean_stack_with_unknowns(capsys, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    code = main(["preview", "--stack", "prod", "--unknowns", "--json"])
    output = json.loads(capsys.readouterr().out)
    assert code == 0 and output["summary"]["mandatory"] == 0


@pytest.mark.parametrize("args, complaint", [
    (["--program", str(FIXTURES / "broken_program")], "KeyError: 'visibilty' (at "),
    (["--program", str(FIXTURES)], "has no Pulumi.yaml"),
    (["--policy-config", str(FIXTURES / "missing.json")], "does not exist"),
    (["--policy-pack", str(FIXTURES)], "is not a policy pack"),
])
def test_cli_exit_2_with_a_clean_error(capsys, monkeypatch, args, complaint):
    monkeypatch.chdir(REPO_ROOT)
    code = main(["preview", *args])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and complaint in err and "Traceback" not in err


def test_a_pack_that_cannot_start_is_reported_with_its_stderr(tmp_path):
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (tmp_path / "__main__.py").write_text("raise SystemExit('the pack is broken')\n")
    with pytest.raises(Exception, match="did not start(.|\n)*the pack is broken"):
        PolicyAnalyzer(tmp_path)


def test_cli_refuses_a_misspelled_setting_in_the_policy_config_file(tmp_path, capsys):
    config = tmp_path / "policy.json"
    config.write_text('{"sqs-dlq-max-receive-count": {"minimun": 6}}')
    code = main(["preview", "--program", str(EVERY_VIOLATION), "--policy-config", str(config)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"error: {config}: policy pack integration-blueprint: policy sqs-dlq-max-receive-count "
                          "has no setting 'minimun'")


# ---- rule metadata in every format ------------------------------------------------------------

@pytest.fixture(scope="module")
def metadata_result():
    """EVERY_VIOLATION through a pack whose rule queue-named-explicitly has remediation steps, a
    url, a severity and tags, and whose rule queue-has-no-delay has none of them."""
    return run_preview(EVERY_VIOLATION, stack="test", pack_dir=METADATA_PACK)


def test_json_carries_the_rule_metadata_and_falls_back_to_the_description(metadata_result):
    findings = {f.policy: f.to_json() for f in metadata_result.findings()}
    named = findings["queue-named-explicitly"]
    assert Path(named["file"]).name == "__main__.py" and named["line"] > 0  # where the queue is declared
    assert named | {"urn": "", "name": "", "message": "", "file": "", "line": 0} == {
        "policy": "queue-named-explicitly", "level": "mandatory", "urn": "", "type": "aws:sqs/queue:Queue",
        "name": "", "message": "", "file": "", "line": 0, "remediation": "Set `name` on the queue.",
        "url": "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-queues.html",
        "severity": "high", "tags": ["reliability", "sqs"], "policyPack": "metadata-pack", "policyPackVersion": "0.0.1"}
    bare = findings["queue-has-no-delay"]
    assert (bare["remediation"], bare["url"], bare["severity"], bare["tags"]) == (
        "Queues must not delay messages.", None, None, [])


def test_text_shows_the_fix_and_the_link_where_the_rule_has_them(metadata_result):
    text = render_text(metadata_result)
    assert "      Fix: Set `name` on the queue.\n      See: https://docs.aws.amazon.com/" in text
    unnamed = [f for f in metadata_result.findings() if f.policy == "queue-named-explicitly"]
    gate = [f for f in metadata_result.findings() if f.policy in GATE_RULES]  # the gate's own have remediation too
    assert unnamed and text.count("Fix:") == len(unnamed) + len(gate)  # one per unnamed queue; the bare rule adds none


def test_sarif_rules_carry_help_url_severity_and_tags(metadata_result):
    pack, gate = to_sarif(metadata_result)["runs"][0]["tool"]["extensions"]  # the metadata pack, the gate's own checks
    assert gate["name"] == "blueprint-gate"
    rules = {r["id"]: r for r in pack["rules"]}
    named = rules["queue-named-explicitly"]
    assert named["help"]["text"] == "Set `name` on the queue."
    assert named["helpUri"].startswith("https://docs.aws.amazon.com/")
    assert named["properties"]["security-severity"] == "8.0"
    assert named["properties"]["tags"] == ["pulumi-policy", "reliability", "sqs"]
    assert named["defaultConfiguration"]["level"] == "error"
    bare = rules["queue-has-no-delay"]
    assert bare["help"]["text"] == bare["fullDescription"]["text"] == "Queues must not delay messages."
    assert "helpUri" not in bare and "security-severity" not in bare["properties"]
    assert bare["defaultConfiguration"]["level"] == "warning"


def test_markdown_links_each_fix_to_its_docs(metadata_result):
    markdown = render_markdown(metadata_result)
    assert ": Set \\`name\\` on the queue. ([docs](<https://docs.aws.amazon.com/" in markdown  # listed once per policy


# ---- SARIF -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def every_violation_sarif(preview):
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO_ROOT)  # the checkout root, as in CI: paths in SARIF are relative to it
        return to_sarif(preview(EVERY_VIOLATION, "test"))


def test_sarif_is_valid_against_the_published_sarif_2_1_0_schema(every_violation_sarif):
    schema = json.loads(SARIF_SCHEMA.read_text())
    jsonschema.validate(every_violation_sarif, schema, cls=jsonschema.Draft4Validator)
    broken = json.loads(json.dumps(every_violation_sarif))
    broken["runs"][0]["results"][0]["level"] = "mandatory"  # and the check can fail
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema, cls=jsonschema.Draft4Validator)


def test_sarif_has_one_rule_per_policy_and_one_result_per_violation(every_violation_sarif):
    run = every_violation_sarif["runs"][0]
    *packs, gate = run["tool"]["extensions"]  # each pack that judged it, named and versioned as it names itself
    [pack] = packs
    assert (pack["name"], pack["version"]) == ("integration-blueprint", __version__)
    assert gate["name"] == "blueprint-gate" and [r["id"] for r in gate["rules"]] == sorted(GATE_RULES)
    rules = pack["rules"]
    assert [r["id"] for r in rules] == sorted(ALL_RULES | NOTE_RULES)
    assert all(r["fullDescription"]["text"] and r["help"]["text"] for r in rules)
    assert len(run["results"]) == len(ALL_RULES | GATE_RULES)  # the fixture trips every rule once
    components = [pack, gate]
    for result in run["results"]:
        component = components[result["rule"]["toolComponent"]["index"]]
        assert component["rules"][result["rule"]["index"]]["id"] == result["ruleId"] == result["rule"]["id"]
        assert result["level"] in ("error", "warning")


def test_sarif_locates_each_violation_at_the_line_that_declares_the_resource(every_violation_sarif, monkeypatch):
    """What GitHub code scanning needs: a repository-relative file and a start line per result."""
    source = (EVERY_VIOLATION / "__main__.py").read_text().splitlines()
    results = every_violation_sarif["runs"][0]["results"]
    for result in results:
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "tests/fixtures/every_violation/__main__.py"
        assert location["region"]["startLine"] >= 1
    receive = next(r for r in results if r["ruleId"] == "sqs-dlq-max-receive-count")
    line = source[receive["locations"][0]["physicalLocation"]["region"]["startLine"] - 1]
    assert line.startswith('queue("payments", fifo_queue=True')  # the fixture's helper around aws.sqs.Queue
    assert receive["locations"][0]["logicalLocations"][0]["name"] == "payments"


def test_sarif_locates_a_component_child_at_the_components_declaration():
    """The component's queues are declared in the blueprint's own module; the team's program
    names the component, so that is the line code scanning points at."""
    program = FIXTURES / "component_program"
    sarif = to_sarif(run_preview(program, stack="test", pack_dir=METADATA_PACK))
    results = sarif["runs"][0]["results"]
    source = (program / "__main__.py").read_text().splitlines()
    assert len(results) == 4  # the component's charges, DLQ, schedule DLQ and dispatcher on-failure queue
    lines = {source[r["locations"][0]["physicalLocation"]["region"]["startLine"] - 1].split("(")[0] for r in results}
    assert lines == {"billing = FifoBillingQueue"}


# ---- markdown ----------------------------------------------------------------------------------

def test_markdown_has_a_verdict_a_table_and_a_diagram_of_the_checked_links(preview):
    markdown = render_markdown(preview(EVERY_VIOLATION, "test"))
    lines = markdown.splitlines()
    assert lines[0] == ("### ❌ Policy preview of stack <code>test</code>: 34 mandatory and 4 advisory violations; "
                        "the stack may not be deployed")
    rows = [line for line in lines if line.startswith("| mandatory |") or line.startswith("| advisory |")]
    assert len(rows) == len(ALL_RULES | GATE_RULES) and all(line.count(" | ") == 4 for line in rows)  # level, policy, pack, ...
    assert "```mermaid" in markdown
    assert re.search(r'n\d+\["⚠ orders<br/>sqs Queue"\]:::violation', markdown)  # no DLQ: marked
    assert '-- "⚠ event source mapping: orders-mapping" -->' in markdown  # no ReportBatchItemFailures


def test_markdown_draws_one_diagram_per_component_with_source_function_and_dlq(preview):
    markdown = render_markdown(preview(REPO_ROOT, stack="dev"))
    assert markdown.startswith("### ✅ Policy preview of stack <code>dev</code>: no mandatory violations")
    assert markdown.count("```mermaid") == 4
    orders = markdown[markdown.index("**<code>orders</code>**"):]
    orders = orders[:orders.index("```\n", orders.index("```mermaid") + 3)]
    nodes = dict(re.findall(r'(n\d+)\["([^<"]+)<br/>', orders))
    edges = {(nodes[a], label, nodes[b]) for a, label, b in re.findall(r'(n\d+) -- "([^"]+)" --> (n\d+)', orders)}
    assert ("orders-stream", "event source mapping: orders-stream-mapping", "orders-consumer") in edges
    assert ("orders-consumer", "on failure: orders-stream-mapping", "orders-retry-dlq") in edges
    assert ("orders-retry-dlq", "redrive (DLQ)", "orders-unrecoverable-dlq") in edges


@pytest.mark.parametrize("fmt, check", [
    ("sarif", lambda out: json.loads(out)["version"] == "2.1.0"),
    ("markdown", lambda out: out.startswith("### ❌ Policy preview of stack <code>ci</code>")),
])
def test_cli_prints_the_chosen_format_and_keeps_the_exit_code(capsys, fmt, check):
    code = main(["preview", "--program", str(EVERY_VIOLATION), "--stack", "ci", "--format", fmt])
    assert code == 1 and check(capsys.readouterr().out)


_SERVICE_PACKAGES = """
import json, sys
if sys.argv[1] == "lazy":
    from integration_blueprint.preview import aws_imports
    aws_imports.install()
import pulumi_aws as aws
from pulumi_aws.sns import Topic
bucket, outputs = aws.s3.Bucket, aws.s3.outputs
loaded = sorted(m for m in sys.modules if m.startswith("pulumi_aws.s3."))
seen = {}
for service in ("s3", "sns", "iam"):
    package = getattr(aws, service)
    package.typing  # a name no module exports: the package loads all of itself
    seen[service] = {n: [type(v).__name__, getattr(v, "__module__", None), getattr(v, "__qualname__", None)]
                     for n in dir(package) if n not in ("__getattr__", "__dir__", "__loader__", "__spec__")
                     for v in [getattr(package, n)]}
print(json.dumps({"same": bucket is aws.s3.bucket.Bucket and Topic is aws.sns.topic.Topic
                  and outputs is sys.modules["pulumi_aws.s3.outputs"], "loaded": loaded, "seen": seen}))
"""


def test_a_service_module_s_exports_read_from_its_top_are_those_of_its_whole_text(tmp_path):
    """aws_imports reads a module's `__all__` from the top of the file only as far as the list ends:
    the same list as the whole text gives, for pulumi_aws's modules and for a list far down a file
    or none at all."""
    from integration_blueprint.preview import aws_imports

    def whole(path: Path):
        found = aws_imports._ALL.search(path.read_text())
        return found and found.group(1)

    root = Path(importlib.util.find_spec("pulumi_aws").origin).parent
    modules = [path for service in ("s3", "kinesis", "iam") for path in sorted((root / service).glob("*.py"))]
    assert len(modules) > 100
    for path in modules:
        found = aws_imports._first_all(path)
        assert (found and found.group(1)) == whole(path), path
    far, none = tmp_path / "far.py", tmp_path / "none.py"
    far.write_text("x = 1  # é\n" * 20_000 + "__all__ = ['A',\n 'B']\n__all__ = ['C']\n")
    none.write_text("x = 1\n" * 50_000)
    assert aws_imports._first_all(far).group(1) == whole(far) == "'A',\n 'B'"
    assert aws_imports._first_all(none) is None and whole(none) is None


@pytest.mark.slow
def test_lazy_service_packages_give_the_programs_names_what_the_eager_packages_give(tmp_path):
    """`blueprint preview` imports only the pulumi_aws modules a program names (aws_imports); the
    names are the same objects, and anything else asked of a package loads all of it."""
    import subprocess
    import sys

    def run(mode: str) -> dict:
        done = subprocess.run([sys.executable, "-c", _SERVICE_PACKAGES, mode], capture_output=True, text=True,
                              check=True, cwd=tmp_path)
        return json.loads(done.stdout)

    lazy, eager = run("lazy"), run("eager")

    assert lazy["same"] and eager["same"]
    assert lazy["seen"] == eager["seen"] and len(lazy["seen"]["s3"]) > 500
    assert len(lazy["loaded"]) < 10 < len(eager["loaded"])
