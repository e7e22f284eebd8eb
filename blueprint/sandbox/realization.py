"""The local sandbox: a recorded stack realized in the embedded emulator, its handlers run
in-process behind local event source mappings.

    recorded = record_program(repo, stack="dev")          # the same engine as `blueprint preview`
    with running_emulator(region) as emulator:
        sandbox = Sandbox(recorded, emulator).realize()
        sandbox.fire_schedule(name); mapping.drain() for each of sandbox.sqs_mappings ...

What is real: every queue (attributes, redrive policies and moto's redrive at maxReceiveCount),
table (keys, TTL), stream, bucket and state machine (moto's Step Functions interpreter) is created
from the recorded inputs; handlers run unmodified, their AWS calls answered by the in-process
emulator, with the environment variables the component set (recorded queue URLs mapped to the emulator's).

What is local: functions are a registry: the blueprint's own handlers load in this process (each
function its own copy of its handler module, as a separate Lambda container would); a team's code
runs in execution environments of its own (execution_environment.py: a process per environment that
sees only its archive, layers, environment and /tmp); event source mappings are the pollers in
blueprint/sqs_esm.py and blueprint/kinesis_esm.py, and schedules fire on demand.

Time is compressed (see COMPRESSION): nothing here waits out a visibility timeout or a delay.
"""

from __future__ import annotations

import importlib.util
import io
import json
import shutil
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from botocore.exceptions import ClientError

from integration_blueprint.core import aws_limits
from integration_blueprint.handlers.runtime import retry
from integration_blueprint.preview import lambda_archive
from integration_blueprint.preview.recording import RecordedResource, RecordedStack
from integration_blueprint.sandbox.async_invoke import AsyncInvocation, AsyncInvokeSettings
from integration_blueprint.sandbox.authorization import Authorizer, realize_access
from integration_blueprint.sandbox.emulator import (
    TIME_SCALE,
    Emulator,
    environment_variables,
)
from integration_blueprint.sandbox.errors import FunctionCrashed, SandboxError, error_type
from integration_blueprint.sandbox.execution_environment import (
    POWERTOOLS_LAYER_NAME,
    POWERTOOLS_PACKAGES,
    RUNTIME_PACKAGES,
    TIMEOUT_FLOOR_SECONDS,
    TIMEOUT_SCALE,
    Environments,
    FunctionCalls,
    FunctionSpec,
    Incident,
    enforced_timeout,
    lay_out,
)
from integration_blueprint.sandbox.interception import (
    FunctionRun,
    Interception,
    Journal,
    install_authorizer,
    install_request_hooks,
)
from integration_blueprint.sandbox.kinesis_esm import KinesisEventSourceMapping, KinesisMappingSettings
from integration_blueprint.sandbox.lambda_context import LocalLambdaContext
from integration_blueprint.sandbox.sqs_esm import SqsEventSourceMapping

COMPRESSION = {
    "sqs_visibility_timeout": "a failed message is made visible again at once instead of after its "
                              "visibility timeout (receive counts and redrive are real)",
    "sqs_delay_seconds": "queue DelaySeconds are created as 0",
    "kinesis_retry_interval": "a failed stream batch is retried at once (Lambda retries within seconds)",
    "scheduler": "schedules fire on demand, not on their cron",
    "lambda_async_retries": "Lambda's retries of a failed asynchronous invocation (about 1 and 2 minutes "
                            "apart) follow at once; the event's age advances by the documented delays, "
                            "so the maximum event age still ends retries where AWS would",
    "sdk_retries": f"botocore's backoff between retries of a throttled or failed AWS call lasts "
                   f"{TIME_SCALE:g} of the computed wait",
    "handler_retries": f"a handler's own backoff between retries of a transient failure (handlers/runtime/"
                       f"retry.py) lasts {TIME_SCALE:g} of the computed wait",
    "state_machine_retries": f"Step Functions retry waits (IntervalSeconds, BackoffRate, JitterStrategy as "
                             f"computed by the interpreter) last {TIME_SCALE:g} of their length",
    "function_timeout": f"handlers see {TIME_SCALE:g} of their function timeout as remaining time, so an "
                        "idempotency INPROGRESS record left by a crashed invocation expires in well under a "
                        "second instead of after the full timeout",
    "function_timeout_enforced": f"a team's function still running after {TIMEOUT_SCALE:g} of its timeout in real time "
                                 f"(at least {TIMEOUT_FLOOR_SECONDS:g} s; a 60 s function: "
                                 f"{enforced_timeout(60):g} s) is ended and counted as a timeout",
}

