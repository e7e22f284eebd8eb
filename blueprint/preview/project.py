"""The Pulumi project a program belongs to and the config its stack runs with, read as the Pulumi CLI
reads them (pulumi/pulumi: sdk/go/common/workspace/{paths,loaders,project}.go, sdk/go/common/resource/
config and pkg/workspace/config.go).

What a program receives is what the CLI passes the language host in PULUMI_CONFIG: every key
namespaced (`ns:key`), every value a string (strings as written, numbers, booleans, lists and objects
JSON-encoded the way Go encodes them). Project config from Pulumi.yaml's `config:` block applies where
the stack file does not set a key; typed declarations are checked as the CLI checks them, with its
messages. Offline there is no secrets provider and no Pulumi Cloud: a `secure:` value becomes a
placeholder marked secret, and ESC `environment:` imports are listed as not resolved.
"""

from __future__ import annotations

import copy
import difflib
import functools
import json
import math
import os
import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Mapping, Optional

import yaml


class ProgramError(Exception):
    """The program, its project file or its stack config could not be run. `file` and `line`: where
    in the program it failed, when known; `refused`: a component refused one of its arguments;
    `engine_fault`: the offline engine itself failed; `secrets`: the values the run knew to be
    secret when it failed (its report masks them); `stdout`, `stderr`: what the program printed;
    `tool_part`: the part of the gate that failed, when the failure is the gate's own."""

    def __init__(self, message: str = "", *, file: str = "", line: int = 0, refused: bool = False,
                 engine_fault: bool = False, secrets: tuple = (), stdout: str = "", stderr: str = "",
                 tool_part: str = ""):
        super().__init__(message)
        self.file, self.line, self.refused, self.engine_fault = file, line, refused, engine_fault
        self.tool_part = tool_part
        self.secrets, self.stdout, self.stderr = secrets, stdout, stderr
        self.not_contained = ""  # why the program ran outside the sandbox (program_walls), when it did
        self.sandbox = ""  # how the sandbox's walls caused the failure (program_walls.sandbox_blame), when they did


# The CLI looks for Pulumi.<ext> in this order, and a stack file takes its project file's extension
# (sdk/go/common/encoding/marshal.go Exts; workspace.ProjectStackPath).
PROJECT_FILE_EXTENSIONS = (".json", ".yaml", ".yml")
# What a `secure:` value reads as offline: a plausible string, so a program that only passes a secret
# on (a password, a token) still runs. A declared `integer`/`boolean` secret gets a value of its type.
SECRET_PLACEHOLDER = "offline-placeholder-secret"
TYPED_SECRET_PLACEHOLDERS = {"integer": "0", "boolean": "false"}
# A typed project config declaration (sdk/go/common/workspace/project.json, configTypeDeclaration).
CONFIG_TYPES = ("string", "integer", "boolean", "array", "object")
DECLARATION_ATTRIBUTES = ("type", "items", "description", "secret", "default", "value")


# ---- YAML as go-yaml v3 reads it ---------------------------------------------------------------

class _CliYamlLoader(yaml.SafeLoader):
    """PyYAML with the plain-scalar rules of go-yaml v3, which the CLI reads its files with: only
    true/false are booleans (`yes`, `on` stay strings), dates stay strings, `1:30` is a string,
    `017` is octal and `1_000` a thousand, as Go's strconv reads them; a repeated key is an error."""

    yaml_implicit_resolvers: dict = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag.rsplit(":", 1)[-1] in ("null", "merge")]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}

    def construct_mapping(self, node, deep=False):
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"mapping key {key!r} already defined at line {seen[key] + 1}", key_node.start_mark)
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)


_GO_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
# Go's strconv.ParseInt(s, 0, 64) after go-yaml drops underscores; then its YAML-style float.
_GO_INT = re.compile(r"^[-+]?(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|[0-9][0-9_]*)$")
_GO_FLOAT = re.compile(r"^[-+]?(?:\.[0-9_]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?$")
_INT64_MIN, _UINT64_MAX = -(2 ** 63), 2 ** 64 - 1


