"""Every CrossGuard pack a team has runs in `blueprint preview`, as `pulumi preview --policy-pack A
--policy-pack B` runs them: Python and Node.js/TypeScript packs, each started as its language host
starts it, configured once before the program's resources reach it, each with its own config; every
report names the pack of each violation, and the exit code counts every pack's mandatory ones."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import grpc
import pytest
from google.protobuf import empty_pb2
from pulumi.runtime.proto import analyzer_pb2_grpc

from integration_blueprint.cli import main
from integration_blueprint.preview.analyzer import DEFAULT_PACK_DIR, AnalyzerError, PolicyAnalyzer

TESTS = Path(__file__).resolve().parent
PROGRAM = TESTS / "fixtures" / "multi_pack_program"
TEAM_PYTHON = TESTS / "fixtures" / "packs" / "team_python"
ADVISORY_ONLY = TESTS / "fixtures" / "packs" / "advisory_only"
TEAM_TYPESCRIPT = TESTS / "node" / "packs" / "team_ts"  # resolves tests/node/node_modules (make node-fixtures)
AWSGUARD = TESTS / "node" / "packs" / "awsguard"  # its own node_modules (make awsguard-pack)
OURS = str(DEFAULT_PACK_DIR)


def preview(capsys, *args: str, program: Path = PROGRAM, stack: str = "test") -> tuple[int, dict, str]:
    """`blueprint preview --json ...`: the exit code, the report and what went to stderr."""
    code = main(["preview", "--program", str(program), "--stack", stack, "--json", *args])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def listening_tcp_ports(pid: int) -> set[int]:
    """The TCP ports a process listens on (its socket inodes in /proc/net/tcp, state LISTEN)."""
    inodes = {os.readlink(fd)[len("socket:["):-1] for fd in Path(f"/proc/{pid}/fd").iterdir()
              if os.readlink(fd).startswith("socket:[")}
    return {int(fields[1].split(":")[1], 16) for fields in (line.split() for line in
            Path("/proc/net/tcp").read_text().splitlines()[1:]) if fields[3] == "0A" and fields[9] in inodes}


def by_pack(report: dict) -> dict[str, set[tuple[str, str, str]]]:
    """Each pack's violations as (policy, resource name, level)."""
    found: dict[str, set[tuple[str, str, str]]] = {}
    for violation in report["violations"]:
        found.setdefault(violation["policyPack"], set()).add(
            (violation["policy"], violation["name"], violation["level"]))
    return found


# ---- which packs run, and their configs, as the Pulumi CLI pairs them --------------------------------

@pytest.mark.parametrize("args, said", [
    (["--policy-pack-config", "team.json"], '"--policy-pack-config" must be specified with "--policy-pack"'),
    (["--policy-pack", OURS, "--policy-pack", str(TEAM_PYTHON), "--policy-pack-config", "team.json"],
     'the number of "--policy-pack-config" flags (1) must match the number of "--policy-pack" flags (2)'),
    (["--policy-pack", OURS, "--policy-pack-config", "a.json", "--policy-config", "b.json"],
     "leave --policy-config out"),
])
def test_policy_pack_configs_pair_with_packs_as_the_cli_pairs_them_or_the_run_exits_2(capsys, args, said):
    code, report, err = preview(capsys, *args)
    assert code == 2 and said in err
    assert report["error"]["kind"] and report["violations"] == []  # a report that says nothing was judged


def test_a_pack_folder_that_cannot_be_loaded_fails_the_run_naming_it(capsys, tmp_path):
    not_a_pack = tmp_path / "not-a-pack"
    not_a_pack.mkdir()
    go_pack = tmp_path / "go-pack"
    go_pack.mkdir()
    (go_pack / "PulumiPolicy.yaml").write_text("runtime: go\n")
    uninstalled = tmp_path / "uninstalled"  # a TypeScript pack whose `npm install` never ran
    shutil.copytree(TEAM_TYPESCRIPT, uninstalled)
    for pack, said in [(not_a_pack, "is not a policy pack (no PulumiPolicy.yaml)"),
                       (go_pack, "runtime 'go' in PulumiPolicy.yaml is not one blueprint preview can start"),
                       (uninstalled, f"its dependencies are not installed (no @pulumi/pulumi/cmd/run-policy-pack in its "
                                     f"node_modules); run `npm install` (or `npm ci`, `yarn install`) in {uninstalled}")]:
        code, report, err = preview(capsys, "--policy-pack", OURS, "--policy-pack", str(pack))
        assert code == 2 and str(pack) in err and said in err, err
        assert report["programOutput"]["stdout"] == ""  # refused before the program ran


