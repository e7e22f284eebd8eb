"""The sandbox's own executor for state machines with a Distributed Map, run as AWS documents it.

moto's Step Functions interpreter (ported from LocalStack) refuses `ItemBatcher` at CreateStateMachine,
ignores `ToleratedFailurePercentage`/`ToleratedFailureCount` (it logs "no effect"), so it never raises
States.ExceedToleratedFailureThreshold, writes only a ResultWriter manifest and runs EXPRESS children
without their duration limit. A state machine whose definition has a DISTRIBUTED Map is therefore run
here instead (the registered fix `distributed_maps_run_by_the_sandbox`); every other one stays with
moto's interpreter. The Step Functions API is still moto's (CreateStateMachine, StartExecution,
DescribeExecution, StopExecution, ListExecutions answer as before): only what an execution does is
ours.

What it runs, each behaviour with the AWS documentation it follows (the URLs below):

- States: Map (DISTRIBUTED), Task, Pass, Succeed, Fail, at the top level and in the item processor;
  Task resources `arn:aws:states:::lambda:invoke`, a function ARN, `arn:aws:states:::sqs:sendMessage`.
  Input/output processing: InputPath, Parameters, ResultSelector, ResultPath, OutputPath with
  reference paths (`$`, `$.a.b`, `$$.Execution.Id`) [INPUT_OUTPUT]. A task's TimeoutSeconds is
  accepted, not timed (see Run._task). Anything else is refused at
  CreateStateMachine, naming it (InvalidDefinition), rather than run differently from AWS.
- Retry: ErrorEquals (States.ALL, States.TaskFailed, States.Timeout or an error name), IntervalSeconds,
  MaxAttempts, BackoffRate, MaxDelaySeconds, JitterStrategy FULL (each wait a random share of the
  computed one) [RETRY]; Catch with ErrorEquals, ResultPath ({"Error", "Cause"}) and Next [CATCH].
  Waits last emulator.TIME_SCALE of their length (as every wait in the sandbox).
- ItemReader: `arn:aws:states:::s3:getObject` with ReaderConfig InputType CSV (CSVHeaderLocation
  FIRST_ROW or GIVEN with CSVHeaders; every value a string) or JSON (an array), MaxItems [ITEM_READER].
  Without it, ItemsPath selects an array of the input. ItemSelector (or Parameters) builds each item's
  input with `$$.Map.Item.Index` / `$$.Map.Item.Value` [ITEM_SELECTOR].
- ItemBatcher: MaxItemsPerBatch, MaxInputBytesPerBatch (at most 256 KiB, the batch's JSON), BatchInput;
  a child receives {"Items": [...], "BatchInput": {...}} [ITEM_BATCHER].
- MaxConcurrency: children running at once (0: no limit; here at most SANDBOX_PARALLEL_CHILDREN
  threads) [MAP].
- ToleratedFailurePercentage / ToleratedFailureCount (default 0): a failed or timed-out child counts
  every item of its batch; once failed items exceed either threshold the Map Run starts no further
  child and the Map state fails with States.ExceedToleratedFailureThreshold [FAIL_THRESHOLD].
- ProcessorConfig.ExecutionType STANDARD or EXPRESS; an EXPRESS child that runs longer than 5 minutes
  (its work plus its retry waits, at their uncompressed length) fails with States.Timeout [EXPRESS].
- ResultWriter (`arn:aws:states:::s3:putObject`): `<Prefix>/<map run id>/manifest.json` and the
  SUCCEEDED_0.json / FAILED_0.json / PENDING_0.json result files (each child's Input, Output or
  Error and Cause), written whether the Map Run succeeded or failed; the Map state's output is then
  {"MapRunArn", "ResultWriterDetails": {"Bucket", "Key"}} [RESULT_WRITER].

What is billed is counted as it happens (StateMachineUsage, read by the drill's cost meter): a
STANDARD transition per state entered and per retry, one per child execution started by a Map
Run, the states inside STANDARD children; EXPRESS children as requests and duration [PRICING].

Lambda functions are invoked only through the sandbox's one invocation path (Emulator.invoke_function,
which the sandbox sets to its Sandbox.invoke route), so interception, faults and the journal apply.

[INPUT_OUTPUT]   https://docs.aws.amazon.com/step-functions/latest/dg/concepts-input-output-filtering.html
[RETRY]          https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html#error-handling-retrying-after-an-error
[CATCH]          https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html#error-handling-fallback-states
[MAP]            https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html
[ITEM_READER]    https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itemreader.html
[ITEM_SELECTOR]  https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itemselector.html
[ITEM_BATCHER]   https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itembatcher.html
[FAIL_THRESHOLD] https://docs.aws.amazon.com/step-functions/latest/dg/maprun-fail-threshold.html
[EXPRESS]        https://docs.aws.amazon.com/step-functions/latest/dg/choosing-workflow-type.html
[RESULT_WRITER]  https://docs.aws.amazon.com/step-functions/latest/dg/input-output-resultwriter.html
[PRICING]        https://aws.amazon.com/step-functions/pricing/
"""