def _construct_bool(loader, node) -> bool:
    return loader.construct_scalar(node).lower() == "true"


def _construct_number(loader, node) -> Any:
    text = loader.construct_scalar(node)
    plain = text.replace("_", "")
    sign, digits = (-1, plain[1:]) if plain[:1] == "-" else (1, plain.lstrip("+"))
    bases = {"0x": 16, "0o": 8, "0b": 2}
    try:
        if digits[:2].lower() in bases:
            number = int(digits[2:], bases[digits[:2].lower()]) * sign
            return number if _INT64_MIN <= number <= _UINT64_MAX else text
        if re.fullmatch(r"0[0-7]+", digits):  # Go's legacy octal
            return int(digits, 8) * sign
        if digits.isdigit() and _INT64_MIN <= int(digits) * sign <= _UINT64_MAX:
            return int(digits) * sign
        return float(plain)
    except ValueError:  # `0x_`, `._`: not numbers to Go either
        return text


_CliYamlLoader.add_implicit_resolver("tag:yaml.org,2002:bool", _GO_BOOL, list("tTfF"))
_CliYamlLoader.add_implicit_resolver("tag:go-yaml:number", _GO_INT, list("+-0123456789"))
_CliYamlLoader.add_implicit_resolver("tag:go-yaml:number", _GO_FLOAT, list("+-.0123456789"))
_CliYamlLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
_CliYamlLoader.add_constructor("tag:go-yaml:number", _construct_number)


def _read_yaml(path: Path, shown: str) -> Any:
    try:
        return yaml.load(path.read_text(encoding="utf-8-sig"), Loader=_CliYamlLoader)
    except yaml.YAMLError as exc:
        raise ProgramError(f"{shown} is not valid YAML: {exc}") from exc


# ---- values as Go encodes them -----------------------------------------------------------------

def _go_float(number: float) -> str:
    """strconv.FormatFloat(f, 'f' or 'e', -1, 64) as encoding/json picks: the shortest digits, in
    exponent form below 1e-6 and from 1e21 on (`1e-7`, `1e+21`), else plain (`2`, `0.5`)."""
    if not math.isfinite(number):
        raise ProgramError(f"{number} cannot be a config value (JSON has no {number})")
    magnitude = abs(number)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        mantissa, exponent = repr(number).split("e")  # repr pads to `e-07`; Go writes `e-7`
        return f"{mantissa}e{int(exponent):+d}"
    return format(Decimal(repr(number)).normalize(), "f")


