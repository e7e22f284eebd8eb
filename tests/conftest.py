"""Shared test setup and helpers: fake AWS credentials (moto only; nothing leaves the machine), the
repository's own stack files, and finding recorded resources by name."""

import fcntl
import gc
import hashlib
import json
import pickle
import signal
from pathlib import Path

import pytest
import yaml

from integration_blueprint.core import patches
from integration_blueprint.sandbox import shortcuts  # noqa: F401 - registers the patch below

# Ctrl-C as a terminal delivers it: a test runner started as a shell's background job (`make test &`,
# `nohup ... &`) inherits SIGINT ignored, and so would every `blueprint` a test starts, which then
# could not be interrupted (the tests of Ctrl-C failed so). Python resets its own handler to the
# default in a child it executes.
signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True, scope="session")
def botocore_data_read_once():
    """moto's mock_aws makes a boto3 session per test: botocore's data files are read once per
    worker (sandbox/shortcuts.py share_botocore_data), then the patch is undone."""
    with patches.applied(["share_botocore_data"]):
        yield

@pytest.fixture(scope="session")
def typescript_sdk(tmp_path_factory) -> Path:
    """The components' TypeScript SDK (@pulumi/blueprint), written once per session as a team
    writes it (`blueprint sdk --language typescript --out <folder>`)."""
    from integration_blueprint.cli import main

    folder = tmp_path_factory.mktemp("sdk") / "blueprint"
    assert main(["sdk", "--language", "typescript", "--out", str(folder)]) == 0
    return folder


REGION = "eu-west-1"
REGION_CONFIG = {"aws:region": REGION}
REPO = Path(__file__).resolve().parents[1]


def python_project(folder: Path, main_py: str, *, name: str = "app") -> Path:
    """A Python Pulumi project written in `folder` (created): `main_py` as its program, stack dev in REGION."""
    folder.mkdir(parents=True)
    (folder / "Pulumi.yaml").write_text(f"name: {name}\nruntime: python\n")
    (folder / "Pulumi.dev.yaml").write_text(f"config:\n  aws:region: {REGION}\n")
    (folder / "__main__.py").write_text(main_py)
    return folder


def stack_file(stack: str) -> dict:
    """The `config` of the repository's stacks/Pulumi.<stack>.yaml, as written."""
    return yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]


def only(recorded, type_token: str, name_suffix: str, component=None):
    """The one resource of `type_token` whose name ends with `name_suffix` (within `component`)."""
    matches = [r for r in recorded.of_type(type_token) if r.name.endswith(name_suffix)
               and (component is None or r.name == component or r.name.startswith(f"{component}-"))]
    assert len(matches) == 1, [r.name for r in recorded.of_type(type_token)]
    return matches[0]


MOCK_ACCOUNT = "123456789012"  # the account the Pulumi SDK's mocks (and the recording) answer with


def assert_tls_only(policy_resource, service: str, resources: list[str]) -> None:
    """The recorded queue or bucket policy refuses every request to `resources` sent without TLS,
    and allows nothing."""
    [statement] = policy_statements(policy_resource)
    assert statement["Effect"] == "Deny" and statement["Principal"] == "*"
    assert statement["Action"] == f"{service}:*"
    assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert (statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]) == resources


def trust_policy(role) -> dict:
    """The one statement of a recorded role's trust policy."""
    [statement] = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    return statement


def policy_statements(resource) -> list[dict]:
    """The statements of a recorded resource's JSON `policy` input (role, queue or bucket policy)."""
    return json.loads(resource.inputs["policy"])["Statement"]


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


