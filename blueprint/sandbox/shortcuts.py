"""Speed changes to moto and botocore for the sandbox's emulator, each listed in SHORTCUTS.

moto spends most of a drill's CPU. Each change here keeps moto's answers (same responses, same
errors; tests/test_emulator_shortcuts.py runs one scenario with and without them): it removes
repeated work, never a check. Every change is idempotent and applied by `apply_all`.
"""

from __future__ import annotations

import string
from typing import Optional

# Every speed change made to moto (5.2.x) or botocore, by the function that makes it. Time
# compressions, which do change what a run waits for, are listed apart (realization.COMPRESSION).
SHORTCUTS = {
    "count_sqs_messages_once": "a queue's three Approximate* message counts are made in one pass over its "
                               "messages, with one clock read, instead of one pass each per attribute rebuild",
    "read_queue_settings_without_counting": "moto reads a FIFO queue's ContentBasedDeduplication through the "
                                            "queue's full attribute set four times per message sent; those "
                                            "reads skip the three message counts (a pass over every message "
                                            "each) they never use, and a GetQueueAttributes builds the set once, "
                                            "not three times per attribute name",
    "remember_response_method_names": "the names of a response class's methods are listed once per class, "
                                      "not with inspect.getmembers on every request",
    "parse_dynamodb_expressions_once": "a DynamoDB condition's syntax is parsed once per distinct text and "
                                       "attribute names (each request's values are put into a copy of the "
                                       "tree and moto builds the operators from it), an update expression "
                                       "once per distinct text, not twice per request (request validation, "
                                       "then the operation)",
    "walk_dynamodb_update_trees_cheaply": "each of the ten passes that validate an update expression looks up "
                                          "what it does per node type once per pass, not twice per node, and "
                                          "the parsed tree each update works on is copied node by node "
                                          "instead of by copy.deepcopy's generic protocol",
    "check_update_expressions_once": "the three checks of an update expression that depend only on the "
                                     "expression, its attribute names and the table's keys (clause counts, "
                                     "overlapping paths, no key updated) are skipped for one that already "
                                     "passed them on that table",
    "remember_response_member_names": "the names under which a response member may be found on moto's "
                                      "result object (six alias rules, each name also in snake_case) are "
                                      "worked out once per member, parent shape and result class, not on "
                                      "every member of every response; a plain dict result's member is "
                                      "looked up with them directly (a 1,500-item Scan: 1.5 s -> 0.7 s)",
    "share_botocore_data": "botocore's service models and endpoint data, read from disk and cached per "
                           "session, are cached once per process: moto (a session per mock) and the "
                           "sandbox (a session per client) no longer re-read them (~70 ms per client)",
    "sign_with_a_placeholder": "requests moto answers carry SigV4's Authorization header (credential "
                               "scope, signed headers) with a placeholder signature: moto reads the "
                               "access key and scope from it and never checks the signature (its IAM "
                               "authentication is off), so the hashing behind it was work nobody read",
    "build_user_agents_once": "a client's User-Agent header is built once per set of SDK features in use "
                              "(about forty sanitized parts), not twice per request",
    "draw_request_ids_at_once": "the 52-character request id moto puts on every response is drawn from the "
                                "same characters by moto's own random generator in one call, not one call "
                                "per character",
    "skip_the_xml_body_of_json_errors": "a JSON protocol error (every DynamoDB, SQS, Kinesis and Step Functions "
                                        "error, a failed condition included) no longer renders an XML body first "
                                        "that its own constructor then replaces with the JSON one",
    "parse_state_machine_paths_once": "a Step Functions JSONPath (InputPath, OutputPath, ResultPath, a "
                                      "Parameters path) is parsed once per distinct path, not by a new "
                                      "parser built on every state of every execution",
    "route_requests_once": "moto finds a request's handler by trying its URL against every service's "
                           "patterns (about fifty regular expressions), then each matching service's URL map: "
                           "the services tried and the handler found are remembered per URL (scheme, host and "
                           "path); the passthrough and allow-list checks still run on every request",
    "remember_werkzeug_urls": "werkzeug rebuilds a request's root URL (quoting, IRI decoding) each time moto "
                              "asks for it: the pure function that builds it remembers its answers",
    "build_wsgi_environments_directly": "moto turns each botocore request into a werkzeug request: its WSGI "
                                        "environment (the same keys, values and order) is built directly from "
                                        "the method, URL, headers and body, not through werkzeug's test-client "
                                        "EnvironBuilder",
    "roll_back_transactions_by_item": "a DynamoDB transaction keeps a copy of each item it writes (to put back "
                                      "if it is cancelled), not a deep copy of every table it names: the "
                                      "stream ledger's guarded write is a transaction, and copying the whole "
                                      "ledger on each one made a drill quadratic in its records",
}


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


