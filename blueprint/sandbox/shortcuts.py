"""Speed changes to moto and botocore for the sandbox's emulator, each registered in the
patch registry (integration_blueprint.core.patches) with the versions it was verified on.

moto spends most of a drill's CPU. Each change here keeps moto's answers (same responses, same
errors; tests/test_emulator_shortcuts.py runs one scenario plain and with each of them alone): it
removes repeated work, never a check. The emulator applies them for its block and undoes them after.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Optional

from integration_blueprint.core.patches import (
    BOTOCORE_VERIFIED,
    MOTO_VERIFIED,
    SPEED,
    Patcher,
    installed_version,
    patch,
)

# Every speed change made to moto (5.2.x) or botocore, by the function that makes it, with
# what it saves and the drill's CPU without it (benchmarks/drill_speed.py 600, each left out in
# turn, against 35.7-38.8 s with all; a change buying under 5% is not kept). Time compressions and
# fixes, which do change what a run does, are registered apart (emulator.py, moto_fixes.py).
SHORTCUTS = {
    "count_sqs_messages_once": "a queue's three Approximate* message counts are made in one pass over its "
                               "messages, with one clock read, instead of one pass each per attribute rebuild "
                               "(with the next: moto spent 121 s of CPU on 1,500 FIFO sends, 2-3 s with both)",
    "read_queue_settings_without_counting": "moto reads a FIFO queue's ContentBasedDeduplication through the "
                                            "queue's full attribute set four times per message sent; those "
                                            "reads get that one setting without the set being built (its three "
                                            "message counts, a pass over every message each, its policy's JSON), "
                                            "and a GetQueueAttributes builds the set once, not three times per "
                                            "attribute name",
    "parse_dynamodb_expressions_once": "a DynamoDB condition's syntax is parsed once per distinct text and "
                                       "attribute names (each request's values are put into a copy of the "
                                       "tree and moto builds the operators from it), an update expression "
                                       "once per distinct text, not twice per request (request validation, "
                                       "then the operation) (drill CPU +28% without it)",
    "walk_dynamodb_update_trees_cheaply": "each of the ten passes that validate an update expression finds "
                                          "which of its node types a node class is once per process, not twice "
                                          "per node, and "
                                          "the parsed tree each update works on is copied node by node "
                                          "instead of by copy.deepcopy's generic protocol (+7% without it)",
    "check_update_expressions_once": "the three passes that only check an update expression (one clause of "
                                     "each kind, no path set twice, no key attribute updated; each searched "
                                     "the subtree at every clause node) run once per expression, attribute "
                                     "names and key attributes they pass for, not on every update; a pass "
                                     "with nothing in the tree to act on is not run (+17% without it, 1,500 "
                                     "records: 164.6 and 174.2 s of CPU against 141.1 and 146.7 s, interleaved)",
    "apply_plain_updates_directly": "an update expression of plain SETs and numeric ADDs of top-level attributes to "
                                    "values (`SET #s = :s, #e = :e`, `ADD balance :n`: Powertools' completion, a "
                                    "ledger's ADD, a guard's SET) is applied to the item as moto's executors apply it, "
                                    "without its syntax tree copied and walked by ten passes and its executor; "
                                    "anything else, and anything moto would refuse, goes through moto's own "
                                    "passes (+13-15% without it, 1,500 records, interleaved: 49.5 and 49.2 s of CPU against 43.9 "
                                    "and 42.6 s)",
    "remember_response_member_names": "the names under which a response member may be found on moto's "
                                      "result object (six alias rules, each name also in snake_case) are "
                                      "worked out once per member, parent shape and result class, not on "
                                      "every member of every response; a plain dict result's member is "
                                      "looked up with them directly (a 1,500-item Scan: 1.5 s -> 0.7 s) (+10% without it)",
    "share_botocore_data": "botocore's service models and endpoint data, read from disk and cached per "
                           "session, are cached once per process: moto (a session per mock) and the "
                           "sandbox (a session per client) no longer re-read them (~70 ms per client) (+14% without it)",
    "sign_with_a_placeholder": "requests moto answers carry SigV4's Authorization header (credential "
                               "scope, signed headers) with a placeholder signature: moto reads the "
                               "access key and scope from it and never checks the signature (its IAM "
                               "authentication is off), so the hashing behind it was work nobody read (+8% without it)",
    "build_user_agents_once": "a client's User-Agent header is built once per set of SDK features in use "
                              "(about forty sanitized parts), not twice per request (+8% without it)",
    "list_response_methods_once": "moto lists a service's response methods (inspect.getmembers over the class "
                                  "and its bases, a few hundred attributes) on every request to find the action's "
                                  "method; the list is made once per response class (4% of a stream pattern's CPU)",
    "roll_back_transactions_by_item": "a DynamoDB transaction keeps a copy of each item it writes (to put back "
                                      "if it is cancelled), not a deep copy of every table it names: the "
                                      "stream ledger's guarded write is a transaction, and copying the whole "
                                      "ledger on each one made a drill quadratic in its records",
    "route_and_build_requests_directly": "moto routes each request by matching its URL against every service's "
                                         "URL patterns and its backend's URL map (about fifty regular expressions "
                                         "and a backend lookup), and makes its werkzeug request through the "
                                         "test client's EnvironBuilder (a dozen properties, two header copies, to "
                                         "make one dict): the route is remembered per URL (each service's "
                                         "passthrough and allow-list settings still checked per request) and the "
                                         "WSGI environment of a plain request built directly, key for key as the "
                                         "builder makes it, with what werkzeug would read of a JSON body, its root URL "
                                         "and arguments already in it (1,500 records, interleaved on a loaded machine: "
                                         "156.6, 154.5, 180.0, 185.2 s of CPU with it, 156.7, 184.6, 193.1, 210.2 s "
                                         "without: +10% without it; the werkzeug reads since: a drill's mix of calls "
                                         "7% less CPU each, 6.93 -> 6.44 and 7.64 -> 6.46 ms per mix)",
}

# What each replaces, and the package it belongs to.
_TARGETS = {
    "share_botocore_data": ("botocore.loaders.Loader.__init__", "botocore"),
    "count_sqs_messages_once": ("moto.sqs.models.Queue.attributes and its Approximate* counts", "moto"),
    "read_queue_settings_without_counting": ("moto.sqs.models.SQSBackend.send_message, _validate_message, "
                                             "get_queue_attributes; Queue.add_message", "moto"),
    "parse_dynamodb_expressions_once": ("moto.dynamodb.comparisons.ConditionExpressionParser.parse, "
                                        "UpdateExpressionParser.make", "moto"),
    "walk_dynamodb_update_trees_cheaply": ("moto.dynamodb.parsing.ast_nodes.DepthFirstTraverser.traverse, "
                                           "Node.__deepcopy__", "moto"),
    "check_update_expressions_once": ("moto.dynamodb.parsing.validators.UpdateExpressionValidator.__init__, "
                                      "validate; UpdateExpressionParser.make", "moto"),
    "apply_plain_updates_directly": ("moto.dynamodb.parsing.validators.UpdateExpressionValidator.__init__, validate; "
                                     "executors.UpdateExpressionExecutor.execute; UpdateExpressionParser.make", "moto"),
    "remember_response_member_names": ("moto.core.serialize.XFormedAttributePicker.get_possible_keys, "
                                       "ResponseSerializer.get_value", "moto"),
    "build_user_agents_once": ("botocore.useragent.UserAgentString.to_string", "botocore"),
    "sign_with_a_placeholder": ("botocore.auth.SigV4Auth.add_auth", "botocore"),
    "list_response_methods_once": ("moto.core.responses.method_names_from_class", "moto"),
    "roll_back_transactions_by_item": ("moto.dynamodb.models.DynamoDBBackend.transact_write_items and the "
                                       "module's copy.deepcopy", "moto"),
    "route_and_build_requests_directly": ("moto.core.botocore_stubber.BotocoreStubber.process_request", "moto"),
}
_VERIFIED = {"moto": MOTO_VERIFIED, "botocore": BOTOCORE_VERIFIED}


def _speed(name: str):
    target, package = _TARGETS[name]
    return patch(name, target=target, package=package, verified=_VERIFIED[package], kind=SPEED,
                 buys=SHORTCUTS[name])


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


@_speed("share_botocore_data")
def share_botocore_data(patcher: Patcher) -> None:
    """botocore caches what it reads from its data folder (service models, endpoint rules, the
    list of services) per Loader, and makes a Loader per session; moto's mock_aws starts a session
    per mock and the sandbox one per client, so every client re-read and re-parsed the same files.
    The files do not change while a process runs: every loader with the same search paths (boto3
    adds its own folder to each session's) shares one cache. Same data, same objects a single
    session's clients already share."""
    from botocore import loaders

    initialize = loaders.Loader.__init__

    def init(self, *args, **kwargs):
        initialize(self, *args, **kwargs)
        self._cache = _ProcessWideLoaderCache(self)

    patcher.replace(loaders.Loader, "__init__", init)


@_speed("count_sqs_messages_once")
def count_sqs_messages_once(patcher: Patcher) -> None:
    """Same answers, less work. moto rebuilds every queue attribute (three message counts,
    each a pass over all messages reading the clock twice per message) several times per message
    sent to a FIFO queue, which makes a queue of a few thousand messages take minutes to fill.
    These replacements count in one pass with one clock read; visibility and delay rules are
    moto's own comparisons, unchanged."""
    import functools

    import moto.sqs.models as sqs_models
    from moto.core.utils import unix_time_millis
    from moto.sqs.models import Queue


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
    patcher.replace(sqs_models, "camelcase_to_underscores",
                    functools.lru_cache(maxsize=None)(sqs_models.camelcase_to_underscores))
    def counted(index):
        def count(queue):
            this_build = getattr(queue, "_sandbox_counts", None)
            if this_build is None:  # read outside an attribute build
                return counts(queue)[index]
            if not this_build:  # the first count this build reads
                this_build.extend(counts(queue))
            return this_build[index]
        return property(count)

    build_attributes = Queue.attributes.fget

    def attributes(queue):
        # One count for the three Approximate* attributes of this build, not one each.
        queue._sandbox_counts = []
        try:
            return build_attributes(queue)
        finally:
            queue._sandbox_counts = None

    patcher.replace(Queue, "messages", property(messages))
    patcher.replace(Queue, "approximate_number_of_messages", counted(0))
    patcher.replace(Queue, "approximate_number_of_messages_delayed", counted(1))
    patcher.replace(Queue, "approximate_number_of_messages_not_visible", counted(2))
    patcher.replace(Queue, "attributes", property(attributes))


@_speed("read_queue_settings_without_counting")
def read_queue_settings_without_counting(patcher: Patcher) -> None:
    """moto reads a queue's ContentBasedDeduplication setting as `queue.attributes.get(...)`: twice
    while validating a message, once sending it, once adding it (count_sqs_messages_once made each
    build count once, but a build still passes over every message). Those four reads use one setting
    and never a count, so inside them the counts are not made: they stand as NOT_COUNTED, which
    raises if anything reads it as a count, so a read that did need one fails loudly instead of
    seeing a wrong number. A send is scoped only when the queue has no moto Lambda event source
    mapping (moto would receive and invoke from inside it); the validation has no nested calls.
    GetQueueAttributes built the whole set once, then twice more per attribute name asked for: it
    builds it once per request (the counts as of that moment, as a single build gives them)."""
    import functools
    import threading

    from moto.sqs.models import Queue, SQSBackend

    scope = threading.local()  # per thread: another thread's GetQueueAttributes still counts

    def settings_only(read):
        @functools.wraps(read)
        def scoped(*args, **kwargs):
            scope.depth = getattr(scope, "depth", 0) + 1
            try:
                return read(*args, **kwargs)
            finally:
                scope.depth -= 1
        return scoped

    validate, send, add = SQSBackend._validate_message, SQSBackend.send_message, Queue.add_message
    validate_settings_only, send_settings_only, add_settings_only = (
        settings_only(validate), settings_only(send), settings_only(add))

    def send_message(self, queue_name, *args, **kwargs):
        queue = self.get_queue(queue_name)
        scoped = send if queue.lambda_event_source_mappings else send_settings_only
        return scoped(self, queue_name, *args, **kwargs)

    def add_message(self, message):
        return (add if self.lambda_event_source_mappings else add_settings_only)(self, message)

    def unless_settings_only(count):
        def counted(queue):
            return NOT_COUNTED if getattr(scope, "depth", 0) else count(queue)
        return property(counted)

    for name in ("approximate_number_of_messages", "approximate_number_of_messages_delayed",
                 "approximate_number_of_messages_not_visible"):
        patcher.replace(Queue, name, unless_settings_only(getattr(Queue, name).fget))

    get_attributes = SQSBackend.get_queue_attributes

    def get_queue_attributes(self, queue_name, attribute_names):
        queue = self.get_queue(queue_name)
        queue.__dict__["_sandbox_attributes"] = (threading.get_ident(), queue.attributes)
        try:
            return get_attributes(self, queue_name, attribute_names)
        finally:
            queue.__dict__.pop("_sandbox_attributes", None)

    build = Queue.attributes.fget

    def attributes(queue):
        built = queue.__dict__.get("_sandbox_attributes")
        if built is not None and built[0] == threading.get_ident():  # this thread's GetQueueAttributes
            return dict(built[1])
        if getattr(scope, "depth", 0):  # a read of the one setting: not the whole set (a policy's JSON...)
            return _QueueSettings(queue, build)
        return build(queue)

    patcher.replace(SQSBackend, "_validate_message", validate_settings_only)
    patcher.replace(SQSBackend, "send_message", send_message)
    patcher.replace(Queue, "add_message", add_message)
    patcher.replace(SQSBackend, "get_queue_attributes", get_queue_attributes)
    patcher.replace(Queue, "attributes", property(attributes))


class _QueueSettings(Mapping):
    """A queue's attribute set as moto builds it (moto.sqs.models.Queue.attributes, moto 5.2), read
    for its ContentBasedDeduplication setting alone without building the rest (every other
    attribute, the policy's JSON among them); any other read builds the whole set."""

    def __init__(self, queue, build):
        self.queue, self.build = queue, build

    def get(self, name, default=None):
        if name != "ContentBasedDeduplication":
            return self.build(self.queue).get(name, default)
        if not self.queue.fifo_queue:  # moto lists it among a FIFO queue's attributes only
            return default
        value = self.queue.content_based_deduplication
        return str(value).lower() if isinstance(value, bool) else value

    def __getitem__(self, name):
        return self.build(self.queue)[name]

    def __iter__(self):
        return iter(self.build(self.queue))

    def __len__(self):
        return len(self.build(self.queue))


class _NotCounted:
    """A message count inside a read that uses only a queue's settings: never meant to be read."""

    def _refuse(self, *_args, **_kwargs):
        raise RuntimeError("a queue's message count was read inside a read the sandbox made without counting "
                           "(sandbox/shortcuts.py read_queue_settings_without_counting)")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __bool__ = __int__ = __index__ = __float__ = _refuse
    __str__ = __repr__ = __format__ = __add__ = __radd__ = __hash__ = _refuse


NOT_COUNTED = _NotCounted()



@_speed("parse_dynamodb_expressions_once")
def parse_dynamodb_expressions_once(patcher: Patcher) -> None:
    """moto parses a request's ConditionExpression when it validates the request and again when it
    applies it, and its UpdateExpression likewise. A condition's syntax depends only on its text
    and attribute names: its parsed node tree (before moto builds the operators from it) is
    remembered per those, with the names and values it uses; each parse puts the request's own
    values into a copy of that tree and builds the operators with moto's own `_make_op_condition`
    (whose constructors check the values, as before). An expression that fails to parse, or a
    request missing a value it names, goes through moto's own parse and fails there as before.
    An update's tree (which moto deep-copies before each use) is remembered per expression."""
    import importlib
    import json

    from moto.core.exceptions import JsonRESTError
    from moto.dynamodb.comparisons import ConditionExpressionParser

    UpdateExpressionParser = importlib.import_module("moto.dynamodb.parsing.expressions").UpdateExpressionParser

    parse_condition = ConditionExpressionParser.parse
    value_kind = ConditionExpressionParser.Kind.EXPRESSION_ATTRIBUTE_VALUE
    syntax: dict = {}  # (expression, names) -> (node tree without values, names used, values used)

    class _NoValuesYet(dict):
        def __missing__(self, name):
            return None  # the request's value goes in later (with_values)

    def parse_syntax(parser):
        # moto's parse up to its last step (ConditionExpressionParser.parse, moto 5.2), without values.
        bare = ConditionExpressionParser(parser.condition_expression, parser.expression_attribute_names,
                                         _NoValuesYet())
        nodes = bare._lex_condition_expression()
        for step in (bare._parse_paths, bare._apply_functions, bare._apply_comparator, bare._apply_in,
                     bare._apply_between, bare._apply_parens_and_booleans):
            nodes = step(nodes)
        node = nodes[0]
        bare._assert_no_redundant_parentheses(node)
        return node, bare._find_literals(node), bare._find_expr_attr_values(node)

    def with_values(node, values):
        if node.kind == value_kind:
            return node._replace(value=values[node.text])
        if not node.children:
            return node
        return node._replace(children=[with_values(child, values) for child in node.children])

    def parse(parser):
        if not parser.condition_expression:
            return parse_condition(parser)
        key = (parser.condition_expression, json.dumps(parser.expression_attribute_names, sort_keys=True))
        try:
            node, names, values = _remembered(syntax, key, lambda: parse_syntax(parser))
        except (ValueError, JsonRESTError):  # a malformed expression (anything else is a bug: raised)
            return parse_condition(parser)  # moto's own error, raised where moto raises it
        given = parser.expression_attribute_values
        if values and (not isinstance(given, dict) or any(name not in given for name in values)):
            return parse_condition(parser)  # a value named but not given: moto's own error
        parser.expr_attr_names_found.extend(names)
        parser.expr_attr_values_found.extend(values)
        return parser._make_op_condition(with_values(node, given or {}))

    make_update = UpdateExpressionParser.make.__func__
    updates: dict = {}

    def make(cls, expression):
        return _remembered(updates, expression, lambda: make_update(cls, expression))

    patcher.replace(ConditionExpressionParser, "parse", parse)
    patcher.replace(UpdateExpressionParser, "make", classmethod(make))


# Distinct expressions remembered before the memory is cleared (a drill uses a few dozen).
EXPRESSION_CACHE_SIZE = 10_000
_ABSENT = object()


def _remembered(memory: dict, key, make):
    """memory[key], made by make() the first time it is asked for (an exception make raises is
    raised, nothing remembered); past EXPRESSION_CACHE_SIZE keys the memory starts again."""
    found = memory.get(key, _ABSENT)
    if found is _ABSENT:
        if len(memory) > EXPRESSION_CACHE_SIZE:
            memory.clear()
        found = memory[key] = make()
    return found


_UNSEEN = object()  # a node class not yet matched against a table's node types


@_speed("walk_dynamodb_update_trees_cheaply")
def walk_dynamodb_update_trees_cheaply(patcher: Patcher) -> None:
    """moto validates an update expression with ten passes over its syntax tree. Each pass asked
    for its node-type -> action table (a dict built afresh) twice per node and matched the node
    against it with isinstance on abstract classes; the table is now built once per pass, and which
    of its node types a node class is (the same first match in the table's order) is found once per
    process for each table of types, so a pass only reads the action off its own table. The
    per-child hook and the actions are moto's own.
    Each update works on a copy of the cached parsed tree: `Node.__deepcopy__` copies the same
    attributes copy.deepcopy would (children, parent, type; the memo keeps the links), without
    its reduce-and-reconstruct protocol per node."""
    import copy

    from moto.dynamodb.parsing import ast_nodes

    traverser = ast_nodes.DepthFirstTraverser

    def traverse(self, node):
        actions = self._processing_map()
        pre_processing_of_child = self.pre_processing_of_child
        # Which of the table's node types a node class matches depends only on the table's types, in
        # order, and the class: found once per process (kinds), the action read from this pass's table.
        kinds = kind_by_class.setdefault(tuple(actions), {})

        def action_for(cls):
            kind = kinds.get(cls, _UNSEEN)
            if kind is _UNSEEN:
                kind = kinds[cls] = next((kind for kind in actions if issubclass(cls, kind)), None)
            return None if kind is None else actions[kind]

        def walk(node, child_id=-1):
            cls = type(node)
            if cls not in node_classes:
                node_classes[cls] = issubclass(cls, ast_nodes.Node)
            if node_classes[cls]:
                parent_node = node.parent
                if node.children is not None:
                    for i, child_node in enumerate(node.children):
                        pre_processing_of_child(node, i)
                        walk(child_node, i)
                action = action_for(cls)
                if action is not None:
                    node = action(node)
                    node.parent = parent_node
                    if parent_node:
                        parent_node.children[child_id] = node
            return node

        try:
            return walk(node)
        finally:
            # `walk` holds itself (its closure's cell): without this, each pass left a cycle (the
            # closures, the pass, its bound hook) for the collector.
            walk = None

    node_classes: dict = {}  # a class -> whether it is a syntax tree node
    kind_by_class: dict = {}  # a table's node types, in order -> {a node class: the first type it is (None: none)}

    atomic = (str, int, float, bool, type(None))

    def copy_node(node, memo):
        copied = object.__new__(type(node))
        memo[id(node)] = copied
        for name, value in node.__dict__.items():
            if name == "children" and value is not None:
                value = [child if type(child) in atomic
                         else memo.get(id(child)) or copy_node(child, memo) if isinstance(child, ast_nodes.Node)
                         else copy.deepcopy(child, memo) for child in value]
            elif type(value) not in atomic:
                value = copy.deepcopy(value, memo)  # the parent (a Node: back here), anything else
            copied.__dict__[name] = value
        return copied

    patcher.replace(traverser, "traverse", traverse)
    patcher.replace(ast_nodes.Node, "__deepcopy__", copy_node)



@_speed("check_update_expressions_once")
def check_update_expressions_once(patcher: Patcher) -> None:
    """moto validates an update expression with ten passes over a copy of its syntax tree. The first
    three only check it (ActionCountValidator: one clause of each kind; OverlappingPathsValidator: no
    path set twice; UpdateHashRangeKeyValidator: no key attribute updated): they change nothing and
    read nothing but the expression, its attribute names and the table's key attributes. They ran at
    every node below the root (each clause node is an UpdateExpression to them), a search of the
    subtree each. They now run as moto runs them the first time an (expression, names, key
    attributes) meets them; once a validation has passed for it, they are not run again for it (one
    that fails is run again next time, and fails the same way).
    Of the other seven passes, one that acts on no node class the tree can hold (the parsed tree's
    own classes, and DDBTypedValue and NoneExistingPath, the only ones the passes put in) and has no
    per-child hook leaves the tree as it is: it is not run (UpdateExpressionFunctionEvaluator without
    a function; ExecuteOperations, TypeMismatchValidator and EmptyStringKeyValueValidator without a
    SET). Every other pass runs, in moto's order, with moto's own actions."""
    import weakref

    from moto.dynamodb.parsing import ast_nodes, expressions, validators

    checks = (validators.ActionCountValidator, validators.OverlappingPathsValidator,
              validators.UpdateHashRangeKeyValidator)
    put_in = (ast_nodes.DDBTypedValue, ast_nodes.NoneExistingPath)  # what the passes replace nodes with
    no_hook = ast_nodes.DepthFirstTraverser.pre_processing_of_child
    # A parsed tree -> its text and the node classes it holds (weak: a tree moto drops goes with it).
    parsed: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
    checked: set = set()  # (text, names, key attributes) the checks passed for
    idle: dict = {}  # (a pass's class, its node types, the tree's classes) -> whether it acts on none of them

    make = expressions.UpdateExpressionParser.make.__func__

    def make_and_remember(cls, expression):
        tree = make(cls, expression)
        if tree not in parsed:
            parsed[tree] = (expression, frozenset(_node_classes(tree, ast_nodes.Node)) | frozenset(put_in))
        return tree

    validator = validators.UpdateExpressionValidator
    initialize = validator.__init__

    def init(self, expression, *args, **kwargs):
        try:
            self._sandbox_parsed = parsed.get(expression)
        except TypeError:  # not a tree (no weak reference to it): moto's own passes say what it is
            self._sandbox_parsed = None
        initialize(self, expression, *args, **kwargs)

    def validate(self):
        known = self.__dict__.get("_sandbox_parsed")
        names = self.expression_attribute_names
        try:
            key = None if known is None else (
                known[0], None if names is None else tuple(sorted(names.items())), tuple(self.table.table_key_attrs))
            hash(key)
        except TypeError:  # names moto would not accept: its own checks say so
            key = None
        node = self.node_to_validate
        passed_before = key is not None and key in checked
        for processor in self.processors:
            kind = type(processor)
            if kind in checks:
                if not passed_before:
                    node = processor.traverse(node)
                continue
            if known is not None and kind.pre_processing_of_child is no_hook:
                types = tuple(processor._processing_map())
                acts = idle.get((kind, types, known[1]))
                if acts is None:
                    acts = idle[(kind, types, known[1])] = any(issubclass(c, t) for c in known[1] for t in types)
                if not acts:
                    continue
            node = processor.traverse(node)
        if key is not None and not passed_before and len(checked) < EXPRESSION_CACHE_SIZE:
            checked.add(key)  # every check passed (one that failed raised)
        return node

    patcher.replace(expressions.UpdateExpressionParser, "make", classmethod(make_and_remember))
    patcher.replace(validator, "__init__", init)
    patcher.replace(validator, "validate", validate)


@_speed("apply_plain_updates_directly")
def apply_plain_updates_directly(patcher: Patcher) -> None:
    """Most updates a drill makes are plain: each action a SET of a top-level attribute to a value,
    or an ADD of a number to one (Powertools' completion sets three attributes, a ledger ADDs to two).
    For them moto deep-copies the parsed tree, walks it with ten passes and walks it again to
    execute it, to do what this does: each value made a DynamoType as moto's value pass makes it,
    each SET stored in the item's attributes, each ADD stored as moto's AddExecutor sums it
    (`existing + value`, from N 0 when absent), in the expression's order.

    It only acts where moto's passes would pass: an expression of that shape (_plain_actions: at
    most one SET and one ADD clause, names and placeholders only, no name a reserved word), every
    #name and :value given, no attribute twice, none a key attribute of the table or an index (nor
    any attribute the table defines a type for), each ADD a number to a number or to nothing.
    Anything else (another shape, a missing name, a set ADDed, a string ADDed to) goes through
    moto's own validator and executor, which answer or refuse it as before. If applying fails (a
    SET would make the item too large, a number moto cannot add), the item is put back as it was
    and moto's own passes run and answer or refuse it (their partial writes and all).
    It wraps what is in place when it applies: it comes after check_update_expressions_once in
    NAMES, so its fallback runs that change's passes."""
    import weakref

    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.parsing import executors, expressions, validators
    from moto.dynamodb.parsing.reserved_keywords import ReservedKeywords

    reserved = frozenset(ReservedKeywords.get_reserved_keywords())  # an attribute named so must be a #name
    validator_class, executor_class = validators.UpdateExpressionValidator, executors.UpdateExpressionExecutor
    # What is in place when this applies (moto's own, or another shortcut's wrapper of them).
    make, initialize, validate = expressions.UpdateExpressionParser.make.__func__, validator_class.__init__, \
        validator_class.validate
    execute = executor_class.execute
    plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # a parsed tree -> its plain actions, or None
    shapes: dict = {}  # an expression's text -> its plain actions, or None

    def make_and_plan(cls, expression):
        tree = make(cls, expression)
        try:
            if tree not in plans:
                plans[tree] = _remembered(shapes, expression, lambda: _plain_actions(expression, reserved))
        except TypeError:  # not a tree moto made: its own passes say what it is
            pass
        return tree

    class PlainUpdate:
        """What `validate` hands moto's update_item in place of a validated tree: the actions,
        their names resolved and their values made, and what moto's passes need if it comes to them."""

        def __init__(self, actions, moto_arguments):
            self.actions, self.moto_arguments = actions, moto_arguments

        def normalize(self):  # moto's update_item calls it on the validated tree: the actions are in order
            pass

        def apply(self, item):
            attributes = item.attrs
            before = dict(attributes)
            try:
                for kind, name, value in self.actions:
                    if kind == "ADD":
                        value = attributes.get(name, ZERO) + value
                    attributes[name] = value
            except Exception:  # noqa: BLE001 - too large, a number moto cannot add: moto's own passes decide
                dict.clear(attributes)
                dict.update(attributes, before)  # the item as it was (a LimitedSizeDict: no size check)
                tree = validated_by_moto(self.moto_arguments)
                tree.normalize()
                execute(executor_class(tree, item, self.moto_arguments[1]))  # answers or refuses it as moto does

    def validated_by_moto(arguments):
        """The tree moto's own validator makes of (tree, names, values, item, table), or its refusal."""
        validator = object.__new__(validator_class)
        initialize(validator, *arguments)
        return validate(validator)

    ZERO = DynamoType({"N": "0"})

    def init(self, expression, expression_attribute_names, expression_attribute_values, item, table):
        try:
            actions = plans.get(expression)
        except TypeError:
            actions = None
        if actions is None:
            return initialize(self, expression, expression_attribute_names, expression_attribute_values, item, table)
        # No copy of the tree and no passes made until they are needed (validate_plainly's fallback).
        self.expression_attribute_names, self.expression_attribute_values = expression_attribute_names, \
            expression_attribute_values
        self.item, self.table = item, table
        self._sandbox_plain = (actions, expression)

    def validate_plainly(self):
        plain = self.__dict__.pop("_sandbox_plain", None)
        if plain is None:
            return validate(self)
        actions, tree = plain
        arguments = (tree, self.expression_attribute_names, self.expression_attribute_values, self.item, self.table)
        resolved = _resolved_actions(actions, *arguments[1:], DynamoType)
        if resolved is None:
            return validated_by_moto(arguments)  # moto's own passes answer (or refuse) it
        return PlainUpdate(resolved, arguments)

    def execute_plainly(self, node=None):
        if node is None and isinstance(self.update_ast, PlainUpdate):
            return self.update_ast.apply(self.item)
        return execute(self, node)

    patcher.replace(expressions.UpdateExpressionParser, "make", classmethod(make_and_plan))
    patcher.replace(validator_class, "__init__", init)
    patcher.replace(validator_class, "validate", validate_plainly)
    patcher.replace(executor_class, "execute", execute_plainly)


# A plain update expression: at most one SET clause of `name = :value` actions and one ADD clause of
# `name :value` actions, a name an attribute (letters, digits, _) or a #placeholder.
_PLAIN_NAME = r"(#[A-Za-z0-9_]+|[A-Za-z_][A-Za-z0-9_]*)"
_PLAIN_VALUE = r"(:[A-Za-z0-9_]+)"
_PLAIN_ACTION = {"SET": re.compile(rf"\s*{_PLAIN_NAME}\s*=\s*{_PLAIN_VALUE}\s*"),
                 "ADD": re.compile(rf"\s*{_PLAIN_NAME}\s+{_PLAIN_VALUE}\s*")}
_PLAIN_KEYWORD = re.compile(r"(?:^|(?<=\s))(SET|ADD)\s", re.IGNORECASE)


def _plain_actions(expression: str, reserved: frozenset) -> Optional[tuple]:
    """((SET or ADD, name or #name, :value), ...) in the expression's order, or None when it is not
    plain (apply_plain_updates_directly), or names an attribute by a `reserved` word (moto refuses it)."""
    before, *clauses = _PLAIN_KEYWORD.split(expression)
    if before.strip() or not clauses:
        return None
    actions, kinds = [], set()
    for kind, body in zip(clauses[::2], clauses[1::2]):
        kind = kind.upper()
        if kind in kinds:
            return None  # two clauses of a kind: moto refuses it
        kinds.add(kind)
        for action in body.split(","):
            found = _PLAIN_ACTION[kind].fullmatch(action)
            if found is None or found.group(1).upper() in reserved:
                return None
            actions.append((kind, found.group(1), found.group(2)))
    return tuple(actions)


def _resolved_actions(actions, names, values, item, table, dynamo_type) -> Optional[list]:
    """The actions with names resolved and values made, or None where moto's passes must answer:
    a name or value not given, an attribute twice, a key attribute of the table or an index (or
    any attribute with a defined type), an ADD that is not a number to a number or to nothing."""
    resolved, seen = [], set()
    # The table's and its indexes' key attributes, and every attribute it defines a type for: moto
    # checks a value set there (its type, an empty string) and refuses a key updated.
    keyed = {*table.attribute_keys,  # the table's own key attributes among them
             *(definition.get("AttributeName") for definition in table.attr or () if isinstance(definition, dict))}
    for kind, name, placeholder in actions:
        if name.startswith("#"):
            if not isinstance(names, dict) or not isinstance(names.get(name), str):
                return None
            name = names[name]
        value = values.get(placeholder) if isinstance(values, dict) else None
        if name in seen or name in keyed or not isinstance(value, dict):
            return None
        seen.add(name)
        if kind == "ADD":
            current = item.attrs.get(name)
            if list(value) != ["N"] or (current is not None and current.type != "N"):
                return None
        try:
            resolved.append((kind, name, dynamo_type(value)))
        except Exception:  # noqa: BLE001 - a value moto's own pass would refuse its own way
            return None
    return resolved


def _node_classes(node, node_class) -> set:
    """The classes of `node` and every node below it."""
    found = {type(node)}
    for child in node.children or ():
        if isinstance(child, node_class):
            found |= _node_classes(child, node_class)
    return found


@_speed("remember_response_member_names")
def remember_response_member_names(patcher: Patcher) -> None:
    """moto 5.2 finds each member of a response on its result object by trying up to twelve names
    (six alias rules, each also in snake_case), and works the list out for every member of every
    response. The list depends only on the member's name and shape, its parent shape (which moto
    sets just before), and the result's class, unless the result declares its own aliases
    (a `Meta` attribute): it is remembered per those, and still worked out for a `Meta` object.
    The values are still looked up on each result in the same order.

    A member of a plain dict result (DynamoDB's items: ten possible members per attribute value)
    is looked up directly with the remembered names, without the per-member context object, when
    the service transforms no response paths; anything else takes moto's own path."""
    from moto.core import serialize

    picker = serialize.XFormedAttributePicker
    possible_keys = picker.get_possible_keys
    remembered: dict = {}  # (member, shape, parent shape, result class) -> the names to try, in order
    # The same for a plain dict result, when no name is a dotted path (moto would walk it).
    dict_names: dict = {}

    def get_possible_keys(self, context):
        obj, shape = context.obj, context.shape
        if hasattr(obj, "Meta") or self.alias_providers is not serialize.DEFAULT_ALIAS_PROVIDERS:
            return possible_keys(self, context)
        key = (context.key, shape, getattr(shape, "parent", None), obj.__class__)
        keys = remembered.get(key)
        if keys is None:
            keys = remembered[key] = tuple(possible_keys(self, context))
            if obj.__class__ is dict and not any("." in name for name in keys):
                dict_names[key] = keys
        return keys

    get_value = serialize.ResponseSerializer.get_value

    def get_value_from_a_dict(self, value, key, shape):
        value_picker = self._value_picker
        plain = (type(value) is dict and type(value_picker) is picker and not value_picker.response_transformers
                 and value_picker.alias_providers is serialize.DEFAULT_ALIAS_PROVIDERS)
        names = dict_names.get((key, shape, getattr(shape, "parent", None), dict)) if plain else None
        if names is None:  # not a plain dict, a service's own picking, or not yet worked out
            return get_value(self, value, key, shape)
        for name in names:
            if name in value:
                return value[name]
        return None

    patcher.replace(picker, "get_possible_keys", get_possible_keys)
    patcher.replace(serialize.ResponseSerializer, "get_value", get_value_from_a_dict)


@_speed("build_user_agents_once")
def build_user_agents_once(patcher: Patcher) -> None:
    """botocore rebuilds a client's User-Agent header (about forty parts, each sanitized) twice
    per request. The string depends on the client's fixed settings, its client config and the
    SDK features in use (the client's and the request context's): it is remembered per client
    and per those, so a request that uses a new feature (a paginator, a waiter, a retry mode)
    still gets its own string."""
    from botocore import useragent

    agent = useragent.UserAgentString
    to_string = agent.to_string

    def remembered_to_string(self):
        context = useragent.get_context()
        key = (frozenset(context.features) if context is not None else frozenset(),
               frozenset(self._client_features or ()), self._client_config)
        # Per instance, and dropped by botocore's copy-with-new-config (it copies __dict__).
        strings = self.__dict__.get("_sandbox_strings")
        if strings is None or strings[0] is not self:
            strings = self.__dict__["_sandbox_strings"] = (self, {})
        if key not in strings[1]:
            strings[1][key] = to_string(self)
        return strings[1][key]

    patcher.replace(agent, "to_string", remembered_to_string)


@_speed("sign_with_a_placeholder")
def sign_with_a_placeholder(patcher: Patcher) -> None:
    """SigV4 signs each request (a canonical request, a SHA-256 of the body, five HMACs) only for
    the receiver to verify it; moto, with its IAM authentication off (the sandbox never turns it
    on), reads the access key (the account) and the credential scope from the header and ignores
    the signature. Plain SigV4 requests (DynamoDB, SQS, Kinesis, Step Functions, IAM, STS...) keep
    every header and field but the signature; S3's signer, which also hashes the payload into a
    header moto reads, is left as it is. The header's list of signed headers is botocore's own,
    remembered per the request's header names."""
    from botocore import auth

    add_auth = auth.SigV4Auth.add_auth
    # The signed-headers list depends only on the request's header names (their values are signed,
    # not listed): request header names, in order -> the list, made by botocore the first time.
    signed_by_names: dict = {}

    def add_placeholder_auth(self, request):
        if type(self) is not auth.SigV4Auth or self.credentials is None:
            return add_auth(self, request)
        request.context["timestamp"] = auth.get_current_datetime().strftime(auth.SIGV4_TIMESTAMP)
        self._modify_request_before_signing(request)
        signed = _remembered(signed_by_names, tuple(request.headers.keys()),
                             lambda: self.signed_headers(self.headers_to_sign(request)))
        # botocore's SigV4Auth._inject_signature_to_request, with the list above.
        request.headers["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={self.scope(request)}, "
                                            f"SignedHeaders={signed}, Signature={PLACEHOLDER_SIGNATURE}")

    patcher.replace(auth.SigV4Auth, "add_auth", add_placeholder_auth)


# Where a SigV4 signature goes (64 hex digits, as long as a real one).
PLACEHOLDER_SIGNATURE = "0" * 64


@_speed("roll_back_transactions_by_item")
def roll_back_transactions_by_item(patcher: Patcher) -> None:
    """moto's TransactWriteItems deep-copies each table the transaction names before it starts and
    puts the copy back if the transaction is cancelled: O(table size) per transaction. Here the
    items the transaction names are copied instead (an absent item is remembered as absent) and put
    back on any error; the table copy moto asks for is skipped (its `copy` name in that module
    answers Tables as they are, only while such a transaction runs in this thread). The same items
    end up in the table, with the same errors."""
    import copy
    import threading
    import types

    from moto.dynamodb import models
    from moto.dynamodb.models.table import Table

    backend = models.DynamoDBBackend
    original = backend.transact_write_items
    snapshotting = threading.local()

    def deepcopy(value, memo=None):
        if isinstance(value, Table) and getattr(snapshotting, "active", False):
            return value  # the items it could change are saved by transact_write_items below
        return copy.deepcopy(value, memo)

    def saved_items(self, transact_items) -> Optional[list]:
        """(table, hash, range, copy of the item or None) for each item written, or None when a
        request is malformed (moto's own path then raises its error)."""
        saved = []
        try:
            for entry in transact_items:
                (_, op), = entry.items()
                table = self.get_table(op["TableName"])
                key = op.get("Key") or {name: op["Item"][name] for name in (table.hash_key_attr, table.range_key_attr)
                                        if name}
                hash_key, range_key = self.get_keys_value(table, key)
                saved.append((table, hash_key, range_key, copy.deepcopy(table.get_item(hash_key, range_key))))
        except Exception:  # noqa: BLE001 - moto raises the request's own error
            return None
        return saved

    def transact_write_items(self, transact_items):
        saved = saved_items(self, transact_items)
        if saved is None:
            return original(self, transact_items)
        snapshotting.active = True
        try:
            return original(self, transact_items)
        except BaseException:
            for table, hash_key, range_key, item in reversed(saved):
                holder = table.items[hash_key] if range_key is not None else table.items
                slot = range_key if range_key is not None else hash_key
                if item is None:
                    holder.pop(slot, None)
                else:
                    holder[slot] = item
            raise
        finally:
            snapshotting.active = False

    patcher.replace(models, "copy", types.SimpleNamespace(**{**vars(copy), "deepcopy": deepcopy}))
    patcher.replace(backend, "transact_write_items", transact_write_items)





@_speed("list_response_methods_once")
def list_response_methods_once(patcher: Patcher) -> None:
    """moto finds the method that answers a request's action by listing its response class's
    functions (`method_names_from_class`: inspect.getmembers over the class and its bases, with a
    predicate per attribute) on every request. A response class's functions are defined when moto
    is imported and nothing changes them while the patch is applied (no registered patch adds or
    removes a method of a response class; one that did would be applied before the emulator's
    first request, as every patch is, and so be in the list): the list is made once per class,
    for as long as the patch is applied (the cache goes with it). A copy is handed out, so a caller
    that changed it would change nothing."""
    from moto.core import responses

    listed: dict = {}  # response class -> its function names, as moto lists them
    list_methods = responses.method_names_from_class

    def method_names_from_class(clazz):
        names = listed.get(clazz)
        if names is None:
            names = listed[clazz] = tuple(list_methods(clazz))
        return list(names)

    patcher.replace(responses, "method_names_from_class", method_names_from_class)


@_speed("route_and_build_requests_directly")
def route_and_build_requests_directly(patcher: Patcher) -> None:
    """moto's BotocoreStubber.process_request (moto 5.2) finds a request's handler by matching its URL,
    without the query, against every service's URL pattern in turn, looking up that service's backend
    and trying each expression of its URL map: an answer that depends only on the URL. The services
    whose pattern matches it (in moto's order) and the handler of the first URL map that answers are
    remembered per URL; each of those services' passthrough and allow-list settings is still checked
    on every request, and a URL no URL map answers goes through moto's own code every time.
    The request is then handled exactly as moto handles it (normalized, recorded, dispatched, its HTTP
    errors turned into responses), except that a plain request (a body of bytes or text) is made
    into moto's werkzeug Request from a WSGI environment built here key for key, in the same order,
    as werkzeug's EnvironBuilder (3.1) builds it for the arguments moto's Request.from_primitives
    passes, with what werkzeug would read of it already read (_read_as_werkzeug_would); anything
    else (a stream, a chunked body, a form content type without a body, werkzeug of another
    release) goes through moto's normalize_request."""
    import re

    import moto.backend_index as backend_index
    from moto.core import botocore_stubber
    from moto.core.exceptions import HTTPException

    stubber = botocore_stubber.BotocoreStubber
    moto_process_request = stubber.process_request
    build_directly = installed_version("werkzeug") in WERKZEUG_BUILDER_VERIFIED
    routes: dict = {}  # a clean URL -> (the services whose pattern matches it, in moto's order, the handler)

    def find_route(clean_url):
        import moto.backends as backends
        from moto.core import DEFAULT_ACCOUNT_ID

        services = []
        for service, pattern in backend_index.backend_url_patterns:
            if pattern.match(clean_url):
                services.append(service)
                backend_dict = backends.get_backend(service)  # type: ignore[call-overload]
                if isinstance(backend_dict, botocore_stubber.BackendDict):
                    if "us-east-1" in backend_dict[DEFAULT_ACCOUNT_ID]:
                        backend = backend_dict[DEFAULT_ACCOUNT_ID]["us-east-1"]
                    else:
                        backend = backend_dict[DEFAULT_ACCOUNT_ID]["aws"]
                else:
                    backend = backend_dict["global"]
                for url, handler in backend.urls.items():
                    if re.compile(url).match(clean_url):
                        return tuple(services), handler
        return tuple(services), None

    def process_request(self, request):
        parsed_url, _ = botocore_stubber.get_equivalent_url_in_aws_domain(request.url)
        clean_url = f"{parsed_url.scheme}://{parsed_url.netloc}{parsed_url.path}"
        if botocore_stubber.passthrough_url(clean_url):
            return None
        services, handler = _remembered(routes, clean_url, lambda: find_route(clean_url))
        if handler is None:  # no service's URL map answers it: moto's own answer (a 404, or None)
            return moto_process_request(self, request)
        for service in services:  # the checks moto makes on each service it tries, in its order
            if botocore_stubber.passthrough_service(service):
                return None
            if not botocore_stubber.service_whitelisted(service):
                raise botocore_stubber.ServiceNotWhitelisted(service)
        from moto.moto_api import recorder

        normalized_request = (build_directly and _moto_request(request)) or botocore_stubber.normalize_request(request)
        try:
            recorder._record_request(normalized_request)
            status, headers, body = handler(normalized_request, normalized_request.raw_url, normalized_request.headers)
        except HTTPException as e:
            status, headers, body = e.code, e.get_headers(), e.get_body()
        finally:
            # werkzeug's Request puts itself in its environment (a cycle of a dozen objects per
            # request for the collector); answered, it is read no more.
            normalized_request.environ.pop("werkzeug.request", None)
        return status, headers, body

    patcher.replace(stubber, "process_request", process_request)


# The werkzeug releases whose EnvironBuilder.get_environ `_wsgi_environment` was checked against, key for
# key (tests/test_emulator_shortcuts.py); on any other the builder itself makes every request.
WERKZEUG_BUILDER_VERIFIED = ("3.1.9",)


def _moto_request(request):
    """moto's Request.from_primitives(request.method, request.url, request.headers, request.body)
    (moto 5.2), its environment built by _wsgi_environment; None where that would not be the builder's."""
    from urllib.parse import urlparse

    from moto.core import request as moto_request

    body = request.body
    if body is None:
        body = b""
    elif isinstance(body, str):
        body = body.encode()
    if not isinstance(body, bytes):
        return None  # a stream or a chunked body: moto reads it
    header_items = [(key, value.decode("utf-8") if isinstance(value, bytes) else value)
                    for key, value in request.headers.items() if key.lower() not in ["transfer-encoding"]]
    parsed_url = urlparse(request.url)
    environ = _wsgi_environment(request.method, f"{parsed_url.scheme}://{parsed_url.netloc}", parsed_url.path,
                                parsed_url.query, body, header_items)
    if environ is None:
        return None
    built = moto_request.Request(environ)
    built.environ[moto_request.PRESERVED_HEADER_NAMES_ENVIRON_KEY] = {
        moto_request.environ_key_for_header(key): key
        for key, _ in header_items if moto_request.should_preserve_original_header_name(key)}
    built.environ.setdefault("CONTENT_LENGTH", "0")
    _read_as_werkzeug_would(built, body)
    return built


def _read_as_werkzeug_would(built, body: bytes) -> None:
    """What moto reads of every request through werkzeug's lazy properties (its URL's root, its body,
    its arguments) put in the request's attributes as werkzeug puts them there when first read
    (werkzeug 3.1): each request parsed the same content type again, rebuilt the same root URL and
    made a form parser for a body it handed back whole. Only for a body in a content type of AWS's
    JSON protocols and no query string; the root URL (and the host it is made of) is werkzeug's own
    answer the first time its inputs are met, remembered per those inputs; the body is read from
    the request's own stream, as werkzeug reads it."""
    json_types, CombinedMultiDict, parse_options_header, get_content_length, get_input_stream = _request_readers()
    environ = built.environ
    content_type = environ.get("CONTENT_TYPE", "")
    if (content_type not in json_types or environ.get("QUERY_STRING") or built.shallow
            or built.max_content_length is not None or built.trusted_hosts is not None):
        return
    content_length = get_content_length(environ.get("CONTENT_LENGTH"), environ.get("HTTP_TRANSFER_ENCODING"))
    if content_length != len(body):  # werkzeug would read what the header says: left to it
        return
    stream = get_input_stream(environ, max_content_length=None)
    data = stream.read()  # the body (the environment's input holds it)
    where = (built.scheme, environ.get("HTTP_HOST"), built.server, built.root_path)
    root = _remembered(_URL_ROOTS, where, lambda: (built.host, built.root_url, built.url_root))  # werkzeug's own answer
    mimetype, options = _remembered(_CONTENT_TYPES, content_type, lambda: parse_options_header(content_type))
    read = built.__dict__
    read["host"], read["root_url"], read["url_root"] = root
    read["_parsed_content_type"] = (mimetype, dict(options))
    read["content_length"] = content_length
    empty = built.parameter_storage_class
    read["stream"], read["form"], read["files"], read["args"] = stream, empty(), empty(), empty()
    read["_cached_data"] = read["data"] = data
    read["values"] = CombinedMultiDict([read["args"]] if built.method == "GET" else [read["args"], read["form"]])


@functools.cache
def _request_readers() -> tuple:
    """What _read_as_werkzeug_would reads a request with (imported once: it runs per request): moto's
    content types of AWS's JSON protocols, and werkzeug's readers."""
    from moto.utilities.constants import JSON_TYPES
    from werkzeug.datastructures import CombinedMultiDict
    from werkzeug.http import parse_options_header
    from werkzeug.sansio.utils import get_content_length
    from werkzeug.wsgi import get_input_stream

    return frozenset(JSON_TYPES), CombinedMultiDict, parse_options_header, get_content_length, get_input_stream


_URL_ROOTS: dict = {}  # (scheme, Host header, server, root path) -> werkzeug's (host, root_url, url_root)
_CONTENT_TYPES: dict = {}  # a Content-Type header -> werkzeug's parse of it (mimetype, options)


_FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")


def _wsgi_environment(method: str, base_url: str, path: str, query_string: str, data: bytes,
                      headers: list) -> Optional[dict]:
    """werkzeug's EnvironBuilder(method=, base_url=, path=, query_string=, data=, headers=).get_environ()
    (werkzeug 3.1) for a body of bytes and a query string, or None where the builder would do more
    (encode a form) or refuse (a base URL with a query or fragment)."""
    import sys
    from io import BytesIO

    from werkzeug.datastructures import Headers
    from werkzeug.test import EnvironBuilder

    if "?" in path:
        return None  # the builder refuses a query in both
    checked = Headers(headers)  # werkzeug's checks and conversions of names and values
    content_type = checked.get("Content-Type")
    if data:
        content_length: Optional[int] = len(data)
    elif content_type is not None and content_type.partition(";")[0].strip() in _FORM_TYPES:
        return None  # the builder encodes an (empty) form
    else:
        content_length = None  # the builder drops the request's own Content-Length and counts no body
    parts = _url_parts(base_url, path)
    if parts is None:
        return None
    scheme, host, script_name, path_info, raw_uri, server_name, server_port = parts
    environ = {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": script_name,
        "PATH_INFO": path_info,
        "QUERY_STRING": _wsgi_encoding(query_string),
        "REQUEST_URI": raw_uri,
        "RAW_URI": raw_uri,
        "SERVER_NAME": server_name,
        "SERVER_PORT": str(server_port),
        "HTTP_HOST": host,
        "SERVER_PROTOCOL": EnvironBuilder.server_protocol,
        "wsgi.version": EnvironBuilder.wsgi_version,
        "wsgi.url_scheme": scheme,
        "wsgi.input": BytesIO(data),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    if content_type is not None:
        environ["CONTENT_TYPE"] = content_type
    if content_length is not None:
        environ["CONTENT_LENGTH"] = str(content_length)
    combined: dict = {}
    for key, value in checked.to_wsgi_list():
        if key.lower() not in ("content-type", "content-length"):
            combined.setdefault(f"HTTP_{key.upper().replace('-', '_')}", []).append(value)
    for key, values in combined.items():
        environ[key] = ", ".join(values)
    return environ


def _wsgi_encoding(value: str) -> str:
    from werkzeug._internal import _wsgi_encoding_dance

    return _wsgi_encoding_dance(value)


@functools.lru_cache(maxsize=EXPRESSION_CACHE_SIZE)
def _url_parts(base_url: str, path: str) -> Optional[tuple]:
    """What the builder derives from a base URL and a path (a few distinct ones per run)."""
    from urllib.parse import unquote, urlsplit

    from werkzeug.urls import iri_to_uri

    scheme, host, script_root, query, fragment = urlsplit(iri_to_uri(base_url))
    if query or fragment:
        return None
    server_name, colon, port = host.partition(":")
    server_port = 443 if scheme == "https" else 80
    if colon:
        try:
            server_port = int(port)
        except ValueError:
            pass
    return (scheme, host, _wsgi_encoding(unquote(script_root.rstrip("/"))),
            _wsgi_encoding(unquote(iri_to_uri(urlsplit(path).path))), _wsgi_encoding(path), server_name, server_port)


# The emulator's speed patches, in the order they apply (read_queue_settings_without_counting
# builds on count_sqs_messages_once's attribute set when both apply).
NAMES = tuple(SHORTCUTS)
