"""The multi-language component package (plugin/), without the Pulumi CLI: the plugin is started as
the offline engine starts it (`python <plugin folder> <engine address>`, it prints its port, on the
run's private channel), asked for its
schema over gRPC, and asked to Construct each component with the camelCase inputs a generated SDK
sends. What it registers with the resource monitor must be exactly what the Python class registers
when a Python program uses it.

One plugin process serves the whole module; a fake engine and a recording resource monitor (the
offline preview's own, served over gRPC) stand in for the Pulumi engine.
"""

import functools
import inspect
import json
import re
import typing
from pathlib import Path

import grpc
import jsonschema
import pulumi
import pytest
from google.rpc import status_pb2
from pulumi.runtime.proto import (
    errors_pb2,
    provider_pb2,
)

from integration_blueprint import __version__
from integration_blueprint.components import (
    DistributedMapBatch,
    FifoBillingQueue,
    IdempotentStreamConsumer,
    NonIdempotentStreamConsumer,
    distributed_map_definition,
    fifo_billing_queue,
    reference,
)
from integration_blueprint.components.reference import describe_setting
from integration_blueprint.components.settings import camel_case_names
from integration_blueprint.preview import wire
from integration_blueprint.preview.engine import ComponentPlugin, OfflineEngine
from integration_blueprint.preview.recording import (
    DEFAULT_REGION,
    RecordedResource,
    load_stack_config,
    record_program,
)
from integration_blueprint.program import stack_config

# The end-to-end tier: `make test-slow` and `make test-all` run it, `make test` leaves it out.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
PLUGIN_DIR = REPO / "plugin"
PROJECT = "blueprint"
# The blueprint program's resource name and stack-config reader for each component.
COMPONENTS = {
    FifoBillingQueue: ("billing", stack_config.fifo_billing_args),
    DistributedMapBatch: ("invoices", stack_config.distributed_map_args),
    IdempotentStreamConsumer: ("orders", stack_config.idempotent_stream_args),
    NonIdempotentStreamConsumer: ("payments", stack_config.non_idempotent_stream_args),
}


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def type_token(component: type) -> str:
    return f"{PROJECT}:index:{component.__name__}"


# ---- the engine's side: the offline engine, over gRPC ------------------------------------------

class Engine:
    """The engine address the plugin is started with (it logs there); each Construct gets an
    offline engine of its own for the stack it names, answering the same run's token."""

    def __init__(self):
        self.log_engine = OfflineEngine(project=PROJECT, stack="plugin", config={})
        self.address = self.log_engine.address


class Plugin:
    """The plugin folder run as the offline engine runs it (as the Pulumi engine runs a Python
    plugin, on the run's private channel)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.started = ComponentPlugin(PLUGIN_DIR, engine.log_engine)
        self.provider = self.started.provider

    def stderr_text(self) -> str:
        return self.started.stderr_text()

    def construct(self, component: type, name: str, inputs: dict, *, stack: str, parent: str,
                  config: dict[str, str], input_dependencies: typing.Optional[dict[str, list[str]]] = None,
                  ) -> list[RecordedResource]:
        """Construct `component` with wire `inputs`; every resource it registered, in order."""
        with OfflineEngine(project=PROJECT, stack=stack, config=config, token=self.engine.log_engine.token,
                           region=config.get("aws:region", DEFAULT_REGION)) as engine:
            request = provider_pb2.ConstructRequest(
                project=PROJECT, stack=stack, organization="organization", config=config, dryRun=True,
                monitorEndpoint=engine.address, type=type_token(component), name=name, parent=parent)
            request.inputs.update(inputs)
            for key, urns in (input_dependencies or {}).items():
                request.inputDependencies[key].urns.extend(urns)
            self.provider.Construct(request, timeout=120)
            return list(engine.resources)

    def close(self) -> None:
        self.started.close()


@pytest.fixture(scope="module")
def plugin():
    engine = Engine()
    started = Plugin(engine)
    yield started
    started.close()
    engine.log_engine.close()


@pytest.fixture(scope="module")
def schema(plugin) -> dict:
    return json.loads(plugin.provider.GetSchema(provider_pb2.GetSchemaRequest()).schema)


# ---- the reference: each stack's components run in-process, as a Python program runs them ---------

@functools.cache
def in_process(stack: str):
    """(args per component, everything registered) for the blueprint's components in `stack`."""
    config = load_stack_config(REPO, stack)
    args = {}

    def program():
        platform = stack_config.platform_settings()
        for component, (name, read_args) in COMPONENTS.items():
            args[component] = read_args(platform)
            if args[component] is not None:
                component(name, args[component])

    return args, config, record_program(program, stack=stack, config=config)