def count_sqs_messages_once() -> None:
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

    Queue.messages = property(messages)
    Queue.approximate_number_of_messages = counted(0)
    Queue.approximate_number_of_messages_delayed = counted(1)
    Queue.approximate_number_of_messages_not_visible = counted(2)
    Queue.attributes = property(attributes)
    Queue._sandbox_fast = True


def read_queue_settings_without_counting() -> None:
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

    if getattr(Queue, "_sandbox_settings_only", False):
        return
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
        setattr(Queue, name, unless_settings_only(getattr(Queue, name).fget))

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
        return build(queue)

    SQSBackend._validate_message = validate_settings_only
    SQSBackend.send_message = send_message
    Queue.add_message = add_message
    SQSBackend.get_queue_attributes = get_queue_attributes
    Queue.attributes = property(attributes)
    Queue._sandbox_settings_only = True


class _NotCounted:
    """A message count inside a read that uses only a queue's settings: never meant to be read."""

    def _refuse(self, *_args, **_kwargs):
        raise RuntimeError("a queue's message count was read inside a read the sandbox made without counting "
                           "(sandbox/shortcuts.py read_queue_settings_without_counting)")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __bool__ = __int__ = __index__ = __float__ = _refuse
    __str__ = __repr__ = __format__ = __add__ = __radd__ = __hash__ = _refuse


NOT_COUNTED = _NotCounted()


def remember_response_method_names() -> None:
    """moto finds a request's action among its response class's methods by listing them with
    inspect.getmembers on every request; a class's methods do not change while it runs."""
    import functools

    from moto.core import responses

    if getattr(responses, "_sandbox_method_names", False):
        return
    responses.method_names_from_class = functools.lru_cache(maxsize=None)(responses.method_names_from_class)
    responses._sandbox_method_names = True


def parse_dynamodb_expressions_once() -> None:
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

    from moto.dynamodb.comparisons import ConditionExpressionParser

    UpdateExpressionParser = importlib.import_module("moto.dynamodb.parsing.expressions").UpdateExpressionParser

    if getattr(ConditionExpressionParser, "_sandbox_once", False):
        return
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
        if key not in syntax:
            try:
                parsed = parse_syntax(parser)
            except Exception:
                return parse_condition(parser)  # moto's own error, raised where moto raises it
            if len(syntax) > EXPRESSION_CACHE_SIZE:
                syntax.clear()
            syntax[key] = parsed
        node, names, values = syntax[key]
        given = parser.expression_attribute_values
        if values and (not isinstance(given, dict) or any(name not in given for name in values)):
            return parse_condition(parser)  # a value named but not given: moto's own error
        parser.expr_attr_names_found.extend(names)
        parser.expr_attr_values_found.extend(values)
        return parser._make_op_condition(with_values(node, given or {}))

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


def walk_dynamodb_update_trees_cheaply() -> None:
    """moto validates an update expression with ten passes over its syntax tree. Each pass asked
    for its node-type -> action table (a dict built afresh) twice per node and matched the node
    against it with isinstance on abstract classes; the table is now built once per pass and a
    node class's action found once per pass (the same first match in the table's order). The
    per-child hook and the actions are moto's own.
    Each update works on a copy of the cached parsed tree: `Node.__deepcopy__` copies the same
    attributes copy.deepcopy would (children, parent, type; the memo keeps the links), without
    its reduce-and-reconstruct protocol per node."""
    import copy

    from moto.dynamodb.parsing import ast_nodes

    traverser = ast_nodes.DepthFirstTraverser
    if getattr(traverser, "_sandbox_cheap", False):
        return

    def traverse(self, node):
        actions = self._processing_map()
        pre_processing_of_child = self.pre_processing_of_child
        action_by_class: dict = {}  # a node's class -> this pass's action for it (None: not a node / none)

        def action_for(cls):
            if cls not in action_by_class:
                action_by_class[cls] = next((action for kind, action in actions.items() if issubclass(cls, kind)),
                                            None)
            return action_by_class[cls]

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

        return walk(node)

    node_classes: dict = {}  # a class -> whether it is a syntax tree node

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

    traverser.traverse = traverse
    ast_nodes.Node.__deepcopy__ = copy_node
    traverser._sandbox_cheap = True


