"""What the CI gate writes (issue 31): secrets stay secret in every format while the pack still
judges them, a run that cannot judge the program still leaves a report in every format, unknowns
read as unknown, and "How this preview ran" lists what was invented or not judged.

Each program here runs through the real engine and the real policy pack, as `blueprint preview`
runs a team's program."""

import dataclasses
import json
import textwrap
from pathlib import Path

import jsonschema
import pytest

from integration_blueprint.cli import main
from integration_blueprint.preview import wire
from integration_blueprint.preview.fix_language import in_language
from integration_blueprint.preview.recording import ProgramError
from integration_blueprint.preview.redaction import Redactor, secret_paths
from integration_blueprint.preview.reports.formats import FORMATS
from integration_blueprint.preview.reports.markdown import code, render_markdown
from integration_blueprint.preview.reports.sarif import to_sarif
from integration_blueprint.preview.reports.text import render_text
from integration_blueprint.preview.run import failed_preview, run_preview

REPO = Path(__file__).resolve().parents[1]
SARIF_SCHEMA = REPO / "tests" / "fixtures" / "schemas" / "sarif-schema-2.1.0.json"
# Values the program marks secret; none may appear in anything the tool writes.
API_TOKEN = "tok-3f9a1c77e2b4"  # Config.require_secret of a plain stack value
QUEUE_NAME = "payroll-runs-q7x"  # pulumi.Output.secret
TAG_VALUE = "cost-centre-4471"  # a secret tag
ADMIN_ARN = "arn:aws:iam::aws:policy/AdministratorAccess"  # a secret policy ARN the pack must still judge
SECRETS = (API_TOKEN, QUEUE_NAME, TAG_VALUE, ADMIN_ARN, "offline-placeholder-secret")

SECRET_PROGRAM = f"""
import json
import pulumi
import pulumi_aws as aws

config = pulumi.Config()
token = config.require_secret("apiToken")
password = config.require_secret("dbPassword")  # a `secure:` value: a placeholder offline

queue = aws.sqs.Queue("jobs", name=pulumi.Output.secret("{QUEUE_NAME}"),
                      tags={{"costCentre": pulumi.Output.secret("{TAG_VALUE}")}})
role = aws.iam.Role("fn-role", assume_role_policy=json.dumps({{
    "Version": "2012-10-17",
    "Statement": [{{"Effect": "Allow", "Principal": {{"Service": "lambda.amazonaws.com"}},
                    "Action": "sts:AssumeRole"}}]}}))
aws.iam.RolePolicyAttachment("admin", role=role.name, policy_arn=pulumi.Output.secret("{ADMIN_ARN}"))
aws.iam.RolePolicy("send", role=role.id, policy=pulumi.Output.secret(queue.arn.apply(lambda arn: json.dumps({{
    "Version": "2012-10-17",
    "Statement": [{{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": arn}}]}}))))
aws.lambda_.Function("fn", role=role.arn, runtime="python3.12", handler="index.handler",
                     code=pulumi.AssetArchive({{"index.py": pulumi.StringAsset("def handler(e, c): pass")}}),
                     environment={{"variables": {{"API_TOKEN": token, "DB_PASSWORD": password}}}})
print("program says hello")
"""