def wire_inputs(args: dict) -> dict:
    """The inputs as a generated SDK sends them: camelCase names, unset values left out (numbers
    travel as doubles in the protobuf Struct)."""
    return {camel(key): value for key, value in args.items() if value is not None}


def registrations(resources: list[RecordedResource]) -> list[dict]:
    return sorted(({"urn": r.urn, "type": r.type, "name": r.name, "parent": r.parent, "inputs": r.inputs,
                    "dependencies": sorted(r.dependencies),
                    "property_dependencies": {k: sorted(v) for k, v in r.property_dependencies.items()}}
                   for r in resources), key=lambda r: r["urn"])


# ---- the schema ---------------------------------------------------------------------------------

def test_the_plugin_folder_is_a_python_plugin_that_installs_this_repository():
    manifest = (PLUGIN_DIR / "PulumiPlugin.yaml").read_text()
    assert re.search(r"^runtime:\s*\n\s+name: python$", manifest, re.MULTILINE)
    requirements = [line for line in (PLUGIN_DIR / "requirements.txt").read_text().splitlines()
                    if line.strip() and not line.startswith("#")]
    assert requirements == [".."]  # pip runs in the plugin folder: the repository itself


def test_the_schema_names_the_package_its_version_and_the_four_components(schema):
    assert (schema["name"], schema["version"]) == (PROJECT, __version__)
    assert set(schema["resources"]) == {type_token(c) for c in COMPONENTS}
    assert all(resource["isComponent"] for resource in schema["resources"].values())


@pytest.mark.parametrize("component", list(COMPONENTS), ids=lambda c: c.__name__)
def test_every_argument_is_a_typed_input_and_every_output_attribute_an_output(schema, component):
    resource = schema["resources"][type_token(component)]
    args_class = inspect.signature(component.__init__).parameters["args"].annotation
    assert set(resource["inputProperties"]) == {camel(name) for name in args_class.__annotations__}
    assert sorted(resource["requiredInputs"]) == sorted(camel(n) for n in args_class.__required_keys__)
    assert all("type" in prop or "$ref" in prop for prop in resource["inputProperties"].values())
    # Output annotations of the class and of the bases it shares them with (the stream components).
    annotations = {name: hint for cls in reversed(component.__mro__)
                   for name, hint in vars(cls).get("__annotations__", {}).items()}
    outputs = {camel(name): typing.get_args(hint)[0] for name, hint in annotations.items()
               if typing.get_origin(hint) is pulumi.Output}
    always_set = [name for name, value_type in outputs.items() if type(None) not in typing.get_args(value_type)]
    assert set(resource["properties"]) == set(outputs)
    assert sorted(resource["required"]) == sorted(always_set)


def test_inputs_carry_their_types_and_the_rows_as_descriptions(schema):
    fifo = schema["resources"][type_token(FifoBillingQueue)]["inputProperties"]
    assert fifo["maxReceiveCount"] == {"type": "integer", "description": describe_setting(
        fifo_billing_queue.SETTINGS["max_receive_count"])}
    assert "Default: `5`. Allowed: a whole number from 4 to 1000." in fifo["maxReceiveCount"]["description"]
    assert fifo["scheduleEnabled"]["type"] == "boolean"
    assert fifo["scheduleExpression"]["type"] == "string"
    assert fifo["alarmActions"]["type"] == "array" and fifo["alarmActions"]["items"] == {"type": "string"}
    assert fifo["consumerCode"]["$ref"] == "pulumi.json#/Archive"
    batch = schema["resources"][type_token(DistributedMapBatch)]["inputProperties"]
    assert batch["toleratedFailurePercentage"]["type"] == "number"
    assert batch["maxConcurrency"]["description"].startswith("Children running at once")
    stream = schema["resources"][type_token(IdempotentStreamConsumer)]
    assert stream["inputProperties"]["environment"]["additionalProperties"] == {"type": "string"}
    statement = stream["inputProperties"]["policyStatements"]["items"]["$ref"]
    assert set(schema["types"][statement.removeprefix("#/types/")]["properties"]) == {"actions", "resources"}
    assert stream["properties"]["streamArn"]["type"] == "string"