def check_update_expressions_once() -> None:
    """Of the ten passes moto makes over an update expression, three only check the expression
    itself: at most one clause of each kind, no two actions on overlapping paths, no action on the
    table's keys. Their outcome depends only on the parsed expression (one tree per distinct
    expression: parse_dynamodb_expressions_once), its attribute names and the table's key
    attributes, so once a validation with those has succeeded, later ones skip them. An
    expression that fails them was never remembered, so it fails them every time."""
    import json

    from moto.dynamodb.parsing import validators

    validator = validators.UpdateExpressionValidator
    if getattr(validator, "_sandbox_once", False):
        return
    expression_only = (validators.ActionCountValidator, validators.OverlappingPathsValidator,
                       validators.UpdateHashRangeKeyValidator)
    passed: set = set()
    initialize = validator.__init__

    def __init__(self, expression, expression_attribute_names, expression_attribute_values, item, table):
        initialize(self, expression, expression_attribute_names, expression_attribute_values, item, table)
        # The tree itself (hashed by identity, kept alive by the key), not a copy or an id.
        self._sandbox_key = (expression, json.dumps(expression_attribute_names, sort_keys=True),
                             tuple(table.table_key_attrs))

    def validate(self):
        skip = self._sandbox_key in passed
        node = self.node_to_validate
        for processor in self.processors:
            if not (skip and isinstance(processor, expression_only)):
                node = processor.traverse(node)
        if len(passed) > EXPRESSION_CACHE_SIZE:
            passed.clear()
        passed.add(self._sandbox_key)
        return node

    validator.__init__ = __init__
    validator.validate = validate
    validator._sandbox_once = True


def remember_response_member_names() -> None:
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
    if getattr(picker, "_sandbox_remembered", False):
        return
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

    picker.get_possible_keys = get_possible_keys
    serialize.ResponseSerializer.get_value = get_value_from_a_dict
    picker._sandbox_remembered = True


def build_user_agents_once() -> None:
    """botocore rebuilds a client's User-Agent header (about forty parts, each sanitized) twice
    per request. The string depends on the client's fixed settings, its client config and the
    SDK features in use (the client's and the request context's): it is remembered per client
    and per those, so a request that uses a new feature (a paginator, a waiter, a retry mode)
    still gets its own string."""
    from botocore import useragent

    agent = useragent.UserAgentString
    if getattr(agent, "_sandbox_once", False):
        return
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

    agent.to_string = remembered_to_string
    agent._sandbox_once = True


def sign_with_a_placeholder() -> None:
    """SigV4 signs each request (a canonical request, a SHA-256 of the body, five HMACs) only for
    the receiver to verify it; moto, with its IAM authentication off (the sandbox never turns it
    on), reads the access key (the account) and the credential scope from the header and ignores
    the signature. Plain SigV4 requests (DynamoDB, SQS, Kinesis, Step Functions, IAM, STS...) keep
    every header and field but the signature; S3's signer, which also hashes the payload into a
    header moto reads, is left as it is."""
    from botocore import auth

    if getattr(auth.SigV4Auth, "_sandbox_placeholder", False):
        return
    add_auth = auth.SigV4Auth.add_auth

    def add_placeholder_auth(self, request):
        if type(self) is not auth.SigV4Auth or self.credentials is None:
            return add_auth(self, request)
        request.context["timestamp"] = auth.get_current_datetime().strftime(auth.SIGV4_TIMESTAMP)
        self._modify_request_before_signing(request)
        self._inject_signature_to_request(request, PLACEHOLDER_SIGNATURE)

    auth.SigV4Auth.add_auth = add_placeholder_auth
    auth.SigV4Auth._sandbox_placeholder = True


# Where a SigV4 signature goes (64 hex digits, as long as a real one).
PLACEHOLDER_SIGNATURE = "0" * 64


def draw_request_ids_at_once() -> None:
    """moto draws every response's request id (52 letters and digits) one Random.choice per
    character; Random.choices draws the same kind of string from the same pool in one call. Ids
    stay random (and follow moto's seed when a test seeds it), only not the same ids as before."""
    from moto.moto_api._internal.moto_random import MotoRandom

    if getattr(MotoRandom, "_sandbox_at_once", False):
        return

    def get_random_string(self, length: int = 20, include_digits: bool = True, lower_case: bool = False) -> str:
        pool = _LETTERS_AND_DIGITS if include_digits else _LETTERS
        drawn = "".join(self.choices(pool, k=length))
        return drawn.lower() if lower_case else drawn

    MotoRandom.get_random_string = get_random_string
    MotoRandom._sandbox_at_once = True


