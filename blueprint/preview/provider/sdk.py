"""What an installed Pulumi provider SDK declares: each resource's outputs and inputs and each data
source's result type, with their types, read from the generated `pulumi_<pkg>` package's source.

The package is read, never imported: importing `pulumi_aws.ec2` alone costs 0.7 s, reading one class
from its files a few milliseconds. The generated SDKs are regular:

- `__init__.py` registers its resource modules with a JSON list (token -> package + class name);
- a resource class declares each output as `@pulumi.getter(name="camelName")` returning
  `pulumi.Output[<type>]`; `Optional[...]` marks an output the provider may leave unset, the others
  it always sets; nested types are `@pulumi.output_type` classes in the module's `outputs.py`;
- a data source calls `pulumi.runtime.invoke('<token>', ..., typ=GetXResult)`.

Everything is read lazily, once per file and class, and kept.

Whose SDK: the program's own. A program pinned to pulumi-aws 5 declares (and gets) what pulumi-aws 5
declares (`ec2.get_subnet_ids`, `s3.Bucket`'s inline `versioning`), not what the tool's own 7.x does.
The engine names the program interpreter's import path (`searching`), and each package is looked up
there first; the tool's own installation answers only for a package the program does not have.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterator, Optional, Sequence, Union

# A declared type: "str", "int", "float", "bool", "any", ("list", item), ("map", item) or
# ("object", <outputs.py path>, <class name>).
Kind = Union[str, tuple]


@dataclass(frozen=True)
class Field:
    wire: str  # the camelCase property name on the wire
    kind: Kind
    required: bool  # not Optional: the provider always sets it
    doc: str


@dataclass(frozen=True)
class ResourceDecl:
    token: str
    outputs: tuple[Field, ...]
    inputs: frozenset  # wire names the resource's Args class declares
    required_inputs: frozenset


@dataclass(frozen=True)
class FunctionDecl:
    token: str
    result: tuple[Field, ...]


_GETTER = re.compile(
    r'@pulumi\.getter(?:\(name="(?P<wire>[^"]+)"\))?\s*\n'
    r'(?:\s*@_utilities\.deprecated\((?s:.*?)\)\n)?'  # a deprecated property: its message may span lines
    r'\s*def (?P<py>\w+)\(self\) -> (?P<ann>[^\n]+):\n'
    r'(?:\s*"""(?P<doc>(?s:.*?))""")?')
_CLASS = re.compile(r"\nclass (\w+)")
_SCALARS = {"str": "str", "int": "int", "float": "float", "bool": "bool", "Any": "any", "object": "any"}


@lru_cache(maxsize=None)
def _source(path: Path) -> tuple[str, dict[str, tuple[int, int]]]:
    """A generated module's text and where each top-level class starts and ends."""
    text = path.read_text(encoding="utf-8")
    starts = [(m.group(1), m.start()) for m in _CLASS.finditer(text)]
    spans = {name: (start, starts[i + 1][1] if i + 1 < len(starts) else len(text))
             for i, (name, start) in enumerate(starts)}
    return text, spans


def _class_fields(path: Path, class_name: str) -> tuple[Field, ...]:
    text, spans = _source(path)
    if class_name not in spans:
        return ()
    start, end = spans[class_name]
    fields = []
    for m in _GETTER.finditer(text, start, end):
        kind, optional = _kind(m.group("ann"), str(path.parent))
        fields.append(Field(m.group("wire") or m.group("py"), kind, not optional, m.group("doc") or ""))
    return tuple(fields)


@lru_cache(maxsize=None)
def _kind(annotation: str, module_dir: str) -> tuple[Kind, bool]:
    """(kind, optional) of an annotation as the generated SDKs write them."""
    node = ast.parse(annotation.strip(), mode="eval").body
    return _node_kind(node, Path(module_dir))