def _go_json(value: Any) -> str:
    """encoding/json.Marshal: compact, map keys sorted, <, > and & escaped as \\u003c..."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, list):
        return "[" + ",".join(_go_json(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_go_json(str(key))}:{_go_json(value[key])}" for key in sorted(value, key=str)) + "}"
    text = json.dumps(str(value), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


def _is_secure(value: Any) -> bool:
    """`{secure: <ciphertext>}`: the one shape the CLI reads as an encrypted value."""
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get("secure"), str)


def _contains_secure(value: Any) -> bool:
    if _is_secure(value):
        return True
    if isinstance(value, dict):
        return any(_contains_secure(item) for item in value.values())
    return isinstance(value, list) and any(_contains_secure(item) for item in value)


def _with_placeholders(value: Any, placeholder: str) -> Any:
    if _is_secure(value):
        return placeholder
    if isinstance(value, dict):
        return {key: _with_placeholders(item, placeholder) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_placeholders(item, placeholder) for item in value]
    return value


def _cli_text(value: Any) -> str:
    """The string the CLI passes for a config value: a string as it is, an empty value as "" (the
    CLI warns it will become null one day), anything else JSON-encoded."""
    if value is None:
        return ""
    return value if isinstance(value, str) else _go_json(value)


# ---- the project -------------------------------------------------------------------------------

def shown(path: Path, project_dir: Path) -> str:
    """A path as a message shows it: relative to the project where it is inside it."""
    return os.path.relpath(path, project_dir) if Path(path).is_relative_to(project_dir) else str(path)


def _project_file(directory: Path) -> Optional[Path]:
    for extension in PROJECT_FILE_EXTENSIONS:
        path = directory / f"Pulumi{extension}"
        if path.is_file():
            return path
    return None


def find_project(start: Path) -> Path:
    """The directory of the nearest Pulumi.yaml at or above `start`, as the CLI finds it when run
    from a subfolder of a project."""
    start = Path(start).resolve()
    for directory in (start, *start.parents):
        if _project_file(directory):
            return directory
    raise ProgramError(f"no Pulumi.yaml project file found searching upwards from {start}; "
                       "point --program at the folder of a Pulumi project")


# A template's placeholder for the project name (pulumi/templates write `name: ${PROJECT}`, which
# `pulumi new` replaces): such a project is named as `pulumi new` would name it, after its folder.
TEMPLATE_PLACEHOLDER = re.compile(r"\$\{\w+\}")
# Where load_project keeps the placeholder it replaced, for the report.
TEMPLATE_NAME = "x-blueprint-template-name"


def load_project(program_dir: Path) -> dict:
    path = _project_file(program_dir)
    if path is None:
        raise ProgramError(f"{program_dir} has no Pulumi.yaml; point --program at a Pulumi project")
    stat = path.stat()
    project = copy.deepcopy(_parsed_project(str(path), stat.st_mtime_ns, stat.st_size)) or {}
    if not isinstance(project, dict) or not project.get("name"):
        raise ProgramError(f"{path} has no 'name'")
    if TEMPLATE_PLACEHOLDER.search(str(project["name"])):
        project = {**project, "name": _folder_project_name(path.parent), TEMPLATE_NAME: str(project["name"])}
    return project


def _folder_project_name(folder: Path) -> str:
    """The name `pulumi new` gives a project by default: its folder's, with what a project name may
    not hold (letters, digits, `-`, `_` and `.`) replaced (workspace.ValueOrSanitizedDefaultProjectName)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "-", folder.resolve().name).strip("-.") or "project"


def project_name_notes(project: dict) -> list[str]:
    """What the report says about a project name that was a template placeholder."""
    if TEMPLATE_NAME not in project:
        return []
    return [f"Pulumi.yaml's name is the template placeholder {project[TEMPLATE_NAME]}: the project is named "
            f"{project['name']} after its folder, as `pulumi new` names it (replace the placeholder to choose)"]


@functools.lru_cache(maxsize=16)
def _parsed_project(path: str, mtime_ns: int, size: int) -> Any:
    """Pulumi.yaml parsed once per content: a preview reads the project in several places (the
    interpreter, the stack file, the pack, the reports), each asking for it afresh; an edit gives a
    new modification time and size, so a changed file is parsed again."""
    return _read_yaml(Path(path), path)


@functools.lru_cache(maxsize=16)
def _parsed_stack_file(path: str, shown: str, mtime_ns: int, size: int) -> Any:
    """A stack file parsed once per content, as Pulumi.yaml is (_parsed_project): the recording and
    the report each read the stack's config."""
    return _read_yaml(Path(path), shown)


def _stack_config_dir(program_dir: Path, project: dict) -> Path:
    # `config: <folder>` is the old spelling of stackConfigDir (workspace.RewriteConfigPathIntoStackConfigDir).
    legacy = project.get("config") if isinstance(project.get("config"), str) else None
    if legacy and project.get("stackConfigDir"):
        raise ProgramError(f"{_project_file(program_dir)}: should not use both config and stackConfigDir to "
                           "define the stack directory; use only stackConfigDir")
    return program_dir / (project.get("stackConfigDir") or legacy or ".")