def test_a_node_pack_shadowed_by_its_config_beside_it_is_refused_naming_the_file_and_the_fix(capsys, tmp_path):
    """Node's require of policy/awsguard loads policy/awsguard.json first: the pack would register
    nothing and exit, under the Pulumi CLI too."""
    (tmp_path / "policy").mkdir()
    pack = tmp_path / "policy" / "awsguard"
    shutil.copytree(TEAM_TYPESCRIPT, pack)
    (tmp_path / "policy" / "awsguard.json").write_text('{"all": "mandatory"}')
    code, _, err = preview(capsys, "--policy-pack", str(pack), "--policy-pack-config",
                           str(tmp_path / "policy" / "awsguard.json"))
    assert code == 2, err
    assert f"{pack}.json beside it is what Node.js loads for the pack's folder" in err
    assert "move awsguard.json out of" in err and "b''" not in err


def test_a_pack_that_exits_without_serving_is_told_in_words_with_the_likely_cause(tmp_path):
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (tmp_path / "__main__.py").write_text("import pulumi_policy  # and no PolicyPack(...)\n")
    with pytest.raises(AnalyzerError) as failed:
        PolicyAnalyzer(tmp_path)
    said = str(failed.value)
    assert "it exited with code 0 without serving" in said and "b''" not in said
    assert "Likely cause: its program ended without creating a PolicyPack" in said


def test_a_team_python_pack_and_ours_each_judge_the_program_and_name_themselves(capsys):
    code, report, _ = preview(capsys, "--policy-pack", str(TEAM_PYTHON), "--policy-pack", OURS)
    found = by_pack(report)
    assert found["team-data-rules"] == {("s3-bucket-versioned", "invoice-archive", "mandatory"),
                                        ("dynamodb-tables-per-stack", "", "mandatory")}  # a stack policy
    assert ("dynamodb-table-encrypted-with-kms", "invoices-by-customer", "advisory") in found["integration-blueprint"]
    assert {v["policyPackVersion"] for v in report["violations"] if v["policyPack"] == "team-data-rules"} == {"2.3.0"}
    assert code == 1 and report["summary"]["mandatory"] == 2
    assert [(p["name"], p["version"]) for p in report["policyPacks"]] == [
        ("team-data-rules", "2.3.0"), ("integration-blueprint", "0.1.0")]


@pytest.mark.slow
def test_no_pack_given_runs_ours_and_one_given_runs_only_that_one(capsys):
    _, default, _ = preview(capsys)
    assert [p["name"] for p in default["policyPacks"]] == ["integration-blueprint"]
    code, only_advisory, _ = preview(capsys, "--policy-pack", str(ADVISORY_ONLY))
    assert [p["name"] for p in only_advisory["policyPacks"]] == ["cost-hints"]
    assert by_pack(only_advisory) == {"cost-hints": {("dynamodb-on-demand", "invoices-by-customer", "advisory")}}
    assert code == 0  # an advisory-only pack reports, it never fails the preview


def test_a_suppression_covers_a_policy_of_any_pack(capsys, tmp_path):
    program = tmp_path / "program"
    shutil.copytree(PROGRAM, program)
    source = (program / "__main__.py").read_text()
    (program / "__main__.py").write_text(source.replace(
        'archive = aws.s3.Bucket(',
        "# blueprint: ignore[s3-bucket-versioned] objects are immutable invoices (FIN-88)\narchive = aws.s3.Bucket("))
    code, report, _ = preview(capsys, "--policy-pack", str(TEAM_PYTHON), "--policy-pack", OURS, program=program)
    [accepted] = report["suppressed"]
    assert (accepted["policy"], accepted["policyPack"]) == ("s3-bucket-versioned", "team-data-rules")
    assert code == 1 and report["summary"]["mandatory"] == 1  # the team's stack policy still counts