from __future__ import annotations

import copy
import csv
import datetime
import io
import json
import random
import re
import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from integration_blueprint.core import aws_limits
from integration_blueprint.core.patches import FIX, MOTO_VERIFIED, Patcher, patch

NAMES = ("distributed_maps_run_by_the_sandbox",)

# Children run on this many threads at most, whatever MaxConcurrency allows (0 or thousands): the
# functions run in this process, so more threads only add switching.
SANDBOX_PARALLEL_CHILDREN = 8

LAMBDA_INVOKE = "arn:aws:states:::lambda:invoke"
SQS_SEND = "arn:aws:states:::sqs:sendMessage"
S3_GET = "arn:aws:states:::s3:getObject"
S3_PUT = "arn:aws:states:::s3:putObject"
_FUNCTION_ARN = re.compile(r"^arn:aws[a-z-]*:lambda:[^:]+:\d{12}:function:[^:]+(:[^:]+)?$")
# Reference paths: `$`, `$.a.b`, `$$.Execution.Id` (no filters, indexes or wildcards).
_PATH = re.compile(r"^\$\$?(\.[A-Za-z_][A-Za-z0-9_-]*)*$")

STATES = {"Task", "Pass", "Succeed", "Fail", "Map"}
_COMMON = {"Type", "Comment", "Next", "End", "InputPath", "OutputPath"}
_FIELDS = {
    "Task": _COMMON | {"Resource", "Parameters", "ResultSelector", "ResultPath", "Retry", "Catch", "TimeoutSeconds"},
    "Pass": _COMMON | {"Parameters", "Result", "ResultPath"},
    "Succeed": {"Type", "Comment", "InputPath", "OutputPath"},
    "Fail": {"Type", "Comment", "Error", "Cause"},
    "Map": _COMMON | {"ItemProcessor", "ItemReader", "ItemsPath", "ItemSelector", "Parameters", "ItemBatcher",
                      "ResultWriter", "ResultSelector", "ResultPath", "MaxConcurrency", "ToleratedFailurePercentage",
                      "ToleratedFailureCount", "Label", "Retry", "Catch"},
}

THRESHOLD_ERROR = aws_limits.DISTRIBUTED_MAP_TOLERATED_FAILURE_ERROR
TIMEOUT_ERROR = "States.Timeout"
RUNTIME_ERROR = "States.Runtime"
TASK_FAILED = "States.TaskFailed"
ALL_ERRORS = "States.ALL"


class StatesError(Exception):
    """A state's failure, as Step Functions names it (Error) and explains it (Cause)."""

    def __init__(self, error: str, cause: str = ""):
        super().__init__(f"{error}: {cause}")
        self.error = error
        self.cause = cause


# ---- what a definition may hold -------------------------------------------------------------------

def distributed_maps(definition: dict) -> list[str]:
    """Names of the top-level DISTRIBUTED Map states of a definition."""
    states = definition.get("States") if isinstance(definition, dict) else None
    return [name for name, state in (states or {}).items()
            if isinstance(state, dict) and state.get("Type") == "Map"
            and ((state.get("ItemProcessor") or {}).get("ProcessorConfig") or {}).get("Mode") == "DISTRIBUTED"]


def unsupported(definition: dict) -> list[str]:
    """What this executor does not run in `definition`, each named where it is; [] if it runs it all."""
    problems: list[str] = []
    if definition.get("QueryLanguage", "JSONPath") != "JSONPath":
        problems.append("QueryLanguage JSONata (this executor evaluates JSONPath)")
    _check_states(definition, "", problems, top_level=True)
    return problems


def _check_states(machine: dict, where: str, problems: list[str], top_level: bool) -> None:
    states = machine.get("States") or {}
    if machine.get("StartAt") not in states:
        problems.append(f"{where}StartAt names no state")
    for name, state in states.items():
        at = f"{where}{name}"
        kind = state.get("Type")
        if kind not in STATES:
            problems.append(f"{at}: state type {kind}")
            continue
        problems.extend(f"{at}: field {extra}" for extra in sorted(set(state) - _FIELDS[kind]))
        for key in ("InputPath", "OutputPath", "ResultPath", "ItemsPath"):
            value = state.get(key)
            if value is not None and not _PATH.match(str(value)):
                problems.append(f"{at}: {key} {value!r} (reference paths only: $, $.a.b)")
        for key in ("Parameters", "ResultSelector", "ItemSelector"):
            problems.extend(f"{at}: {key} {p}" for p in _template_problems(state.get(key)))
        if kind == "Task":
            resource = str(state.get("Resource", ""))
            if resource not in (LAMBDA_INVOKE, SQS_SEND) and not _FUNCTION_ARN.match(resource):
                problems.append(f"{at}: Task resource {resource}")
        if kind == "Map":
            _check_map(state, at, problems, top_level)