@pytest.mark.parametrize("component", list(COMPONENTS), ids=lambda c: c.__name__)
def test_every_resource_input_and_output_is_described_inherited_ones_included(schema, component):
    resource = schema["resources"][type_token(component)]
    assert resource["description"].startswith(component.__doc__.split()[0])
    table = reference.COMPONENTS[component]
    python_names = {s.arg for s in table.arguments()} | set(reference.output_descriptions(component))
    for setting in table.arguments():  # the platform's rows too
        assert resource["inputProperties"][camel(setting.arg)]["description"] == camel_case_names(
            describe_setting(setting), python_names)
    undescribed = [name for name, prop in resource["properties"].items() if len(prop.get("description", "")) < 10]
    assert undescribed == []


def test_descriptions_name_arguments_and_outputs_as_other_languages_spell_them(schema):
    """A TypeScript or Go user never sees `item_code` or `max_concurrency`, only itemCode, maxConcurrency."""
    text = json.dumps(schema)
    python_names = {s.arg for table in reference.COMPONENTS.values() for s in table.arguments() if "_" in s.arg}
    assert [name for name in python_names if re.search(rf"\b{name}\b", text)] == []
    batch = schema["resources"][type_token(DistributedMapBatch)]["inputProperties"]
    assert "required with itemCode" in batch["itemHandler"]["description"]


def test_every_type_and_its_properties_are_described(schema):
    for token, spec in schema["types"].items():
        assert spec.get("description"), token
        assert all(prop.get("description") for prop in spec.get("properties", {}).values()), token


def test_fixed_value_sets_are_enums(schema):
    stream = schema["resources"][type_token(IdempotentStreamConsumer)]["inputProperties"]
    assert stream["streamMode"]["$ref"] == "#/types/blueprint:index:StreamMode"
    assert [v["value"] for v in schema["types"]["blueprint:index:StreamMode"]["enum"]] == ["ON_DEMAND", "PROVISIONED"]
    assert schema["types"]["blueprint:index:StartingPosition"]["type"] == "string"
    batch = schema["resources"][type_token(DistributedMapBatch)]["inputProperties"]
    assert [v["value"] for v in schema["types"][batch["retryJitterStrategy"]["$ref"].removeprefix("#/types/")]["enum"]] \
        == ["FULL"]
    retention = schema["types"]["blueprint:index:LogRetentionDays"]
    assert retention["type"] == "integer" and 14 in [v["value"] for v in retention["enum"]]


def test_required_inputs_are_marked_required(schema):
    assert schema["resources"][type_token(DistributedMapBatch)]["requiredInputs"] == ["maxConcurrency"]
    assert distributed_map_definition.SETTINGS["max_concurrency"].required


def _package_schema_validator():
    """Pulumi's published package metaschema (tests/fixtures/schemas/README.md says where from). Its
    version pattern uses ECMA named groups `(?<name>...)`; Python's re spells them `(?P<name>...)`."""
    metaschema = json.loads((REPO / "tests" / "fixtures" / "schemas" / "pulumi-package-schema.json").read_text())
    validator_class = jsonschema.validators.validator_for(metaschema)

    def pattern(validator, expected, instance, _schema):
        if isinstance(instance, str) and not re.search(re.sub(r"\(\?<(?=[A-Za-z])", "(?P<", expected), instance):
            yield jsonschema.ValidationError(f"{instance!r} does not match {expected!r}")

    extended = jsonschema.validators.extend(validator_class, {"pattern": pattern})
    return extended(metaschema)


def test_the_schema_is_a_valid_pulumi_package_schema(schema):
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
              for e in _package_schema_validator().iter_errors(schema)]
    assert errors == []