@pytest.mark.slow
def test_the_stacks_policy_config_configures_each_pack_with_its_own_entries(capsys, tmp_path):
    program = tmp_path / "program"
    shutil.copytree(PROGRAM, program)
    (program / "policy.test.json").write_text(json.dumps({
        "dynamodb-tables-per-stack": {"maximum": 2},  # the team's pack
        "dynamodb-table-encrypted-with-kms": "disabled"}))  # ours
    code, report, _ = preview(capsys, "--policy-pack", str(TEAM_PYTHON), "--policy-pack", OURS, program=program)
    assert by_pack(report)["team-data-rules"] == {("s3-bucket-versioned", "invoice-archive", "mandatory")}
    assert all(v["policy"] != "dynamodb-table-encrypted-with-kms" for v in report["violations"])
    shared = tmp_path / "shared.json"  # --policy-config: the config of every pack without its own
    shared.write_text((program / "policy.test.json").read_text())
    code, again, _ = preview(capsys, "--policy-pack", str(TEAM_PYTHON), "--policy-pack", OURS,
                             "--policy-config", str(shared), program=PROGRAM)
    assert by_pack(again) == by_pack(report) and again["policyPacks"][0]["policyConfig"] == str(shared)
    (program / "policy.test.json").write_text(json.dumps({"dynamodb-tables-per-stak": {"maximum": 2}}))
    code, _, err = preview(capsys, "--policy-pack", str(TEAM_PYTHON), "--policy-pack", OURS, program=program)
    assert code == 2 and "no policy named dynamodb-tables-per-stak in the policy packs it configures " \
                          "(team-data-rules, integration-blueprint)" in err


def test_a_config_that_fails_a_packs_schema_exits_2_naming_the_pack_and_the_key(capsys, tmp_path):
    config = tmp_path / "team.json"
    config.write_text(json.dumps({"dynamodb-tables-per-stack": {"maximum": 0}}))
    code, _, err = preview(capsys, "--policy-pack", str(TEAM_PYTHON), "--policy-pack", OURS,
                           "--policy-pack-config", str(config), "--policy-pack-config", str(tmp_path / "none.json"))
    assert code == 2 and "does not exist" in err  # the second pack's config is missing: refused, not defaulted
    (tmp_path / "none.json").write_text("{}")
    code, _, err = preview(capsys, "--policy-pack", str(TEAM_PYTHON), "--policy-pack", OURS,
                           "--policy-pack-config", str(config), "--policy-pack-config", str(tmp_path / "none.json"))
    assert code == 2
    assert f"{config}: policy pack team-data-rules: dynamodb-tables-per-stack.maximum: 0 is less than the minimum of 1" \
        in err


@pytest.mark.slow  # several packs' processes, twice
def test_every_packs_own_config_is_named_in_the_json_summary_and_in_sarif(capsys, tmp_path):
    team, ours, sarif = tmp_path / "team.json", tmp_path / "ours.json", tmp_path / "packs.sarif"
    team.write_text(json.dumps({"dynamodb-tables-per-stack": {"maximum": 2}}))
    ours.write_text(json.dumps({"dynamodb-table-encrypted-with-kms": "disabled"}))

    _, report, _ = preview(capsys, "--policy-pack", str(TEAM_PYTHON), "--policy-pack-config", str(team),
                           "--policy-pack", OURS, "--policy-pack-config", str(ours), "--report", f"sarif={sarif}")

    assert report["summary"]["policyConfigs"] == [
        {"policyPack": "team-data-rules", "policyConfig": str(team)},
        {"policyPack": "integration-blueprint", "policyConfig": str(ours)}]
    assert report["summary"]["policyConfig"] is None  # no one config: not the first pack's for all
    extensions = json.loads(sarif.read_text())["runs"][0]["tool"]["extensions"]
    assert [(e["name"], e.get("properties", {}).get("policyConfig")) for e in extensions] == [
        ("team-data-rules", str(team)), ("integration-blueprint", str(ours)), ("blueprint-gate", None)]

    _, shared, _ = preview(capsys, "--policy-pack", str(TEAM_PYTHON), "--policy-pack", OURS, "--policy-config", str(ours))
    assert shared["summary"]["policyConfig"] == str(ours)  # the one config every pack read
    assert [c["policyConfig"] for c in shared["summary"]["policyConfigs"]] == [str(ours), str(ours)]