# Queue attributes moto accepts on CreateQueue, by the recorded (camelCase) input name.
_QUEUE_ATTRIBUTES = {
    "fifoQueue": "FifoQueue", "contentBasedDeduplication": "ContentBasedDeduplication",
    "visibilityTimeoutSeconds": "VisibilityTimeout", "messageRetentionSeconds": "MessageRetentionPeriod",
    "deduplicationScope": "DeduplicationScope", "fifoThroughputLimit": "FifoThroughputLimit",
    "maxMessageSize": "MaximumMessageSize", "receiveWaitTimeSeconds": "ReceiveMessageWaitTimeSeconds",
}


@dataclass
class LocalFunction:
    """One deployed function: its handler, environment and invocation count."""

    name: str
    arn: str
    handler: str
    environment: dict[str, str]
    timeout: int
    region: str
    invocations: int = 0
    # The folder holding the function's own code (a team's archive, unpacked): its handler module and
    # what that imports are found there first, as Lambda puts the code's root on the path. None: the
    # blueprint's handlers, imported from this package.
    code_root: Optional[Path] = None
    journal: Optional[Journal] = None  # the sandbox's, where each invocation is recorded
    # Where a team's code runs: execution environments of its own, processes that see only what its
    # deployment would (sandbox/execution_environment.py). None: the blueprint's own handlers, in-process.
    environments: Optional[Environments] = field(default=None, repr=False)
    memory_mb: int = aws_limits.LAMBDA_MEMORY_DEFAULT_MB
    _callable: Optional[Callable] = field(default=None, repr=False)
    # Concurrent first invocations (a Map's parallel items) wait for one load instead of each
    # loading its own copy of the module.
    _load_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def load(self) -> Callable:
        """Import the handler module fresh for this function (its own globals: clients, caches,
        table names read at import), with the function's environment applied."""
        if self._callable is not None:
            return self._callable
        with self._load_lock:
            if self._callable is None:
                self._callable = self._import()
            return self._callable

    def _import(self) -> Callable:
        module_name, _, attribute = self.handler.rpartition(".")
        found = importlib.util.find_spec(module_name) if module_name else None
        if found is None or found.origin is None:
            raise SandboxError(f"function {self.name}: handler module {module_name!r} is not importable on this "
                               "Python's path; check the function's handler (module.function)")
        spec = importlib.util.spec_from_file_location(f"{module_name}[{self.name}]", found.origin)
        if spec is None or spec.loader is None:
            raise SandboxError(f"function {self.name}: handler module {module_name!r} cannot be loaded")
        module = importlib.util.module_from_spec(spec)
        with function_environment(self.environment):
            spec.loader.exec_module(module)
        return getattr(module, attribute)

    def context(self) -> LocalLambdaContext:
        # The remaining time the handler sees shrinks like every other wait (emulator.TIME_SCALE); its
        # retry budget stays the full timeout (retry.compressed_time, in __call__).
        return LocalLambdaContext(self.name, self.timeout, region=self.region, time_scale=TIME_SCALE)

    def reset(self) -> None:
        """Forget the loaded module: the next invocation starts a new container (cold start)."""
        self._callable = None
        if self.environments is not None:
            self.environments.reset()

    def __call__(self, event: dict, context: Any = None) -> Any:
        if self.environments is not None:
            return self._run_isolated(event, context or self.context())
        handler = self.load()
        self.invocations += 1
        context = context or self.context()
        # Its context reports TIME_SCALE of the remaining time; the runtime's retries are told so
        # through its declared interface (handlers/runtime/retry.py compressed_time).
        with function_environment(self.environment), retry.compressed_time(TIME_SCALE), \
                FunctionRun(self.name, event, self.journal):
            # Its time starts once it runs: invocations queued behind this process-wide lock would
            # otherwise start with less time left the longer they waited, and the time a handler
            # budgets for its retries would follow thread timing instead of the drill's seed.
            begin = getattr(context, "begin", None)
            if begin is not None:
                begin()
            return handler(event, context)

    def _run_isolated(self, event: Any, context: Any) -> Any:
        """The team's code, in an execution environment of its own; its AWS calls are made here, on
        this thread, so the journal and the faults see them (execution_environment.py)."""
        assert self.environments is not None
        self.invocations += 1
        with FunctionRun(self.name, event, self.journal):
            begin = getattr(context, "begin", None)
            if begin is not None:
                begin()
            return self.environments.invoke(event, context)