_LETTERS = string.ascii_letters
_LETTERS_AND_DIGITS = string.ascii_letters + string.digits


def skip_the_xml_body_of_json_errors() -> None:
    """moto's JsonRESTError (the base of every JSON protocol error) calls its parent's constructor,
    which renders the error as an XML document with xmltodict, then replaces that body with the
    JSON one. DynamoDB raises such errors inside a request too (a path an ADD creates, a failed
    condition), so the discarded XML was a tenth of an update's time. The error ends with the same
    attributes: werkzeug's HTTPException set up, the type, message, JSON body and content type."""
    import json

    from moto.core.exceptions import JsonRESTError
    from werkzeug.exceptions import HTTPException

    if getattr(JsonRESTError, "_sandbox_json_only", False):
        return

    def __init__(self, error_type: str, message: str, _: str = "", **kwargs) -> None:
        HTTPException.__init__(self)
        self.error_type = error_type
        self.message = message
        self.description = json.dumps({"__type": self.error_type, "message": self.message})
        self.content_type = "application/json"

    JsonRESTError.__init__ = __init__
    JsonRESTError._sandbox_json_only = True


def parse_state_machine_paths_once() -> None:
    """moto's Step Functions interpreter parses each JSONPath it evaluates with jsonpath_ng, whose
    parse builds a new yacc parser every time (a tenth of a Distributed Map's CPU). A parsed path is
    only read (find, update_or_create change the data, not the path): one parse per distinct path."""
    import functools
    import importlib

    json_path = importlib.import_module("moto.stepfunctions.parser.asl.utils.json_path")
    result_path = importlib.import_module("moto.stepfunctions.parser.asl.component.common.path.result_path")

    if getattr(json_path, "_sandbox_once", False):
        return
    json_path.parse = functools.lru_cache(maxsize=EXPRESSION_CACHE_SIZE)(json_path.parse)
    result_path.parse = functools.lru_cache(maxsize=EXPRESSION_CACHE_SIZE)(result_path.parse)
    json_path._sandbox_once = True


def route_requests_once() -> None:
    """moto's BotocoreStubber.process_request (moto 5.2) matches a request's URL, without its query,
    against every service's URL patterns in turn, looks up that service's backend and tries each of
    its URL map's expressions: about fifty regular expressions and a backend lookup per request for
    an answer that depends only on the URL. The services whose pattern matches it (in moto's order)
    and the handler of the first URL map that answers are remembered per URL; each service's
    passthrough and allow-list settings are still checked on every request, and the request is
    then handled exactly as moto handles it (normalized, recorded, dispatched, its HTTP errors
    turned into responses). A URL no URL map answers goes through moto's own code each time."""
    import re

    import moto.backend_index as backend_index
    from moto.core import botocore_stubber
    from moto.core.exceptions import HTTPException

    stubber = botocore_stubber.BotocoreStubber
    if getattr(stubber, "_sandbox_routed", False):
        return
    routes: dict = {}  # clean URL -> (the services whose pattern matches it, in moto's order, the handler)

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
        if clean_url not in routes:
            if len(routes) > EXPRESSION_CACHE_SIZE:
                routes.clear()
            routes[clean_url] = find_route(clean_url)
        services, handler = routes[clean_url]
        if handler is None:  # no service's URL map answers it: moto's own answer (a 404, or None)
            return original(self, request)
        for service in services:  # the checks moto makes on each service it tries, in its order
            if botocore_stubber.passthrough_service(service):
                return None
            if not botocore_stubber.service_whitelisted(service):
                raise botocore_stubber.ServiceNotWhitelisted(service)
        from moto.moto_api import recorder

        normalized_request = botocore_stubber.normalize_request(request)
        try:
            recorder._record_request(normalized_request)
            status, headers, body = handler(normalized_request, normalized_request.raw_url,
                                            normalized_request.headers)
        except HTTPException as e:
            status, headers, body = e.code, e.get_headers(), e.get_body()
        return status, headers, body

    original = stubber.process_request
    stubber.process_request = process_request
    stubber._sandbox_routed = True


