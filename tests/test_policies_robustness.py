"""Never a crash: the pack gives a verdict on every resource whatever a property holds.

Every property of every resource in two programs (the every-violation fixture and the blueprint
itself), top-level and nested, and every value inside the JSON documents AWS takes as strings
(redrive policies, IAM policies, state machine definitions), is replaced in turn by absurd values:
JSON nested 1,500 deep, integers of 400 digits, 1e400, NaN, infinity, negative and fractional
counts, empty and wildcard strings, a 5,000-digit number, empty containers. Every rule then runs
on the changed resource (resource rules) and on it with its neighbours (stack rules, which read a
resource's links one hop away): none may raise anything but the SDK's "unknown during preview".

The rules are called in-process with the SDK's own argument classes (the pack's servicer builds
the same ones from the gRPC request): through gRPC the ~5,000 cases would take minutes. One case
of each kind also goes through the real analyzer, which must answer with verdicts."""

import copy
import json
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pulumi_aws as aws
import pytest
from google.protobuf import json_format
from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy
from test_policies import analyse

from integration_blueprint.policies.rules import POLICIES
from integration_blueprint.preview.recording import record_program

REPO = Path(__file__).resolve().parents[1]
PROGRAMS = (REPO / "tests" / "fixtures" / "every_violation", REPO)
OPTIONS = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])
RESOURCE_RULES = [p for p in POLICIES if isinstance(p, ResourceValidationPolicy)]
STACK_RULES = [p for p in POLICIES if isinstance(p, StackValidationPolicy)]

DEEP = "[" * 1500 + "]" * 1500
# What a property may be set to (what survives Pulumi's wire: strings, doubles, objects, lists).
ABSURD = [DEEP, float("inf"), float("nan"), -1, 0.5, "", "*", "9" * 5000, {}, [], True]
# What a value inside a JSON document may be written as (JSON text; Python reads 1e400 as infinity).
ABSURD_JSON = [DEEP, "1" + "0" * 400, "1e400", "-1", "0.5", "NaN", '""', '"*"', "{}", "[]", "null",
               json.dumps("9" * 5000)]
NESTED_DEPTH = 4  # how deep paths into objects and JSON documents go (first list item only)


def paths(value, prefix=(), depth=0):
    if depth >= NESTED_DEPTH:
        return
    items = value.items() if isinstance(value, dict) else enumerate(value[:1]) if isinstance(value, list) else ()
    for key, child in items:
        yield prefix + (key,)
        yield from paths(child, prefix + (key,), depth + 1)


def replaced(document, path, value):
    changed = copy.deepcopy(document)
    holder = changed
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return changed


def json_documents(props):
    for key, value in props.items():
        if isinstance(value, str) and value[:1] in "{[":
            try:
                yield key, json.loads(value)
            except ValueError:
                pass


class Stack:
    """A recorded program's resources, as the SDK hands them to rules, with one resource changeable."""

    def __init__(self, recorded):
        self.recorded = recorded
        self.by_urn = {r.urn: r for r in recorded.resources}
        self.neighbours = {r.urn: {r.urn, r.parent, *r.dependencies,
                                   *(u for urns in r.property_dependencies.values() for u in urns)}
                           for r in recorded.resources}
        for r in recorded.resources:  # and who depends on it
            for urn in self.neighbours[r.urn] - {r.urn}:
                if urn in self.neighbours:
                    self.neighbours[urn].add(r.urn)

    def resource_rules(self, resource, props):
        args = ResourceValidationArgs(resource.type, unknown_checking_proxy(props), resource.urn, resource.name,
                                      OPTIONS, None, {})
        for policy in RESOURCE_RULES:
            run(policy, args)

    def stack_rules(self, urn, outputs):
        """Every stack rule over `urn` (its outputs replaced) and its neighbours."""
        kept = [self.by_urn[u] for u in self.neighbours[urn] if u in self.by_urn]
        made = {r.urn: PolicyResource(r.type, unknown_checking_proxy(outputs if r.urn == urn else r.outputs), r.urn,
                                      r.name, OPTIONS, None, None, [], {}) for r in kept}
        for r in kept:
            made[r.urn].dependencies.extend(made[u] for u in r.dependencies if u in made)
            for key, urns in r.property_dependencies.items():
                made[r.urn].property_dependencies[key] = [made[u] for u in urns if u in made]
        for policy in STACK_RULES:
            run(policy, StackValidationArgs(list(made.values()), {}))


CRASHES: dict[tuple[str, str], str] = {}  # (rule, exception type) -> the first message met