_ENVIRONMENT_LOCK = threading.RLock()


@contextmanager
def function_environment(variables: dict[str, str]):
    """os.environ is process-wide, so invocations are serialized while it holds their variables."""
    with _ENVIRONMENT_LOCK, environment_variables(variables):
        yield


@dataclass
class LocalQueue:
    name: str
    url: str
    arn: str
    fifo: bool
    recorded_url: str


@dataclass
class LocalSchedule:
    name: str
    target_arn: str
    input: str




class Sandbox:
    def __init__(self, recorded: RecordedStack, emulator: Emulator, interception: Optional[Interception] = None,
                 contained: bool = True):
        """`contained`: the team's functions run inside the sandbox of integration_blueprint.containment
        (False only for --no-isolation)."""
        self.recorded = recorded
        self.contained = contained
        self.emulator = emulator
        # How a caller watches or disturbs the functions: the one seam (sandbox/interception.py).
        self.interception = interception or Interception()
        self.journal = Journal()  # every invocation and its successful AWS calls, for checks
        install_request_hooks(self.interception.requests, emulator.on_stop)
        self.session = emulator.session()
        self.sqs = emulator.client("sqs", self.session)
        self.region = emulator.region
        self.queues: dict[str, LocalQueue] = {}  # by ARN
        self.functions: dict[str, LocalFunction] = {}  # by ARN and by name
        self.streams: dict[str, str] = {}  # ARN -> name
        self.tables: dict[str, str] = {}  # ARN -> name
        self.state_machines: dict[str, str] = {}  # ARN -> name
        self.schedules: dict[str, LocalSchedule] = {}  # logical name -> schedule
        self.sqs_mappings: list[SqsEventSourceMapping] = []
        self.kinesis_mappings: list = []
        self._url_map: dict[str, str] = {}  # recorded queue URL -> emulator URL
        self._dead_letter_targets: dict[str, str] = {}  # queue ARN -> its redrive target's ARN
        self.async_settings: dict[str, AsyncInvokeSettings] = {}  # function ARN -> its async invoke config
        # Where the team's code is laid out and runs (its archives, layers, the runtime, each
        # environment's /tmp): the only folder the sandbox writes, removed with the emulator.
        self.staging = Path(tempfile.mkdtemp(prefix="blueprint-sandbox-"))
        emulator.on_stop.append(lambda: shutil.rmtree(self.staging, ignore_errors=True))
        self.incidents: list[Incident] = []  # what the team's code was refused or ended for
        self.layer_notes: list[str] = []  # declared layers the sandbox could not put on the path
        self._function_calls = FunctionCalls(self.region)
        self.authorizer: Optional[Authorizer] = None  # made once the account is realized (realize)

    # ---- realizing -----------------------------------------------------------------------------

    def realize(self) -> "Sandbox":
        by_type: dict[str, list[RecordedResource]] = {}
        for resource in self.recorded.resources:
            by_type.setdefault(resource.type, []).append(resource)
        # Each type in the order AWS needs it: a queue before the redrives to it, a stream before its
        # consumers, a function before what invokes it.
        steps: tuple[tuple[str, Callable[[RecordedResource], Any]], ...] = (
            ("aws:sqs/queue:Queue", self._create_queue),
            ("aws:sqs/queue:Queue", lambda queue: self._set_redrive(queue.outputs["arn"], queue.inputs.get("redrivePolicy"))),
            ("aws:sqs/redrivePolicy:RedrivePolicy", lambda policy: self._set_redrive(
                self._queue_by_url(policy.inputs["queueUrl"]).arn, policy.inputs.get("redrivePolicy"))),
            ("aws:dynamodb/table:Table", self._create_table),
            ("aws:kinesis/stream:Stream", self._create_stream),
            # Enhanced fan-out only changes how records are pushed, not which or in what order: a
            # mapping on the consumer reads the consumer's stream.
            ("aws:kinesis/streamConsumer:StreamConsumer", lambda consumer: self.streams.__setitem__(
                consumer.outputs["arn"], self.streams[consumer.inputs["streamArn"]])),
            ("aws:s3/bucket:Bucket", self._create_bucket),
            ("aws:s3/bucketV2:BucketV2", self._create_bucket),
            ("aws:sns/topic:Topic", self._create_topic),
            ("aws:lambda/function:Function", self._register_function),
            ("aws:sfn/stateMachine:StateMachine", self._create_state_machine),
            ("aws:lambda/eventSourceMapping:EventSourceMapping", self._create_mapping),
            ("aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig", self._set_async_settings),
            ("aws:scheduler/schedule:Schedule", self._create_schedule),
        )
        for token, step in steps:
            for resource in by_type.get(token, []):
                step(resource)
        # Every call a function makes is authorized as AWS would, against what the account now holds.
        aws_managed = realize_access(self.recorded, self.emulator, self.session, self._url_map)
        self.authorizer = Authorizer(self.emulator, self.session, self.recorded, aws_managed)
        install_authorizer(self.authorizer, self.emulator.on_stop)
        return self

    def _create_schedule(self, resource: RecordedResource) -> None:
        target = resource.inputs["target"]
        self.schedules[resource.name] = LocalSchedule(resource.name, target["arn"], target.get("input", "{}"))

    def _create_queue(self, resource: RecordedResource) -> None:
        attributes = {}
        for key, attribute in _QUEUE_ATTRIBUTES.items():
            value = resource.inputs.get(key)
            if value is not None:
                attributes[attribute] = str(value).lower() if isinstance(value, bool) else str(value)
        name = resource.outputs["name"]
        url = self.sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
        arn = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        if arn != resource.outputs["arn"]:
            raise SandboxError(f"queue {name}: emulator ARN {arn} differs from the recorded {resource.outputs['arn']}")
        self.queues[arn] = LocalQueue(name, url, arn, bool(resource.inputs.get("fifoQueue")), resource.outputs["url"])
        self._url_map[resource.outputs["url"]] = url

    def _queue_by_url(self, url: str) -> LocalQueue:
        for queue in self.queues.values():
            if url in (queue.url, queue.recorded_url):
                return queue
        raise SandboxError(f"no queue with URL {url}")

    def _set_redrive(self, queue_arn: str, policy: Optional[str]) -> None:
        if not policy:
            return
        target = json.loads(policy)["deadLetterTargetArn"]
        if target not in self.queues:
            raise SandboxError(f"{self.queues[queue_arn].name}: redrive target {target} is not in the stack")
        self.sqs.set_queue_attributes(QueueUrl=self.queues[queue_arn].url, Attributes={"RedrivePolicy": policy})
        self._dead_letter_targets[queue_arn] = target

    def dead_letter_queue(self, queue_arn: str) -> LocalQueue:
        """The queue `queue_arn` redrives to."""
        if queue_arn not in self._dead_letter_targets:
            raise SandboxError(f"queue {queue_arn} has no redrive policy in this stack")
        return self.queues[self._dead_letter_targets[queue_arn]]

    def _create_table(self, resource: RecordedResource) -> None:
        ddb = self.emulator.client("dynamodb", self.session)
        inputs = resource.inputs
        keys = [{"AttributeName": inputs["hashKey"], "KeyType": "HASH"}]
        if inputs.get("rangeKey"):
            keys.append({"AttributeName": inputs["rangeKey"], "KeyType": "RANGE"})
        attributes = [{"AttributeName": a["name"], "AttributeType": a["type"]} for a in inputs["attributes"]]
        name = resource.outputs["name"]
        ddb.create_table(TableName=name, KeySchema=keys, AttributeDefinitions=attributes,
                         BillingMode="PAY_PER_REQUEST")
        ttl = inputs.get("ttl") or {}
        if ttl.get("enabled"):
            ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={
                "Enabled": True, "AttributeName": ttl["attributeName"]})
        self.tables[resource.outputs["arn"]] = name

    def _create_stream(self, resource: RecordedResource) -> None:
        kinesis = self.emulator.client("kinesis", self.session)
        name = resource.outputs["name"]
        # An on-demand stream has no shard count; two shards keep per-shard ordering honest.
        shards = resource.inputs.get("shardCount") or 2
        kinesis.create_stream(StreamName=name, ShardCount=shards)
        retention = resource.inputs.get("retentionPeriod") or aws_limits.KINESIS_RETENTION_DEFAULT_HOURS
        if retention > aws_limits.KINESIS_RETENTION_DEFAULT_HOURS:
            kinesis.increase_stream_retention_period(StreamName=name, RetentionPeriodHours=retention)
        self.streams[resource.outputs["arn"]] = name

    def _create_topic(self, resource: RecordedResource) -> None:
        sns = self.emulator.client("sns", self.session)
        attributes = {"FifoTopic": "true"} if resource.inputs.get("fifoTopic") else {}
        arn = sns.create_topic(Name=resource.outputs["name"], Attributes=attributes)["TopicArn"]
        if arn != resource.outputs["arn"]:
            raise SandboxError(f"topic {resource.name}: emulator ARN {arn} differs from the recorded {resource.outputs['arn']}")

    def _create_bucket(self, resource: RecordedResource) -> None:
        s3 = self.emulator.client("s3", self.session)
        bucket = resource.outputs["bucket"]
        config = {} if self.region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": self.region}}
        s3.create_bucket(Bucket=bucket, **config)

    def map_value(self, value: str) -> str:
        """A recorded value with every recorded queue URL replaced by the emulator's."""
        for recorded_url, url in self._url_map.items():
            value = value.replace(recorded_url, url)
        return value

    def _register_function(self, resource: RecordedResource) -> None:
        variables = (resource.inputs.get("environment") or {}).get("variables") or {}
        environment = {k: self.map_value(str(v)) for k, v in variables.items()}
        declared = dict(environment)
        environment.update(self.emulator.environment())
        environment.setdefault("AWS_LAMBDA_FUNCTION_NAME", resource.outputs["name"])
        handler = resource.inputs["handler"]
        function = LocalFunction(name=resource.outputs["name"], arn=resource.outputs["arn"],
                                 handler=handler, environment=environment,
                                 timeout=resource.inputs.get("timeout") or aws_limits.LAMBDA_TIMEOUT_DEFAULT_SECONDS,
                                 memory_mb=resource.inputs.get("memorySize") or aws_limits.LAMBDA_MEMORY_DEFAULT_MB,
                                 region=self.region, journal=self.journal)
        if is_team_code(handler):
            function.code_root = self._code_root(resource)
            function.environments = self._environments(resource, function, declared)
        self.functions[function.arn] = function
        self.functions[function.name] = function

    def _environments(self, resource: RecordedResource, function: LocalFunction, declared: dict) -> Environments:
        """The execution environments of a function running the team's code."""
        assert function.code_root is not None
        layers = []
        for arn in resource.inputs.get("layers") or []:
            if POWERTOOLS_LAYER_NAME in str(arn):
                layers.append(lay_out(self.staging / "layers" / "powertools", POWERTOOLS_PACKAGES))
            else:
                self.layer_notes.append(f"function {function.name}: layer {arn} is not available to the sandbox and "
                                        "is not on its import path (an import from it fails as a missing module)")
        code = resource.inputs.get("code")
        spec = FunctionSpec(name=function.name, arn=function.arn, handler=function.handler,
                            code_root=function.code_root, archive=_describe_archive(code), layers=layers,
                            environment=declared, timeout=function.timeout, memory_mb=function.memory_mb,
                            staging=self.staging, time_scale=TIME_SCALE, contained=self.contained,
                            ephemeral_storage_mb=int((resource.inputs.get("ephemeralStorage") or {}).get("size")
                                                     or aws_limits.LAMBDA_EPHEMERAL_STORAGE_DEFAULT_MB))
        environments = Environments(spec, self.region, lay_out(self.staging / "runtime", RUNTIME_PACKAGES),
                                    answer=self._function_calls.answer, on_incident=self.incidents.append)
        self.emulator.on_stop.append(environments.close)
        return environments

    def _code_root(self, resource: RecordedResource) -> Path:
        """A team's function code as Lambda would unpack it, in a folder of the sandbox's staging
        folder (a FileArchive folder copied as it is; a zip or an AssetArchive unpacked); the program's
        own folder is never written. Relative paths are the program's, as Pulumi reads them."""
        code = resource.inputs.get("code")
        if not isinstance(code, dict) or self.recorded.program_dir is None:
            raise SandboxError(f"function {resource.name}: its code is not recorded as an archive the sandbox can "
                               "read; the sandbox runs code it can read from the program's folder")
        program_dir = Path(self.recorded.program_dir)
        root = self.staging / "code" / resource.name
        root.mkdir(parents=True)
        try:
            if code.get("archive") == "FileArchive" and isinstance(code.get("path"), str) \
                    and (program_dir / code["path"]).is_dir():
                lambda_archive.copy_folder(program_dir / code["path"], root)
                return root
            if lambda_archive.unpack(code, program_dir, root):
                return root
        except lambda_archive.ArchiveError as exc:
            raise SandboxError(f"function {resource.name}: {exc}") from None
        raise SandboxError(f"function {resource.name}: its code ({code.get('archive') or code.get('asset')}) "
                           "is not a folder, zip or AssetArchive of files on this machine; the sandbox runs "
                           "code it can read from the program's folder")

    def _set_async_settings(self, resource: RecordedResource) -> None:
        inputs = resource.inputs
        function = self.function(inputs["functionName"])
        destination = ((inputs.get("destinationConfig") or {}).get("onFailure") or {}).get("destination")
        if destination and destination not in self.queues:
            raise SandboxError(f"{resource.name}: on-failure destination {destination} is not an SQS queue of this "
                               "stack; the sandbox supports SQS destinations")
        self.async_settings[function.arn] = AsyncInvokeSettings(
            maximum_retry_attempts=_number(inputs.get("maximumRetryAttempts"),
                                           aws_limits.LAMBDA_ASYNC_RETRY_ATTEMPTS_MAX),
            maximum_event_age_seconds=_number(inputs.get("maximumEventAgeInSeconds"),
                                              aws_limits.LAMBDA_ASYNC_EVENT_AGE_MAX_SECONDS),
            on_failure_queue_url=self.queues[destination].url if destination else None)

    def async_invocation(self, name_or_arn: str) -> AsyncInvocation:
        """How Lambda runs `name_or_arn` when a service invokes it asynchronously (Event)."""
        function = self.function(name_or_arn)
        return AsyncInvocation(function_arn=function.arn, handler=self.entry_point(function.name),
                               settings=self.async_settings.get(function.arn, AsyncInvokeSettings()),
                               sqs=self.sqs, context_factory=function.context)

    def invoke(self, name_or_arn: str, event: Any, context: Any = None) -> Any:
        """One invocation of a function, as every trigger runs it: through its interception wrapper
        if it has one, else the function itself."""
        function = self.function(name_or_arn)
        run = self.interception.wrapper(function.name) or function
        return run(event, context)

    def entry_point(self, name_or_arn: str) -> Callable[[Any, Any], Any]:
        """What a trigger (an event source mapping, an async invoke) calls to invoke the function."""
        name = self.function(name_or_arn).name

        def invoke(event: Any, context: Any = None) -> Any:
            return self.invoke(name, event, context)
        return invoke

    def function(self, name_or_arn: str) -> LocalFunction:
        if name_or_arn in self.functions:
            return self.functions[name_or_arn]
        raise SandboxError(f"no function {name_or_arn} in the stack")

    def _create_state_machine(self, resource: RecordedResource) -> None:
        """moto's interpreter runs the executions, the sandbox's own executor those with a Distributed
        Map (sandbox/distributed_map.py); the Lambda tasks of both call the in-process registry through
        the emulator's invoke_function (-> _invoke_for_state_machine -> invoke)."""
        iam = self.emulator.client("iam", self.session)
        role = iam.create_role(RoleName=f"sandbox-{resource.name}"[:64], AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        definition = self.map_value(resource.inputs["definition"])
        self.emulator.invoke_function = self._invoke_for_state_machine
        sfn = self.emulator.client("stepfunctions", self.session)
        try:
            arn = sfn.create_state_machine(name=resource.outputs["name"], definition=definition, roleArn=role,
                                           type=resource.inputs.get("type", "STANDARD"))["stateMachineArn"]
        except ClientError as exc:
            # A Distributed Map's definition is run by the sandbox's executor (sandbox/distributed_map.py),
            # which names what it does not run; any other by moto's interpreter.
            raise SandboxError(f"state machine {resource.name}: the emulator cannot run this definition "
                               f"({exc.response['Error'].get('Message', exc)}); the preview checks it, a real "
                               "account runs it") from None
        self.state_machines[arn] = resource.outputs["name"]

    def _invoke_for_state_machine(self, function_name: str, payload: Any) -> dict:
        """lambda:Invoke as moto's Step Functions interpreter calls it, answered by the function
        here with Lambda's response shape: StatusCode, and for an exception FunctionError "Unhandled"
        with {"errorType", "errorMessage"}, which is what the state machine's Retry/Catch and the
        Map's failure accounting read. A crashed function answers Lambda.Unknown, as Step Functions
        reports a crash or timeout (AWS docs, "Handle Lambda service exceptions")."""
        name = function_name.rsplit(":", 1)[-1] if function_name.startswith("arn:") else function_name
        # The event crosses a JSON boundary, as it does into a real function.
        event = json.loads(payload) if isinstance(payload, (str, bytes)) else json.loads(json.dumps(payload))
        try:
            body, error = json.dumps(self.invoke(name, event)), None
        except FunctionCrashed as exc:
            body, error = json.dumps({"errorType": "Lambda.Unknown", "errorMessage": str(exc)}), "Unhandled"
        except Exception as exc:  # noqa: BLE001 - Lambda reports every exception to the caller
            body, error = json.dumps({"errorType": error_type(exc), "errorMessage": str(exc)}), "Unhandled"
        response = {"StatusCode": 200, "ExecutedVersion": "$LATEST", "Payload": io.BytesIO(body.encode())}
        if error:
            response["FunctionError"] = error
        return response

    def _create_mapping(self, resource: RecordedResource) -> None:
        inputs = resource.inputs
        function = self.function(inputs["functionName"])
        source = inputs["eventSourceArn"]
        reports_failures = "ReportBatchItemFailures" in (inputs.get("functionResponseTypes") or [])
        if source in self.queues:
            queue = self.queues[source]
            self.sqs_mappings.append(SqsEventSourceMapping(
                sqs=self.sqs, queue_url=queue.url, queue_arn=queue.arn, handler=self.entry_point(function.name),
                function=function,
                batch_size=inputs.get("batchSize") or aws_limits.SQS_ESM_BATCH_SIZE_DEFAULT,
                report_batch_item_failures=reports_failures, region=self.region,
                context=function.context()))
            return
        if source in self.streams:

            destination = (((inputs.get("destinationConfig") or {}).get("onFailure") or {}).get("destinationArn"))
            if destination and destination not in self.queues:
                raise SandboxError(f"mapping {resource.name}: on-failure destination {destination} is not an SQS "
                                   "queue of this stack; the sandbox supports SQS destinations")
            settings = KinesisMappingSettings(
                batch_size=inputs.get("batchSize") or aws_limits.KINESIS_ESM_BATCH_SIZE_DEFAULT,
                bisect_batch_on_function_error=bool(inputs.get("bisectBatchOnFunctionError")),
                maximum_retry_attempts=_number(inputs.get("maximumRetryAttempts"),
                                               aws_limits.KINESIS_ESM_RETRY_ATTEMPTS_DEFAULT),
                maximum_record_age_seconds=_number(inputs.get("maximumRecordAgeInSeconds"),
                                                   aws_limits.KINESIS_ESM_RECORD_AGE_DEFAULT),
                report_batch_item_failures=reports_failures,
                on_failure_queue_url=self.queues[destination].url if destination else None,
                function_arn=function.arn)
            # The local mapping reads from TRIM_HORIZON: it exists before the first record is put,
            # so that is also what a LATEST mapping created with the stack would read.
            self.kinesis_mappings.append(KinesisEventSourceMapping(
                kinesis=self.emulator.client("kinesis", self.session), stream_name=self.streams[source],
                handler=self.entry_point(function.name), function=function, settings=settings, sqs=self.sqs,
                region=self.region,
                context=function.context()))
            return
        raise SandboxError(f"mapping {resource.name}: event source {source} is not a queue or stream of this stack")

    # ---- running -------------------------------------------------------------------------------

    def scheduled_input(self, name: str, scheduled_time: str = "2026-11-01T03:00:00Z") -> str:
        """The input Scheduler sends the schedule's target, its context attribute filled in."""
        return self.schedules[name].input.replace("<aws.scheduler.scheduled-time>", scheduled_time)

    def fire_schedule(self, name: str, scheduled_time: str = "2026-11-01T03:00:00Z") -> Any:
        """Start a schedule's target now, with the input Scheduler would send."""
        schedule = self.schedules[name]
        payload = self.scheduled_input(name, scheduled_time)
        if schedule.target_arn in self.functions:  # Scheduler invokes Lambda asynchronously
            return self.async_invocation(schedule.target_arn)(json.loads(payload))
        if schedule.target_arn in self.state_machines:
            sfn = self.emulator.client("stepfunctions", self.session)
            return sfn.start_execution(stateMachineArn=schedule.target_arn, input=payload)
        raise SandboxError(f"schedule {name}: target {schedule.target_arn} is not in the stack")

    def queue_named(self, suffix: str) -> LocalQueue:
        matches = [q for q in self.queues.values() if _logical(q.name).endswith(suffix)]
        if len(matches) != 1:
            raise SandboxError(f"{len(matches)} queues match {suffix!r}: {[q.name for q in self.queues.values()]}")
        return matches[0]

    def depth(self, queue: LocalQueue) -> int:
        attributes = self.sqs.get_queue_attributes(
            QueueUrl=queue.url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
                                                "ApproximateNumberOfMessagesDelayed"])["Attributes"]
        return sum(int(v) for v in attributes.values())


