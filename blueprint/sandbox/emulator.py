"""The embedded AWS emulator: moto, in this process.

Every botocore request made while it runs, by the sandbox or by a handler through its own
unmodified `boto3.client(...)`, is answered by moto's in-process dispatcher (moto's `mock_aws`)
from AWS's own endpoint URLs, without a socket: no HTTP server, no thread per request, no request
serialized twice. Nothing leaves the process: a request moto does not answer fails loudly
(`NotEmulated`) instead of reaching the network, and the AWS endpoint variables a developer may
have set (AWS_ENDPOINT_URL, for LocalStack) are cleared for the run.

moto spends most of a drill's CPU; SHORTCUTS lists every change made to it for speed. Each keeps
moto's answers (same responses, same errors): it removes repeated work, never a check.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import boto3
from botocore.config import Config

FAKE_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "sandbox", "AWS_SECRET_ACCESS_KEY": "sandbox"}

# Every speed change the emulator makes to moto (5.2.x), by the function that makes it. Time
# compressions, which do change what a run waits for, are listed apart (realization.COMPRESSION).
SHORTCUTS = {
    "_speed_up_moto_sqs": "a queue's three Approximate* message counts are made in one pass over its "
                          "messages, with one clock read, instead of one pass each per attribute rebuild",
    "_remember_response_method_names": "the names of a response class's methods are listed once per class, "
                                       "not with inspect.getmembers on every request",
    "_parse_dynamodb_expressions_once": "a DynamoDB condition or update expression is parsed once per distinct "
                                        "expression (with its names and values), not twice per request "
                                        "(request validation, then the operation); update expression trees "
                                        "are still deep-copied before each use",
    "share_botocore_data": "botocore's service models and endpoint data, read from disk and cached per "
                           "session, are cached once per process: moto (a session per mock) and the "
                           "sandbox (a session per client) no longer re-read them (~70 ms per client)",
}


@dataclass
class Emulator:
    region: str
    running: bool = True  # False once its block has ended

    def session(self) -> boto3.session.Session:
        """A session for the sandbox's own calls (realizing, polling, checking). Handlers use the
        default session, which is the only one faults are injected into."""
        return boto3.session.Session(aws_access_key_id="sandbox", aws_secret_access_key="sandbox",
                                     region_name=self.region)

    def client(self, service: str, session: boto3.session.Session | None = None):
        return (session or self.session()).client(
            service,  # AWS's own endpoint, answered in-process
            config=Config(retries={"max_attempts": 2, "mode": "standard"}))

    def environment(self) -> dict[str, str]:
        """What a function's environment needs to talk to the emulator."""
        return {"AWS_DEFAULT_REGION": self.region, "AWS_REGION": self.region, **FAKE_CREDENTIALS}


class NotEmulated(RuntimeError):
    """A request the emulator did not answer: the sandbox never sends one to the network."""


# Set on a botocore request a before-send handler has already answered (the drill's fault
# injector): moto must not also carry it out, since botocore runs every before-send handler.
ANSWERED = "sandbox_answered"


def _answered_requests_are_not_dispatched() -> None:
    from moto.core.botocore_stubber import BotocoreStubber

    if getattr(BotocoreStubber, "_sandbox_answered", False):
        return
    dispatch = BotocoreStubber.__call__

    def __call__(self, event_name, request, **kwargs):
        if getattr(request, ANSWERED, False):
            return None
        return dispatch(self, event_name, request, **kwargs)

    BotocoreStubber.__call__ = __call__
    BotocoreStubber._sandbox_answered = True


@contextmanager
def _nothing_leaves_the_process() -> Iterator[None]:
    from botocore import endpoint

    def refuse(self, request):
        raise NotEmulated(f"the sandbox's emulator did not answer {request.method} {request.url}; "
                          "no request is sent to the network")

    send = endpoint.Endpoint._send
    endpoint.Endpoint._send = refuse
    try:
        yield
    finally:
        endpoint.Endpoint._send = send