def _check_map(state: dict, at: str, problems: list[str], top_level: bool) -> None:
    processor = state.get("ItemProcessor") or {}
    config = processor.get("ProcessorConfig") or {}
    if config.get("Mode") != "DISTRIBUTED" or not top_level:
        problems.append(f"{at}: a Map that is not a top-level DISTRIBUTED Map")
        return
    if config.get("ExecutionType", "STANDARD") not in ("STANDARD", "EXPRESS"):
        problems.append(f"{at}: ExecutionType {config.get('ExecutionType')}")
    reader = state.get("ItemReader")
    if reader is not None:
        reader_config = reader.get("ReaderConfig") or {}
        if reader.get("Resource") != S3_GET or reader_config.get("InputType") not in ("CSV", "JSON"):
            problems.append(f"{at}: ItemReader {reader.get('Resource')} {reader_config.get('InputType')} "
                            "(this executor reads a CSV or JSON object with s3:getObject)")
    writer = state.get("ResultWriter")
    if writer is not None and writer.get("Resource") != S3_PUT:
        problems.append(f"{at}: ResultWriter {writer.get('Resource')}")
    _check_states(processor, f"{at}.ItemProcessor.", problems, top_level=False)


def _template_problems(template: Any) -> list[str]:
    if isinstance(template, dict):
        found = []
        for key, value in template.items():
            if key.endswith(".$") and not (isinstance(value, str) and _PATH.match(value)):
                found.append(f"{key}: {value!r} (reference paths only; no intrinsic functions)")
            else:
                found.extend(_template_problems(value))
        return found
    if isinstance(template, list):
        return [p for value in template for p in _template_problems(value)]
    return []


# ---- paths and templates [INPUT_OUTPUT] -------------------------------------------------------

def read_path(path: str, data: Any, context: dict) -> Any:
    value = context if path.startswith("$$") else data
    for part in path.lstrip("$").split(".")[1:]:
        if not isinstance(value, dict) or part not in value:
            raise StatesError(RUNTIME_ERROR, f"The JSONPath {path} could not be found in the input")
        value = value[part]
    return value


def resolve(template: Any, data: Any, context: dict) -> Any:
    """A Parameters/ItemSelector/ResultSelector template with its `key.$` paths read from `data`."""
    if isinstance(template, dict):
        return {(key[:-2] if key.endswith(".$") else key):
                (read_path(value, data, context) if key.endswith(".$") else resolve(value, data, context))
                for key, value in template.items()}
    if isinstance(template, list):
        return [resolve(value, data, context) for value in template]
    return template


def apply_result_path(path: Optional[str], state_input: Any, result: Any) -> Any:
    if path is None:
        return state_input
    parts = path.lstrip("$").split(".")[1:]
    if not parts:
        return result
    output = copy.deepcopy(state_input) if isinstance(state_input, dict) else {}
    target = output
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    target[parts[-1]] = result
    return output


def _input_path(state: dict, data: Any, context: dict) -> Any:
    if "InputPath" in state and state["InputPath"] is None:
        return {}
    return read_path(state.get("InputPath", "$"), data, context)


def _output_path(state: dict, data: Any, context: dict) -> Any:
    if "OutputPath" in state and state["OutputPath"] is None:
        return {}
    return read_path(state.get("OutputPath", "$"), data, context)


def _matches(error_equals: list, error: str) -> bool:
    return any(name == ALL_ERRORS or name == error or (name == TASK_FAILED and error != TIMEOUT_ERROR)
               for name in error_equals)


# ---- usage (what AWS bills) [PRICING] ----------------------------------------------------------

@dataclass
class ExpressChild:
    """One EXPRESS child execution: what its duration is made of."""

    records: int = 0  # records handed to its Lambda invocations (duplicates and retries included)
    waited_seconds: float = 0.0  # its retry waits, at their uncompressed length


@dataclass
class StateMachineUsage:
    standard_transitions: int = 0
    children_started: int = 0
    express_children: list["ExpressChild"] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def transition(self, count: int = 1) -> None:
        with self._lock:
            self.standard_transitions += count


# ---- one execution -----------------------------------------------------------------------------

@dataclass
class _Clock:
    """A run's emulated time: real time, with compressed waits counted at their full length."""

    time_scale: float
    started: float = field(default_factory=time.monotonic)
    waited: float = 0.0  # uncompressed seconds waited

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds * self.time_scale)
        self.waited += seconds

    def elapsed(self) -> float:
        real = time.monotonic() - self.started
        return max(real - self.waited * self.time_scale, 0.0) + self.waited


