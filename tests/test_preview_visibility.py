"""What a previewed program sees (blueprint/preview/program_walls.py): what `pulumi preview` would let
it use (its repository, writable through an overlay the run throws away; every path its site
resolves to) and never the user's secrets or the gate itself, whatever the program's own files (a
pyvenv.cfg, a `.pth`, a link in node_modules) name. A failure the walls caused is told as the
sandbox's, naming the path and `--allow-read`; a file the program wrote (its zip) is read as it left
it; an archive the engine cannot read ends the run at once, in both languages.

The end-to-end cases run the CLI on the shapes of tests/programs (repo-lambdas-beside,
repo-editable-lib, make-archive-in-folder) and on hostile settings built here."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from integration_blueprint.containment import SYSTEM_READ_ONLY, Walls, containment, interpreter_paths
from integration_blueprint.preview import lambda_archive, program_walls
from integration_blueprint.preview.program_walls import Visibility, bounded, sandbox_blame

PROGRAMS = Path(__file__).parent / "programs"
NODE_MODULES = Path(__file__).parent / "node" / "node_modules"
BLUEPRINT = Path(sys.executable).with_name("blueprint")
SITE_PACKAGES = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
CREDENTIALS = "aws_secret_access_key = visibility-test-marker"
SANDBOX = pytest.mark.skipif(not containment().available, reason=f"no sandbox here: {containment().reason}")
OVERLAYS = pytest.mark.skipif(not containment().overlays, reason="this bwrap makes no overlays (bubblewrap < 0.10)")


def repository(tmp_path: Path, shape: str) -> Path:
    """A copy of a corpus shape as a checkout (a `.git` at its root), under a home with credentials."""
    root = tmp_path / "home" / "src" / shape
    shutil.copytree(PROGRAMS / shape, root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / ".git").mkdir()
    aws = tmp_path / "home" / ".aws"
    aws.mkdir(parents=True)
    (aws / "credentials").write_text(f"[default]\n{CREDENTIALS}\n")
    return root


def virtualenv(folder: Path, *pth_lines: str) -> Path:
    """A virtualenv as `python -m venv` makes it, its site given this environment's packages (pulumi,
    pulumi_aws) and `pth_lines`, as `pip install` writes them."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    [site] = folder.glob("lib/python*/site-packages")
    (site / "_gate_packages.pth").write_text(SITE_PACKAGES + "\n")
    (site / "__editable__.extra.pth").write_text("".join(f"{line}\n" for line in pth_lines))
    return folder


def preview(program: Path, home: Path, *flags: str, cwd: Path | None = None) -> tuple[int, dict]:
    command = [str(BLUEPRINT), "preview", "--format", "json", "--timeout", "170", *flags]
    if cwd is None:
        command += ["--program", str(program)]
    env = {**os.environ, "HOME": str(home), "AWS_REGION": "us-east-1"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, env=env, cwd=cwd or program)
    return done.returncode, json.loads(done.stdout)