class _ProcessWideLoaderCache:
    """A botocore Loader's `_cache`, shared by every loader with the same search paths."""

    entries: dict = {}

    def __init__(self, loader):
        self.loader = loader

    def _key(self, key):
        return (tuple(self.loader.search_paths), key)

    def __contains__(self, key):
        return self._key(key) in self.entries

    def __getitem__(self, key):
        return self.entries[self._key(key)]

    def __setitem__(self, key, value):
        self.entries[self._key(key)] = value


def share_botocore_data() -> None:
    """botocore caches what it reads from its data folder (service models, endpoint rules, the
    list of services) per Loader, and makes a Loader per session; moto's mock_aws starts a session
    per mock and the sandbox one per client, so every client re-read and re-parsed the same files.
    The files do not change while a process runs: every loader with the same search paths (boto3
    adds its own folder to each session's) shares one cache. Same data, same objects a single
    session's clients already share."""
    from botocore import loaders

    if getattr(loaders.Loader, "_sandbox_shared", False):
        return
    initialize = loaders.Loader.__init__

    def init(self, *args, **kwargs):
        initialize(self, *args, **kwargs)
        self._cache = _ProcessWideLoaderCache(self)

    loaders.Loader.__init__ = init
    loaders.Loader._sandbox_shared = True


def _speed_up_moto_sqs() -> None:
    """Same answers, less work. moto rebuilds every queue attribute (three message counts,
    each a pass over all messages reading the clock twice per message) several times per message
    sent to a FIFO queue, which makes a queue of a few thousand messages take minutes to fill.
    These replacements count in one pass with one clock read; visibility and delay rules are
    moto's own comparisons, unchanged."""
    import functools

    import moto.sqs.models as sqs_models
    from moto.core.utils import unix_time_millis
    from moto.sqs.models import Queue

    if getattr(Queue, "_sandbox_fast", False):
        return

    def counts(queue):
        now = unix_time_millis()
        visible = delayed = not_visible = 0
        for message in queue._messages:
            is_visible = now > message.visible_at
            is_delayed = now < message.delayed_until
            visible += is_visible and not is_delayed
            delayed += is_delayed
            not_visible += not is_visible
        return visible, delayed, not_visible

    def messages(queue):
        now = unix_time_millis()
        return [m for m in queue._messages if now > m.visible_at and not now < m.delayed_until]

    # A pure string function moto calls ~20 times per attribute rebuild: remember its answers.
    sqs_models.camelcase_to_underscores = functools.lru_cache(maxsize=None)(sqs_models.camelcase_to_underscores)
    def counted(index):
        return property(lambda q: (getattr(q, "_sandbox_counts", None) or counts(q))[index])

    build_attributes = Queue.attributes.fget

    def attributes(queue):
        # One count for the three Approximate* attributes of this build, not one each.
        queue._sandbox_counts = counts(queue)
        try:
            return build_attributes(queue)
        finally:
            queue._sandbox_counts = None

    Queue.messages = property(messages)
    Queue.approximate_number_of_messages = counted(0)
    Queue.approximate_number_of_messages_delayed = counted(1)
    Queue.approximate_number_of_messages_not_visible = counted(2)
    Queue.attributes = property(attributes)
    Queue._sandbox_fast = True


def _remember_response_method_names() -> None:
    """moto finds a request's action among its response class's methods by listing them with
    inspect.getmembers on every request; a class's methods do not change while it runs."""
    import functools

    from moto.core import responses

    if getattr(responses, "_sandbox_method_names", False):
        return
    responses.method_names_from_class = functools.lru_cache(maxsize=None)(responses.method_names_from_class)
    responses._sandbox_method_names = True