# Folders of a project's checkout that hold installed packages or caches, not the program's own code.
NOT_PROGRAM = frozenset({".venv", "venv", "node_modules", "site-packages", ".git", "__pycache__"})
# ... nor its build outputs and the gate's own folder: copies of its code (compiled JavaScript, a
# generated policy config), for the checks that read what the program's code says.
BUILT = frozenset({".blueprint", "bin", "dist"})


def own_files(program_dir: Path, suffixes: tuple[str, ...], skipped: frozenset[str] = NOT_PROGRAM) -> list[Path]:
    """The program's own files ending in `suffixes` (not a virtualenv's or another installed
    package's), sorted: the one walk of the program's folder after its run. It does not enter the
    `skipped` folders (a checkout's .venv and node_modules are 99% of its entries: 58,816 entries
    walked for 463 files), nor, as rglob, a link to a folder."""
    found = []
    for folder, subfolders, files in os.walk(program_dir):
        subfolders[:] = [name for name in subfolders if name not in skipped]
        found += [Path(folder, name) for name in files if name.endswith(suffixes)]
    return sorted(found)


def own_python_files(program_dir: Path) -> list[Path]:
    """The program's own Python files, sorted."""
    return own_files(program_dir, (".py",))


def stack_config_path(program_dir: Path, stack: str) -> Path:
    """Pulumi.<stack>.<ext> in the project's stack config folder; an `org/project/stack` name uses
    its last part, as the CLI names stack files."""
    project = load_project(program_dir)
    extension = _project_file(program_dir).suffix  # type: ignore[union-attr]  # load_project found it
    return _stack_config_dir(program_dir, project) / f"Pulumi.{stack.rsplit('/', 1)[-1]}{extension}"


def stack_names(program_dir: Path) -> list[str]:
    """The stacks that have a config file in the project's stack config folder."""
    sample = stack_config_path(program_dir, "_")
    return sorted(path.name[len("Pulumi."):-len(sample.suffix)]
                  for path in sample.parent.glob(f"Pulumi.*{sample.suffix}"))


# ---- the stack's config ------------------------------------------------------------------------

@dataclass
class ProgramConfig:
    """The config a program runs with, as the CLI hands it to the language host."""
    values: dict[str, str]  # PULUMI_CONFIG
    secret_keys: list[str]  # PULUMI_CONFIG_SECRET_KEYS
    secure_placeholders: list[str]  # keys whose ciphertext was replaced by a placeholder
    environments: list[str]  # ESC imports of the stack file, not resolved offline
    region: Optional[str]
    region_source: str
    stack_file: Optional[Path]
    sources: dict[str, str] = field(default_factory=dict)  # key -> the file that set it


# How the Pulumi SDKs (Python's ConfigMissingError, Node.js's) word a `config.require` of a key no
# config sets; their hint (`pulumi config set <key> <value>`) names no file.
_MISSING_CONFIG = re.compile(r"Missing required configuration variable '([^']+)'")


def is_missing_config(message: str) -> bool:
    """Whether `message` is an SDK's refusal of a `config.require` of a key no config sets."""
    return _MISSING_CONFIG.search(message) is not None


def missing_config_hint(message: str, config: ProgramConfig, program_dir: Path) -> Optional[str]:
    """For a program that required a config key its stack does not set: the stack file that would
    hold it, and the key it sets that is closest to it (a typo), or None for another failure."""
    found = _MISSING_CONFIG.search(message)
    if found is None:
        return None
    key = found.group(1)
    where = shown(config.stack_file, program_dir) if config.stack_file else "the stack file (none exists yet)"
    namespace, _, name = key.rpartition(":")
    # A key of the same namespace spelled almost the same, or the same name under another namespace.
    candidates = [k for k in config.values if k.rpartition(":")[0] == namespace]
    close = difflib.get_close_matches(key, candidates, n=1, cutoff=0.75) or \
        [k for k in config.values if k.rpartition(":")[2] == name and k != key][:1]
    guess = f"; it sets {close[0]!r}: did you mean that key?" if close else ""
    if "config set --secret" in message:  # requireSecret: the value belongs in the file encrypted
        return (f"{where} sets no {key!r}{guess} Run `pulumi config set --secret {key} <value>`, which writes it "
                f"there encrypted (`secure: ...`).")
    return (f"{where} sets no {key!r}{guess} Add `{key}: <value>` under `config:` in {where} (or run "
            f"`pulumi config set {key} <value>`, which writes it there).")