@dataclass
class _Child:
    index: int
    input: Any
    items: int
    arn: str
    status: str = "RUNNING"
    output: Any = None
    error: str = ""
    cause: str = ""
    started: str = ""
    stopped: str = ""


# The emulator whose block this process is in (emulator.running_emulator serves it): executions
# started meanwhile run for it. Handed in rather than imported, so this module does not import the
# emulator that imports it.
_SERVED: list = []


@contextmanager
def serving(emulator: Any) -> Iterator[None]:
    """State machines with a Distributed Map started within the block run for `emulator` (its
    clients, its usage meter, its time scale)."""
    _SERVED.append(emulator)
    try:
        yield
    finally:
        _SERVED.remove(emulator)


class Run:
    """One execution of a state machine with a Distributed Map, in the thread moto's Execution.start
    would have started its worker in."""

    def __init__(self, *, definition: dict, execution_arn: str, machine_arn: str, name: str, execution_input: Any,
                 region: str, account: str, emulator: Any):
        self.definition = definition
        self.execution_arn = execution_arn
        self.machine_arn = machine_arn
        self.machine_name = machine_arn.rsplit(":", 1)[-1]
        self.input = execution_input
        self.region = region
        self.account = account
        self.emulator = emulator
        self.usage: StateMachineUsage = emulator.state_machine_usage
        self.time_scale = emulator.time_scale
        self.stopped = threading.Event()
        self.context = {"Execution": {"Id": execution_arn, "Name": name, "Input": execution_input,
                                      "StartTime": _now()},
                        "StateMachine": {"Id": machine_arn, "Name": self.machine_name}}

    # -- the state loop --

    def run(self) -> Any:
        """The execution's output, or StatesError (the execution fails with it)."""
        return self._states(self.definition, self.input, self.context, _Clock(self.time_scale), child=None)

    def _states(self, machine: dict, data: Any, context: dict, clock: _Clock, child: Optional[ExpressChild]) -> Any:
        """Run `machine`'s states from StartAt; `child` is the EXPRESS child they run in (None: they
        bill as STANDARD transitions)."""
        states, name = machine["States"], machine["StartAt"]
        while True:
            if self.stopped.is_set():
                raise StatesError("States.Aborted", "the execution was stopped")
            state = states[name]
            if child is None:
                self.usage.transition()
            kind = state["Type"]
            if kind == "Fail":
                raise StatesError(state.get("Error", "States.Fail"), state.get("Cause", ""))
            if kind == "Succeed":
                return _output_path(state, _input_path(state, data, context), context)
            try:
                data = self._with_retries(name, state, data, context, clock, child)
            except _Caught as caught:
                data, name = caught.output, caught.next
                continue
            if state.get("End"):
                return data
            name = state["Next"]

    def _with_retries(self, name: str, state: dict, data: Any, context: dict, clock: _Clock,
                      child: Optional[ExpressChild]) -> Any:
        """The state's output after its Retry: the first retrier whose ErrorEquals matches decides,
        and once its MaxAttempts are spent the error stands [RETRY]; then its Catch, whose taking
        raises _Caught with the Catch's output and next state [CATCH]."""
        retriers = state.get("Retry") or []
        attempts = [0] * len(retriers)
        while True:
            try:
                return self._state(state, data, context, clock, child)
            except StatesError as failure:
                index = next((i for i, r in enumerate(retriers) if _matches(r["ErrorEquals"], failure.error)), None)
                if index is not None and attempts[index] < retriers[index].get("MaxAttempts", 3):
                    pause = self._retry_wait(retriers[index], attempts[index], context, name)
                    if child is not None and clock.elapsed() + pause > aws_limits.SFN_EXPRESS_MAX_DURATION_SECONDS:
                        # An EXPRESS child ends at its time limit, mid-wait [EXPRESS].
                        raise StatesError(TIMEOUT_ERROR, f"an EXPRESS child reaches the "
                                                         f"{aws_limits.SFN_EXPRESS_MAX_DURATION_SECONDS} s limit") from None
                    clock.sleep(pause)
                    attempts[index] += 1
                    if child is None:
                        self.usage.transition()  # every retry is a transition [PRICING]
                    continue
                for catcher in state.get("Catch") or []:
                    if _matches(catcher["ErrorEquals"], failure.error):
                        output = apply_result_path(catcher.get("ResultPath", "$"), data,
                                                   {"Error": failure.error, "Cause": failure.cause})
                        raise _Caught(output, catcher["Next"]) from None
                raise

    @staticmethod
    def _retry_wait(retrier: dict, attempt: int, context: dict, name: str) -> float:
        """IntervalSeconds x BackoffRate^attempt, at most MaxDelaySeconds; with JitterStrategy FULL a
        random share of it, seeded by the execution, state and attempt (the same run waits the same)."""
        wait_seconds = retrier.get("IntervalSeconds", 1) * retrier.get("BackoffRate", 2.0) ** attempt
        if retrier.get("MaxDelaySeconds") is not None:
            wait_seconds = min(wait_seconds, retrier["MaxDelaySeconds"])
        if retrier.get("JitterStrategy", "NONE") == "FULL":
            wait_seconds = random.Random(f"{context['Execution']['Id']}:{name}:{attempt}").uniform(0, wait_seconds)
        return wait_seconds

    def _state(self, state: dict, data: Any, context: dict, clock: _Clock, child: Optional[ExpressChild]) -> Any:
        effective = _input_path(state, data, context)
        kind = state["Type"]
        if kind == "Pass":
            result = state["Result"] if "Result" in state else (
                resolve(state["Parameters"], effective, context) if "Parameters" in state else effective)
        elif kind == "Task":
            result = self._task(state, effective, context, clock, child)
        else:
            result = self._map(state, effective, context)
        if "ResultSelector" in state:
            result = resolve(state["ResultSelector"], result, context)
        return _output_path(state, apply_result_path(state.get("ResultPath", "$"), data, result), context)

    # -- tasks --

    def _task(self, state: dict, effective: Any, context: dict, clock: _Clock, child: Optional[ExpressChild]) -> Any:
        resource = state["Resource"]
        parameters = resolve(state["Parameters"], effective, context) if "Parameters" in state else effective
        if resource == SQS_SEND:
            return self._send_message(parameters)
        optimized = resource == LAMBDA_INVOKE
        function = parameters.get("FunctionName") if optimized else resource
        payload = parameters.get("Payload", effective) if optimized else parameters
        if child is not None:
            child.records += _records(payload)
        # TimeoutSeconds is not timed here: the function runs in this process at this machine's speed
        # (a loaded machine would time out healthy work); its own timeout, which the component keeps
        # under the task's, is the sandbox's to enforce.
        return self._invoke(str(function), payload, optimized)

    def _invoke(self, function: str, payload: Any, optimized: bool) -> Any:
        if self.emulator.invoke_function is None:
            raise StatesError("Lambda.ResourceNotFoundException", f"no function {function} in the sandbox")
        response = self.emulator.invoke_function(function, json.dumps(payload))
        body = response["Payload"].read().decode()
        if response.get("FunctionError"):
            try:
                error = json.loads(body).get("errorType") or "Exception"
            except ValueError:
                error = "Exception"
            raise StatesError(error, body)  # the cause is Lambda's error payload, as on AWS
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = body
        if not optimized:
            return parsed
        return {"ExecutedVersion": response.get("ExecutedVersion", "$LATEST"), "Payload": parsed,
                "StatusCode": response.get("StatusCode", 200)}

    def _send_message(self, parameters: dict) -> dict:
        body = parameters.get("MessageBody")
        request = {**parameters, "MessageBody": body if isinstance(body, str) else json.dumps(body)}
        response = self._client("sqs").send_message(**request)
        return {"MessageId": response["MessageId"], "MD5OfMessageBody": response.get("MD5OfMessageBody")}

    def _client(self, service: str):
        return self.emulator.client(service, self._session())

    def _session(self):
        if not hasattr(self, "_own_session"):
            self._own_session = self.emulator.session()
        return self._own_session

    # -- the Distributed Map [MAP] --

    def _map(self, state: dict, effective: Any, context: dict) -> Any:
        items = self._items(state, effective, context)
        inputs = self._child_inputs(state, items, effective, context)
        processor = state["ItemProcessor"]
        express = processor["ProcessorConfig"].get("ExecutionType", "STANDARD") == "EXPRESS"
        run_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.execution_arn}/{state.get('Label', '')}"))
        label = state.get("Label") or "Map"
        map_run_arn = f"arn:aws:states:{self.region}:{self.account}:mapRun:{self.machine_name}/{label}:{run_id}"
        children = [_Child(index=i, input=child_input, items=count,
                           arn=f"arn:aws:states:{self.region}:{self.account}:execution:{self.machine_name}/{label}:"
                               f"{run_id[:8]}-{i:06d}")
                    for i, (child_input, count) in enumerate(inputs)]
        total = sum(c.items for c in children)
        allowed = allowed_failures(state, total)
        failed_items = 0
        # Children start only as others end (never queued ahead), so a crossed threshold stops the rest.
        concurrency = min(int(state.get("MaxConcurrency") or 0) or SANDBOX_PARALLEL_CHILDREN, SANDBOX_PARALLEL_CHILDREN)
        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="sandbox-map-child") as pool:
            pending = list(children)
            running: dict[Future, _Child] = {}
            exceeded = False
            while pending or running:
                while pending and len(running) < concurrency and not exceeded and not self.stopped.is_set():
                    next_child = pending.pop(0)
                    running[pool.submit(self._child, processor, next_child, express)] = next_child
                if not running:
                    break
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    finished = running.pop(future)
                    if finished.status != "SUCCEEDED":
                        failed_items += finished.items
                if failed_items > allowed:
                    exceeded = True  # no further child starts [FAIL_THRESHOLD]
        details = self._write_results(state, effective, context, children, map_run_arn, run_id)
        if self.stopped.is_set():
            raise StatesError("States.Aborted", "the execution was stopped")
        if failed_items > allowed:
            raise StatesError(THRESHOLD_ERROR, f"The specified tolerated failure threshold was exceeded: "
                                               f"{failed_items} of {total} items failed, {allowed} tolerated")
        if details is not None:
            return {"MapRunArn": map_run_arn, "ResultWriterDetails": details}
        return [child.output for child in children]

    def _items(self, state: dict, effective: Any, context: dict) -> list:
        reader = state.get("ItemReader")
        if reader is None:
            items = read_path(state.get("ItemsPath", "$"), effective, context)
            if not isinstance(items, list):
                raise StatesError(RUNTIME_ERROR, "the Map's ItemsPath does not select an array")
            return items
        parameters = resolve(reader.get("Parameters") or {}, effective, context)
        config = reader.get("ReaderConfig") or {}
        try:
            body = self._client("s3").get_object(Bucket=parameters["Bucket"], Key=parameters["Key"])["Body"].read()
        except Exception as exc:  # noqa: BLE001 - any read failure fails the Map as on AWS
            raise StatesError("States.ItemReaderFailed", f"reading s3://{parameters.get('Bucket')}/"
                                                         f"{parameters.get('Key')}: {exc}") from None
        text = body.decode("utf-8-sig")
        if config.get("InputType") == "JSON":
            items = json.loads(text)
            if not isinstance(items, list):
                raise StatesError("States.ItemReaderFailed", "the JSON object is not an array")
        else:
            rows = list(csv.reader(io.StringIO(text)))
            if config.get("CSVHeaderLocation", "FIRST_ROW") == "GIVEN":
                headers = list(config.get("CSVHeaders") or [])
            else:
                headers, rows = (rows[0], rows[1:]) if rows else ([], [])
            items = [dict(zip(headers, row)) for row in rows if row]
        limit = config.get("MaxItems")
        return items[:int(limit)] if limit else items

    def _child_inputs(self, state: dict, items: list, effective: Any, context: dict) -> list[tuple[Any, int]]:
        """Each child's input with the number of items it carries [ITEM_SELECTOR, ITEM_BATCHER]."""
        selector = state.get("ItemSelector", state.get("Parameters"))
        selected = [resolve(selector, effective, {**context, "Map": {"Item": {"Index": i, "Value": item}}})
                    if selector is not None else item for i, item in enumerate(items)]
        batcher = state.get("ItemBatcher")
        if batcher is None:
            return [(item, 1) for item in selected]
        most_items = int(batcher.get("MaxItemsPerBatch") or len(selected) or 1)
        most_bytes = int(batcher.get("MaxInputBytesPerBatch") or aws_limits.DISTRIBUTED_MAP_ITEM_BATCHER_MAX_INPUT_BYTES)
        batch_input = resolve(batcher["BatchInput"], effective, context) if "BatchInput" in batcher else None
        batches: list[tuple[Any, int]] = []
        # A batch's size is counted as it grows (its JSON without items, each item's, a comma between
        # two), not by encoding the whole batch again for each item added.
        empty = _size([], batch_input)
        current: list = []
        current_bytes = 0  # the current batch's items as JSON, commas included
        for item in selected:
            item_bytes = _size_of(item)
            grown = current_bytes + (1 if current else 0) + item_bytes
            if current and (len(current) + 1 > most_items or empty + grown > most_bytes):
                batches.append((_batch(current, batch_input), len(current)))
                current, grown = [], item_bytes
            if empty + grown > most_bytes:
                raise StatesError(RUNTIME_ERROR, f"an item of {empty + item_bytes} bytes does not fit the "
                                                 f"ItemBatcher's MaxInputBytesPerBatch of {most_bytes}")
            current.append(item)
            current_bytes = grown
        if current:
            batches.append((_batch(current, batch_input), len(current)))
        return batches

    def _child(self, processor: dict, child: _Child, express: bool) -> None:
        """One child execution of the item processor, its outcome recorded on `child`."""
        child.started = _now()
        self.usage.transition()  # a Map Run bills a transition per child execution started [PRICING]
        with self.usage._lock:
            self.usage.children_started += 1
        express_usage = ExpressChild() if express else None
        clock = _Clock(self.time_scale)
        context = {"Execution": {"Id": child.arn, "Name": child.arn.rsplit(":", 1)[-1], "Input": child.input,
                                 "StartTime": child.started},
                   "StateMachine": {"Id": self.machine_arn, "Name": self.machine_name}}
        try:
            # A STANDARD child's states bill as transitions; an EXPRESS child's bill its request and
            # duration instead [PRICING].
            output = self._states(processor, copy.deepcopy(child.input), context, clock, child=express_usage)
            if express and clock.elapsed() > aws_limits.SFN_EXPRESS_MAX_DURATION_SECONDS:
                raise StatesError(TIMEOUT_ERROR, f"an EXPRESS child ran {clock.elapsed():.0f} s, over the "
                                                 f"{aws_limits.SFN_EXPRESS_MAX_DURATION_SECONDS} s limit")
            child.status, child.output = "SUCCEEDED", output
        except StatesError as failure:
            child.status = "TIMED_OUT" if failure.error == TIMEOUT_ERROR else "FAILED"
            child.error, child.cause = failure.error, failure.cause
        except Exception as exc:  # noqa: BLE001 - an executor fault fails the child, never the process
            child.status, child.error, child.cause = "FAILED", RUNTIME_ERROR, f"{type(exc).__name__}: {exc}"
        finally:
            child.stopped = _now()
            if express_usage is not None:
                express_usage.waited_seconds = clock.waited
                with self.usage._lock:
                    self.usage.express_children.append(express_usage)

    def _write_results(self, state: dict, effective: Any, context: dict, children: list[_Child], map_run_arn: str,
                       run_id: str) -> Optional[dict]:
        """The ResultWriter's files and manifest [RESULT_WRITER]; None without a ResultWriter."""
        writer = state.get("ResultWriter")
        if writer is None:
            return None
        parameters = resolve(writer.get("Parameters") or {}, effective, context)
        bucket, prefix = parameters["Bucket"], str(parameters.get("Prefix", "")).rstrip("/")
        base = f"{prefix}/{run_id}" if prefix else run_id
        s3 = self._client("s3")
        files: dict[str, list] = {"FAILED": [], "PENDING": [], "SUCCEEDED": []}
        groups = {"SUCCEEDED": [c for c in children if c.status == "SUCCEEDED"],
                  "FAILED": [c for c in children if c.status in ("FAILED", "TIMED_OUT")],
                  "PENDING": [c for c in children if c.status == "RUNNING"]}
        for status, group in groups.items():
            if not group:
                continue
            key = f"{base}/{status}_0.json"
            body = json.dumps([_child_result(child, self.machine_arn) for child in group]).encode()
            s3.put_object(Bucket=bucket, Key=key, Body=body)
            files[status].append({"Key": key, "Size": len(body)})
        manifest_key = f"{base}/manifest.json"
        s3.put_object(Bucket=bucket, Key=manifest_key, Body=json.dumps({
            "DestinationBucket": bucket, "MapRunArn": map_run_arn, "ResultFiles": files}).encode())
        return {"Bucket": bucket, "Key": manifest_key}


