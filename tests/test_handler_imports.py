"""The preview catches a handler that imports a package its function does not ship: Lambda would fail
every invocation with Runtime.ImportModuleError (before, only the drill found it). What the runtime
gives (the standard library, boto3), the Powertools layer where the function has it, the archive's
own modules and an optional import are not named."""

import pytest

from integration_blueprint.preview import lambda_archive
from integration_blueprint.preview.run import run_preview

HANDLER = '''import json
import boto3
import requests
from helpers import shape
try:
    import ujson
except ImportError:
    ujson = None


def handler(event, context):
    return shape(json.dumps(event))
'''
PROGRAM = '''import pulumi
import pulumi_aws as aws

role = aws.iam.Role("orders", assume_role_policy="{}")
aws.lambda_.Function("orders", role=role.arn, runtime="python3.12", handler="orders.handler",
                     code=pulumi.FileArchive("./app"))
'''


def write_code(folder):
    (folder / "app").mkdir(parents=True)
    (folder / "app" / "orders.py").write_text(HANDLER)
    (folder / "app" / "helpers.py").write_text("def shape(text):\n    return text\n")
    return {"archive": "FileArchive", "path": "./app"}


def test_a_package_neither_the_archive_nor_the_runtime_provides_is_named_with_the_fix(tmp_path):
    code = write_code(tmp_path)
    problem = lambda_archive.handler_problem(code, tmp_path, "orders.handler", lambda_archive.runtime_provided(False))
    assert problem is not None and "imports requests, which neither the function's archive" in problem
    assert "pip install --target <code folder> requests" in problem
    assert "boto3" not in problem and "helpers" not in problem and "ujson" not in problem
    (tmp_path / "app" / "requests").mkdir()  # vendored: `pip install --target app requests`
    (tmp_path / "app" / "requests" / "__init__.py").write_text("")
    assert lambda_archive.handler_problem(code, tmp_path, "orders.handler", lambda_archive.runtime_provided(False)) is None


def test_powertools_counts_only_where_the_function_has_its_layer(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "audit.py").write_text(
        "from aws_lambda_powertools import Logger\n\ndef handler(event, context):\n    return Logger\n")
    code = {"archive": "FileArchive", "path": "./app"}
    assert lambda_archive.handler_problem(code, tmp_path, "audit.handler", lambda_archive.runtime_provided(True)) is None
    assert "imports aws_lambda_powertools" in lambda_archive.handler_problem(
        code, tmp_path, "audit.handler", lambda_archive.runtime_provided(False))


@pytest.mark.slow  # a preview of a program
def test_the_preview_fails_a_function_whose_handler_imports_an_unshipped_package(tmp_path, policy_analyzer):
    write_code(tmp_path)
    (tmp_path / "Pulumi.yaml").write_text("name: orders\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (tmp_path / "__main__.py").write_text(PROGRAM)
    result = run_preview(tmp_path, stack="dev", analyzer=policy_analyzer)
    (finding,) = [f for f in result.violation_findings() if f.policy == "lambda-handler-in-archive"]
    assert finding.level == "mandatory" and finding.name == "orders" and "imports requests" in finding.message
    assert result.exit_code == 1