@dataclass
class _Setting:
    value: Any  # as the YAML holds it, `{secure: ...}` included
    source: str  # the file that set it, relative to the project


def _namespaced(key: Any, project_name: str, shown: str) -> str:
    """workspace.stackConfigNamespacedWithProject + config.ParseKey: `key` -> `project:key`;
    `ns:key` as is; the old `ns:config:key` -> `ns:key`."""
    key = str(key)
    parts = key.split(":")
    if len(parts) == 1:
        return f"{project_name}:{key}"
    if len(parts) == 2 or (len(parts) == 3 and parts[1] == "config" and all(parts)):
        return f"{parts[0]}:{parts[-1]}"
    raise ProgramError(f"{shown}: could not parse {key} as a configuration key "
                       "(configuration keys should be of the form `<namespace>:<name>`)")


def _declarations(project: dict, shown: str) -> dict[str, dict]:
    """Pulumi.yaml's `config:` block as typed declarations (workspace.RewriteShorthandConfigValues
    and Project.Validate): a short `key: value` is a `default:` for the project's own keys and a
    `value:` for another namespace's (`aws:region: us-west-2`)."""
    block = project.get("config")
    if not isinstance(block, dict):
        return {}
    name = project["name"]
    declarations = {}
    for key, raw in block.items():
        key = str(key)
        own = ":" not in key or key.startswith(f"{name}:")
        if isinstance(raw, (str, int, list)):  # bool is an int
            declarations[key] = {"default": raw} if own else {"value": raw}
            continue
        if not isinstance(raw, dict):
            hint = f"; write `{key}: {{default: {raw}}}`" if raw is not None else ""
            raise ProgramError(f"{shown}: config '{key}' must be a string, a whole number, a boolean, a list "
                               f"or a declaration{hint}")
        unknown = sorted(set(map(str, raw)) - set(DECLARATION_ATTRIBUTES))
        if unknown:
            raise ProgramError(f"{shown}: config '{key}' has attribute '{unknown[0]}'; the allowed attributes "
                               f"are {', '.join(repr(a) for a in DECLARATION_ATTRIBUTES)} (a structured value "
                               f"goes under `default:` or `value:`)")
        _check_declaration(key, raw, own, shown)
        declarations[key] = raw
    return declarations


def _check_declaration(key: str, declaration: dict, own: bool, shown: str) -> None:
    type_name = declaration.get("type")
    if type_name is not None and type_name not in CONFIG_TYPES:
        raise ProgramError(f"{shown}: config '{key}' has type '{type_name}'; the types are {', '.join(CONFIG_TYPES)}")
    problem = None
    if declaration.get("default") is not None and declaration.get("value") is not None:
        problem = f"project config '{key}' cannot have both a 'default' and 'value' attribute"
    elif own and type_name == "array" and declaration.get("items") is None:
        problem = (f"The configuration key '{key}' declares an array but does not specify the underlying type "
                   "via the 'items' attribute")
    elif own and type_name is not None and declaration.get("default") is not None and not _matches_type(
            type_name, declaration.get("items"), declaration["default"]):
        problem = (f"The default value specified for configuration key '{key}' is not of the expected type "
                   f"'{_full_type_name(type_name, declaration.get('items'))}'")
    elif not own and type_name is not None:
        problem = f"Configuration key '{key}' is not namespaced by the project and should not define a type"
    elif not own and declaration.get("default") is not None:
        problem = (f"Configuration key '{key}' is not namespaced by the project and should not define a default "
                   "value. Did you mean to use the 'value' attribute instead of 'default'?")
    elif not own and declaration.get("value") is None:
        problem = f"Configuration key '{key}' is namespaced and must provide an attribute 'value'"
    if problem:
        raise ProgramError(f"{shown}: {problem}")


