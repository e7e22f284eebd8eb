"""The package's layout: one installed namespace, every folder in it, dependencies that run one way,
and a team program whose own `components/` and `handlers/` folders shadow nothing of ours."""

import ast
import textwrap
import tomllib
from pathlib import Path

from team_folders import write_team_program

from integration_blueprint.preview.recording import record_program

REPO = Path(__file__).resolve().parents[1]
NAMESPACE = "integration_blueprint"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
PACKAGE_DIRS = PYPROJECT["tool"]["setuptools"]["package-dir"]


def folder_of(package: str) -> Path:
    """Where a package of the namespace lives in the repository (setuptools' package-dir rule:
    the longest mapped prefix, then the rest as sub-folders)."""
    parts = package.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in PACKAGE_DIRS:
            return REPO / PACKAGE_DIRS[prefix] / Path(*parts[cut:])
    raise AssertionError(f"{package} is outside the namespace")


def modules() -> dict[str, Path]:
    """Every module of the distribution by its installed name."""
    found = {}
    for package in PYPROJECT["tool"]["setuptools"]["packages"]:
        for path in folder_of(package).glob("*.py"):
            found[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return found


def imports_of(path: Path) -> set[str]:
    """Every namespace module a file imports, at the top or inside a function."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {n for n in names if n.startswith(NAMESPACE)}


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: {i for i in imports_of(path) if i in known and i != name} for name, path in known.items()}


def test_the_distribution_names_every_package_folder_of_the_namespace():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    on_disk = set()
    for package, folder in PACKAGE_DIRS.items():
        for init in (REPO / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(REPO / folder)
            on_disk.add(".".join((package, *relative.parts)))
    assert listed == on_disk


def test_no_modules_import_each_other_in_a_circle():
    graph = import_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                circles.append(sorted(members))

    for node in graph:
        if node not in index:
            visit(node)
    assert circles == []


def test_dependencies_run_one_way():
    """drill -> sandbox -> recording; handlers and the policy pack never reach Pulumi components;
    nothing imports the drill but the CLI."""
    graph = import_graph()

    def reaches(module: str, prefix: str) -> list[str]:
        return sorted(i for i in graph[module] if i.startswith(f"{NAMESPACE}.{prefix}"))

    for module in graph:
        part = module.split(".")[1] if "." in module else ""
        if part not in ("drill", "cli"):
            assert reaches(module, "drill") == [], module
        if part in ("sandbox", "preview", "program", "components", "handlers", "policies"):
            assert reaches(module, "cli") == [], module
        if part in ("preview",):
            assert reaches(module, "sandbox") == [], module
        if part in ("handlers", "policies", "core"):
            assert reaches(module, "components") == [], module
            assert not any(i == "pulumi" or i.startswith("pulumi.") for i in _all_imports(graph, module)), module
    # The one sandbox is shared by the drill and the preview: it imports nothing of the blueprint.
    assert graph[f"{NAMESPACE}.containment"] == set()


def _all_imports(graph, module) -> set[str]:
    path = modules()[module]
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_a_team_program_with_its_own_components_and_handlers_folders_gets_our_component_and_archive(tmp_path):
    """A team's `components/` and `handlers/` are theirs: the program imports its own module from
    them, instantiates our component, and the Lambda archive holds our handler modules only."""
    write_team_program(tmp_path, "def lambda_handler(event, context):\n    return 'team code'\n")
    (tmp_path / "__main__.py").write_text(textwrap.dedent("""
        from components.naming import PREFIX
        from integration_blueprint.components import FifoBillingQueue

        FifoBillingQueue(f"{PREFIX}-billing", {"consumer_timeout_seconds": 30})
    """))

    recorded = record_program(tmp_path, stack="dev", config={"aws:region": "eu-west-1"})

    functions = recorded.of_type("aws:lambda/function:Function")
    assert {f.name for f in functions} >= {"team-billing-consumer", "team-billing-dispatcher"}
    for function in functions:
        members = function.inputs["code"]["assets"]
        assert members, function.name
        assert all(name.startswith(f"{NAMESPACE}/") for name in members), function.name
        handler_module = function.inputs["handler"].rpartition(".")[0]
        member = members[handler_module.replace(".", "/") + ".py"]
        assert Path(member["path"]).resolve().is_relative_to(REPO / "handlers"), member
        assert not any(str(tmp_path) in m.get("path", "") for m in members.values())


def test_the_cli_names_its_version_and_the_installed_policy_pack(capsys):
    import pytest

    from integration_blueprint import __version__, cli

    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"blueprint {__version__}"
    assert cli.main(["policy", "path"]) == 0
    pack = Path(capsys.readouterr().out.strip())
    assert (pack / "PulumiPolicy.yaml").is_file() and (pack / "__main__.py").is_file()