def test_the_metaschema_check_catches_a_broken_schema(schema):
    broken = {**schema, "resources": {"blueprint:index:FifoBillingQueue": {"inputProperties": {"x": {"type": "int"}}}}}
    assert list(_package_schema_validator().iter_errors(broken))


# ---- Construct: the same resources as the Python class --------------------------------------------

@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_each_stack_constructs_through_the_plugin_exactly_as_in_python(plugin, stack):
    args, config, expected = in_process(stack)
    compared = 0
    for component, (name, _) in COMPONENTS.items():
        if args[component] is None:
            continue
        reference = expected.named(name)
        through_plugin = plugin.construct(component, name, wire_inputs(args[component]), stack=stack,
                                          parent=reference.parent, config=config)
        assert registrations(through_plugin) == registrations(expected.within({reference.urn}).resources)
        compared += 1
    assert compared == len(COMPONENTS)


def test_whole_numbers_stay_whole_through_the_wire(plugin):
    """pulumi 3.272 hands integer inputs to the component as floats; the plugin's workaround keeps
    the queue's redrive policy, the layer ARN and the environment free of `.0`."""
    args, config, expected = in_process("dev")
    recorded = plugin.construct(FifoBillingQueue, "billing", wire_inputs(args[FifoBillingQueue]), stack="dev",
                                parent=expected.named("billing").parent, config=config)
    named = {r.name: r for r in recorded}
    assert '"maxReceiveCount": 5}' in named["billing-charges"].inputs["redrivePolicy"]
    assert named["billing-consumer"].inputs["layers"][0].endswith(":27")
    assert named["billing-consumer"].inputs["environment"]["variables"]["LEDGER_TTL_DAYS"] == "90"


def test_an_integer_input_that_depends_on_another_resource_arrives_as_a_whole_number(plugin):
    """An input with a dependency reaches the component as an Output (the SDK's own int() fails on
    it in 3.272): the mapping gets the number and the dependency."""
    args, config, expected = in_process("dev")
    upstream = f"urn:pulumi:dev::{PROJECT}::aws:ssm/parameter:Parameter::batch-size"
    recorded = plugin.construct(FifoBillingQueue, "billing", wire_inputs(args[FifoBillingQueue]), stack="dev",
                                parent=expected.named("billing").parent, config=config,
                                input_dependencies={"batchSize": [upstream]})
    mapping = next(r for r in recorded if r.name == "billing-consumer-mapping")
    assert mapping.raw_inputs["batchSize"] == 10
    assert mapping.property_dependencies["batchSize"] == [upstream]


DEV_REGION = {"aws:region": "eu-west-1"}


def property_errors(error: grpc.RpcError) -> dict[str, str]:
    """The per-property reasons of an InvalidArgument status, as the engine shows them."""
    found = {}
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            for detail in status_pb2.Status.FromString(value).details:
                reasons = errors_pb2.InputPropertiesError()
                detail.Unpack(reasons)
                found.update({e.property_path: e.reason for e in reasons.errors})
    return found


def test_an_unsafe_setting_is_refused_as_an_input_property_error_named_as_the_sdk_names_it(plugin):
    with pytest.raises(grpc.RpcError) as refused:
        plugin.construct(FifoBillingQueue, "billing", {"maxReceiveCount": 2}, stack="dev", parent="",
                         config=DEV_REGION)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert property_errors(refused.value) == {"maxReceiveCount": (
        "FifoBillingQueue: maxReceiveCount=2 is not allowed: a whole number from 4 to 1000 (receives before a message "
        "moves to the DLQ; 3 or fewer sends messages that hit one transient error to the DLQ)")}
    assert "Traceback" not in refused.value.details() and "File " not in refused.value.details()


def test_every_refused_input_of_a_call_is_one_property_error_each_in_one_answer(plugin):
    with pytest.raises(grpc.RpcError) as refused:
        plugin.construct(FifoBillingQueue, "billing", {"maxReceiveCount": 2, "batchSize": 11}, stack="dev", parent="",
                         config=DEV_REGION)
    errors = property_errors(refused.value)
    assert set(errors) == {"maxReceiveCount", "batchSize"}
    assert errors["batchSize"].startswith("FifoBillingQueue: batchSize=11 is not allowed: a whole number from 1 to 10")
    with pytest.raises(grpc.RpcError) as unknown:
        plugin.construct(FifoBillingQueue, "billing", {"scheduleEnable": False, "batchSiz": 5}, stack="dev", parent="",
                         config=DEV_REGION)
    assert set(property_errors(unknown.value)) == {"scheduleEnable", "batchSiz"}