def _full_type_name(type_name: str, items: Optional[dict]) -> str:
    if isinstance(items, dict):
        return f"array<{_full_type_name(items.get('type', ''), items.get('items'))}>"
    return type_name


def _matches_type(type_name: str, items: Optional[dict], value: Any) -> bool:
    """workspace.ValidateConfigValue. A stack value is checked as the string the CLI holds (so
    `count: "3"` is an integer and `"true"` a boolean), a list or object as its decoded JSON."""
    if type_name == "string":
        return isinstance(value, str)
    if type_name == "integer":
        if isinstance(value, str):
            return re.fullmatch(r"[-+]?[0-9]+", value) is not None
        if isinstance(value, float):
            return math.isfinite(value) and value == math.trunc(value)
        return isinstance(value, int) and not isinstance(value, bool)
    if type_name == "boolean":
        return isinstance(value, bool) or value in ("true", "false")
    if type_name == "object":
        return isinstance(value, dict)
    if not isinstance(value, list) or not isinstance(items, dict):
        return False
    return all(_matches_type(items.get("type", ""), items.get("items"), item) for item in value)


def _quoted_list(keys: list[str]) -> str:
    """pkg/workspace/config.go formatMissingKeys: 'a', 'b' and 'c'."""
    quoted = [f"'{key}'" for key in sorted(keys)]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"


def _environment_imports(environment: Any, shown: str) -> list[str]:
    """The ESC environments a stack file's `environment:` imports, in any form it may take: a list of
    names, or an inline definition with `imports:` (each a name or `{name: {merge: ...}}`) and, maybe,
    inline `values:` (listed as the stack file itself, since those are not resolved either)."""
    if environment is None:
        return []
    if isinstance(environment, str):
        return [environment]
    if isinstance(environment, list):
        entries, inline = environment, False
    elif isinstance(environment, dict):
        entries, inline = environment.get("imports") or [], bool(environment.get("values"))
    else:
        raise ProgramError(f"{shown}: 'environment' must be a list of ESC environments or an environment definition")
    names = [str(next(iter(entry))) if isinstance(entry, dict) and entry else str(entry) for entry in entries]
    return names + ([f"{shown} (inline environment values)"] if inline else [])


def _load_stack_file(program_dir: Path, stack: str, project_name: str) -> tuple[Optional[Path], str, dict, list]:
    """(the stack file or None, its name relative to the project, its settings, its ESC imports)."""
    path = stack_config_path(program_dir, stack)
    shown = os.path.relpath(path, program_dir)
    if not path.exists():
        known = stack_names(program_dir)
        if known:
            raise ProgramError(f"no stack {stack!r}: {shown} does not exist; the project's stacks are "
                               f"{', '.join(known)} (create {shown} to add one)")
        return None, shown, {}, []
    stat = path.stat()
    document = copy.deepcopy(_parsed_stack_file(str(path), shown, stat.st_mtime_ns, stat.st_size)) or {}
    if not isinstance(document, dict):
        raise ProgramError(f"{shown}: a stack file is a mapping with 'config' (and maybe 'environment')")
    raw = document.get("config") or {}
    if not isinstance(raw, dict):
        raise ProgramError(f"{shown}: 'config' must be a mapping of keys to values")
    settings = {_namespaced(key, project_name, shown): _Setting(value, shown) for key, value in raw.items()}
    return path, shown, settings, _environment_imports(document.get("environment"), shown)


