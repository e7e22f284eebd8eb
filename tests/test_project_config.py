"""A Pulumi project's stack config as the Pulumi CLI reads it: the strings a program receives in
PULUMI_CONFIG, project config and its typed declarations with the CLI's errors, `secure:` values as
placeholders, ESC imports listed, the AWS region as the provider finds it, and the project found from a
subfolder. Each test writes a real project folder."""

import json
import textwrap
from pathlib import Path

import pytest

from integration_blueprint.preview.project import (
    SECRET_PLACEHOLDER,
    ProgramError,
    find_project,
    load_config,
    own_python_files,
    stack_config_path,
    stack_names,
)

NO_AWS_ENV: dict[str, str] = {}


def write_project(root: Path, pulumi_yaml: str, **files: str) -> Path:
    """A project folder: Pulumi.yaml (`name: shop` first) and `files` by relative path."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "Pulumi.yaml").write_text("name: shop\nruntime: python\n" + textwrap.dedent(pulumi_yaml))
    for name, text in files.items():
        path = root / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def config_of(tmp_path, pulumi_yaml="", stack="", environ=NO_AWS_ENV):
    files = {"Pulumi.dev.yaml": stack} if stack else {}
    return load_config(write_project(tmp_path, pulumi_yaml, **files), "dev", environ)


def test_stack_values_reach_the_program_as_the_strings_the_cli_passes(tmp_path):
    config = config_of(tmp_path, stack="""
        config:
          shop:name: orders
          replicas: 3
          ratio: 2.0
          tiny: 1e-7
          huge: 2.5e21
          enabled: true
          legacyFlag: yes
          launch: 2024-01-01
          mode: 0755
          empty:
          tags: {team: "<core>", cost: 12}
          zones: [a, b]
          aws:region: eu-west-1
          aws:config:profile: ci
    """)
    assert config.values == {
        "shop:name": "orders", "shop:replicas": "3", "shop:ratio": "2", "shop:tiny": "1e-7", "shop:huge": "2.5e+21",
        "shop:enabled": "true", "shop:legacyFlag": "yes", "shop:launch": "2024-01-01", "shop:mode": "493",
        "shop:empty": "", "shop:tags": '{"cost":12,"team":"\\u003ccore\\u003e"}', "shop:zones": '["a","b"]',
        "aws:region": "eu-west-1", "aws:profile": "ci"}
    assert json.loads(config.values["shop:tags"]) == {"team": "<core>", "cost": 12}
    assert config.stack_file == tmp_path / "Pulumi.dev.yaml"
    assert (config.secret_keys, config.secure_placeholders, config.environments) == ([], [], [])


def test_project_config_applies_where_the_stack_sets_nothing(tmp_path):
    config = config_of(tmp_path, pulumi_yaml="""
        config:
          instanceType: t3.micro
          retries: 3
          aws:region: us-west-2
          domain:
            type: string
            default: example.com
          owners:
            type: array
            items: {type: string}
            default: [alice, bob]
          settings:
            value: {tier: gold, limits: [1, 2]}
    """, stack="""
        config:
          shop:retries: "5"
    """)
    assert config.values == {
        "shop:instanceType": "t3.micro", "shop:retries": "5", "aws:region": "us-west-2",
        "shop:domain": "example.com", "shop:owners": '["alice","bob"]',
        "shop:settings": '{"limits":[1,2],"tier":"gold"}'}
    assert config.sources["shop:retries"] == "Pulumi.dev.yaml"
    assert config.sources["shop:domain"] == "Pulumi.yaml"
    assert (config.region, config.region_source) == ("us-west-2", "aws:region in Pulumi.yaml")


def test_a_project_without_stack_files_runs_on_project_config_alone(tmp_path):
    config = config_of(tmp_path, pulumi_yaml="config:\n  bucketPrefix: logs\n")
    assert config.values == {"shop:bucketPrefix": "logs"}
    assert config.stack_file is None


def test_a_stack_the_project_does_not_have_is_refused_naming_its_own_stack_files(tmp_path):
    root = write_project(tmp_path, "stackConfigDir: infra\n",
                        **{"infra__Pulumi.dev.yaml": "config: {}\n", "infra__Pulumi.prod.yaml": "config: {}\n"})
    assert stack_names(root) == ["dev", "prod"]
    assert stack_config_path(root, "acme/shop/prod") == root / "infra" / "Pulumi.prod.yaml"
    with pytest.raises(ProgramError) as error:
        load_config(root, "staging", NO_AWS_ENV)
    assert str(error.value) == ("no stack 'staging': infra/Pulumi.staging.yaml does not exist; the project's stacks "
                                "are dev, prod (create infra/Pulumi.staging.yaml to add one)")


def test_the_old_config_folder_spelling_and_the_yml_extension_are_read(tmp_path):
    (tmp_path / "Pulumi.yml").write_text("name: shop\nruntime: python\nconfig: envs\n")
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "Pulumi.dev.yml").write_text("config:\n  size: 2\n")
    config = load_config(tmp_path, "dev", NO_AWS_ENV)
    assert config.values == {"shop:size": "2"}
    assert config.stack_file == tmp_path / "envs" / "Pulumi.dev.yml"


@pytest.mark.parametrize("declared, message", [
    ("dbName: {type: string}", "Stack 'dev' is missing configuration value 'dbName'; set it"),
    ("dbName: {type: string}\n  dbUser: {description: who}\n  port: {type: integer}",
     "Stack 'dev' is missing configuration values 'dbName', 'dbUser' and 'port'; set them"),
])
def test_a_declared_key_without_value_or_default_must_be_set_by_the_stack(tmp_path, declared, message):
    with pytest.raises(ProgramError) as error:
        config_of(tmp_path, pulumi_yaml=f"config:\n  {declared}\n", stack="config:\n  shop:other: x\n")
    assert str(error.value) == (f"{message} in Pulumi.dev.yaml (`pulumi config set <key> <value>` writes it "
                                "there) or give it a `default:` in Pulumi.yaml")


@pytest.mark.parametrize("declaration, stack_value, ok", [
    ("{type: integer}", "3", True),
    ("{type: integer}", '"42"', True),
    ("{type: integer}", "many", False),
    ("{type: integer}", "2.5", False),
    ("{type: boolean}", "false", True),
    ("{type: boolean}", '"true"', True),
    ("{type: boolean}", "yes", False),
    ("{type: string}", "7", True),
    ("{type: object}", "{a: 1}", True),
    ("{type: object}", "[a]", False),
    ("{type: array, items: {type: integer}}", "[1, 2]", True),
    ("{type: array, items: {type: integer}}", "[1, x]", False),
    ("{type: array, items: {type: array, items: {type: string}}}", "[[a], [b]]", True),
    ("{type: array, items: {type: array, items: {type: string}}}", "[[a], [1]]", False),
])
def test_a_stack_value_is_checked_against_the_declared_type_as_the_cli_checks_it(
        tmp_path, declaration, stack_value, ok):
    def load():
        return config_of(tmp_path, pulumi_yaml=f"config:\n  size: {declaration}\n",
                         stack=f"config:\n  size: {stack_value}\n")
    if ok:
        assert "shop:size" in load().values
        return
    with pytest.raises(ProgramError, match=r"^Stack 'dev' with configuration key 'size' must be of type "
                                           r"'(integer|boolean|object|array<integer>|array<array<string>>)'; "
                                           r"Pulumi.dev.yaml sets it to "):
        load()


@pytest.mark.parametrize("config_block, message", [
    ("port: {type: integer, default: eighty}",
     "The default value specified for configuration key 'port' is not of the expected type 'integer'"),
    ("ports: {type: array}",
     "The configuration key 'ports' declares an array but does not specify the underlying type via the "
     "'items' attribute"),
    ("aws:region: {default: us-east-1}",
     "Configuration key 'aws:region' is not namespaced by the project and should not define a default value. "
     "Did you mean to use the 'value' attribute instead of 'default'?"),
    ("aws:region: {type: string, value: us-east-1}",
     "Configuration key 'aws:region' is not namespaced by the project and should not define a type"),
    ("size: {default: 1, value: 2}", "project config 'size' cannot have both a 'default' and 'value' attribute"),
])
def test_a_declaration_the_cli_refuses_is_refused_with_its_message(tmp_path, config_block, message):
    with pytest.raises(ProgramError) as error:
        config_of(tmp_path, pulumi_yaml=f"config:\n  {config_block}\n")
    assert str(error.value) == f"Pulumi.yaml: {message}"


def test_a_misspelt_declaration_attribute_is_refused_naming_the_allowed_ones(tmp_path):
    with pytest.raises(ProgramError, match=r"config 'size' has attribute 'defualt'; the allowed attributes are "
                                           r"'type', 'items', 'description', 'secret', 'default', 'value'"):
        config_of(tmp_path, pulumi_yaml="config:\n  size: {defualt: 3}\n")


def test_secure_values_become_placeholders_marked_secret(tmp_path):
    config = config_of(tmp_path, pulumi_yaml="""
        config:
          dbPort: {type: integer, secret: true}
    """, stack="""
        config:
          dbPassword:
            secure: AAABAKXyq1dBf0c5U8zJXb5wbSg=
          dbPort:
            secure: AAABAGzv1=
          datadog:
            apiKey: {secure: AAABAEVc=}
            site: datadoghq.eu
          plain: visible
    """)
    assert config.values["shop:dbPassword"] == SECRET_PLACEHOLDER
    assert config.values["shop:dbPort"] == "0"  # a declared integer reads as one
    assert json.loads(config.values["shop:datadog"]) == {"apiKey": SECRET_PLACEHOLDER, "site": "datadoghq.eu"}
    assert config.values["shop:plain"] == "visible"
    assert config.secret_keys == config.secure_placeholders == ["shop:datadog", "shop:dbPassword", "shop:dbPort"]


def test_a_declared_secret_given_in_plain_text_is_the_clis_error(tmp_path):
    with pytest.raises(ProgramError, match=r"^Stack 'dev' with configuration key 'token' must be encrypted as "
                                           r"it's secret; set it with `pulumi config set --secret token <value>`"):
        config_of(tmp_path, pulumi_yaml="config:\n  token: {type: string, secret: true}\n",
                  stack="config:\n  token: hunter2\n")


@pytest.mark.parametrize("environment, names", [
    ("environment: [acme/aws-dev, shared-secrets]", ["acme/aws-dev", "shared-secrets"]),
    ("environment:\n  imports:\n    - acme/aws-dev\n    - shared-secrets: {merge: false}",
     ["acme/aws-dev", "shared-secrets"]),
    ("environment:\n  imports: [acme/aws-dev]\n  values:\n    pulumiConfig: {size: 3}",
     ["acme/aws-dev", "Pulumi.dev.yaml (inline environment values)"]),
])
def test_esc_imports_are_listed_as_not_resolved(tmp_path, environment, names):
    config = config_of(tmp_path, stack=f"{environment}\nconfig:\n  size: 2\n")
    assert config.environments == names
    assert config.values == {"shop:size": "2"}


def test_a_required_key_a_stack_leaves_to_its_esc_environment_names_the_environment(tmp_path):
    with pytest.raises(ProgramError) as error:
        config_of(tmp_path, pulumi_yaml="config:\n  vpcId: {type: string}\n",
                  stack="environment: [acme/network-prod]\n")
    assert str(error.value) == ("Stack 'dev' is missing configuration value 'vpcId'; the stack imports ESC "
                                "environment acme/network-prod, which an offline preview cannot resolve: set it "
                                "in Pulumi.dev.yaml to preview offline")


@pytest.mark.parametrize("stack, environ, region, source", [
    ("config:\n  aws:region: eu-west-1\n", {"AWS_REGION": "us-west-2"}, "eu-west-1", "aws:region in Pulumi.dev.yaml"),
    ("config: {}\n", {"AWS_REGION": "us-west-2", "AWS_DEFAULT_REGION": "ap-south-1"}, "us-west-2", "AWS_REGION"),
    ("config: {}\n", {"AWS_REGION": "", "AWS_DEFAULT_REGION": "ap-south-1"}, "ap-south-1", "AWS_DEFAULT_REGION"),
    ("config: {}\n", {}, None, "none"),
])
def test_the_region_comes_from_config_then_the_providers_environment_variables(
        tmp_path, stack, environ, region, source):
    config = config_of(tmp_path, stack=stack, environ=environ)
    assert (config.region, config.region_source) == (region, source)


def test_the_project_is_found_from_a_nested_subfolder(tmp_path):
    root = write_project(tmp_path / "repo" / "infra", "", **{"src__handlers__app.py": "print()\n"})
    assert find_project(root / "src" / "handlers") == root
    assert find_project(root) == root


def test_no_project_above_a_folder_is_an_error_naming_where_it_looked(tmp_path):
    with pytest.raises(ProgramError, match=rf"no Pulumi.yaml project file found searching upwards from "
                                           rf"{tmp_path}; point --program at the folder of a Pulumi project"):
        find_project(tmp_path)


def test_a_key_written_twice_in_a_stack_file_is_refused(tmp_path):
    with pytest.raises(ProgramError, match=r"^Pulumi.dev.yaml is not valid YAML: .*mapping key 'shop:size' "
                                           r"already defined at line 2"):
        config_of(tmp_path, stack="config:\n  shop:size: 1\n  shop:size: 2\n")


def test_a_program_s_own_python_files_are_found_without_walking_its_installed_packages(tmp_path, monkeypatch):
    """What the gate reads after the program ran (sections it reads, its other refusals): the
    program's own files, at any depth; a virtualenv's, node_modules' and caches' never, and those
    folders are not even listed (a checkout's .venv and node_modules are most of its entries)."""
    import os

    for name in ("__main__.py", "pkg/mod.py", "pkg/deep/more.py", ".venv/lib/python3.11/site-packages/x.py",
                 "node_modules/a/b.py", "pkg/venv/y.py", "pkg/__pycache__/z.py", "build/site-packages/w.py",
                 "pkg/notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    outside = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    outside.mkdir()
    (outside / "linked.py").write_text("")
    (tmp_path / "linked").symlink_to(outside, target_is_directory=True)  # not followed, as rglob
    listed = []
    scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path=".": listed.append(Path(path)) or scandir(path))

    assert own_python_files(tmp_path) == [tmp_path / "__main__.py", tmp_path / "pkg" / "deep" / "more.py",
                                          tmp_path / "pkg" / "mod.py"]
    assert {path.relative_to(tmp_path).as_posix() for path in listed} == {".", "pkg", "pkg/deep", "build"}