def test_a_setting_of_the_wrong_type_is_refused_with_the_expected_type(plugin):
    with pytest.raises(grpc.RpcError) as refused:
        plugin.construct(FifoBillingQueue, "billing", {"scheduleEnabled": "no"}, stack="dev", parent="",
                         config=DEV_REGION)
    assert property_errors(refused.value) == {"scheduleEnabled": (
        "FifoBillingQueue: scheduleEnabled='no' is not allowed: 'no' is a string; true or false (false keeps the "
        "schedule but never "
        "fires it (e.g. in dev))")}


def test_an_unknown_input_is_refused_naming_the_nearest_known_one(plugin):
    with pytest.raises(grpc.RpcError) as refused:
        plugin.construct(FifoBillingQueue, "billing", {"scheduleEnable": False}, stack="dev", parent="",
                         config=DEV_REGION)
    [(name, reason)] = property_errors(refused.value).items()
    assert name == "scheduleEnable"
    assert reason.startswith("FifoBillingQueue: unknown input 'scheduleEnable' (did you mean 'scheduleEnabled'?)")


def test_a_refusal_between_two_inputs_names_both_in_camel_case(plugin):
    with pytest.raises(grpc.RpcError) as refused:
        plugin.construct(DistributedMapBatch, "invoices", {"maxConcurrency": 20, "itemReservedConcurrency": 10},
                         stack="dev", parent="", config=DEV_REGION)
    [(name, reason)] = property_errors(refused.value).items()
    assert name == "maxConcurrency"
    assert "maxConcurrency=20 is above itemReservedConcurrency=10" in reason


def test_a_missing_required_input_is_refused_naming_it(plugin):
    with pytest.raises(grpc.RpcError) as refused:
        plugin.construct(DistributedMapBatch, "invoices", {}, stack="dev", parent="", config=DEV_REGION)
    assert list(property_errors(refused.value)) == ["maxConcurrency"]


def test_a_fraction_for_a_whole_number_input_is_refused_naming_the_input(plugin):
    with pytest.raises(grpc.RpcError) as refused:
        plugin.construct(FifoBillingQueue, "billing", {"batchSize": 4.5}, stack="dev", parent="",
                         config=DEV_REGION)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert property_errors(refused.value) == {"batchSize": "batchSize must be a whole number, not 4.5"}


def test_a_refusal_that_names_no_input_is_still_an_invalid_argument_without_a_traceback(plugin):
    with pytest.raises(grpc.RpcError) as refused:
        plugin.construct(FifoBillingQueue, "billing-" + "x" * 80, {}, stack="dev", parent="", config=DEV_REGION)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details().startswith("FifoBillingQueue: the name 'billing-xxx")
    assert "is too long" in refused.value.details() and "Traceback" not in refused.value.details()


def test_a_code_archive_the_engine_could_not_read_is_refused_naming_the_input_as_the_sdk_names_it(plugin):
    """The engine's own error would name the function's `"code"`; a TypeScript team wrote consumerCode."""
    # The plugin runs in the program's folder (here the engine's): a relative path is read from there.
    inputs = {"consumerCode": {wire.SIG: wire.ARCHIVE_SIG, "path": "dist-never-built"}, "consumerHandler": "app.handler"}
    with pytest.raises(grpc.RpcError) as refused:
        plugin.construct(FifoBillingQueue, "billing", inputs, stack="dev", parent="", config=DEV_REGION)

    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert property_errors(refused.value) == {"consumerCode": (
        f"FifoBillingQueue: consumerCode cannot be read: couldn't read archive path '{Path.cwd()}/dist-never-built': "
        f"stat {Path.cwd()}/dist-never-built: no such file or directory. Run the build step that makes it, or point "
        f"consumerCode at where it is (a relative path is read from the program's folder, {Path.cwd()})")}