def load_config(program_dir: Path, stack: str, environ: Mapping[str, str] = os.environ) -> ProgramConfig:
    """The config `pulumi preview --stack <stack>` would run the program with: the stack file's
    values over Pulumi.yaml's, checked against Pulumi.yaml's declarations with the CLI's errors.

    A project without any stack file runs with project config alone. In a project that has stack
    files, a stack without one is unknown (a typo in a CI matrix must not pass the gate on empty
    config)."""
    program_dir = Path(program_dir)
    project = load_project(program_dir)
    project_name = str(project["name"])
    project_shown = _project_file(program_dir).name  # type: ignore[union-attr]  # load_project found it
    declarations = {_namespaced(key, project_name, project_shown): (key, declaration)
                    for key, declaration in _declarations(project, project_shown).items()}
    stack_file, stack_shown, settings, environments = _load_stack_file(program_dir, stack, project_name)
    stack_name = stack.rsplit("/", 1)[-1]

    missing = []
    for full, (key, declaration) in sorted(declarations.items()):
        if full in settings:
            continue
        # The CLI takes `default` over `value` if a declaration had both (Project.Validate refuses that).
        for attribute in ("value", "default"):
            if declaration.get(attribute) is not None:
                settings[full] = _Setting(declaration[attribute], project_shown)
        if full not in settings and full.split(":", 1)[0] == project_name:
            missing.append(key)
    if missing:
        plural, it = ("value", "it") if len(missing) == 1 else ("values", "them")
        where = (f"; the stack imports ESC environment {', '.join(environments)}, which an offline preview cannot "
                 f"resolve: set {it} in {stack_shown} to preview offline" if environments else
                 f"; set {it} in {stack_shown} (`pulumi config set <key> <value>` writes it there) or give it a "
                 f"`default:` in {project_shown}")
        raise ProgramError(f"Stack '{stack_name}' is missing configuration {plural} {_quoted_list(missing)}{where}")

    for full, (key, declaration) in sorted(declarations.items()):
        setting = settings.get(full)
        type_name = declaration.get("type")
        if setting is None or type_name is None:
            continue
        if declaration.get("secret") and not _contains_secure(setting.value):
            raise ProgramError(f"Stack '{stack_name}' with configuration key '{key}' must be encrypted as it's "
                               f"secret; set it with `pulumi config set --secret {key} <value>` (in {stack_shown})")
        if _contains_secure(setting.value):
            continue  # the CLI checks the plaintext, which offline runs do not have
        checked = setting.value if isinstance(setting.value, (list, dict)) else _cli_text(setting.value)
        if not _matches_type(type_name, declaration.get("items"), checked):
            raise ProgramError(f"Stack '{stack_name}' with configuration key '{key}' must be of type "
                               f"'{_full_type_name(type_name, declaration.get('items'))}'; {setting.source} sets "
                               f"it to {_cli_text(setting.value)!r}")

    values, secure = {}, []
    for full, setting in sorted(settings.items()):
        if _contains_secure(setting.value):
            secure.append(full)
            declared = declarations.get(full, ("", {}))[1]
            placeholder = TYPED_SECRET_PLACEHOLDERS.get(str(declared.get("type")), SECRET_PLACEHOLDER)
            values[full] = _cli_text(_with_placeholders(setting.value, placeholder))
        else:
            values[full] = _cli_text(setting.value)

    region, region_source = None, "none"
    if values.get("aws:region") and "aws:region" not in secure:
        region, region_source = values["aws:region"], f"aws:region in {settings['aws:region'].source}"
    else:
        # The AWS provider's own fallbacks, in its order (an empty variable counts as unset).
        for variable in ("AWS_REGION", "AWS_DEFAULT_REGION"):
            if environ.get(variable):
                region, region_source = environ[variable], variable
                break
    return ProgramConfig(values=values, secret_keys=list(secure), secure_placeholders=list(secure),
                         environments=environments, region=region, region_source=region_source,
                         stack_file=stack_file, sources={key: s.source for key, s in settings.items()})