def tree(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --- what is bound, read from the program's files as untrusted input ------------------------------------


def test_no_bind_is_the_root_a_folder_above_the_home_or_the_temporary_folder_or_the_machines_sockets(tmp_path):
    environ = {"HOME": str(tmp_path / "home")}
    for refused in ("/", "/etc", "/home", "/var", str(tmp_path / "home"), str(tmp_path), "/tmp", "/run/docker.sock",
                    "/proc/1/root", "/var/run"):
        assert not bounded(Path(refused), environ), refused
    for allowed in ("/usr", "/usr/lib/python3", str(tmp_path / "home" / "src" / "repo"), SITE_PACKAGES):
        assert bounded(Path(allowed), environ), allowed


def test_a_pyvenv_cfg_with_two_homes_binds_each_installation_s_bin_and_lib_never_its_prefix(tmp_path):
    venv = virtualenv(tmp_path / "venv")
    config = venv / "pyvenv.cfg"
    real_home = next(line.partition("=")[2].strip() for line in config.read_text().splitlines()
                     if line.partition("=")[0].strip() == "home")
    config.write_text(f"home = /bin\n{config.read_text()}")
    paths = {str(p) for p in program_walls.python_paths(str(venv / "bin" / "python"), {"HOME": str(tmp_path)})}
    assert "/" not in paths and str(Path(real_home).parent) not in paths - {"/usr"}
    assert real_home in paths  # the real installation: its bin folder and its standard library
    assert str(Path(real_home).parent / "lib") in paths
    assert all(bounded(Path(p), {"HOME": str(tmp_path)}) or p in SYSTEM_READ_ONLY for p in paths)


def test_pth_entries_and_editable_finders_are_bound_when_they_hold_python_and_nothing_else_is(tmp_path):
    library = tmp_path / "repo" / "libs" / "tagging" / "src"
    (library / "tagging").mkdir(parents=True)
    (library / "tagging" / "__init__.py").write_text("")
    mapped = tmp_path / "repo" / "libs" / "billing" / "billing"
    mapped.mkdir(parents=True)
    (mapped / "__init__.py").write_text("")
    no_code = tmp_path / "repo" / "notes"
    no_code.mkdir()
    home = tmp_path / "home"
    venv = virtualenv(tmp_path / "repo" / "infra" / "venv", str(library), "/", str(home), str(no_code), "/run",
                      "import os; os.system('never run')")
    [site] = venv.glob("lib/python*/site-packages")
    (site / "__editable___billing_0_1_finder.py").write_text(
        f"import sys\nMAPPING = {{'billing': {str(mapped)!r}}}\nNAMESPACES = {{}}\ndef install():\n    pass\n")
    paths = {str(p) for p in program_walls.python_paths(str(venv / "bin" / "python"), {"HOME": str(home)})}
    assert str(library) in paths and str(mapped) in paths and SITE_PACKAGES in paths
    assert not paths & {"/", str(home), str(no_code), "/run"}


def test_a_node_modules_link_to_the_root_is_no_package_a_workspace_link_is(tmp_path):
    project = tmp_path / "repo" / "infra"
    modules = project / "node_modules"
    (modules / "@pulumi" / "pulumi" / "cmd" / "run").mkdir(parents=True)
    (modules / "@pulumi" / "pulumi" / "cmd" / "run" / "index.js").write_text("")
    workspace = tmp_path / "repo" / "packages" / "shared"
    workspace.mkdir(parents=True)
    (workspace / "package.json").write_text('{"name": "@acme/shared"}')
    (modules / "@acme").mkdir()
    (modules / "@acme" / "shared").symlink_to(workspace)
    (modules / "host-root").symlink_to("/")
    (modules / "home").symlink_to(tmp_path / "home")
    (tmp_path / "home").mkdir()
    paths = {str(p) for p in program_walls.node_paths(shutil.which("node") or "/usr/bin/node",
                                                      str(modules / "@pulumi/pulumi/cmd/run/index.js"), project,
                                                      {"HOME": str(tmp_path / "home")})}
    assert str(workspace) in paths and str(modules) in paths
    assert "/" not in paths and str(tmp_path / "home") not in paths


def test_the_repository_is_the_nearest_folder_with_git_but_never_the_home(tmp_path):
    home = tmp_path / "home"
    project = home / "src" / "repo" / "infra"
    project.mkdir(parents=True)
    assert program_walls.repository_root(project, {"HOME": str(home)}) == project  # no .git: the project
    (home / "src" / "repo" / ".git").mkdir()
    assert program_walls.repository_root(project, {"HOME": str(home)}) == home / "src" / "repo"
    shutil.rmtree(home / "src" / "repo" / ".git")
    (home / ".git").mkdir()  # a dotfiles repository: the home is never bound whole
    assert program_walls.repository_root(project, {"HOME": str(home)}) == project
    # A checkout at the top of the file system (a CI image's /app) is a repository; /etc is not.
    assert bounded(Path("/app"), {"HOME": str(home)}, top_level=True)
    assert not bounded(Path("/etc"), {"HOME": str(home)}, top_level=True)
    assert not bounded(Path("/"), {"HOME": str(home)}, top_level=True)


# --- the walls: masks win over every bind; writes thrown away ---------------------------------------------


@SANDBOX
@OVERLAYS
def test_a_masked_folder_stays_empty_under_a_bound_parent_and_overlay_writes_never_reach_the_host(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".aws").mkdir(parents=True)
    (repo / ".aws" / "credentials").write_text(CREDENTIALS)
    (repo / ".netrc").write_text(CREDENTIALS)
    (repo / "kept.txt").write_text("checkout")
    script = textwrap.dedent(f"""
        import json, os
        seen = {{"aws": os.listdir({str(repo / '.aws')!r}), "netrc": open({str(repo / '.netrc')!r}).read()}}
        open({str(repo / 'kept.txt')!r}, "w").write("changed")
        os.makedirs({str(repo / 'build')!r})
        open({str(repo / 'build' / 'x.zip')!r}, "w").write("zip")
        seen["read_back"] = open({str(repo / 'build' / 'x.zip')!r}).read()
    """)
    package = tmp_path / "home" / ".config" / "tools" / "package"  # bound itself, inside a masked folder
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(CREDENTIALS)
    script += f"seen['package'] = os.path.exists({str(package / '__init__.py')!r})\nprint(json.dumps(seen))\n"
    walls = Walls(read_only=[*SYSTEM_READ_ONLY, *interpreter_paths(), str(package)], overlaid=[str(repo)],
                  masked=[str(repo / ".aws"), str(repo / ".netrc"), str(tmp_path / "home" / ".config")],
                  environment={"PATH": "/usr/bin:/bin"})
    done = subprocess.run(containment().command(walls, [sys.executable, "-c", script]), capture_output=True,
                          text=True, env={}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"aws": [], "netrc": "", "read_back": "zip", "package": False}
    assert (repo / "kept.txt").read_text() == "checkout" and not (repo / "build").exists()


# --- honest blame --------------------------------------------------------------------------------------


def test_a_path_the_walls_hid_is_the_sandboxs_fault_a_path_missing_everywhere_is_the_programs(tmp_path):
    repo, outside = tmp_path / "repo", tmp_path / "shared" / "config.json"
    repo.mkdir()
    outside.parent.mkdir()
    outside.write_text("{}")
    secret = tmp_path / "home" / ".aws" / "credentials"
    secret.parent.mkdir(parents=True)
    secret.write_text(CREDENTIALS)
    seen = Visibility(repository=repo, writable=True, read_only=(), masked=(secret.parent,))
    hidden = sandbox_blame(seen, f"FileNotFoundError: [Errno 2] No such file or directory: '{outside}'", repo)
    assert hidden and str(outside) in hidden and f"--allow-read {outside}" in hidden
    masked = sandbox_blame(seen, f"Error: ENOENT: no such file or directory, open '{secret}'", repo)
    assert masked and "credentials" in masked and f"--allow-read {secret}" in masked
    written = sandbox_blame(seen, f"OSError: [Errno 30] Read-only file system: '{tmp_path / 'out.zip'}'", repo)
    assert written and "outside its repository" in written
    assert sandbox_blame(seen, "FileNotFoundError: [Errno 2] No such file or directory: 'missing.json'", repo) is None
    assert sandbox_blame(None, f"[Errno 2] No such file or directory: '{outside}'", repo) is None  # not contained


# --- links as Pulumi packs them ----------------------------------------------------------------------------


def test_the_handler_runtime_reached_through_a_linked_venv_is_judged_by_its_target(tmp_path):
    """A `.venv` linked to a shared virtualenv (monorepos, Nix): the component adds its handler runtime
    from the installed package through the link; Pulumi packs the target, the package's own file."""
    shared = tmp_path / "shared-venv"
    package = shared / "lib" / "python3.12" / "site-packages" / "integration_blueprint"
    package.mkdir(parents=True)
    (shared / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (package / "__init__.py").write_text("")
    program = tmp_path / "repo" / "infra"
    (program / "src").mkdir(parents=True)
    (program / ".venv").symlink_to(shared, target_is_directory=True)
    (program / "src" / "app.py").write_text("import integration_blueprint\n\ndef handler(event, context):\n    pass\n")
    runtime = program / ".venv" / "lib" / "python3.12" / "site-packages" / "integration_blueprint" / "__init__.py"
    code = {"archive": "AssetArchive", "assets": {
        "app.py": {"asset": "FileAsset", "path": "src/app.py"},
        "integration_blueprint/__init__.py": {"asset": "FileAsset", "path": str(runtime)}}}
    assert lambda_archive.handler_problem(code, program, "app.handler") is None
    # The team's own link out of its folder is still its own: Pulumi would pack the key it names.
    (program / "src" / "settings.py").symlink_to(tmp_path / "home-key")
    (tmp_path / "home-key").write_text(CREDENTIALS)
    code["assets"]["settings.py"] = {"asset": "FileAsset", "path": "src/settings.py"}
    problem = lambda_archive.handler_problem(code, program, "app.handler")
    assert problem and "is a link to" in problem and "outside the program's folder" in problem


# --- end to end, as a team's CI runs it ----------------------------------------------------------------


@pytest.mark.slow
@SANDBOX
def test_a_program_reads_the_files_beside_it_in_its_repository(tmp_path):
    root = repository(tmp_path, "repo-lambdas-beside")
    exit_code, report = preview(root / "infra", tmp_path / "home", cwd=root / "infra")
    assert report["error"] is None and report["contained"] is True, report["error"]
    assert exit_code == 0
    roles = [r for r in report.get("resources", []) if r.get("type") == "aws:iam/role:Role"] if "resources" in report \
        else []
    assert report["summary"]["resources"] >= 4 and (not roles or "lambda.amazonaws.com" in json.dumps(roles))


@pytest.mark.slow
@SANDBOX
def test_a_library_installed_editable_from_the_repository_is_imported(tmp_path):
    root = repository(tmp_path, "repo-editable-lib")
    virtualenv(root / "infra" / "venv", str(root / "libs" / "tagging" / "src"))
    exit_code, report = preview(root / "infra", tmp_path / "home")
    assert report["error"] is None and report["contained"] is True, report["error"]
    assert exit_code in (0, 1) and report["summary"]["resources"] >= 2


@pytest.mark.slow
@SANDBOX
@OVERLAYS
def test_a_program_that_zips_its_code_into_its_folder_is_judged_on_its_zip_and_leaves_the_checkout_as_it_was(
        tmp_path):
    root = repository(tmp_path, "make-archive-in-folder")
    # The program also writes the gate's inputs: its policy config and its stack file.
    main = root / "__main__.py"
    main.write_text(main.read_text() + textwrap.dedent('''
        import json as _json
        open("policy.dev.json", "w").write(_json.dumps({"lambda-handler-in-archive": {"enforcementLevel": "disabled"}}))
        open("Pulumi.dev.yaml", "w").write("config:\\n  aws:region: eu-north-1\\n")
    '''))
    before = tree(root)
    exit_code, report = preview(root, tmp_path / "home")
    assert report["error"] is None and report["contained"] is True, report["error"]
    found = {(v["policy"], v["name"], v["level"]) for v in report["violations"]}
    assert found == {("lambda-handler-in-archive", "report", "mandatory")}  # read from the zip it built
    message = next(v["message"] for v in report["violations"] if v["name"] == "report")
    assert "module 'report' is not in the function's archive" in message
    assert exit_code == 1
    assert tree(root) == before  # no build/, no policy config, the stack file as it was


@pytest.mark.slow
@SANDBOX
def test_hostile_settings_never_show_the_home_or_the_root(tmp_path):
    """A pyvenv.cfg whose first `home` is /bin (its parent is `/`) and a `.pth` naming the home: the
    program still sees neither the credentials nor the root's other folders."""
    root = repository(tmp_path, "repo-lambdas-beside")
    program = root / "infra"
    venv = virtualenv(program / "venv", str(tmp_path / "home"), "/")
    (venv / "pyvenv.cfg").write_text("home = /bin\n" + (venv / "pyvenv.cfg").read_text())
    (program / "Pulumi.yaml").write_text("name: ingest\nruntime:\n  name: python\n  options:\n    virtualenv: venv\n")
    (program / "__main__.py").write_text(textwrap.dedent(f'''
        import json, os
        import pulumi_aws as aws
        seen = {{}}
        for path in ({str(tmp_path / "home" / ".aws" / "credentials")!r}, "/etc/hostname", "/root/.bashrc"):
            try:
                seen[path] = open(path).read()
            except OSError as exc:
                seen[path] = type(exc).__name__
        seen["/"] = sorted(os.listdir("/"))
        print("SEEN " + json.dumps(seen))
        aws.sqs.Queue("jobs")
    '''))
    exit_code, report = preview(program, tmp_path / "home")
    assert report["error"] is None and report["contained"] is True, report["error"]
    line = next(line for line in report["programOutput"]["stdout"].splitlines() if line.startswith("SEEN "))
    seen = json.loads(line[len("SEEN "):])
    assert CREDENTIALS not in json.dumps(report)
    assert seen[str(tmp_path / "home" / ".aws" / "credentials")] == "FileNotFoundError"
    assert seen["/etc/hostname"] == "FileNotFoundError" and seen["/root/.bashrc"] == "FileNotFoundError"
    # Only the system's folders and the parents of what is bound (the base interpreter's installation
    # may be under /root: pyenv) are there; the root's other folders are not.
    assert not {"home", "var", "srv", "opt", "mnt", "media"} & set(seen["/"]), seen["/"]


@pytest.mark.slow
@SANDBOX
def test_a_node_modules_link_to_the_root_shows_a_typescript_program_nothing_of_it(tmp_path):
    if not (NODE_MODULES / "@pulumi" / "pulumi").is_dir():
        pytest.skip("the TypeScript fixtures are not installed: run `make node-fixtures`")
    root = repository(tmp_path, "repo-lambdas-beside")
    program = root / "infra"
    shutil.copy(PROGRAMS.parent / "node" / "programs" / "build-folder-missing-ts" / "tsconfig.json", program)
    (program / "Pulumi.yaml").write_text("name: ingest\nruntime: nodejs\n")
    (program / "node_modules").symlink_to(NODE_MODULES)
    (root / "node_modules").mkdir()
    (root / "node_modules" / "host-root").symlink_to("/")
    (program / "index.ts").write_text(textwrap.dedent('''
        import * as aws from "@pulumi/aws";
        import * as fs from "fs";
        const seen: Record<string, string> = {};
        for (const path of [`${__dirname}/../node_modules/host-root${process.env.HOME}/.aws/credentials`,
                            `${__dirname}/../node_modules/host-root/etc/hostname`]) {
            try { seen[path] = fs.readFileSync(path, "utf8"); } catch (e: any) { seen[path] = e.code; }
        }
        console.log("SEEN " + JSON.stringify(seen));
        new aws.sqs.Queue("jobs");
    '''))
    exit_code, report = preview(program, tmp_path / "home")
    assert report["error"] is None and report["contained"] is True, report["error"]
    line = next(line for line in report["programOutput"]["stdout"].splitlines() if line.startswith("SEEN "))
    assert set(json.loads(line[len("SEEN "):]).values()) == {"ENOENT"}
    assert CREDENTIALS not in json.dumps(report)


@pytest.mark.slow
@SANDBOX
def test_a_file_the_walls_hid_is_blamed_on_the_sandbox_and_allow_read_grants_it(tmp_path):
    root = repository(tmp_path, "repo-lambdas-beside")
    shared = tmp_path / "platform-config" / "execution_role.json"
    shared.parent.mkdir()
    shutil.copy(root / "lambdas" / "execution_role.json", shared)
    main = root / "infra" / "__main__.py"
    main.write_text(main.read_text().replace('"../lambdas/execution_role.json"', repr(str(shared))))
    exit_code, report = preview(root / "infra", tmp_path / "home")
    assert exit_code == 2 and report["error"]["kind"] == "sandbox", report["error"]
    said = json.dumps(report["error"])
    assert f"--allow-read {shared}" in said and "fails the same way" not in said
    exit_code, report = preview(root / "infra", tmp_path / "home", "--allow-read", str(shared))
    assert exit_code == 0 and report["error"] is None, report["error"]


@pytest.mark.slow
@pytest.mark.parametrize("language", ["python", "typescript"])
def test_an_archive_that_is_not_built_ends_the_run_where_the_program_declared_it(language, tmp_path):
    """Many resources depend on the function whose dist/ was never built: the engine refuses the
    function and the run ends there (the Node.js SDK would re-throw the error through every one of
    them, its message growing each time, for minutes), at the declaring line, well inside --timeout."""
    program = tmp_path / "app"
    program.mkdir()
    (program / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    dependents = 60
    if language == "python":
        (program / "Pulumi.yaml").write_text("name: thumbnails\nruntime: python\n")
        (program / "__main__.py").write_text(textwrap.dedent('''
            import pulumi, pulumi_aws as aws
            trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                             "Principal": {"Service": "lambda.amazonaws.com"}}]}
            role = aws.iam.Role("role", assume_role_policy=trust)
            fn = aws.lambda_.Function("thumbnailer", role=role.arn, runtime="python3.12", handler="index.handler",
                                      code=pulumi.FileArchive("./dist"))
        ''') + "".join(f'aws.sqs.Queue("q{i}", name=fn.name.apply(lambda n: n + "-{i}"))\n' for i in range(dependents)))
        declared = ("__main__.py", 6)
    else:
        (program / "Pulumi.yaml").write_text("name: thumbnails\nruntime: nodejs\n")
        if not (NODE_MODULES / "@pulumi" / "pulumi").is_dir():
            pytest.skip("the TypeScript fixtures are not installed: run `make node-fixtures`")
        (program / "node_modules").symlink_to(NODE_MODULES)
        (program / "index.ts").write_text(textwrap.dedent('''
            import * as pulumi from "@pulumi/pulumi";
            import * as aws from "@pulumi/aws";
            const role = new aws.iam.Role("role", {
                assumeRolePolicy: aws.iam.assumeRolePolicyForPrincipal({ Service: "lambda.amazonaws.com" }) });
            const fn = new aws.lambda.Function("thumbnailer", {
                role: role.arn, runtime: "nodejs20.x", handler: "index.handler",
                code: new pulumi.asset.FileArchive("./dist") });
        ''') + "".join(f'new aws.sqs.Queue("q{i}", {{ name: pulumi.interpolate`${{fn.name}}-{i}` }});\n'
                       for i in range(dependents)))
        declared = ("index.ts", 6)
    exit_code, report = preview(program, tmp_path)
    error = report["error"]
    assert exit_code == 2 and error["kind"] == "program", error
    assert (Path(error["file"]).name, error["line"]) == declared
    assert f"couldn't read archive path '{program}/dist'" in error["message"]
    assert "error serializing property" not in error["message"] and "did not finish" not in error["message"]