def test_blueprint_policy_ls_lists_the_policies_of_every_pack_given(capsys):
    assert main(["policy", "ls", "--policy-pack", str(TEAM_PYTHON), "--policy-pack", OURS, "--json",
                 "--program", str(PROGRAM)]) == 0
    team, ours = json.loads(capsys.readouterr().out)
    assert (team["pack"], team["version"]) == ("team-data-rules", "2.3.0")
    assert {p["name"]: p["kind"] for p in team["policies"]} == {"s3-bucket-versioned": "resource",
                                                               "dynamodb-tables-per-stack": "stack"}
    assert ours["pack"] == "integration-blueprint" and len(ours["policies"]) > 20


# ---- configured once: nothing but the gate's first Configure reaches a pack ------------------------

def test_a_pack_answers_configure_and_configure_stack_once_even_with_the_runs_token():
    with PolicyAnalyzer(TEAM_PYTHON) as analyzer:
        analyzer.configure({"dynamodb-tables-per-stack": {"maximum": 5}})
        analyzer.begin(stack="test", project="invoice-archive", config={})
        with pytest.raises(AnalyzerError, match="called once already"):
            analyzer.configure({"all": "disabled"})  # what a program that stole the token would send
        with pytest.raises(AnalyzerError, match="called once already"):
            analyzer.begin(stack="test", project="invoice-archive", config={})
        assert analyzer.rules  # the pack still answers everything else


@pytest.mark.slow
def test_a_team_pack_runs_in_the_virtualenv_its_policy_yaml_names_without_this_package(capsys, tmp_path):
    """The pack's own interpreter, as the CLI picks it (runtime.options.virtualenv): a virtualenv
    that has pulumi-policy (here through a path file to ours) but not integration-blueprint."""
    pack = tmp_path / "pack"
    shutil.copytree(TEAM_PYTHON, pack)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(pack / "venv")], check=True, timeout=60)
    [site] = (pack / "venv" / "lib").glob("python*/site-packages")
    (site / "ours.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    probe = subprocess.run([str(pack / "venv" / "bin" / "python"), "-c", "import integration_blueprint"],
                           capture_output=True, timeout=60)
    assert probe.returncode != 0  # the pack's interpreter cannot import this package
    (pack / "PulumiPolicy.yaml").write_text((pack / "PulumiPolicy.yaml").read_text().replace(
        "toolchain: pip", "toolchain: pip\n    virtualenv: venv"))
    code, report, _ = preview(capsys, "--policy-pack", str(pack))
    assert code == 1 and by_pack(report)["team-data-rules"] == {
        ("s3-bucket-versioned", "invoice-archive", "mandatory"), ("dynamodb-tables-per-stack", "", "mandatory")}
    (pack / "PulumiPolicy.yaml").write_text((pack / "PulumiPolicy.yaml").read_text().replace("venv", "missing-venv"))
    code, _, err = preview(capsys, "--policy-pack", str(pack))
    assert code == 2 and f"{pack / 'missing-venv'} does not exist; create it: python3 -m venv missing-venv" in err


# ---- Node.js packs: TypeScript with config, and AWSGuard from npm --------------------------------------