class _Caught(Exception):
    def __init__(self, output: Any, next_state: str):
        super().__init__(next_state)
        self.output = output
        self.next = next_state


def allowed_failures(state: dict, total: int) -> int:
    """Failed items the Map Run tolerates: the lower of its count and its percentage of the items
    (neither set: none) [FAIL_THRESHOLD]."""
    limits = []
    if state.get("ToleratedFailureCount") is not None:
        limits.append(int(state["ToleratedFailureCount"]))
    if state.get("ToleratedFailurePercentage") is not None:
        limits.append(int(total * float(state["ToleratedFailurePercentage"]) / 100))
    return min(limits) if limits else 0


def _batch(items: list, batch_input: Any) -> dict:
    return {"Items": items, **({"BatchInput": batch_input} if batch_input is not None else {})}


def _size(items: list, batch_input: Any) -> int:
    return _size_of(_batch(items, batch_input))


def _size_of(value: Any) -> int:
    """The bytes of `value` as a state's input (compact JSON, UTF-8)."""
    return len(json.dumps(value, separators=(",", ":")).encode())


def _records(payload: Any) -> int:
    items = payload.get("Items") if isinstance(payload, dict) else None
    return len(items) if isinstance(items, list) else 1


def _child_result(child: _Child, machine_arn: str) -> dict:
    result = {"ExecutionArn": child.arn, "Input": json.dumps(child.input), "InputDetails": {"Included": True},
              "Name": child.arn.rsplit(":", 1)[-1], "StartDate": child.started, "StateMachineArn": machine_arn,
              "Status": child.status, "StopDate": child.stopped}
    if child.status == "SUCCEEDED":
        result.update(Output=json.dumps(child.output), OutputDetails={"Included": True})
    elif child.status != "RUNNING":
        result.update(Error=child.error, Cause=child.cause)
    return result


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


