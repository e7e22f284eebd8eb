"""DynamoDB rule: an idempotency store must expire its records (TTL), or it grows forever."""

import re

from pulumi_policy import ReportViolation, StackValidationArgs
from pulumi_policy.proxy import UnknownValueError

from ._links import FUNCTION, TABLE, StackIndex, label
from ._policy import PolicyConfigError, rule
from ._values import Malformed, config_value, each_resource, get

# Which environment variables name an idempotency store: the Powertools convention
# (IDEMPOTENCY_TABLE), which says what the function uses the table for. A ledger (LEDGER_TABLE) is
# a record of business facts, often kept for years by law: its name says nothing of expiry (the
# blueprint's own ledgers, which are idempotency stores too, are created with their TTL).
DEFAULT_KEY_PATTERN = "IDEMPOTENCY"


def _has_ttl(table) -> bool:
    enabled = get(table.props, "ttl", "enabled", default=False)
    if not isinstance(enabled, bool):
        raise Malformed(f"table {label(table)}: ttl.enabled must be true or false, got {enabled!r}")
    return enabled and bool(get(table.props, "ttl", "attributeName"))


def _check_ttl(args: StackValidationArgs, report: ReportViolation) -> None:
    pattern = config_value(args.get_config(), "environmentKeyPattern", DEFAULT_KEY_PATTERN)
    try:
        matches_key = re.compile(pattern, re.IGNORECASE).search
    except re.error as exc:
        raise PolicyConfigError(f"policy config for dynamodb-idempotency-table-ttl: environmentKeyPattern "
                                f"{pattern!r} is not a regular expression ({exc})") from None
    index = StackIndex(args.resources)
    reported = set()

    def check(function):
        variables = get(function.props, "environment", "variables", default={})
        for key in [k for k in variables if matches_key(k)]:
            try:
                table = index.follow(function, "environment", lambda key=key: variables[key], [TABLE])  # type: ignore[misc]
            except UnknownValueError:
                # The variable's value is not known yet, but it comes from one of the tables that
                # fed `environment`: if every one of them has TTL, so does the store.
                fed = [d for d in function.property_dependencies.get("environment", []) if d.resource_type == TABLE]
                if fed and all(_has_ttl(t) for t in fed):
                    continue
                raise
            if table is None or table.urn in reported:
                continue
            if not _has_ttl(table):
                reported.add(table.urn)
                report(f"table {label(table)} is function {label(function)}'s idempotency store "
                       f"(environment {key}) but has no TTL: its records never expire. Set ttl "
                       "{attributeName: 'expiration', enabled: true} (the Powertools attribute).",
                       table.urn)

    each_resource(index, report, {FUNCTION: check})


dynamodb_idempotency_table_ttl = rule("stack", "dynamodb-idempotency-table-ttl", _check_ttl, config={
    "environmentKeyPattern": {"type": "string", "default": DEFAULT_KEY_PATTERN,
                              "description": "regular expression (case-insensitive) for the environment variable "
                                             "names that name an idempotency store"}})

POLICIES = [dynamodb_idempotency_table_ttl]