def _node_kind(node: ast.expr, module_dir: Path) -> tuple[Kind, bool]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _node_kind(ast.parse(node.value, mode="eval").body, module_dir)
    if isinstance(node, ast.Subscript):
        outer = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", "")
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if outer in ("Output", "Input", "InputType"):
            return _node_kind(args[0], module_dir)
        if outer == "Optional":
            return _node_kind(args[0], module_dir)[0], True
        if outer in ("Sequence", "List", "list"):
            return ("list", _node_kind(args[0], module_dir)[0]), False
        if outer in ("Mapping", "Dict", "dict"):
            return ("map", _node_kind(args[-1], module_dir)[0]), False
        if outer == "Union":
            return _node_kind(args[0], module_dir)
        return "any", False
    if isinstance(node, ast.Attribute):
        prefix = node.value.id if isinstance(node.value, ast.Name) else ""
        if node.attr in _SCALARS and prefix in ("_builtins", "builtins", "typing"):
            return _SCALARS[node.attr], False
        if prefix == "outputs":
            return ("object", str(module_dir / "outputs.py"), node.attr), False
        if prefix == "_root_outputs":
            return ("object", str(_package_root(module_dir) / "outputs.py"), node.attr), False
        return "str", False  # an enum (`_enums.X`): str-valued
    if isinstance(node, ast.Name):
        if node.id in _SCALARS:
            return _SCALARS[node.id], False
        if node.id in _source(module_dir / "outputs.py")[1] if (module_dir / "outputs.py").exists() else False:
            return ("object", str(module_dir / "outputs.py"), node.id), False
        return "str", False  # an enum
    return "any", False


def _package_root(module_dir: Path) -> Path:
    while module_dir.parent.name.startswith("pulumi_") or (module_dir.parent / "_utilities.py").exists():
        module_dir = module_dir.parent
    return module_dir


@lru_cache(maxsize=None)
def object_fields(path: str, class_name: str) -> tuple[Field, ...]:
    return _class_fields(Path(path), class_name)