def run(policy, args):
    try:
        policy.validate(args, lambda *_, **__: None)
    except UnknownValueError:
        pass
    except Exception as exc:  # noqa: BLE001 - every rule that raised is named, with what it met
        CRASHES.setdefault((policy.name, type(exc).__name__), str(exc)[:200])


def changed(props, path, value):
    """`props` with `value` at `path` (a property path, or a property and a path into its JSON document)."""
    key, inner = path[0], path[1:]
    if key not in props:
        return props
    if isinstance(key, str) and isinstance(props[key], str):  # a JSON document: `value` is JSON text
        if not inner:
            return {**props, key: value}
        document = json.loads(props[key])
        return {**props, key: json.dumps(replaced(document, inner, "\0")).replace('"\\u0000"', value, 1)}
    try:
        return replaced(props, path, value)
    except (KeyError, IndexError, TypeError):
        return props


def cases(stacks):
    """(stack, resource, inputs, outputs): every absurd value at every property path and at every path
    into a JSON document property, once per resource type and path (inputs and outputs changed alike)."""
    seen = set()
    for stack in stacks:
        for resource in stack.recorded.resources:
            inputs = deserialize_properties(json_format.MessageToDict(resource.raw_inputs))
            found = [(path, ABSURD) for source in (inputs, resource.outputs) for path in paths(source)]
            found += [((key, *path), ABSURD_JSON) for source in (inputs, resource.outputs)
                      for key, document in json_documents(source) for path in [(), *paths(document)]]
            for path, values in found:
                shape = (resource.type, values is ABSURD, tuple(k if isinstance(k, str) else 0 for k in path))
                if shape in seen:
                    continue
                seen.add(shape)
                for value in values:
                    if values is ABSURD:
                        yield stack, resource, changed_plain(inputs, path, value), changed_plain(resource.outputs, path, value)
                    else:
                        yield stack, resource, changed(inputs, path, value), changed(resource.outputs, path, value)


def changed_plain(props, path, value):
    try:
        return replaced(props, path, value)
    except (KeyError, IndexError, TypeError):
        return props


def walk() -> tuple[int, dict]:
    """Every case through every rule: (cases, crashes)."""
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
    stacks = [Stack(record_program(program, stack="dev")) for program in PROGRAMS]
    count = 0
    for stack, resource, inputs, outputs in cases(stacks):
        stack.resource_rules(resource, inputs)
        stack.stack_rules(resource.urn, outputs)
        count += 1
    return count, CRASHES


@pytest.mark.slow  # a sweep of over 2,000 cases through every rule: the end-to-end tier
def test_every_rule_answers_whatever_any_property_holds():
    # In a process of its own: recording a program directory imports pulumi_aws's resource modules
    # directly (preview/provider/), which leaves the lazily loaded service packages of this
    # process without their classes (aws.sfn.StateMachine) for the tests that run after it here.
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        count, crashes = pool.submit(walk).result(timeout=600)

    assert count > 2_000  # the programs' properties really were walked
    assert not crashes, "\n".join(f"{rule} raised {kind}: {message}" for (rule, kind), message in sorted(crashes.items()))


# Deeper than the pack's process reads JSON (its recursion limit, raised in policies/__main__.py to
# read values as deep as the gate judges).
BEYOND_THE_PACK = "[" * 20_000 + "]" * 20_000


def test_the_pack_answers_over_grpc_with_verdicts_for_the_values_that_crashed_it(policy_analyzer):
    deep_definition = '{"StartAt": "A", "States": {"A": ' + BEYOND_THE_PACK + "}}"

    def program():
        dlq = aws.sqs.Queue("dlq", message_retention_seconds=1_209_600)
        aws.sqs.Queue("huge", redrive_policy=dlq.arn.apply(
            lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 10**400})))
        aws.sqs.Queue("deep", redrive_policy=BEYOND_THE_PACK, policy='{"Statement": ' + BEYOND_THE_PACK + "}")
        aws.sqs.Queue("deep-but-read", redrive_policy="[" * 1000 + "]" * 1000)
        aws.sfn.StateMachine("deep-machine", role_arn="arn:aws:iam::123456789012:role/r", definition=deep_definition)

    violations = analyse(policy_analyzer, program)

    messages = {(v.policy, v.urn.rsplit("::", 1)[-1]): v.message for v in violations}
    assert "above 1e308" in messages[("sqs-dlq-max-receive-count", "huge")]
    assert "nested too deeply" in messages[("sqs-dlq-max-receive-count", "deep")]
    assert "nested too deeply" in messages[("queue-topic-policy-no-public-principal", "deep")]
    assert any("nested too deeply" in m for (_, name), m in messages.items() if name == "deep-machine")
    assert "must be a JSON object" in messages[("sqs-dlq-max-receive-count", "deep-but-read")]