def remember_werkzeug_urls() -> None:
    """werkzeug.sansio.utils.get_current_url builds a URL from its parts (quoting, IRI decoding);
    its answer depends on its arguments alone (strings, None, bytes), so it is remembered."""
    import functools

    from werkzeug.sansio import request

    if getattr(request, "_sandbox_urls", False):
        return
    request.get_current_url = functools.lru_cache(maxsize=EXPRESSION_CACHE_SIZE)(request.get_current_url)
    request._sandbox_urls = True


def build_wsgi_environments_directly() -> None:
    """moto (request.py, from_primitives) makes a werkzeug request of every botocore request with
    `Request.from_values`, werkzeug's test-client EnvironBuilder: an object with a dozen properties,
    a headers copy and a multidict or two, to produce one dict. For the arguments moto passes (a
    base URL, a path, a query string, a body of bytes, a header list) the environment is built here
    with werkzeug's own helpers, key for key and in the same order as EnvironBuilder.get_environ
    (werkzeug 3.1); anything else (a body that is a stream or a form, a form content type with no
    body) still goes through the builder."""
    import functools
    import sys
    from io import BytesIO
    from urllib.parse import unquote, urlsplit

    from moto.core.request import Request
    from werkzeug._internal import _wsgi_encoding_dance
    from werkzeug.datastructures import Headers
    from werkzeug.test import EnvironBuilder
    from werkzeug.urls import iri_to_uri

    if getattr(Request, "_sandbox_direct", False):
        return
    from_values = Request.from_values.__func__
    moto_arguments = {"method", "base_url", "path", "query_string", "data", "headers"}
    form_types = ("multipart/form-data", "application/x-www-form-urlencoded")

    @functools.lru_cache(maxsize=EXPRESSION_CACHE_SIZE)
    def url_parts(base_url, path):
        """What the builder derives from the base URL and the path (a few distinct ones per run)."""
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
        return (scheme, host, _wsgi_encoding_dance(unquote(script_root.rstrip("/"))),
                _wsgi_encoding_dance(unquote(iri_to_uri(urlsplit(path).path))), _wsgi_encoding_dance(path),
                server_name, server_port)

    def environment(method, base_url, path, query_string, data, headers):
        """EnvironBuilder(...).get_environ() for these arguments, or None where it would do more."""
        if isinstance(data, str):
            data = data.encode()
        if not isinstance(data, bytes) or not isinstance(query_string, str) or "?" in path:
            return None
        headers = Headers(headers)  # werkzeug's checks and conversions of names and values
        content_type = headers.get("Content-Type")
        # The builder drops a Content-Length header (its own content_length argument is None) and
        # counts the body it is given.
        if data:
            content_length = len(data)
        elif content_type is not None and content_type.partition(";")[0].strip() in form_types:
            return None  # the builder encodes an (empty) form
        else:
            content_length = None
        parts = url_parts(base_url, path)
        if parts is None:
            return None  # the builder refuses a base URL with a query or fragment
        scheme, host, script_name, path_info, raw_uri, server_name, server_port = parts
        environ = {
            "REQUEST_METHOD": method,
            "SCRIPT_NAME": script_name,
            "PATH_INFO": path_info,
            "QUERY_STRING": _wsgi_encoding_dance(query_string),
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
        for key, value in headers.to_wsgi_list():
            if key.lower() not in ("content-type", "content-length"):
                combined.setdefault(f"HTTP_{key.upper().replace('-', '_')}", []).append(value)
        for key, values in combined.items():
            environ[key] = ", ".join(values)
        return environ

    def direct_from_values(cls, *args, **kwargs):
        built = environment(**kwargs) if not args and set(kwargs) == moto_arguments else None
        return cls(built) if built is not None else from_values(cls, *args, **kwargs)

    Request.from_values = classmethod(direct_from_values)
    Request._sandbox_direct = True
    Request._sandbox_environment = staticmethod(environment)  # compared with the builder's by the tests


def roll_back_transactions_by_item() -> None:
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
    if getattr(backend.transact_write_items, "_sandbox_by_item", False):
        return
    original = backend.transact_write_items
    snapshotting = threading.local()

    def deepcopy(value, memo=None):
        if isinstance(value, Table) and getattr(snapshotting, "active", False):
            return value  # the items it could change are saved by transact_write_items below
        return copy.deepcopy(value, memo)

    models.copy = types.SimpleNamespace(**{**vars(copy), "deepcopy": deepcopy})

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

    transact_write_items._sandbox_by_item = True
    backend.transact_write_items = transact_write_items


def apply_all() -> None:
    for name in SHORTCUTS:
        globals()[name]()