def _parse_dynamodb_expressions_once() -> None:
    """moto parses a request's ConditionExpression when it validates the request and again when it
    applies it, and its UpdateExpression likewise. The parse depends only on the expression, its
    attribute names and (for a condition) its values, so its result is remembered: a condition's
    syntax tree (evaluated, never modified) with the names and values it used, an update's tree
    (which moto deep-copies before each use). Invalid expressions raise as before, every time."""
    import importlib
    import json

    from moto.dynamodb.comparisons import ConditionExpressionParser

    UpdateExpressionParser = importlib.import_module("moto.dynamodb.parsing.expressions").UpdateExpressionParser

    if getattr(ConditionExpressionParser, "_sandbox_once", False):
        return
    parse_condition = ConditionExpressionParser.parse
    conditions: dict = {}

    def parse(parser):
        key = (parser.condition_expression, json.dumps(parser.expression_attribute_names, sort_keys=True),
               json.dumps(parser.expression_attribute_values, sort_keys=True))
        if key not in conditions:
            if len(conditions) > EXPRESSION_CACHE_SIZE:
                conditions.clear()
            tree = parse_condition(parser)
            conditions[key] = (tree, list(parser.expr_attr_names_found), list(parser.expr_attr_values_found))
        tree, names, values = conditions[key]
        parser.expr_attr_names_found, parser.expr_attr_values_found = list(names), list(values)
        return tree

    make_update = UpdateExpressionParser.make.__func__
    updates: dict = {}

    def make(cls, expression):
        if expression not in updates:
            if len(updates) > EXPRESSION_CACHE_SIZE:
                updates.clear()
            updates[expression] = make_update(cls, expression)
        return updates[expression]

    ConditionExpressionParser.parse = parse
    UpdateExpressionParser.make = classmethod(make)
    ConditionExpressionParser._sandbox_once = True


# Distinct expressions remembered before the memory is cleared (a drill uses a few dozen).
EXPRESSION_CACHE_SIZE = 10_000

# Step Functions retry waits (IntervalSeconds, backoff, jitter) last this fraction of their
# computed length in the emulator; the waits are still computed by moto from the definition.
STATE_MACHINE_RETRY_WAIT_SCALE = 0.01
# botocore's retry backoff after a throttle or 5xx lasts this fraction of what its retry handler
# computes, while the emulator runs (the retries themselves are unchanged).
SDK_RETRY_WAIT_SCALE = 0.01


@contextmanager
def _compressed_sdk_retry_waits() -> Iterator[None]:
    import time as real_time
    import types

    from botocore import endpoint

    original = endpoint.time
    endpoint.time = types.SimpleNamespace(
        sleep=lambda seconds: real_time.sleep(seconds * SDK_RETRY_WAIT_SCALE),
        time=real_time.time, monotonic=real_time.monotonic)
    try:
        yield
    finally:
        endpoint.time = original


def _compress_state_machine_retry_waits() -> None:
    import time as real_time
    import types

    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

    if getattr(retrier_decl, "_sandbox_compressed", False):
        return
    retrier_decl.time = types.SimpleNamespace(
        sleep=lambda seconds: real_time.sleep(seconds * STATE_MACHINE_RETRY_WAIT_SCALE),
        time=real_time.time, monotonic=real_time.monotonic)
    retrier_decl._sandbox_compressed = True


@contextmanager
def environment_variables(values: dict[str, str]) -> Iterator[None]:
    """Set `values` in os.environ for the block, then put back exactly what was there."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextmanager
def _without_endpoint_overrides() -> Iterator[None]:
    """AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE> would send requests past the emulator."""
    saved = {key: value for key, value in os.environ.items() if key.startswith("AWS_ENDPOINT_URL")}
    for key in saved:
        del os.environ[key]
    try:
        yield
    finally:
        os.environ.update(saved)


@contextmanager
def running_emulator(region: str) -> Iterator[Emulator]:
    """moto answering every AWS request of this process, from an empty account, for the block."""
    from moto import mock_aws
    from moto.core.config import default_user_config

    # The state machine interpreter runs executions (ported from LocalStack); off by default.
    # In-process, it calls S3, SQS and Lambda back through moto's dispatcher too.
    default_user_config["stepfunctions"]["execute_state_machine"] = True
    share_botocore_data()
    _answered_requests_are_not_dispatched()
    _speed_up_moto_sqs()
    _remember_response_method_names()
    _parse_dynamodb_expressions_once()
    _compress_state_machine_retry_waits()
    emulator = Emulator(region=region)
    # mock_aws starts from empty backends and stops with them discarded.
    with _without_endpoint_overrides(), mock_aws(), _nothing_leaves_the_process(), \
            environment_variables(emulator.environment()), _compressed_sdk_retry_waits():
        try:
            yield emulator
        finally:
            emulator.running = False
