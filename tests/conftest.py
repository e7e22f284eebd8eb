"""Shared test setup: fake AWS credentials (moto only; nothing leaves the machine)."""

import pytest

REGION = "eu-west-1"


@pytest.fixture(autouse=True)
def fake_aws_environment(monkeypatch):
    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "blueprint-tests")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "blueprint-tests")
    yield


@pytest.fixture(scope="session")
def policy_analyzer():
    """The real policy pack, started once per test session the way the Pulumi CLI starts it, and
    reused: each test Configures it before it analyses."""
    from integration_blueprint.preview.analyzer import PolicyAnalyzer

    with PolicyAnalyzer() as analyzer:
        yield analyzer