class Recordings:
    """What a program declares, recorded once per (program, stack, mode, config) for the whole test
    run and shared by the tests that only read it: recording is deterministic (test_recording.py
    proves it), so a second recording of the same program proves nothing a first does not.

    The first worker to ask records and pickles the result into the run's shared temp folder under a
    lock; every other worker (pytest-xdist) loads it from there. Tests that change what they record
    (their own config, a program they write) call record_program themselves."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._mine: dict[str, object] = {}

    def __call__(self, program: Path = None, stack: str = "dev", *, unknowns: bool = False,
                 config: dict | None = None):
        from integration_blueprint.preview.recording import record_program

        program = Path(program or REPO).resolve()
        key = hashlib.sha256(json.dumps([str(program), stack, unknowns, config], sort_keys=True).encode()).hexdigest()[:20]
        if key not in self._mine:
            path = self.folder / f"{key}.pickle"
            with open(self.folder / f"{key}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if path.exists():
                    recorded = pickle.loads(path.read_bytes())
                else:
                    recorded = record_program(program, stack=stack, unknowns=unknowns, config=config)
                    path.write_bytes(pickle.dumps(recorded))
            self._mine[key] = recorded
        return self._mine[key]


@pytest.fixture(scope="session")
def recordings(tmp_path_factory, request) -> Recordings:
    """recordings(program=REPO, stack="dev", unknowns=False, config=None) -> RecordedStack, each
    recorded once per test run (see Recordings)."""
    shared = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):  # pytest-xdist: one folder per worker under the run's
        shared = shared.parent
    folder = shared / "recordings"
    folder.mkdir(exist_ok=True)
    return Recordings(folder)


@pytest.fixture
def env():
    """A Kinesis stream with its DLQs, tables and the stream consumers' handlers, in moto (stream_env.Env)."""
    from moto import mock_aws

    from tests.stream_env import Env

    with mock_aws():
        yield Env()


@pytest.fixture
def billing_env(monkeypatch):
    """The FIFO billing pattern's tables, queues and consumer in moto (billing_env.billing_environment)."""
    from tests.billing_env import billing_environment

    with billing_environment(monkeypatch) as environment:
        yield environment


@pytest.fixture(scope="session")
def policy_analyzer():
    """The real policy pack, started once per test session the way the Pulumi CLI starts it, and
    reused: each test Configures it before it analyses (a preview's own pack answers Configure once)."""
    from integration_blueprint.preview.analyzer import PolicyAnalyzer

    with PolicyAnalyzer(reconfigurable=True) as analyzer:
        yield analyzer


@pytest.fixture(scope="session")
def preview(recordings, policy_analyzer):
    """preview(program=REPO, stack="dev", unknowns=False, **run_preview options) -> PreviewResult: the
    shared recording (`recordings`) through the session's policy pack."""
    from integration_blueprint.preview.run import run_preview

    def analysed(program: Path = None, stack: str = "dev", *, unknowns: bool = False, **options):
        return run_preview(program or REPO, stack=stack, unknowns=unknowns, analyzer=policy_analyzer,
                           recorded=recordings(program, stack, unknowns=unknowns), **options)
    return analysed


@pytest.fixture
def cli_reuses_recordings(monkeypatch, recordings):
    """`blueprint preview` as a user runs it (its own policy pack, resources streamed to it as they
    register), over the shared recording of the program instead of a fresh one: for the tests of
    what the command prints and exits with, not of the recording (test_recording.py and the corpus
    record for real)."""
    from integration_blueprint.preview import run

    def shared(program_dir, *, stack, unknowns=False, on_resource=None, timeout=None, stack_references=None,
               program_memory_mb=None, allow_read=()):
        recorded = recordings(program_dir, stack, unknowns=unknowns)
        for resource in recorded.resources if on_resource else ():
            on_resource(resource)
        return recorded

    monkeypatch.setattr(run, "record_program", shared)


# The longest tests (whole drills, plugin processes) run first: with one worker per core, a drill
# started last would leave the other cores idle while it finishes.
LONGEST_FIRST = ("test_sandbox_drill.py", "test_plugin.py", "test_distributed_map.py")


def pytest_collection_modifyitems(items):
    def rank(item):
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: the order within each file is kept


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config):
    # The session is over: pytest's last full collection (to report exceptions raised in finalizers)
    # would scan the whole heap of a worker (moto, pulumi_aws, botocore's models: 1-2 s) just before
    # the process exits. Frozen, the heap is left out of it (finalizers in it are not run: exiting, they need not be).
    gc.freeze()


@pytest.fixture
def enricher(monkeypatch):
    """The invoice enricher freshly loaded (a cold start) against its two tables in moto."""
    from moto import mock_aws

    from tests.invoice_fixtures import create_tables, load_handler

    with mock_aws():
        create_tables(REGION)
        yield load_handler(monkeypatch)