@pytest.mark.slow
def test_a_typescript_pack_is_compiled_configured_and_configured_once(capsys, tmp_path):
    code, report, _ = preview(capsys, "--policy-pack", str(TEAM_TYPESCRIPT))
    assert by_pack(report) == {"team-queue-rules": {("queue-retention-at-least", "archiving", "mandatory"),
                                                    ("queue-tagged-with-owner", "archiving", "advisory")}}
    assert code == 1 and report["policyPacks"][0]["version"] == "1.4.0"
    config = tmp_path / "team.json"
    config.write_text(json.dumps({"queue-retention-at-least": {"minimumSeconds": 3600}}))
    code, report, _ = preview(capsys, "--policy-pack", str(TEAM_TYPESCRIPT), "--policy-pack-config", str(config))
    assert code == 0 and by_pack(report) == {"team-queue-rules": {("queue-tagged-with-owner", "archiving", "advisory")}}
    config.write_text(json.dumps({"queue-retention-at-least": {"minimumSeconds": 30}}))
    code, _, err = preview(capsys, "--policy-pack", str(TEAM_TYPESCRIPT), "--policy-pack-config", str(config))
    assert code == 2 and "policy pack team-queue-rules: queue-retention-at-least.minimumSeconds: 30 is less than " \
                         "the minimum of 60" in err
    with PolicyAnalyzer(TEAM_TYPESCRIPT) as analyzer:
        assert analyzer.address.startswith("unix:") and not listening_tcp_ports(analyzer._process.process.pid)
        with grpc.insecure_channel(analyzer.address) as channel:  # a process without the run's token
            with pytest.raises(grpc.RpcError) as refused:
                analyzer_pb2_grpc.AnalyzerStub(channel).GetAnalyzerInfo(empty_pb2.Empty(), timeout=10)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        analyzer.configure({})
        with pytest.raises(AnalyzerError, match="called once already"):
            analyzer.configure({"all": "disabled"})


@pytest.mark.slow
def test_awsguard_a_team_pack_and_ours_each_report_their_violations_in_every_format(capsys, tmp_path):
    if not (AWSGUARD / "node_modules" / "@pulumi" / "awsguard").is_dir():
        pytest.fail("AWSGuard is not installed: run `make awsguard-pack` (npm ci in tests/node/packs/awsguard)")
    sarif, markdown, text = tmp_path / "packs.sarif", tmp_path / "packs.md", tmp_path / "packs.txt"
    code, report, _ = preview(capsys, "--policy-pack", str(AWSGUARD), "--policy-pack", str(TEAM_PYTHON),
                              "--policy-pack", OURS, "--report", f"sarif={sarif}", "--report", f"markdown={markdown}",
                              "--report", f"text={text}")
    found = by_pack(report)
    # AwsGuard({all: "mandatory"}): its own initial config makes every policy mandatory.
    assert ("s3-bucket-logging-enabled", "invoice-archive", "mandatory") in found["pulumi-awsguard"]
    assert ("s3-bucket-versioned", "invoice-archive", "mandatory") in found["team-data-rules"]
    assert ("dynamodb-table-encrypted-with-kms", "invoices-by-customer", "advisory") in found["integration-blueprint"]
    mandatory = sum(1 for v in report["violations"] if v["level"] == "mandatory")
    assert code == 1 and report["summary"]["mandatory"] == mandatory >= 3

    run = json.loads(sarif.read_text())["runs"][0]
    extensions = run["tool"]["extensions"]
    # each pack in the order given, then the gate's own checks (gate_rules.py)
    assert [e["name"] for e in extensions] == ["pulumi-awsguard", "team-data-rules", "integration-blueprint",
                                               "blueprint-gate"]
    assert len(run["results"]) == len(report["violations"])
    for result in run["results"]:  # each result points at its own pack's rule
        pack = extensions[result["rule"]["toolComponent"]["index"]]
        assert pack["rules"][result["rule"]["index"]]["id"] == result["ruleId"]
    assert {extensions[r["rule"]["toolComponent"]["index"]]["name"] for r in run["results"]} == set(found)

    rows = [line for line in markdown.read_text().splitlines() if line.startswith("| mandatory |")]
    assert any("s3-bucket-logging-enabled" in row and "pulumi-awsguard" in row for row in rows)
    assert any("s3-bucket-versioned" in row and "team-data-rules<br><sub>2.3.0</sub>" in row for row in rows)
    shown = text.read_text()
    assert "Policy pack: pulumi-awsguard 1.0.0" in shown and "      Policy pack: team-data-rules 2.3.0" in shown
    assert main(["policy", "ls", "--policy-pack", str(AWSGUARD), "--json"]) == 0  # what a team sees will run
    listing = json.loads(capsys.readouterr().out)
    assert listing["pack"] == "pulumi-awsguard" and len(listing["policies"]) > 20
    assert {p["levels"]["default"] for p in listing["policies"]} == {"mandatory"}  # its initial config's