# ---- into moto ---------------------------------------------------------------------------------

@patch("distributed_maps_run_by_the_sandbox", package="moto", verified=MOTO_VERIFIED, kind=FIX,
       target="moto.stepfunctions.parser.models.StepFunctionsParserBackend._validate_definition, "
              "moto.stepfunctions.parser.backend.execution.Execution.start, .stop",
       buys="a state machine with a Distributed Map runs as AWS documents it (ItemBatcher, tolerated failures "
            "raising States.ExceedToleratedFailureThreshold, EXPRESS children's 5-minute limit, the ResultWriter's "
            "result files), where moto refused ItemBatcher and ignored the thresholds")
def distributed_maps_run_by_the_sandbox(patcher: Patcher) -> None:
    """CreateStateMachine accepts a definition with a DISTRIBUTED Map that this executor runs (and
    refuses one it cannot, naming what, instead of moto's parser error); StartExecution of such a
    machine runs it here, on a thread of its own as moto would, its outcome on moto's Execution (so
    DescribeExecution, ListExecutions and StopExecution answer as for any other)."""
    from moto.stepfunctions.parser import models
    from moto.stepfunctions.parser.api import ExecutionStatus, InvalidDefinition
    from moto.stepfunctions.parser.backend import execution as execution_module

    validate = models.StepFunctionsParserBackend._validate_definition
    start, stop = execution_module.Execution.start, execution_module.Execution.stop

    def validate_definition(definition: str):
        parsed = _parsed(definition)
        if parsed is None or not distributed_maps(parsed):
            return validate(definition)
        problems = unsupported(parsed)
        if problems:
            # The message positionally: moto 5.2.6's exceptions read a `message=` keyword as a format
            # argument of their default text ("An unspecified service error occurred"). The error code
            # by keyword: moto 5.2.5's needs it (its InvalidDefinition names none), 5.2.6's ignores it
            # (its class names it). Both answer as AWS does: InvalidDefinition, with our message.
            raise InvalidDefinition("the sandbox's Distributed Map executor does not run " + "; ".join(problems),
                                    exception_type="InvalidDefinition")
        return None

    def start_execution(self):
        parsed = _parsed(self.state_machine.definition)
        emulator = _SERVED[-1] if _SERVED else None
        if parsed is None or not distributed_maps(parsed) or emulator is None:
            return start(self)
        run = Run(definition=parsed, execution_arn=self.exec_arn, machine_arn=self.state_machine.arn,
                  name=self.name, execution_input=self.input_data, region=self.region_name,
                  account=self.account_id, emulator=emulator)
        self.sandbox_run = run
        self.exec_status = ExecutionStatus.RUNNING

        def work():
            try:
                output = run.run()
            except StatesError as failure:
                if self.exec_status == ExecutionStatus.RUNNING:
                    self.error, self.cause = failure.error, failure.cause[:32_768]
                    self.exec_status = ExecutionStatus.FAILED
            except Exception as exc:  # noqa: BLE001 - the execution fails, the emulator goes on
                self.error, self.cause = RUNTIME_ERROR, f"{type(exc).__name__}: {exc}"
                self.exec_status = ExecutionStatus.FAILED
            else:
                if self.exec_status == ExecutionStatus.RUNNING:
                    self.output = output
                    self.exec_status = ExecutionStatus.SUCCEEDED
            if self.stop_date is None:
                self.stop_date = datetime.datetime.now(tz=datetime.timezone.utc)

        threading.Thread(target=work, name=f"sandbox-execution-{self.name}", daemon=True).start()

    def stop_execution(self, stop_date, error, cause):
        run = getattr(self, "sandbox_run", None)
        if run is None:
            return stop(self, stop_date, error, cause)
        run.stopped.set()
        if self.exec_status == ExecutionStatus.RUNNING:
            self.stop_date, self.error, self.cause = stop_date, error or None, cause or None
            self.exec_status = ExecutionStatus.ABORTED
        return None

    patcher.replace(models.StepFunctionsParserBackend, "_validate_definition", staticmethod(validate_definition))
    patcher.replace(execution_module.Execution, "start", start_execution)
    patcher.replace(execution_module.Execution, "stop", stop_execution)


def _parsed(definition: Any) -> Optional[dict]:
    try:
        parsed = json.loads(definition) if isinstance(definition, str) else definition
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None