def snake_case(camel: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", camel).lower()


def normalized(name: str) -> str:
    return name.replace("_", "").replace("-", "").replace(" ", "").lower()


# The import path (sys.path) of the interpreter that runs the program, where its provider SDKs are
# looked up first; None: this process's own. A context variable, so that two engines in one process
# (each answering on its own threads) each read their own program's SDKs.
_SEARCH_PATH: ContextVar[Optional[tuple[str, ...]]] = ContextVar("provider_sdk_search_path", default=None)


@contextmanager
def searching(search_path: Optional[Sequence[str]]) -> Iterator[None]:
    """Within the block, provider SDKs are the ones `search_path` (a program's sys.path) holds."""
    token = _SEARCH_PATH.set(tuple(search_path) if search_path is not None else None)
    try:
        yield
    finally:
        _SEARCH_PATH.reset(token)


def sdk_root(pkg: str) -> Optional[Path]:
    """The folder of the `pulumi_<pkg>` package the program imports (found, not imported): the first
    on its import path, else the tool's own."""
    return _sdk_root(pkg, _SEARCH_PATH.get())


@lru_cache(maxsize=None)
def _sdk_root(pkg: str, search_path: Optional[tuple[str, ...]]) -> Optional[Path]:
    module = f"pulumi_{pkg.replace('-', '_')}"
    for entry in search_path or ():
        if entry and (Path(entry) / module / "__init__.py").is_file():
            return Path(entry) / module
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def sdk_version(pkg: str) -> Optional[str]:
    """The version of the program's `pulumi_<pkg>` (its dist-info beside it), if it says."""
    root = sdk_root(pkg)
    if root is None:
        return None
    for info in sorted(root.parent.glob(f"{root.name}-*.dist-info")):
        return info.name[len(root.name) + 1:-len(".dist-info")]
    return None


def provenance(pkg: str, search_path: Optional[Sequence[str]]) -> str:
    """Whose `pulumi_<pkg>` answered for a program with import path `search_path`, for the report."""
    with searching(search_path):
        root, version = sdk_root(pkg), sdk_version(pkg)
    if root is None:
        return f"no pulumi_{pkg} is installed: its resources keep their inputs as outputs"
    at = f"pulumi_{pkg} {version or '(version unknown)'}"
    if search_path is not None and str(root.parent) in search_path:
        return f"{pkg} resources and data sources answered as the program's own {at} declares them ({root.parent})"
    return f"{pkg} resources and data sources answered as blueprint's own {at} declares them (the program's " \
           f"interpreter has no pulumi_{pkg})"


@lru_cache(maxsize=None)
def _registered(root: Optional[Path]) -> tuple[dict[str, tuple[str, str, str]], dict[str, str]]:
    """token -> (package folder, module file stem, class), and module -> package folder, from the
    resource-module JSON the SDK's `__init__.py` hands to `_utilities.register`."""
    if root is None:
        return {}, {}
    text = (root / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'resource_modules="""\s*(\[.*?\])\s*"""', text, re.S)
    tokens: dict[str, tuple[str, str, str]] = {}
    folders: dict[str, str] = {"index": str(root)}
    for info in json.loads(found.group(1)) if found else []:
        # joined as text: a Path per module (1,748 in pulumi_aws) was most of this function's CPU
        folder = os.path.join(str(root), *info["fqn"].split(".")[1:])
        top = info["mod"].split("/")[0]
        folders.setdefault(top, folder)
        for token, class_name in info["classes"].items():
            tokens[token] = (folder, info["mod"].split("/")[-1], class_name)
    return tokens, folders


@lru_cache(maxsize=None)
def _module_file(folder: str, stem: str) -> Optional[Path]:
    direct = Path(folder) / f"{snake_case(stem)}.py"
    if direct.exists():
        return direct
    wanted = normalized(stem)
    for candidate in Path(folder).glob("*.py"):
        if normalized(candidate.stem) == wanted:
            return candidate
    return None


def resource_decl(token: str) -> Optional[ResourceDecl]:
    """The outputs and inputs the program's SDK declares for a resource type (None: no SDK has it)."""
    return _resource_decl(token, sdk_root(token.split(":")[0]))


@lru_cache(maxsize=None)
def _resource_decl(token: str, root: Optional[Path]) -> Optional[ResourceDecl]:
    tokens, _ = _registered(root)
    if token not in tokens:
        return None
    folder, stem, class_name = tokens[token]
    # Most SDKs put a class in the file its module names (`lambda/function` -> function.py); some in
    # a file of the class's own name (pulumi_kubernetes: `apps/v1` -> apps/v1/Deployment.py).
    path = next((p for p in (_module_file(folder, stem), _module_file(folder, class_name))
                 if p is not None and class_name in _source(p)[1]), None)
    if path is None:
        return None
    args = _class_fields(path, f"{class_name}Args")
    return ResourceDecl(token, _class_fields(path, class_name), frozenset(f.wire for f in args),
                        frozenset(f.wire for f in args if f.required))


def function_decl(token: str) -> Optional[FunctionDecl]:
    """The result type the program's SDK declares for a data source (None: no SDK has it)."""
    return _function_decl(token, sdk_root(token.split(":")[0]))


@lru_cache(maxsize=None)
def _function_decl(token: str, root: Optional[Path]) -> Optional[FunctionDecl]:
    parts = token.split(":")
    if len(parts) != 3 or "/" not in parts[1]:
        return None
    _, folders = _registered(root)
    module, stem = parts[1].split("/", 1)
    folder = folders.get(module)
    if folder is None:
        folder = next((str(root / name) for name in (module, f"{module}_") if root and (root / name).is_dir()), None)
    path = _module_file(folder, stem) if folder else None
    if path is None:
        return None
    text, _ = _source(path)
    call = re.search(r"invoke\('" + re.escape(token) + r"'.*?typ=(\w+)", text)
    if call is None:
        return None
    return FunctionDecl(token, _class_fields(path, call.group(1)))


def resource_tokens(pkg: str = "aws") -> list[str]:
    """Every resource type the program's SDK registers."""
    return sorted(_registered(sdk_root(pkg))[0])


def function_tokens(pkg: str = "aws") -> tuple[str, ...]:
    """Every data source (function) the program's SDK declares: the tokens its `get_*` modules
    invoke. Reads every such module (a walk for tests and benchmarks, not for a preview)."""
    return _function_tokens(sdk_root(pkg))


@lru_cache(maxsize=None)
def _function_tokens(root: Optional[Path]) -> tuple[str, ...]:
    if root is None:
        return ()
    found: set[str] = set()
    for path in root.rglob("get_*.py"):
        found.update(re.findall(r"invoke\('([^']+)'", path.read_text(encoding="utf-8")))
    return tuple(sorted(found))