def write_program(folder, source: str, stack_yaml: str = "config:\n  aws:region: eu-west-1\n",
                  runtime: str = "python"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Pulumi.yaml").write_text(f"name: gate-app\nruntime: {runtime}\n")
    (folder / "Pulumi.test.yaml").write_text(stack_yaml)
    (folder / "__main__.py").write_text(textwrap.dedent(source))
    return folder


@pytest.fixture(scope="module")
def secret_result(tmp_path_factory, policy_analyzer):
    stack = ("config:\n  aws:region: eu-west-1\n"
             f"  gate-app:apiToken: {API_TOKEN}\n"
             "  gate-app:dbPassword:\n    secure: AAABAKs0bG9uZ2NpcGhlcnRleHQ=\n")
    program = write_program(tmp_path_factory.mktemp("secrets") / "app", SECRET_PROGRAM, stack)
    return run_preview(program, stack="test", analyzer=policy_analyzer)


def every_format(result) -> dict[str, str]:
    return {name: render(result) for name, render in FORMATS.items()}


def test_secrets_are_judged_by_the_pack_and_shown_as_secret_in_every_format(secret_result):
    wildcard = [f for f in secret_result.violation_findings() if f.policy == "iam-no-wildcard-actions"]
    assert [f.name for f in wildcard] == ["admin"]  # the pack saw the real ARN behind the secret
    assert "[secret]" in wildcard[0].message
    for name, written in every_format(secret_result).items():
        for secret in SECRETS:
            assert secret not in written, f"{secret!r} printed in {name}"


def test_json_shows_each_secret_input_as_secret_where_it_sits(secret_result):
    resources = {r["name"]: r["inputs"] for r in json.loads(FORMATS["json"](secret_result))["resources"]}
    assert resources["jobs"]["name"] == "[secret]"
    assert resources["jobs"]["tags"]["costCentre"] == "[secret]"
    assert resources["fn"]["environment"]["variables"] == {"API_TOKEN": "[secret]", "DB_PASSWORD": "[secret]"}
    assert resources["send"]["policy"] == "[secret]"
    assert resources["admin"]["policyArn"] == "[secret]"
    assert resources["fn"]["runtime"] == "python3.12"  # what is not secret reads as written


def test_the_programs_own_output_is_shown_in_text_and_kept_in_json(secret_result):
    assert "Program output (stdout):\n  | program says hello" in render_text(secret_result)
    assert json.loads(FORMATS["json"](secret_result))["programOutput"]["stdout"] == "program says hello\n"


def test_a_first_preview_shows_unknown_values_as_unknown_never_as_the_sentinel(tmp_path, policy_analyzer):
    program = write_program(tmp_path / "app", """
        import pulumi_aws as aws
        dlq = aws.sqs.Queue("dlq")
        aws.sqs.Queue("jobs", redrive_policy=dlq.arn.apply(lambda arn: '{"deadLetterTargetArn": "%s"}' % arn))
        aws.sqs.Queue("copy", name=dlq.arn)
    """)
    result = run_preview(program, stack="test", analyzer=policy_analyzer, unknowns=True)
    written = every_format(result)
    assert all("04da6b54" not in text for text in written.values())
    copy = next(r for r in json.loads(written["json"])["resources"] if r["name"] == "copy")
    assert copy["inputs"]["name"] == "[unknown]"


# ---- a run that cannot judge the program still leaves a report ---------------------------------

REFUSING_PROGRAM = """
from integration_blueprint.components import FifoBillingQueue

FifoBillingQueue("billing", {"max_receive_count": 1})
"""


@pytest.fixture(scope="module")
def refused(tmp_path_factory, policy_analyzer):
    """The report of a program whose component refuses an argument, as the CLI builds it."""
    program = write_program(tmp_path_factory.mktemp("refused") / "app", REFUSING_PROGRAM)
    with pytest.raises(ProgramError) as refusal:
        run_preview(program, stack="test", analyzer=policy_analyzer)
    return program / "__main__.py", failed_preview(program, refusal.value, stack="test")


def test_a_refused_argument_is_a_failed_run_in_sarif_at_the_programs_line(refused):
    main_file, result = refused
    sarif = to_sarif(result)
    jsonschema.validate(sarif, json.loads(SARIF_SCHEMA.read_text()), cls=jsonschema.Draft4Validator)
    [run] = sarif["runs"]
    [invocation] = run["invocations"]
    assert invocation["executionSuccessful"] is False and run["results"] == []
    [failure] = [n for n in invocation["toolExecutionNotifications"] if n["level"] == "error"]
    assert "max_receive_count" in failure["message"]["text"] and "How to fix:" in failure["message"]["text"]
    assert failure["locations"][0]["physicalLocation"]["region"]["startLine"] == 4
    assert failure["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("app/__main__.py")


def test_a_refused_argument_is_told_in_markdown_what_where_and_how_to_fix(refused):
    main_file, result = refused
    markdown = render_markdown(result)
    assert markdown.startswith("### ⚠️ Policy preview of stack <code>test</code> could not run: A component "
                               "refused one of its arguments")
    # The file as a reviewer finds it in the repository: relative to the program, no runner's path.
    assert "max\\_receive\\_count" in markdown and f"**Where:** {code('__main__.py:4')}" in markdown
    assert str(main_file.parent) not in markdown
    assert "**How to fix:** Change the argument" in markdown


def test_a_refused_argument_is_the_json_error_and_exits_2(refused):
    main_file, result = refused
    output = json.loads(FORMATS["json"](result))
    assert output["error"]["kind"] == "refused" and output["error"]["file"] == str(main_file)
    assert output["error"]["line"] == 4 and "max_receive_count" in output["error"]["message"]
    assert output["violations"] == [] and result.exit_code == 2
    assert "could not run: A component refused one of its arguments" in render_text(result)


@pytest.mark.slow
@pytest.mark.parametrize("output", ["sarif", "markdown", "json", "text"])
def test_the_cli_writes_a_failed_runs_report_in_every_format_and_the_error_to_stderr(tmp_path, capsys, output):
    program = write_program(tmp_path / "app", REFUSING_PROGRAM)
    exit_code = main(["preview", "--program", str(program), "--stack", "test", "--format", output])
    out, err = capsys.readouterr()
    assert exit_code == 2
    assert "max_receive_count" in err and "Traceback" not in err  # the job log says it too
    # text: the report is the error on stderr; markdown escapes the underscores
    assert ("max_receive_count" in out.replace("\\_", "_")) == (output != "text")


@pytest.mark.slow
def test_a_program_error_and_a_bad_policy_config_are_reported_as_what_they_are(tmp_path, capsys):
    program = write_program(tmp_path / "app", "print('looking for the bucket')\nraise RuntimeError('no bucket for you')\n")
    assert main(["preview", "--program", str(program), "--stack", "test", "--format", "json"]) == 2
    report = json.loads(capsys.readouterr().out)
    error = report["error"]
    assert (error["kind"], error["line"]) == ("program", 2) and "no bucket for you" in error["message"]
    assert report["programOutput"]["stdout"] == "looking for the bucket\n"  # what it printed before it failed
    assert main(["preview", "--program", str(program), "--stack", "test"]) == 2
    assert "Program output (stdout):\n  | looking for the bucket" in capsys.readouterr().err
    good = write_program(tmp_path / "good", "import pulumi_aws as aws\naws.sqs.Queue('q')\n")
    (tmp_path / "policy.json").write_text('{"no-such-policy": "mandatory"}')
    assert main(["preview", "--program", str(good), "--stack", "test", "--format", "sarif",
                 "--policy-config", str(tmp_path / "policy.json")]) == 2
    [invocation] = json.loads(capsys.readouterr().out)["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    assert "no-such-policy" in invocation["toolExecutionNotifications"][0]["message"]["text"]


def test_a_failed_runs_report_masks_the_secret_config_it_read(tmp_path, policy_analyzer):
    program = write_program(tmp_path / "app", """
        import pulumi
        password = pulumi.Config().require("dbPassword")  # a `secure:` value read without require_secret
        raise ValueError("cannot log in with " + password)
    """, "config:\n  gate-app:dbPassword:\n    secure: AAABAKs0bG9uZ2NpcGhlcnRleHQ=\n")
    with pytest.raises(ProgramError) as error:
        run_preview(program, stack="test", analyzer=policy_analyzer)
    result = failed_preview(program, error.value, stack="test")
    written = every_format(result)
    assert "cannot log in with \\[secret\\]" in written["markdown"] and "cannot log in with [secret]" in written["text"]
    assert all("offline-placeholder-secret" not in text for text in written.values())


# ---- how this preview ran -----------------------------------------------------------------------

LOOKUP_PROGRAM = """
import pulumi_aws as aws

existing = aws.sqs.get_queue(name="made-up-queue")
aws.lambda_.get_function(function_name="made-up-function")
aws.get_caller_identity()
role = aws.iam.Role("r", assume_role_policy='{"Version": "2012-10-17", "Statement": []}',
                    managed_policy_arns=["arn:aws:iam::aws:policy/AmazonRDSReadOnlyAccess",
                                         "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"])
aws.iam.RolePolicyAttachment("cognito", role=role.name,
                             policy_arn="arn:aws:iam::aws:policy/AmazonCognitoPowerUser")
"""


def test_invented_lookups_and_unjudged_managed_policies_are_listed_and_fail_strict(tmp_path, policy_analyzer):
    program = write_program(tmp_path / "app", LOOKUP_PROGRAM)
    result = run_preview(program, stack="test", analyzer=policy_analyzer)
    notes = "\n".join(result.notes())
    assert "aws:sqs/getQueue:getQueue(name='made-up-queue')" in notes
    assert "aws:lambda/getFunction:getFunction(functionName='made-up-function')" in notes
    assert "getCallerIdentity" not in notes  # answered from facts: the preview's placeholder account
    assert "arn:aws:iam::aws:policy/AmazonRDSReadOnlyAccess (attached by r)" in notes
    assert "arn:aws:iam::aws:policy/AmazonCognitoPowerUser (attached by cognito)" in notes
    assert "AWSLambdaBasicExecutionRole" not in notes  # judged from the catalogue
    assert result.exit_code == 0
    assert run_preview(program, stack="test", analyzer=policy_analyzer, strict=True).exit_code == 2
    assert "made-up-queue" in render_markdown(result) and "How this preview ran" in render_markdown(result)
    sarif = to_sarif(result)
    jsonschema.validate(sarif, json.loads(SARIF_SCHEMA.read_text()), cls=jsonschema.Draft4Validator)
    assert any("made-up-queue" in n["message"]["text"]
               for n in sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"])


# ---- masking and fix texts, unit by unit ----------------------------------------------------------

def test_a_secret_is_masked_wherever_it_is_quoted_and_a_short_one_only_as_a_whole_word():
    redactor = Redactor(["s3cr3t-token-value", "prod", 42, {"nested": ["inner-secret"]}])
    assert redactor.text("auth s3cr3t-token-value; url https://x/?t=s3cr3t-token-value") == \
        "auth [secret]; url https://x/?t=[secret]"
    assert redactor.text("stage prod, product production, id 42, 420") == "stage [secret], product production, id [secret], 420"
    assert redactor.text("inner-secret and 04da6b54-80e4-46f7-96ec-b56ff0331ba9") == "[secret] and [unknown]"
    sharing = Redactor(["abcdefgh", "abcdefghij"])  # one starts the other: the longer is masked whole
    assert sharing.text("abcdefghij, abcdefghXY") == "[secret], [secret]XY"


def test_a_secret_input_is_masked_by_position_and_an_unknown_shown_as_unknown():
    shown = Redactor().value({"env": {"variables": {"TOKEN": "x", "MODE": "fast"}}, "arn": wire.UNKNOWN},
                             [("env", "variables", "TOKEN")])
    assert shown == {"env": {"variables": {"TOKEN": "[secret]", "MODE": "fast"}}, "arn": "[unknown]"}


def test_secret_paths_follow_the_wire_format():
    sent = {"name": wire.secret("q"), "tags": {"a": "b", "c": wire.secret("d")}, "list": [1, wire.secret([2])]}
    assert secret_paths(sent) == [("name",), ("tags", "c"), ("list", 1)]


def test_fix_texts_of_a_typescript_program_are_written_in_typescript(secret_result):
    python = ("Add aws.lambda_.Permission(principal='sns.amazonaws.com', source_arn=<topic ARN>) and "
              "aws.cloudwatch.LogGroup(name=f\"/aws/lambda/{function.name}\", retention_in_days=30); "
              "set ttl={'attribute_name': 'expiration', 'enabled': True}.")
    assert in_language(python, "nodejs") == (
        'Add new aws.lambda.Permission("name", { principal: "sns.amazonaws.com", sourceArn: <topic ARN> }) and '
        'new aws.cloudwatch.LogGroup("name", { name: `/aws/lambda/${function.name}`, retentionInDays: 30 }); '
        'set ttl: { attributeName: "expiration", enabled: true }.')
    assert in_language("point logging_config.log_group at queue 'orders_dlq'", "nodejs") == \
        "point loggingConfig.logGroup at queue 'orders_dlq'"
    assert in_language("Set it to json.dumps({'deadLetterTargetArn': <queue ARN>}) (json.dumps it)", "nodejs") == \
        "Set it to JSON.stringify({ deadLetterTargetArn: <queue ARN> }) (JSON.stringify it)"
    assert in_language(python, "python") == python
    typescript = dataclasses.replace(secret_result.recorded, language="nodejs")
    report = dataclasses.replace(secret_result, recorded=typescript)
    python_text, written = render_text(secret_result), every_format(report)
    assert 'aws.cloudwatch.LogGroup(name=f"/aws/lambda/{function.name}", retention_in_days=30)' in python_text
    assert "Declare the function's LogGroup with retention_in_days" in python_text
    assert ('new aws.cloudwatch.LogGroup("name", { name: `/aws/lambda/${function.name}`, retentionInDays: 30 })'
            in written["text"])
    assert "Declare the function's LogGroup with retentionInDays" in written["text"]
    assert all("retention_in_days" not in text for text in written.values())
    assert "via policy_sentry" in written["text"]  # a module's name is not a property


def test_a_typescript_fix_text_names_only_what_the_typescript_sdk_has():
    """The pack names this package's Python helpers; the TypeScript SDK exports the components alone."""
    alarm = ("Add a MetricAlarm (namespace AWS/SQS, dimension QueueName) with threshold 1 and "
             "GreaterThanOrEqualToThreshold (integration_blueprint.components.alarms.queue_depth_alarm makes one).")
    assert in_language(alarm, "nodejs") == ("Add a MetricAlarm (namespace AWS/SQS, dimension QueueName) with "
                                            "threshold 1 and GreaterThanOrEqualToThreshold.")
    assert in_language("Or use integration_blueprint.components.FifoBillingQueue, which sets it.", "nodejs") == \
        "Or use blueprint.FifoBillingQueue, which sets it."
    helper = "Declare the table with a TTL. integration_blueprint.components.tables.ledger_table does. Then redeploy."
    assert in_language(helper, "nodejs") == "Declare the table with a TTL. Then redeploy."
    assert in_language(alarm, "python") == alarm


TYPESCRIPT_PROGRAM = """
import * as pulumi from "@pulumi/pulumi";
import * as aws from "@pulumi/aws";
const role = new aws.iam.Role("r", { assumeRolePolicy: JSON.stringify({ Version: "2012-10-17", Statement: [] }) });
const fn = new aws.lambda.Function("fn", { role: role.arn, runtime: "nodejs20.x", handler: "index.handler",
                                          code: new pulumi.asset.AssetArchive({}) });
const topic = new aws.sns.Topic("t");
new aws.sns.TopicSubscription("s", { topic: topic.arn, protocol: "lambda", endpoint: fn.arn });
aws.lambda.getFunctionOutput({ functionName: "made-up" });
console.log("hello from ts: retention_in_days");
"""


@pytest.mark.slow
def test_a_typescript_programs_report_speaks_typescript_and_shows_its_output(tmp_path, policy_analyzer):
    node = REPO / "tests" / "node"
    program = tmp_path / "app"
    program.mkdir()
    (program / "Pulumi.yaml").write_text("name: app\nruntime: nodejs\n")
    (program / "Pulumi.test.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (program / "package.json").write_text('{"name": "app", "main": "index.ts"}\n')
    (program / "tsconfig.json").write_text((node / "programs" / "handwritten-ts" / "tsconfig.json").read_text())
    (program / "index.ts").write_text(TYPESCRIPT_PROGRAM)
    (program / "node_modules").symlink_to(node / "node_modules")
    text = render_text(run_preview(program, stack="test", analyzer=policy_analyzer))
    assert 'new aws.lambda.Permission("name", { ' in text and "aws.lambda_" not in text
    assert "lookup aws:lambda/getFunction:getFunction" in text
    assert "Program output (stdout):\n  | hello from ts: retention_in_days" in text  # as printed


def test_a_failure_of_the_tool_itself_is_reported_as_the_tools_in_every_format(tmp_path):
    program = write_program(tmp_path / "app", "")
    try:
        {}["engine state"]
    except KeyError as bug:
        result = failed_preview(program, bug, stack="test")
    [invocation] = to_sarif(result)["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    [notification] = invocation["toolExecutionNotifications"]
    assert notification["message"]["text"].startswith("The gate failed: blueprint (a failure of blueprint's offline "
                                                      "preview, not of the program)")
    assert notification["properties"] == {"part": "blueprint"}
    assert "KeyError: 'engine state'" in notification["message"]["text"]
    error = json.loads(FORMATS["json"](result))["error"]
    assert (error["kind"], error["part"]) == ("tool", "blueprint") and "the same way under" not in error["fix"]
    assert "could not run: The gate failed" in render_markdown(result)
    assert result.exit_code == 2
