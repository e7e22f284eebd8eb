"""Policy pack configuration, resolved the way the Pulumi CLI resolves it before `Configure`.

The file is the one `pulumi preview --policy-pack-config <file>` reads: a JSON object whose keys
are policy names (or `all`) and whose values are an enforcement level or an object with an
optional `enforcementLevel` and the policy's config properties:

    {"all": "mandatory", "sqs-dlq-max-receive-count": {"enforcementLevel": "advisory", "minimum": 5}}

Resolution: each policy starts at its own enforcement level with its schema's defaults, then
`all`, then its own entry; the properties are then checked against the policy's config schema.
"""

from __future__ import annotations

import difflib
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from google.protobuf import json_format

from integration_blueprint.core.conventions import SUPPRESSIONS_SECTION

LEVELS = ("advisory", "mandatory", "remediate", "disabled")


class PolicyConfigError(Exception):
    """The policy config file cannot be read or does not fit the pack's schemas."""


@dataclass
class ResolvedPolicyConfig:
    enforcement_level: str
    properties: dict[str, Any] = field(default_factory=dict)


def load(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise PolicyConfigError(f"policy config {path} does not exist") from None
    except json.JSONDecodeError as exc:
        raise PolicyConfigError(f"policy config {path} is not valid JSON: {exc}") from None
    if not isinstance(document, dict):
        raise PolicyConfigError(f"policy config {path} must be a JSON object of policy name -> "
                                "enforcement level or settings")
    return document


def _level(value: Any, where: str) -> str:
    if value not in LEVELS:
        raise PolicyConfigError(f"{where}: enforcement level {value!r} is not one of {', '.join(LEVELS)}")
    return value


def resolve(policies: list, document: dict[str, Any], source: str = "policy config",
            level_names: Optional[Mapping[Any, str]] = None, pack: str = "",
            initial: Optional[dict[str, Any]] = None, defaults_fit: bool = False) -> dict[str, ResolvedPolicyConfig]:
    """`policies` are the analyzer's PolicyInfo messages (name, enforcementLevel, configSchema) of
    the pack named `pack`, which every refusal names beside the file. `initial`: the config the pack
    gives itself (AnalyzerInfo.initialConfig, e.g. AWSGuard's `new AwsGuard({all: "mandatory"})`) in
    the same form as a document, applied before it, as the CLI applies it (pkg/resource/analyzer/
    config.go ReconcilePolicyPackConfig: the schemas' defaults, then the pack's initial config, then
    the file). `defaults_fit`: every schema's own defaults are known to pass it (blueprint's own
    pack, which its tests check), so a policy whose settings are still its defaults is not checked
    again: the check is jsonschema's, whose import alone was a tenth of the gate's CPU, and most
    runs change no setting."""
    level_names = level_names or {}
    if pack:
        source = f"{source}: policy pack {pack}"
    resolved: dict[str, ResolvedPolicyConfig] = {}
    schemas: dict[str, dict] = {}
    unchanged: dict[str, str] = {}  # a policy's defaults as JSON (1 and true differ), where they are known to fit
    for policy in policies:
        schema = json_format.MessageToDict(policy.configSchema) if policy.HasField("configSchema") else {}
        schemas[policy.name] = schema
        defaults = {k: v["default"] for k, v in (schema.get("properties") or {}).items()
                    if isinstance(v, dict) and "default" in v}
        resolved[policy.name] = ResolvedPolicyConfig(level_names.get(policy.enforcementLevel, "advisory"), dict(defaults))
        if defaults_fit:
            unchanged[policy.name] = json.dumps(defaults, sort_keys=True)

    unknown = sorted(set(document) - set(resolved) - {"all"})
    if unknown:
        raise PolicyConfigError(f"{source}: no policy named {', '.join(unknown)} in the pack; its "
                                f"policies are: {', '.join(sorted(resolved))}")
    own = {name: value for name, value in (initial or {}).items() if name in resolved or name == "all"}
    _apply(resolved, own, f"the initial config of policy pack {pack or '(unnamed)'}")
    _apply(resolved, document, source)

    for name, entry in resolved.items():
        schema = schemas[name]
        if not schema and entry.properties:
            raise PolicyConfigError(f"{source}: policy {name} takes no settings, got {sorted(entry.properties)}")
        _refuse_unknown_settings(name, entry.properties, schema, source)
        if schema and unchanged.get(name) != json.dumps(entry.properties, sort_keys=True):
            import jsonschema  # only here: most runs check nothing

            error = jsonschema.exceptions.best_match(_validator(json.dumps(schema, sort_keys=True))
                                                     .iter_errors(entry.properties))
            if error is not None:
                where = ".".join(str(p) for p in error.absolute_path) or "(settings)"
                raise PolicyConfigError(f"{source}: {name}.{where}: {error.message}")
    return resolved


@functools.lru_cache(maxsize=None)
def _validator(schema_json: str) -> Any:
    """The validator of one policy's config schema, its schema checked once: `jsonschema.validate`
    checks the schema against its metaschema on every call, which was 0.3-1 s of CPU per resolve of
    the pack's 37 schemas (every preview resolves once, every policy test once per program). The
    verdict is the one `jsonschema.validate` gives: the same validator class and best_match."""
    import jsonschema

    schema = {"type": "object", **json.loads(schema_json)}
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)


def _apply(resolved: dict[str, ResolvedPolicyConfig], document: dict[str, Any], source: str) -> None:
    """`all` first, then each policy's own entry (ReconcilePolicyPackConfig's applyConfig)."""
    if "all" in document:
        value = document["all"]
        level = value.get("enforcementLevel") if isinstance(value, dict) else value
        for entry in resolved.values():
            entry.enforcement_level = _level(level, f"{source}: all")
    for name, value in document.items():
        if name == "all":
            continue
        entry = resolved[name]
        if isinstance(value, str):
            entry.enforcement_level = _level(value, f"{source}: {name}")
        elif isinstance(value, dict):
            settings = dict(value)
            if "enforcementLevel" in settings:
                entry.enforcement_level = _level(settings.pop("enforcementLevel"), f"{source}: {name}")
            entry.properties.update(settings)
        else:
            raise PolicyConfigError(f"{source}: {name} must be an enforcement level or an object, got {value!r}")


def _refuse_unknown_settings(name: str, properties: dict[str, Any], schema: dict, source: str) -> None:
    """A misspelled setting would otherwise be ignored and the policy run on its default (the
    pack's schemas do not forbid extra properties, and neither does the Pulumi CLI)."""
    known = sorted(schema.get("properties") or {})
    unknown = sorted(set(properties) - set(known))
    if unknown and set(known) <= {SUPPRESSIONS_SECTION}:  # the blueprint's rules all take their suppressions
        raise PolicyConfigError(f"{source}: policy {name} takes no settings, got {unknown}")
    for key in unknown:
        guess = difflib.get_close_matches(key, known, n=1)
        hint = f"did you mean {guess[0]!r}? " if guess else ""
        raise PolicyConfigError(f"{source}: policy {name} has no setting {key!r}; {hint}"
                                f"its settings are: {', '.join(known)}")