def is_team_code(handler: str) -> bool:
    """A function running the team's own handler (loaded from its archive), not one of this
    package's (the default code, imported from it)."""
    return not handler.startswith("integration_blueprint.")


def _describe_archive(code: Any) -> str:
    """An archive as a person reads it in a message: `FileArchive ./build`, `AssetArchive (3 entries)`."""
    if not isinstance(code, dict):
        return "its code"
    kind = code.get("archive") or code.get("asset") or "archive"
    if isinstance(code.get("path"), str):
        return f"{kind} {code['path']}"
    names = sorted(code.get("assets") or {})
    own = [name for name in names if not name.startswith("integration_blueprint/")]
    shown = ", ".join(own[:3]) + (f" and {len(own) - 3} more" if len(own) > 3 else "")
    return f"{kind} of {shown or 'nothing'}" + (" (+ the blueprint's handler runtime)" if len(own) < len(names) else "")


def _logical(physical_name: str) -> str:
    """`billing-dlq-1a2b3c4.fifo` -> `billing-dlq` (drops the auto-name suffix)."""
    base = physical_name[:-5] if physical_name.endswith(".fifo") else physical_name
    head, _, tail = base.rpartition("-")
    return head if len(tail) == 7 and all(c in "0123456789abcdef" for c in tail) else base


def _number(value: Any, default: int) -> int:
    return default if value is None else int(value)


__all__ = ["Sandbox", "SandboxError", "LocalFunction", "COMPRESSION", "is_team_code"]
